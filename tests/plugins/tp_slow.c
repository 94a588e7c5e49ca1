/* tests/plugins/tp_slow.c - changes nothing but takes 1.1 s a call, so a
 * run with it lasts long enough to show the progress line. */
#include <passhost/passhost.h>
#include <time.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    struct timespec ts = {1, 100 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_slow", .summary = "test pass that sleeps 1.1 s and changes nothing",
               .stages = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT, .exactness = PH_EXACT, .run = run)
