/* tests/plugins/tp_crash_null.c - dereferences NULL at the run's 4th
 * rewrite (tp_crash.h).  Not instrumented by the sanitizers, so the store
 * really faults (SIGSEGV) in sanitized builds too. */
#define TP_NAME "tp_crash_null"
#define TP_MISBEHAVE() store_through_null()

__attribute__((no_sanitize("address", "undefined"))) static void store_through_null(void)
{
    volatile int *volatile p = 0;
    *p = 42;
}

#include "tp_crash.h"
