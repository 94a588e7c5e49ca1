/* tests/test_runner.c - the stage runner: fixpoint rounds, the cap and its
 * warning for passes that undo each other, run-once passes after the loop,
 * order hints (and their cycles), failing passes, cycles left in the graph,
 * and --verify-each.  Models are built with the SDK builder API; passes are
 * the test plugins of tests/plugins, copied into a mkdtemp folder. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "base/exit.h"
#include "config/loader.h"
#include "config/plan.h"
#include "report/report.h"
#include "run/fingerprint.h"
#include "run/runner.h"
#include "testkit.h"
#include "tmpdir.h"

static const char *tmpdir;

static void setup(void)
{
    tmpdir = tk_tmpdir_make("runner");
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

static const char *const all_plugins[] = {
    "tp_good", "tp_one_step", "tp_flip_a", "tp_flip_b", "tp_once", "tp_order_a", "tp_order_b",
    "tp_order_c", "tp_cycle_x", "tp_cycle_y", "tp_fail", "tp_make_cycle", "tp_break_graph",
    "tp_rule_flip_a", "tp_rule_flip_b", "tp_rule_break", "tp_claims_nothing", "tp_rule_swap_a",
    "tp_rule_swap_b", "tp_rule_renew", NULL};

static host_registry *load_plugins(void)
{
    tk_copy_test_plugins(tmpdir, all_plugins);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_msg(host_registry_load_dir(reg, tmpdir, &err) == 0, "%s", err.message);
    return reg;
}

/* x -> Relu -> k x Identity -> Neg -> y */
static ph_model *chain_model(int k)
{
    static const int64_t dims[] = {2, 3};
    ph_model *m = ph_model_new(13);
    ck_assert_ptr_nonnull(m);
    ph_graph *g = ph_model_graph(m);
    ph_value *v = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, dims);
    ck_assert_ptr_nonnull(v);
    ph_node *n = ph_node_create(g, NULL, "Relu", 1, &v, 1);
    ck_assert_ptr_nonnull(n);
    v = ph_node_output(n, 0);
    for (int i = 0; i < k; i++) {
        n = ph_node_create(g, NULL, "Identity", 1, &v, 1);
        ck_assert_ptr_nonnull(n);
        v = ph_node_output(n, 0);
    }
    n = ph_node_create(g, NULL, "Neg", 1, &v, 1);
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(ph_graph_add_output(g, ph_node_output(n, 0)), 0);
    ck_assert_int_eq(ph_graph_verify(g, NULL), 0);
    return m;
}

/* One run of the optimize stage with the given --set overrides. */
typedef struct run_result {
    int rc;
    ph_error err;
    host_stage_stats stats;
    char *log;     /* what the runner logged (warnings) */
    size_t log_len;
} run_result;

static host_plan build_plan(host_registry *reg, const char *const *sets)
{
    host_config *cfg = host_config_new();
    ph_error err = {0};
    for (size_t i = 0; sets[i]; i++)
        ck_assert_msg(host_config_set(cfg, sets[i], &err) == 0, "%s", err.message);
    host_plan plan;
    ck_assert_msg(host_plan_build(&plan, cfg, reg, &err) == 0, "%s", err.message);
    host_config_free(cfg);
    return plan;
}

static run_result run_optimize(ph_model *m, const host_plan *plan, int verify_each)
{
    run_result r = {0};
    FILE *mem = open_memstream(&r.log, &r.log_len);
    ck_assert_ptr_nonnull(mem);
    host_log log = {.err = mem};
    ph_ctx *ctx = ph_ctx_new(host_log_sink, &log);
    host_run_opts opts = {.verify_each = verify_each, .log = &log};
    r.rc = host_run_stage(m, &plan->stage[HOST_STAGE_OPTIMIZE], ctx, &opts, &r.stats, &r.err);
    ph_ctx_free(ctx);
    fclose(mem);
    return r;
}

static void free_result(run_result *r)
{
    host_stage_stats_free(&r->stats);
    free(r->log);
}

static const host_pass_stats *stats_of(const run_result *r, const char *name)
{
    for (size_t i = 0; i < r->stats.count; i++)
        if (strcmp(r->stats.passes[i].name, name) == 0)
            return &r->stats.passes[i];
    ck_abort_msg("no stats for %s", name);
    return NULL;
}

START_TEST(fixpoint_in_expected_rounds)
{
    host_registry *reg = load_plugins();
    const char *sets[] = {"optimize.pass_on=tp_one_step", NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(4);
    run_result r = run_optimize(m, &plan, 1);
    ck_assert_msg(r.rc == 0, "%s", r.err.message);
    /* 4 rounds that each remove one Identity, then one that sees no change */
    ck_assert_int_eq(r.stats.rounds, 5);
    ck_assert_int_eq(r.stats.hit_cap, 0);
    const host_pass_stats *p = stats_of(&r, "tp_one_step");
    ck_assert_uint_eq(p->calls, 5);
    ck_assert_int_eq(p->rewrites, 4);
    ck_assert_uint_eq(p->nodes_before, 6);
    ck_assert_uint_eq(p->nodes_after, 2);
    ck_assert_uint_eq(r.stats.nodes_before, 6);
    ck_assert_uint_eq(r.stats.nodes_after, 2);
    ck_assert_uint_eq(ph_model_node_count(m), 2);
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), NULL), 0);
    ck_assert_uint_eq(r.log_len, 0);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

START_TEST(cap_stops_a_slow_pass)
{
    host_registry *reg = load_plugins();
    const char *sets[] = {"optimize.pass_on=tp_one_step", "optimize.max_iterations=3", NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(4);
    run_result r = run_optimize(m, &plan, 0);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.stats.rounds, 3);
    ck_assert_int_eq(r.stats.hit_cap, 1);
    ck_assert_uint_eq(ph_model_node_count(m), 3);
    ck_assert_msg(r.log && strstr(r.log, "tp_one_step") && strstr(r.log, "3 rounds"), "log: %s",
                  r.log ? r.log : "");
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

/* tp_flip_a and tp_flip_b undo each other: round 3 ends with the graph
 * round 2 ended with (the node count never changes, so the fingerprints of
 * rounds 2 and 3 are compared), one more round (fingerprints after each
 * call) finds that both do change it, and the stage stops there, naming
 * both. */
START_TEST(oscillation_is_named)
{
    host_registry *reg = load_plugins();
    const char *sets[] = {"optimize.pass_on=tp_flip_a,tp_flip_b,tp_good",
                          "optimize.max_iterations=6", NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(1);
    run_result r = run_optimize(m, &plan, 1);
    ck_assert_msg(r.rc == 0, "%s", r.err.message);
    ck_assert_int_eq(r.stats.rounds, 4);
    ck_assert_int_eq(r.stats.hit_cap, 0);
    ck_assert_int_eq(r.stats.stalled, 1);
    ck_assert_uint_eq(stats_of(&r, "tp_flip_a")->calls, 4);
    ck_assert_uint_eq(stats_of(&r, "tp_flip_b")->calls, 4);
    ck_assert_int_eq(stats_of(&r, "tp_flip_a")->rewrites, 4 * 3);
    ck_assert_ptr_nonnull(r.log);
    ck_assert_msg(strstr(r.log, "warning") && strstr(r.log, "undo each other") &&
                  strstr(r.log, "tp_flip_a, tp_flip_b"), "log: %s", r.log);
    ck_assert_msg(strstr(r.log, "tp_good") == NULL, "tp_good did not change: %s", r.log);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

/* The same with rule passes, which the stage runs through one worklist:
 * each pass's calls and rewrites are its own, the report as for passes
 * that walk the graph themselves.  Their declarative results make the
 * replacing node's output under a fresh name each time, so no round ends
 * with the graph the round before ended with, only with the same structure
 * (fingerprint.h): rounds 3 and 4 repeat round 2's, and round 5 names the
 * pair, long before the cap. */
START_TEST(rule_passes_oscillate_through_the_worklist)
{
    host_registry *reg = load_plugins();
    const char *sets[] = {"optimize.pass_on=tp_rule_flip_a,tp_rule_flip_b,tp_good", "optimize.max_iterations=16",
                          NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(1);
    run_result r = run_optimize(m, &plan, 1);
    ck_assert_msg(r.rc == 0, "%s", r.err.message);
    ck_assert_int_eq(r.stats.rounds, 5);
    ck_assert_int_eq(r.stats.hit_cap, 0);
    ck_assert_int_eq(r.stats.stalled, 1);
    ck_assert_uint_eq(stats_of(&r, "tp_rule_flip_a")->calls, 5);
    ck_assert_uint_eq(stats_of(&r, "tp_rule_flip_b")->calls, 5);
    ck_assert_int_eq(stats_of(&r, "tp_rule_flip_a")->rewrites, 5);
    ck_assert_int_eq(stats_of(&r, "tp_rule_flip_b")->rewrites, 5);
    ck_assert_ptr_nonnull(r.log);
    ck_assert_msg(strstr(r.log, "warning") &&
                  strstr(r.log, "round 4 left the graph as it was but for names: these passes undo each "
                                "other's rewrites: tp_rule_flip_a, tp_rule_flip_b; stopped after round 5"),
                  "log: %s", r.log);
    ck_assert_msg(strstr(r.log, "tp_good") == NULL && strstr(r.log, "max_iterations") == NULL, "log: %s", r.log);
    ck_assert_str_eq(ph_node_op_type(ph_graph_first_node(ph_model_graph(m))), "Relu");
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), NULL), 0);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);

    /* without the other: one rewrite, then a round that sees no change */
    const char *one[] = {"optimize.pass_on=tp_rule_flip_a", NULL};
    plan = build_plan(reg, one);
    m = chain_model(1);
    r = run_optimize(m, &plan, 1);
    ck_assert_msg(r.rc == 0, "%s", r.err.message);
    ck_assert_int_eq(r.stats.rounds, 2);
    ck_assert_int_eq(r.stats.hit_cap, 0);
    ck_assert_int_eq(stats_of(&r, "tp_rule_flip_a")->rewrites, 1);
    ck_assert_str_eq(ph_node_op_type(ph_graph_first_node(ph_model_graph(m))), "Sigmoid");
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

/* x -> Neg -> Sin -> Exp -> y, with the node and value names given. */
static ph_model *neg_sin_model(void)
{
    static const int64_t dims[] = {2, 3};
    ph_model *m = ph_model_new(13);
    ck_assert_ptr_nonnull(m);
    ph_graph *g = ph_model_graph(m);
    ph_value *v = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, dims);
    static const char *const ops[] = {"Neg", "Sin", "Exp"};
    for (int i = 0; i < 3; i++) {
        ph_node *n = ph_node_create(g, NULL, ops[i], 1, &v, 1);
        ck_assert_ptr_nonnull(n);
        ck_assert_int_eq(ph_node_set_name(n, ops[i]), 0);
        v = ph_node_output(n, 0);
    }
    ck_assert_int_eq(ph_graph_add_output(g, v), 0);
    ck_assert_int_eq(ph_graph_verify(g, NULL), 0);
    return m;
}

/* Two rules whose declarative results of two nodes undo each other: each
 * rewrite makes one node under a fresh name and both outputs under fresh
 * names, so the graph repeats only names aside.  The stage stops after
 * the round that shows it and names both; the model is still one that
 * computes Exp(Sin(-x)), and the numbers say so. */
START_TEST(declarative_results_that_undo_each_other_are_named)
{
    host_registry *reg = load_plugins();
    const char *sets[] = {"optimize.pass_on=tp_rule_swap_a,tp_rule_swap_b", "optimize.max_iterations=16", NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = neg_sin_model(), *before = neg_sin_model();
    run_result r = run_optimize(m, &plan, 1);
    ck_assert_msg(r.rc == 0, "%s", r.err.message);
    ck_assert_int_eq(r.stats.rounds, 5);
    ck_assert_int_eq(r.stats.hit_cap, 0);
    ck_assert_int_eq(r.stats.stalled, 1);
    ck_assert_int_eq(stats_of(&r, "tp_rule_swap_a")->rewrites, 5);
    ck_assert_int_eq(stats_of(&r, "tp_rule_swap_b")->rewrites, 5);
    ck_assert_msg(r.log && strstr(r.log, "but for names: these passes undo each other's rewrites: "
                                         "tp_rule_swap_a, tp_rule_swap_b; stopped after round 5"),
                  "log: %s", r.log ? r.log : "");
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_verify(g, NULL), 0);
    ck_assert_uint_eq(ph_model_node_count(m), 3);
    const ph_node *first = ph_graph_first_node(g);
    ck_assert_str_eq(ph_node_op_type(first), "Neg"); /* swap_b ran last: Sin(Neg(x)) again */
    ck_assert_str_eq(ph_node_name(ph_node_next(first)), "Sin"); /* the root's name kept */
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), ph_value_name(ph_graph_output(ph_model_graph(before), 0)));
    tk_assert_same_outputs(before, m, 7);
    free_result(&r);
    ph_model_free(m);
    ph_model_free(before);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

/* A pass whose result is its pattern changes only names, each call: named
 * as such (its rewrites counted), not as one undoing another. */
START_TEST(pass_changing_only_names_is_named)
{
    host_registry *reg = load_plugins();
    const char *sets[] = {"optimize.pass_on=tp_rule_renew,tp_good", "optimize.max_iterations=16", NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(1);
    run_result r = run_optimize(m, &plan, 1);
    ck_assert_msg(r.rc == 0, "%s", r.err.message);
    ck_assert_int_eq(r.stats.rounds, 5);
    ck_assert_int_eq(r.stats.stalled, 1);
    ck_assert_int_eq(r.stats.hit_cap, 0);
    ck_assert_msg(r.log && strstr(r.log, "round 4 left the graph as it was but for names, yet passes reported "
                                         "rewrites; these change only the names of nodes and values: "
                                         "tp_rule_renew (1 rewrite); stopped after round 5"),
                  "log: %s", r.log ? r.log : "");
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), NULL), 0);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

/* x -> Relu -> Sub(., c) -> y, with what the fingerprint cases vary. */
typedef struct fp_case {
    const char *x, *c, *relu; /* input, initializer and node names */
    const char *op;           /* Relu, or another unary op */
    float c2;                 /* c = [1, c2, 3] */
    int swap;                 /* Sub(c, a) */
    int64_t rows;             /* x: float[rows, 3] */
    int two_outputs;          /* the Relu's output is a graph output too */
} fp_case;

static host_fingerprint fingerprint_of(fp_case k)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, k.x, PH_DT_FLOAT, 2, (int64_t[]){k.rows, 3});
    ph_value *c = ph_graph_add_initializer(g, k.c, ph_tensor_new(PH_DT_FLOAT, 1, (int64_t[]){3},
                                                                 (float[]){1, k.c2, 3}));
    ph_node *r = ph_node_create(g, NULL, k.op, 1, &x, 1);
    ck_assert_int_eq(ph_node_set_name(r, k.relu), 0);
    ph_value *a = ph_node_output(r, 0);
    ph_node *sub = ph_node_create(g, NULL, "Sub", 2, k.swap ? (ph_value *[]){c, a} : (ph_value *[]){a, c}, 1);
    ck_assert_int_eq(ph_graph_add_output(g, ph_node_output(sub, 0)), 0);
    if (k.two_outputs)
        ck_assert_int_eq(ph_graph_add_output(g, a), 0);
    ck_assert_int_eq(ph_graph_infer_shapes(g, NULL), 0);
    ph_hmap *ids = ph_hmap_new(NULL, NULL);
    host_fingerprint fp, again;
    ck_assert_int_eq(host_model_fingerprint(m, ids, &fp), 0);
    ck_assert_int_eq(host_model_fingerprint(m, ids, &again), 0); /* the map is reused */
    ck_assert(fp.exact == again.exact && fp.structure == again.structure);
    ph_hmap_free(ids);
    ph_model_free(m);
    return fp;
}

/* The structure fingerprint leaves out the names of nodes and of values
 * inside the graph (here an initializer's), and nothing else: operand
 * order, ops, types, small constants and the model's input names count.
 * (Two models: the exact fingerprints differ anyway, by the initializers'
 * identity.) */
START_TEST(structure_fingerprint_is_the_graph_names_aside)
{
    const fp_case base = {.x = "x", .c = "c", .relu = "relu", .op = "Relu", .c2 = 2, .rows = 2};
    host_fingerprint f = fingerprint_of(base);
    fp_case k = base;
    k.c = "k", k.relu = "other";
    ck_assert(fingerprint_of(k).structure == f.structure);
    fp_case other[6];
    for (int i = 0; i < 6; i++)
        other[i] = base;
    other[0].swap = 1;
    other[1].op = "Sigmoid";
    other[2].c2 = 5;
    other[3].x = "w";
    other[4].rows = 4;
    other[5].two_outputs = 1;
    for (int i = 0; i < 6; i++)
        ck_assert_msg(fingerprint_of(other[i]).structure != f.structure, "case %d", i);
    ck_assert_int_eq(host_model_fingerprint(NULL, NULL, &f), PH_ENOMEM); /* no map */
}
END_TEST

/* A pass that reports a rewrite on every call and changes nothing is named
 * as such (the stage stops after the round that shows it, not at the cap),
 * also next to a pass that really changes the graph meanwhile. */
START_TEST(pass_claiming_changes_it_does_not_make_is_named)
{
    host_registry *reg = load_plugins();
    const char *sets[] = {"optimize.pass_on=tp_claims_nothing,tp_one_step",
                          "optimize.max_iterations=16", NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(2); /* tp_one_step needs 2 rounds */
    run_result r = run_optimize(m, &plan, 1);
    ck_assert_msg(r.rc == 0, "%s", r.err.message);
    ck_assert_int_eq(r.stats.hit_cap, 0);
    ck_assert_int_eq(r.stats.stalled, 1);
    /* rounds 1, 2 remove an Identity each; rounds 3 and 4 change nothing but
     * are reported (the fingerprint of 3 is the first taken, the node count
     * having changed before); round 5 names the pass */
    ck_assert_int_eq(r.stats.rounds, 5);
    ck_assert_msg(strstr(r.log, "report rewrites but change nothing: tp_claims_nothing (1 rewrite)") &&
                  !strstr(r.log, "tp_one_step"), "log: %s", r.log);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

static size_t count_op(ph_model *m, ph_op op)
{
    size_t n = 0;
    for (ph_node *x = ph_graph_first_node(ph_model_graph(m)); x; x = ph_node_next(x))
        n += ph_node_op(x) == op;
    return n;
}

/* A default rule pass switched off with pass_off is not in the stage's
 * worklist: the bundled eliminate_identity removes the chain's Identity
 * nodes, and leaves them when off. */
START_TEST(pass_off_takes_a_rule_pass_out)
{
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_msg(host_registry_load_dir(reg, PH_BUILD_DIR "/plugins", &err) == 0, "%s", err.message);
    const char *none[] = {NULL}, *off[] = {"optimize.pass_off=eliminate_identity", NULL};
    for (int k = 0; k < 2; k++) {
        host_plan plan = build_plan(reg, k ? off : none);
        ph_model *m = chain_model(3);
        run_result r = run_optimize(m, &plan, 1);
        ck_assert_msg(r.rc == 0, "%s", r.err.message);
        ck_assert_uint_eq(count_op(m, PH_OP_Identity), k ? 3 : 0);
        int found = 0;
        for (size_t i = 0; i < r.stats.count; i++)
            found |= strcmp(r.stats.passes[i].name, "eliminate_identity") == 0;
        ck_assert_int_eq(found, !k);
        if (!k)
            ck_assert_int_eq(stats_of(&r, "eliminate_identity")->rewrites, 3);
        free_result(&r);
        ph_model_free(m);
        host_plan_free(&plan);
    }
    host_registry_free(reg);
}
END_TEST

START_TEST(run_once_after_the_loop)
{
    host_registry *reg = load_plugins();
    /* tp_once sorts before tp_one_step but runs after the fixpoint */
    const char *sets[] = {"optimize.pass_on=tp_once,tp_one_step", NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(3);
    run_result r = run_optimize(m, &plan, 1);
    ck_assert_msg(r.rc == 0, "%s", r.err.message);
    ck_assert_int_eq(r.stats.rounds, 4);
    const host_pass_stats *once = stats_of(&r, "tp_once");
    ck_assert_uint_eq(once->calls, 1);
    ck_assert_int_eq(once->rewrites, 1);
    ck_assert_uint_eq(once->nodes_before, 2); /* the Identities were gone */
    ph_node *first = ph_graph_first_node(ph_model_graph(m));
    ck_assert_int_eq(ph_node_attr_int(first, "tp_once_calls", 0), 1);
    free_result(&r);
    ph_model_free(m);

    /* a stage of only run-once passes: no rounds, one call */
    const char *only[] = {"optimize.pass_on=tp_once", NULL};
    host_plan_free(&plan);
    plan = build_plan(reg, only);
    m = chain_model(0);
    r = run_optimize(m, &plan, 0);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.stats.rounds, 0);
    ck_assert_uint_eq(stats_of(&r, "tp_once")->calls, 1);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

START_TEST(empty_stage)
{
    host_registry *reg = load_plugins();
    const char *sets[] = {NULL};
    host_plan plan = build_plan(reg, sets); /* no test pass is on by default */
    ph_model *m = chain_model(2);
    run_result r = run_optimize(m, &plan, 0);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.stats.rounds, 0);
    ck_assert_uint_eq(r.stats.count, 0);
    ck_assert_uint_eq(ph_model_node_count(m), 4);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

START_TEST(order_hints)
{
    host_registry *reg = load_plugins();
    /* catalogue order: tp_good, tp_order_a, tp_order_b, tp_order_c;
     * hints: b before a (a.run_after), c before b (c.run_before);
     * a's hint naming a pass that is not loaded is ignored */
    const char *sets[] = {"optimize.pass_on=tp_order_a,tp_order_b,tp_order_c,tp_good", NULL};
    host_plan plan = build_plan(reg, sets);
    const host_stage_plan *sp = &plan.stage[HOST_STAGE_OPTIMIZE];
    ck_assert_uint_eq(sp->count, 4);
    const char *want[] = {"tp_good", "tp_order_c", "tp_order_b", "tp_order_a"};
    for (size_t i = 0; i < 4; i++)
        ck_assert_str_eq(sp->steps[i].plugin->desc->name, want[i]);
    host_plan_free(&plan);

    /* a hint naming a pass not in the list is ignored */
    const char *two[] = {"optimize.pass_on=tp_order_a,tp_order_c", NULL};
    plan = build_plan(reg, two);
    sp = &plan.stage[HOST_STAGE_OPTIMIZE];
    ck_assert_str_eq(sp->steps[0].plugin->desc->name, "tp_order_a");
    ck_assert_str_eq(sp->steps[1].plugin->desc->name, "tp_order_c");
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

START_TEST(order_cycle)
{
    host_registry *reg = load_plugins();
    host_config *cfg = host_config_new();
    ph_error err = {0};
    ck_assert_int_eq(host_config_set(cfg, "optimize.pass_on=tp_cycle_x,tp_good,tp_cycle_y", &err),
                     0);
    host_plan plan;
    ck_assert_int_eq(host_plan_build(&plan, cfg, reg, &err), HOST_EXIT_PASS);
    ck_assert_msg(strstr(err.message, "cycle") && strstr(err.message, "tp_cycle_x") &&
                  strstr(err.message, "tp_cycle_y") && !strstr(err.message, "tp_good"),
                  "%s", err.message);
    host_config_free(cfg);
    host_registry_free(reg);
}
END_TEST

static void expect_stage_error(const char *pass_on, int verify_each, const char *frag)
{
    host_registry *reg = load_plugins();
    char set[200];
    snprintf(set, sizeof set, "optimize.pass_on=%s", pass_on);
    const char *sets[] = {set, NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(1);
    run_result r = run_optimize(m, &plan, verify_each);
    ck_assert_int_eq(r.rc, HOST_EXIT_PASS);
    ck_assert_msg(strstr(r.err.message, frag) != NULL, "'%s' not in: %s", frag, r.err.message);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}

START_TEST(failing_pass)
{
    expect_stage_error("tp_fail", 0, "pass tp_fail: failed: deliberate failure");
}
END_TEST

START_TEST(cycle_in_graph)
{
    expect_stage_error("tp_make_cycle", 0, "pass tp_make_cycle: left a cycle");
}
END_TEST

START_TEST(verify_each_names_the_pass)
{
    expect_stage_error("tp_good,tp_break_graph", 1, "pass tp_break_graph: broke the graph");
    expect_stage_error("tp_good,tp_rule_break", 1, "pass tp_rule_break: broke the graph");

    /* without --verify-each the runner does not look */
    host_registry *reg = load_plugins();
    const char *sets[] = {"optimize.pass_on=tp_break_graph", NULL};
    host_plan plan = build_plan(reg, sets);
    ph_model *m = chain_model(1);
    run_result r = run_optimize(m, &plan, 0);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_ne(ph_graph_verify(ph_model_graph(m), NULL), 0);
    free_result(&r);
    ph_model_free(m);
    host_plan_free(&plan);
    host_registry_free(reg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("runner");
    TCase *tc = tcase_create("stage");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fixpoint_in_expected_rounds);
    tcase_add_test(tc, cap_stops_a_slow_pass);
    tcase_add_test(tc, oscillation_is_named);
    tcase_add_test(tc, rule_passes_oscillate_through_the_worklist);
    tcase_add_test(tc, declarative_results_that_undo_each_other_are_named);
    tcase_add_test(tc, pass_changing_only_names_is_named);
    tcase_add_test(tc, structure_fingerprint_is_the_graph_names_aside);
    tcase_add_test(tc, pass_off_takes_a_rule_pass_out);
    tcase_add_test(tc, pass_claiming_changes_it_does_not_make_is_named);
    tcase_add_test(tc, run_once_after_the_loop);
    tcase_add_test(tc, empty_stage);
    tcase_add_test(tc, order_hints);
    tcase_add_test(tc, order_cycle);
    tcase_add_test(tc, failing_pass);
    tcase_add_test(tc, cycle_in_graph);
    tcase_add_test(tc, verify_each_names_the_pass);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
