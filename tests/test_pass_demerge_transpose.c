/* tests/test_pass_demerge_transpose.c - demerge_transpose: a Transpose
 * moving more than two dims becomes a chain of two-dim swaps. */
#include <stdio.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("demerge_transpose")

/* Walk the Transposes from the one reading `from` to the graph output's
 * producer chain in g: each must swap exactly two dims; their composite
 * (c[j] = p1[p2[...]]) must equal want.  Returns how many there are. */
static int check_swaps(ph_graph *g, ph_value *from, size_t rank, const int64_t *want)
{
    int64_t c[16];
    for (size_t i = 0; i < rank; i++)
        c[i] = (int64_t)i;
    int count = 0;
    ph_value *v = from;
    for (;;) {
        ph_node *t = ph_value_use_count(v) == 1 ? ph_value_use(v, 0, NULL) : NULL;
        if (!t || ph_node_op(t) != PH_OP_Transpose)
            break;
        const int64_t *p;
        ck_assert_int_eq(ph_node_attr_ints(t, "perm", &p), (ptrdiff_t)rank);
        int moved = 0;
        for (size_t i = 0; i < rank; i++)
            moved += p[i] != (int64_t)i;
        ck_assert_int_eq(moved, 2);
        int64_t n[16];
        for (size_t j = 0; j < rank; j++)
            n[j] = c[p[j]];
        memcpy(c, n, rank * sizeof c[0]);
        count++;
        v = ph_node_output(t, 0);
    }
    for (size_t i = 0; i < rank; i++)
        ck_assert_msg(c[i] == want[i], "composite[%zu] = %lld, want %lld", i, (long long)c[i],
                      (long long)want[i]);
    (void)g;
    return count;
}

/* The expected chain: n Transposes from `from` into `tail` ("y = Neg(t)"
 * or "y = Transpose(t)" with t the last). */
static const char *chain(const char *from, int n, const char *last)
{
    static char buf[512];
    int len = 0;
    const char *prev = from;
    char name[8][16];
    for (int i = 0; i < n - 1; i++) {
        snprintf(name[i], sizeof name[i], "t%d", i);
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%s = Transpose(%s)\n", name[i], prev);
        prev = name[i];
    }
    snprintf(buf + len, sizeof buf - (size_t)len, last, prev);
    return buf;
}

/* Run the pass on `graph` (the case checked its numbers and pattern) and
 * check the chain after the value named `from`: two-dim swaps composing
 * `want`, `count` of them. */
static void assert_swaps(const char *graph, size_t rank, const int64_t *want, int count)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_input(g, 0);
    ph_node *relu = ph_value_sole_consumer(x);
    if (relu && ph_node_op(relu) == PH_OP_Relu)
        x = ph_node_output(relu, 0);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_int_eq(check_swaps(g, x, rank, want), count);
    ph_model_free(m);
}

START_TEST(descriptor)
{
    ck_assert_str_eq(pass->name, "demerge_transpose");
    ck_assert_uint_eq(pass->stages, PH_STAGE_ADAPT);
    ck_assert_int_eq(pass->on_by_default, 0);
    ck_assert_int_eq(pass->run_once, 1);
    ck_assert_int_eq(pass->exactness, PH_EXACT);
}
END_TEST

static const struct {
    const char *graph;
    size_t rank;
    int64_t perm[6];
    int swaps;
} cycles[] = {
    /* NCHW -> NHWC: (0,2,3,1) is one 3-cycle: two swaps */
    {"x: float[2,3,4,5]; r = Relu(x); t = Transpose(r) {perm=[0,2,3,1]}; y = Neg(t)\nreturn y", 4, {0, 2, 3, 1}, 2},
    /* a 5-cycle needs four swaps */
    {"x: float[2,3,4,5,6]; r = Relu(x); t = Transpose(r) {perm=[1,2,3,4,0]}; y = Neg(t)\nreturn y", 5,
     {1, 2, 3, 4, 0}, 4},
    /* (3,2,1,0) = two disjoint 2-cycles: two swaps (not three) */
    {"x: float[2,3,4,5]; r = Relu(x); t = Transpose(r) {perm=[3,2,1,0]}; y = Neg(t)\nreturn y", 4, {3, 2, 1, 0}, 2},
    /* (2,0,1,4,5,3): two 3-cycles, 6 dims moved: four swaps */
    {"x: float[2,3,1,4,2,3]; r = Relu(x); t = Transpose(r) {perm=[2,0,1,4,5,3]}; y = Neg(t)\nreturn y", 6,
     {2, 0, 1, 4, 5, 3}, 4},
};

START_TEST(cycles_become_swaps)
{
    char expect[600];
    snprintf(expect, sizeof expect, "r = Relu(x)\n%s", chain("r", cycles[_i].swaps + 1, "y = Neg(%s)"));
    PC_CASE(cycles[_i].graph, 1, expect);
    assert_swaps(cycles[_i].graph, cycles[_i].rank, cycles[_i].perm, cycles[_i].swaps);
}
END_TEST

/* A missing perm at rank 4 reverses the dims; the chain keeps y's name. */
START_TEST(missing_perm_rank4_graph_output)
{
    const char *graph = "x: float[2,3,4,5]; y = Transpose(x)\nreturn y";
    PC_CASE(graph, 1, "t = Transpose(x); y = Transpose(t)");
    assert_swaps(graph, 4, TK_I64(3, 2, 1, 0), 2);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    int64_t want[4] = {5, 4, 3, 2};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(ph_value_dim(ph_graph_output(g, 0), i), want[i]);
    ph_model_free(m);
}
END_TEST

/* Symbolic dims: the intermediate types carry the names. */
START_TEST(symbolic_dims)
{
    ph_test_options o = {.max_iterations = 4, .seed = 6, .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};
    const char *graph = "x: float[N,3,4]; r = Relu(x); t = Transpose(r) {perm=[1,2,0]}; y = Neg(t)\nreturn y";
    PC_CASE_OPTS(&o, graph, 1, "r = Relu(x); t1 = Transpose(r); t2 = Transpose(t1); y = Neg(t2)");
    assert_swaps(graph, 3, TK_I64(1, 2, 0), 2);
}
END_TEST

/* ---- negative cases */

START_TEST(two_dim_swap_kept)
{
    PC_UNTOUCHED("x: float[2,3,4,5]; r = Relu(x); t = Transpose(r) {perm=[0,3,2,1]}; y = Neg(t)\nreturn y");
}
END_TEST

START_TEST(identity_kept)
{
    PC_UNTOUCHED("x: float[2,3,4]; r = Relu(x); t = Transpose(r) {perm=[0,1,2]}; y = Neg(t)\nreturn y");
}
END_TEST

/* Rank 3 without perm: (2,1,0) moves two dims. */
START_TEST(missing_perm_rank3_kept)
{
    PC_UNTOUCHED("x: float[2,3,4]; r = Relu(x); t = Transpose(r); y = Neg(t)\nreturn y");
}
END_TEST

START_TEST(unknown_rank_without_perm_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[*]; r = Relu(x); t = Transpose(r); y = Neg(t)\nreturn y");
}
END_TEST

/* inference refuses the perm (so no shapes, and the evaluator cannot run
 * it); the pass must refuse it too */
START_TEST(invalid_perm_kept)
{
    ph_test_options o = {.no_shapes = 1, .unchecked = 1};
    PC_CASE_OPTS(&o, "x: float[2,3,4,5]; y = Transpose(x) {perm=[1,2,3,3]}\nreturn y", 0, NULL);
}
END_TEST

START_TEST(other_domain_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[2,3,4]; r = Relu(x); t = Transpose@com.example(r) {perm=[1,2,0]}; y = Neg(t)\n"
                           "return y");
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *tg, *eg;
    ph_model *m = pc_if_model("x: float[2,3,4]; cond: bool[]\ny = If(cond)\nreturn y", &tg, &eg);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    tk_output(tg, tk_op1(tg, "Neg", tk_transpose(tg, x, 3, TK_I64(2, 0, 1))));
    tk_output(eg, tk_op1(eg, "Neg", tk_transpose(eg, x, 3, TK_I64(0, 2, 1))));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(tg, "t1 = Transpose(x); t2 = Transpose(t1); y = Neg(t2)");
    PC_GRAPH_IS(eg, "t = Transpose(x) {perm=[0,2,1]}; y = Neg(t)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_demerge_transpose");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, descriptor);
    tcase_add_loop_test(tc, cycles_become_swaps, 0, (int)(sizeof cycles / sizeof *cycles));
    tcase_add_test(tc, missing_perm_rank4_graph_output);
    tcase_add_test(tc, symbolic_dims);
    tcase_add_test(tc, two_dim_swap_kept);
    tcase_add_test(tc, identity_kept);
    tcase_add_test(tc, missing_perm_rank3_kept);
    tcase_add_test(tc, unknown_rank_without_perm_kept);
    tcase_add_test(tc, invalid_perm_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
