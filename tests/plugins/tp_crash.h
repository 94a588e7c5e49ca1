/* tests/plugins/tp_crash.h - the shared body of the test passes that
 * misbehave after a few rewrites: tp_crash_null (dereferences NULL),
 * tp_crash_abort (abort()), tp_crash_loop (never returns) and tp_crash_exit
 * (exit(0)).
 *
 * Each call bypasses up to two Identity nodes, asking ph_ctx_rewrite_begin
 * before each.  When the run's 4th rewrite is granted, the pass calls
 * TP_MISBEHAVE() instead of making it.  On a chain of Identity nodes that is
 * round 2 of the optimize stage, after rewrite 3 of the run (the 1st of that
 * call), so `--max-rewrites 3` stops the run just before the misbehaviour
 * and the pass is never called again.
 *
 * With the environment variable TP_CRASH_PIDFILE set, the pass writes its
 * process id there before it misbehaves (tests look for the process).
 *
 * Include after defining TP_NAME (the pass name, a string) and
 * TP_MISBEHAVE() (a statement). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <passhost/host.h> /* ph_ctx_rewrite_count: a host call, to misbehave at a chosen rewrite */
#include <passhost/passhost.h>

static void tp_write_pid(void)
{
    const char *path = getenv("TP_CRASH_PIDFILE");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
}

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    int done = 0;
    for (ph_node *n = ph_graph_first_node(g), *next; n && done < 2; n = next) {
        next = ph_node_next(n);
        if (ph_node_op(n) != PH_OP_Identity || ph_node_input(n, 0) == NULL)
            continue;
        if (!ph_ctx_rewrite_begin(ctx, ph_node_name(n)))
            break;
        if (ph_ctx_rewrite_count(ctx) == 4) {
            tp_write_pid();
            TP_MISBEHAVE();
        }
        if (ph_node_bypass(n, 0, ph_node_input(n, 0)) < 0)
            return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
        done++;
    }
    return done;
}

PH_PASS_DEFINE(.name = TP_NAME, .summary = "bypass Identity nodes, then misbehave at rewrite 4",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run = run)
