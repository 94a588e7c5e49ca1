/* tests/plugins/tp_crash_abort.c - calls abort() at the run's 4th rewrite
 * (tp_crash.h). */
#define TP_NAME "tp_crash_abort"
#define TP_MISBEHAVE() abort()

#include "tp_crash.h"
