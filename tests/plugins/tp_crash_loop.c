/* tests/plugins/tp_crash_loop.c - never returns from the call that is
 * granted the run's 4th rewrite (tp_crash.h). */
#define TP_NAME "tp_crash_loop"
#define TP_MISBEHAVE()                                                                         \
    do {                                                                                       \
        for (volatile int spin = 1; spin;)                                                     \
            ;                                                                                  \
    } while (0)

#include "tp_crash.h"
