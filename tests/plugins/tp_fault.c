/* tests/plugins/tp_fault.c - a pass that misbehaves in the way the
 * environment says, for the tests of the plugin contract
 * (tests/test_plugin_contract.c) and the plugin-fault fuzzer
 * (fuzz/plugin_faults.c).
 *
 * TP_FAULT=KIND[:N] chooses the fault; TP_FAULT_AT=K (default 1) the run's
 * rewrite at which a fault of a pass call happens; TP_FAULT_PIDS=FILE gets
 * the pid of every child the pass starts.
 * rewrite at which a fault of a pass call happens.  Each call bypasses up
 * to two Identity nodes (asking ph_ctx_rewrite_begin before each), and when
 * the run's K-th rewrite is granted, it misbehaves instead:
 *   crash     stores through NULL (SIGSEGV)      abort    abort()
 *   loop      never returns                      exit     exit(N)
 *   fork      forks N children that sleep, holding the pass's descriptors
 *             (stdout too), and goes on
 *   daemon    forks a child that leaves the process group (setsid) and
 *             sleeps, and goes on
 *   stdout    writes N bytes to its stdout (half printf, half write(1)),
 *             and goes on
 *   corrupt   points the first input of a node at another value behind
 *             the SDK's back (the use lists no longer match), and goes on:
 *             tp_fault_victim then crashes on that graph
 *   removed   marks a node removed behind the SDK's back and says it
 *             changed nothing
 *   rename    renames a node's output to the name of another value, in
 *             place (two values of one name: not SSA), says it changed
 *             nothing
 *   fresh_name  renames a node's output in place to a name no value has
 *             (the name map still holds the old one), says it changed
 *             nothing
 *   to_end    moves a node to the end of the node list behind the SDK's
 *             back (its order key kept), so that its readers come before
 *             it, says it changed nothing
 *   empty_op  clears a node's op_type
 * and, outside any call:
 *   ctor_loop, ctor_crash   in the plugin's constructor (dlopen)
 *   dtor_loop, dtor_crash   in its destructor (dlclose) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h" /* node and value layouts: the faults go behind the SDK's back */
#include <passhost/passhost.h>

static const char *fault(void)
{
    const char *f = getenv("TP_FAULT");
    return f ? f : "";
}

static int is(const char *kind)
{
    size_t n = strlen(kind);
    return strncmp(fault(), kind, n) == 0 && (fault()[n] == 0 || fault()[n] == ':');
}

static long arg(long dflt)
{
    const char *colon = strchr(fault(), ':');
    return colon ? strtol(colon + 1, NULL, 10) : dflt;
}

__attribute__((no_sanitize("address", "undefined"))) static void store_through_null(void)
{
    volatile int *volatile p = 0;
    *p = 42;
}

static void spin(void)
{
    for (volatile unsigned long i = 0;; i++)
        ;
}

__attribute__((constructor)) static void tp_fault_load(void)
{
    if (is("ctor_loop"))
        spin();
    if (is("ctor_crash"))
        store_through_null();
}

__attribute__((destructor)) static void tp_fault_unload(void)
{
    if (is("dtor_loop"))
        spin();
    if (is("dtor_crash"))
        store_through_null();
}

static void children(long n, int leave_group)
{
    const char *pids = getenv("TP_FAULT_PIDS"); /* each child's pid, for whoever checks on them */
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid > 0 && pids) {
            FILE *f = fopen(pids, "a");
            if (f) {
                fprintf(f, "%ld\n", (long)pid);
                fclose(f);
            }
        }
        if (pid == 0) {
            if (leave_group)
                setsid();
            sleep(300);
            _exit(0);
        }
    }
}

static void write_stdout(long n)
{
    char buf[256];
    memset(buf, 'x', sizeof buf);
    for (long left = n / 2; left > 0; left -= (long)sizeof buf)
        fwrite(buf, 1, left < (long)sizeof buf ? (size_t)left : sizeof buf, stdout);
    fflush(stdout);
    for (long left = n - n / 2; left > 0; left -= (long)sizeof buf)
        if (write(1, buf, left < (long)sizeof buf ? (size_t)left : sizeof buf) < 0)
            break;
}

/* The faults that change the graph behind the SDK's back; 1 when one was
 * made. */
static int graph_fault(ph_graph *g, ph_node *n)
{
    if (is("corrupt")) { /* the first input of n: another value, the use lists unchanged */
        for (ph_node *k = ph_graph_first_node(g); k; k = ph_node_next(k))
            if (k != n && ph_node_output_count(k) && ph_node_output(k, 0) != n->inputs[0] && n->n_inputs) {
                n->inputs[0] = ph_node_output(k, 0);
                return 1;
            }
        return 0;
    }
    if (is("removed")) {
        n->removed = 1;
        return 1;
    }
    if (is("rename")) {
        for (ph_node *k = ph_graph_first_node(g); k; k = ph_node_next(k))
            if (k != n && ph_node_output_count(k) && n->n_outputs && n->outputs[0]) {
                ph_value *v = n->outputs[0];
                char *name = strdup(ph_value_name(ph_node_output(k, 0)));
                if (!name)
                    return 0;
                v->name = name; /* the name map still has the old name; the old
                                   string is the model's (its arena), left as it is */
                return 1;
            }
        return 0;
    }
    if (is("fresh_name")) { /* a name no value has, in place: the map still has the old one */
        if (!n->n_outputs || !n->outputs[0])
            return 0;
        char *name = strdup("tp_fault_fresh_name");
        if (!name)
            return 0;
        n->outputs[0]->name = name;
        return 1;
    }
    if (is("to_end")) { /* n relinked after the last node, its order key kept: its readers come first */
        if (n == g->last || n == g->first)
            return 0;
        n->prev->next = n->next;
        n->next->prev = n->prev;
        n->prev = g->last;
        n->next = NULL;
        g->last->next = n;
        g->last = n;
        return 1;
    }
    if (is("empty_op"))
        return ph_node_set_op_type(n, "") == 0;
    return 0;
}

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    long at = getenv("TP_FAULT_AT") ? strtol(getenv("TP_FAULT_AT"), NULL, 10) : 1;
    int done = 0;
    for (ph_node *n = ph_graph_first_node(g), *next; n && done < 2; n = next) {
        next = ph_node_next(n);
        if (ph_node_op(n) != PH_OP_Identity || ph_node_input(n, 0) == NULL ||
            ph_value_graph_output_count(ph_node_output(n, 0)))
            continue;
        if (!ph_ctx_rewrite_begin(ctx, ph_node_name(n)))
            break;
        if ((long)ph_ctx_rewrite_count(ctx) == at) {
            if (is("crash"))
                store_through_null();
            if (is("abort"))
                abort();
            if (is("loop"))
                spin();
            if (is("exit"))
                exit((int)arg(0));
            if (is("fork"))
                children(arg(50), 0);
            if (is("daemon"))
                children(arg(1), 1);
            if (is("stdout"))
                write_stdout(arg(288));
            if (graph_fault(g, n))
                return 0; /* a fault behind the SDK's back: "nothing changed" */
        }
        if (ph_node_bypass(n, 0, ph_node_input(n, 0)) < 0)
            return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
        done++;
    }
    return done;
}

PH_PASS_DEFINE(.name = "tp_fault", .summary = "bypass Identity nodes, and misbehave as TP_FAULT says",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run = run)
