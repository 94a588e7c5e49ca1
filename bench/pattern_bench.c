/* bench/pattern_bench.c - the cost of pattern matching on large graphs.
 *
 *   pattern_bench N [REPS]
 *
 * Builds, in memory with the public SDK, a graph of about N nodes made of
 * blocks of 8:
 *
 *     a = Mul(x, s)  b = Add(a, t)  c = Relu(b)  y = Sigmoid(c)      (the pattern)
 *     p = Neg(y)  q = Abs(p)  r = Exp(q)  x' = Log(r)                 (filler)
 *
 * and matches the 4-node pattern
 *
 *     a = Mul(v, s:const); b = Add(a, t:const); c = Relu(b); y = Sigmoid(c)
 *
 * three ways, printing one line each (best of REPS):
 *   match   every node of the graph offered to ph_pattern_match_at (the
 *           engine's per-candidate cost, 1 in 8 a match);
 *   scan    ph_ruleset_run with a rewrite that declines: the op-type index
 *           finds the Sigmoids, each is matched (the whole cost of a pass's
 *           first round that finds matches but changes nothing);
 *   nomatch the same graph with the Add replaced by Sub: every Sigmoid is a
 *           candidate and fails at the third statement;
 *   rewrite ph_ruleset_run whose rewrite replaces the four nodes by one
 *           HardSigmoid-like node (Sigmoid(Relu(...)) kept simple: one new
 *           Sigmoid of the Mul's input), committing every match;
 *   rerun   a second ph_ruleset_run after the rewrite: only what changed is
 *           visited (here that is every block, so it costs about a scan);
 *   idle    a third ph_ruleset_run with nothing changed since: nothing to
 *           visit, whatever the graph's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static ph_value *op(ph_graph *g, const char *type, ph_value *a, ph_value *b)
{
    ph_value *in[2] = {a, b};
    ph_node *n = ph_node_create(g, NULL, type, b ? 2 : 1, in, 1);
    if (!n) {
        fprintf(stderr, "pattern_bench: out of memory\n");
        exit(1);
    }
    return ph_node_output(n, 0);
}

static ph_model *build(long nodes, int with_sub)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    int64_t dims[1] = {4};
    float one = 1.0f;
    ph_value *s = ph_graph_add_initializer(g, "s", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &one));
    ph_value *t = ph_graph_add_initializer(g, "t", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &one));
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, dims);
    for (long b = 0; b < nodes / 8; b++) {
        ph_value *y = op(g, "Sigmoid", op(g, "Relu", op(g, with_sub ? "Sub" : "Add", op(g, "Mul", x, s), t), NULL), NULL);
        x = op(g, "Log", op(g, "Exp", op(g, "Abs", op(g, "Neg", y, NULL), NULL), NULL), NULL);
    }
    ph_graph_add_output(g, x);
    return m;
}

static const char *pattern_text = "a = Mul(v, s:const); b = Add(a, t:const); c = Relu(b); y = Sigmoid(c)";

static int decline(ph_rewriter *rw, const ph_match *m) { return 0; }

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    ph_value *v = ph_match_value(m, "v");
    ph_value *r = ph_rw_op(rw, "Sigmoid", 1, &v);
    return r && ph_rw_replace(rw, ph_match_value(m, "y"), r) == 0 ? 1 : PH_ENOMEM;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 8 || reps < 1) {
        fprintf(stderr, "usage: pattern_bench NODES [REPS]\n");
        return 2;
    }
    ph_error err = {0};
    ph_pattern *p = ph_pattern_parse(pattern_text, &err);
    ph_match *mt = p ? ph_match_new(p) : NULL;
    const ph_rule declines[] = {{"bench", pattern_text, NULL, decline}, {0}};
    const ph_rule fuses[] = {{"bench", pattern_text, NULL, fuse}, {0}};
    if (!mt) {
        fprintf(stderr, "pattern_bench: %s\n", err.message);
        return 1;
    }
    double best[6] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
    long found[6] = {0};
    size_t total = 0;
    for (int r = 0; r < reps; r++) {
        /* match: every node offered to the matcher */
        ph_model *m = build(n, 0);
        ph_graph *g = ph_model_graph(m);
        total = ph_graph_node_count(g);
        double t0 = now_ms();
        long k = 0;
        for (ph_node *nd = ph_graph_first_node(g); nd; nd = ph_node_next(nd))
            k += ph_pattern_match_at(p, nd, mt);
        double t1 = now_ms();
        if (t1 - t0 < best[0])
            best[0] = t1 - t0;
        found[0] = k;
        /* scan: the driver's first round, declining every match */
        ph_ruleset *rs = ph_ruleset_new(declines, &err);
        t0 = now_ms();
        ph_ruleset_run(rs, g, NULL, NULL);
        t1 = now_ms();
        if (t1 - t0 < best[1])
            best[1] = t1 - t0;
        found[1] = k;
        ph_ruleset_free(rs);
        /* rewrite, then rerun */
        rs = ph_ruleset_new(fuses, &err);
        t0 = now_ms();
        int w = ph_ruleset_run(rs, g, NULL, NULL);
        t1 = now_ms();
        ph_model_collect(m);
        double t2 = now_ms();
        int w2 = ph_ruleset_run(rs, g, NULL, NULL);
        double t3 = now_ms();
        ph_model_collect(m);
        double t4 = now_ms();
        found[5] = ph_ruleset_run(rs, g, NULL, NULL);
        double t5 = now_ms();
        if (t5 - t4 < best[5])
            best[5] = t5 - t4;
        if (t1 - t0 < best[3])
            best[3] = t1 - t0;
        if (t3 - t2 < best[4])
            best[4] = t3 - t2;
        found[3] = w;
        found[4] = w2;
        ph_ruleset_free(rs);
        ph_model_free(m);
        /* nomatch: every Sigmoid a candidate, none matches */
        m = build(n, 1);
        g = ph_model_graph(m);
        rs = ph_ruleset_new(declines, &err);
        t0 = now_ms();
        int w3 = ph_ruleset_run(rs, g, NULL, NULL);
        t1 = now_ms();
        if (t1 - t0 < best[2])
            best[2] = t1 - t0;
        found[2] = w3;
        ph_ruleset_free(rs);
        ph_model_free(m);
    }
    static const char *const names[] = {"match", "scan", "nomatch", "rewrite", "rerun", "idle"};
    for (int i = 0; i < 6; i++)
        printf("%-8s nodes=%zu ms=%.2f ns_per_node=%.1f matches_or_rewrites=%ld\n", names[i], total,
               best[i], best[i] * 1e6 / (double)total, found[i]);
    ph_match_free(mt);
    ph_pattern_free(p);
    return 0;
}
