/* tests/plugins/tp_crash_exit.c - calls exit(0) at the run's 4th rewrite
 * (tp_crash.h): without containment passhost would end with exit 0, no
 * output and no message. */
#define TP_NAME "tp_crash_exit"
#define TP_MISBEHAVE() exit(0)

#include "tp_crash.h"
