/* tests/test_worklist.c - one worklist for the rule sets of a stage
 * (ph_worklist, pattern.h): members run at their place and see what the
 * members before them changed, as separate rule-set runs would; agendas
 * survive the nodes the host frees between two passes; a model freed
 * under a worklist is forgotten; a member's first run meets its nodes in
 * the order a scan of the graph would (its rewrites enabling later nodes
 * in the same run); randomized stages agree with separate rule-set runs,
 * also with every set given twice, and with sets of the same patterns but
 * other conditions. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/passhost.h"
#include "testkit.h"

static int to_inner(ph_rewriter *rw, const ph_match *m)
{
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_match_value(m, "x")) ? PH_ENOMEM : 1;
}

static int relu_to_neg(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    return ph_rw_replace_root(rw, ph_rw_op(rw, "Neg", 1, &x));
}

/* Neg(Neg(x)) -> x; Abs(Abs(x)) -> Abs(x); Relu(Sigmoid(x)) -> Neg(x): the
 * last makes Negs the first can then remove. */
static const ph_rule neg_rules[] = {{"neg_neg", "a = Neg(x); y = Neg(a)", NULL, to_inner}, {0}};
static const ph_rule abs_rules[] = {{"abs_abs", "a = Abs(x); y = Abs(a)\n=>\ny = a", NULL, NULL}, {0}};
static const ph_rule relu_rules[] = {{"relu_sig", "a = Sigmoid(x); y = Relu(a)", NULL, relu_to_neg}, {0}};
/* Neg(Relu(x)) -> x (not an identity: only a stage to compare), on Neg
 * as neg_rules is, with another form */
static const ph_rule neg_relu_rules[] = {{"neg_relu", "a = Relu(x); y = Neg(a)", NULL, to_inner}, {0}};

/* A chain of ops from a seed: the stage tests' models. */
static ph_model *chain_model(const char *const *ops, size_t n, int outputs_every)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *v = tk_input(g, "x", 1, TK_I64(4));
    for (size_t i = 0; i < n; i++) {
        v = tk_op1(g, ops[i], v);
        if (outputs_every && i % (size_t)outputs_every == (size_t)outputs_every - 1)
            tk_output(g, tk_op1(g, "Tanh", v));
    }
    tk_output(g, v);
    return m;
}

/* Rounds of the members in order until one changes nothing: with one
 * worklist, or with each set run alone (ph_ruleset_run).  The total. */
static int stage(ph_model *m, ph_ruleset **sets, size_t n, int shared)
{
    ph_error err = {0};
    ph_worklist *wl = shared ? ph_worklist_new(sets, n, &err) : NULL;
    ck_assert(!shared || wl);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    int total = 0, round;
    for (round = 0; round < 50; round++) {
        int changed = 0;
        for (size_t i = 0; i < n; i++) {
            int r = shared ? ph_worklist_run(wl, i, ph_model_graph(m), NULL, ctx)
                           : ph_ruleset_run(sets[i], ph_model_graph(m), NULL, ctx);
            ck_assert_msg(r >= 0, "%s", ph_ctx_last_error(ctx));
            if (r > 0) { /* as the host does after a changing pass: frees removed nodes */
                ck_assert_int_eq(ph_graph_toposort(ph_model_graph(m)), 0);
                ph_model_collect(m);
            }
            changed += r;
        }
        total += changed;
        if (!changed)
            break;
    }
    ck_assert_int_lt(round, 50);
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), &err), 0);
    ph_ctx_free(ctx);
    ph_worklist_free(wl);
    return total;
}

static ph_ruleset **three_sets(void)
{
    static ph_ruleset *sets[3];
    ph_error err = {0};
    sets[0] = ph_ruleset_new(neg_rules, &err);
    sets[1] = ph_ruleset_new(abs_rules, &err);
    sets[2] = ph_ruleset_new(relu_rules, &err);
    ck_assert(sets[0] && sets[1] && sets[2]);
    return sets;
}

static void free_sets(ph_ruleset **sets, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ph_ruleset_free(sets[i]);
}

START_TEST(members_see_earlier_changes)
{
    static const char *const ops[] = {"Sigmoid", "Relu", "Neg", "Abs", "Abs", "Abs", "Sigmoid", "Relu",
                                      "Neg", "Neg", "Neg", "Sigmoid", "Relu", "Neg"};
    size_t n = sizeof ops / sizeof ops[0];
    ph_ruleset **sets = three_sets();
    ph_model *a = chain_model(ops, n, 0), *b = chain_model(ops, n, 0);
    int shared = stage(a, sets, 3, 1);
    for (size_t i = 0; i < 3; i++)
        ph_ruleset_reset(sets[i]);
    int alone = stage(b, sets, 3, 0);
    ck_assert_int_eq(shared, alone);
    char *sa = tk_graph_sig(ph_model_graph(a)), *sb = tk_graph_sig(ph_model_graph(b));
    ck_assert_str_eq(sa, sb);
    ck_assert_uint_eq(tk_count_op(ph_model_graph(a), PH_OP_Relu), 0);
    ck_assert_uint_eq(tk_count_op(ph_model_graph(a), PH_OP_Abs), 1);
    free(sa);
    free(sb);
    ph_model_free(a);
    ph_model_free(b);
    free_sets(sets, 3);
}
END_TEST

/* Nodes on a later member's agenda are freed (toposort collects what the
 * first member removed) before that member runs; and the model goes away
 * while the worklist stays. */
START_TEST(agendas_survive_freed_nodes_and_models)
{
    static const char *const ops[] = {"Neg", "Neg", "Abs", "Abs", "Neg", "Neg", "Abs", "Abs"};
    ph_ruleset **sets = three_sets();
    ph_error err = {0};
    ph_worklist *wl = ph_worklist_new(sets, 2, &err);
    ck_assert_uint_eq(ph_worklist_count(wl), 2);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    for (int model = 0; model < 3; model++) {
        ph_model *m = chain_model(ops, 8, 1);
        ph_graph *g = ph_model_graph(m);
        ck_assert_int_eq(ph_worklist_run(wl, 0, g, NULL, ctx), 0); /* a Tanh reads every middle value */
        ph_model_free(m);
        m = chain_model(ops, 8, 0);
        g = ph_model_graph(m);
        ck_assert_int_eq(ph_worklist_run(wl, 0, g, NULL, ctx), 2);
        ck_assert_int_eq(ph_graph_toposort(g), 0);
        ph_model_collect(m); /* frees the Negs, which the first look saw */
        ck_assert_int_eq(ph_worklist_run(wl, 1, g, NULL, ctx), 3); /* Abs x 4 -> Abs */
        ck_assert_int_eq(ph_worklist_run(wl, 0, g, NULL, ctx), 0);
        ck_assert_int_eq(ph_graph_verify(g, &err), 0);
        ph_model_free(m); /* the worklist forgets it */
    }
    ph_ctx_free(ctx);
    ph_worklist_free(wl);
    free_sets(sets, 3);
    ck_assert_ptr_null(ph_worklist_new((ph_ruleset *[]){NULL}, 1, &err));
    ck_assert_int_eq(err.code, PH_EINVAL);
}
END_TEST

/* A member's first run: in scan order (op, then the op index), and a node
 * its own rewrite enables later in that order is tried in the same run. */
static int to_relu(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    ph_node *n = ph_rw_node(rw, "Relu", 1, &x, 1);
    ph_node_set_name(n, "made");
    return ph_rw_replace_root(rw, ph_node_output(n, 0));
}

START_TEST(first_run_in_scan_order)
{
    /* Abs(Abs(x)) -> Relu(x), and Sigmoid(Relu(y)) -> y: the Sigmoid (an op
     * after Abs in the enum) matches only once the Abs pair is rewritten */
    static const ph_rule rules[] = {{"abs", "a = Abs(x); y = Abs(a)", NULL, to_relu},
                                    {"sig", "a = Relu(x); y = Sigmoid(a)", NULL, to_inner}, {0}};
    ph_error err = {0};
    ph_ruleset *rs = ph_ruleset_new(rules, &err);
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *v = tk_op1(g, "Sigmoid", tk_op1(g, "Abs", tk_op1(g, "Abs", tk_input(g, "x", 1, TK_I64(4)))));
    tk_neg_output(g, v);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(ph_ruleset_run(rs, g, NULL, ctx), 2); /* both in one run */
    ck_assert_uint_eq(ph_graph_node_count(g), 1); /* the Neg */
    ph_ctx_free(ctx);
    ph_ruleset_free(rs);
    ph_model_free(m);
}
END_TEST

/* 60 random chains of the sets' ops, random graph outputs in the middle:
 * one worklist of the n sets and separate runs end in the same graph,
 * with the same count. */
static void random_stages(ph_ruleset **sets, size_t n_sets, uint64_t seed)
{
    static const char *const pool[] = {"Neg", "Abs", "Sigmoid", "Relu", "Neg", "Abs"};
    for (int t = 0; t < 60; t++) {
        const char *ops[40];
        size_t n = 5 + (size_t)(t % 30);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            ops[i] = pool[(seed >> 33) % 6];
        }
        int every = (int)(seed >> 40) % 7;
        ph_model *a = chain_model(ops, n, every), *b = chain_model(ops, n, every);
        for (size_t i = 0; i < n_sets; i++)
            ph_ruleset_reset(sets[i]);
        int shared = stage(a, sets, n_sets, 1);
        for (size_t i = 0; i < n_sets; i++)
            ph_ruleset_reset(sets[i]);
        int alone = stage(b, sets, n_sets, 0);
        char *sa = tk_graph_sig(ph_model_graph(a)), *sb = tk_graph_sig(ph_model_graph(b));
        ck_assert_msg(shared == alone && !strcmp(sa, sb), "case %d: %d vs %d rewrites\n%s\nvs\n%s", t, shared,
                      alone, sa, sb);
        free(sa);
        free(sb);
        ph_model_free(a);
        ph_model_free(b);
    }
}

START_TEST(random_stages_agree)
{
    ph_ruleset **sets = three_sets();
    random_stages(sets, 3, 12345);
    free_sets(sets, 3);
}
END_TEST

/* Every set given twice, the copy right after its original (as a pass
 * compiled again under another name), and one more on Neg with another
 * form: members with the same forms share one answer per node at a look,
 * and still keep their own agendas. */
START_TEST(sets_given_twice_agree)
{
    ph_error err = {0};
    ph_ruleset *sets[7];
    const ph_rule *tables[4] = {neg_rules, abs_rules, relu_rules, neg_relu_rules};
    for (size_t i = 0; i < 7; i++)
        ck_assert(sets[i] = ph_ruleset_new(tables[i / 2], &err));
    random_stages(sets, 7, 777);
    free_sets(sets, 7);
}
END_TEST

/* Rule sets with the same patterns whose conditions differ (a look asks
 * the first of such twins, and puts the node on the agendas of all): each
 * still runs its own condition, at its own place.  On Neg and Abs both
 * (the first look's buckets per op), and on Neg alone, each refusing
 * everything first and accepting in its twin; a set between the twins. */
static int refuse(const ph_match *m, const ph_params *params)
{
    (void)m, (void)params;
    return 0;
}

static int accept(const ph_match *m, const ph_params *params)
{
    (void)m, (void)params;
    return 1;
}

static const ph_rule neg_abs_refusing[] = {{"neg_neg", "a = Neg(x); y = Neg(a)", refuse, to_inner},
                                           {"abs_abs", "a = Abs(x); y = Abs(a)\n=>\ny = a", refuse, NULL},
                                           {0}};
static const ph_rule neg_abs_accepting[] = {{"neg_neg", "a = Neg(x); y = Neg(a)", accept, to_inner},
                                            {"abs_abs", "a = Abs(x); y = Abs(a)\n=>\ny = a", accept, NULL},
                                            {0}};
static const ph_rule neg_refusing[] = {{"neg_neg", "a = Neg(x); y = Neg(a)", refuse, to_inner}, {0}};

START_TEST(twins_run_their_own_conditions)
{
    ph_error err = {0};
    const ph_rule *tables[5] = {neg_abs_refusing, relu_rules, neg_abs_accepting, neg_refusing, neg_rules};
    ph_ruleset *sets[5];
    for (size_t i = 0; i < 5; i++)
        ck_assert(sets[i] = ph_ruleset_new(tables[i], &err));
    random_stages(sets, 5, 4242);
    /* the accepting twins rewrite what the refusing ones left */
    static const char *const ops[] = {"Neg", "Neg", "Abs", "Abs", "Sigmoid", "Relu", "Neg"};
    ph_model *m = chain_model(ops, 7, 0);
    for (size_t i = 0; i < 5; i++)
        ph_ruleset_reset(sets[i]);
    ck_assert_int_eq(stage(m, sets, 5, 1), 4); /* Neg Neg, Abs Abs, Relu(Sigmoid) -> Neg, then Neg Neg */
    ck_assert_int_eq(ph_graph_node_count(ph_model_graph(m)), 1);
    ph_model_free(m);
    free_sets(sets, 5);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("worklist");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, members_see_earlier_changes);
    tcase_add_test(tc, agendas_survive_freed_nodes_and_models);
    tcase_add_test(tc, first_run_in_scan_order);
    tcase_add_test(tc, random_stages_agree);
    tcase_add_test(tc, sets_given_twice_agree);
    tcase_add_test(tc, twins_run_their_own_conditions);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
