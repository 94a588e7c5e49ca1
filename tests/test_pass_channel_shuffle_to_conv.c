/* tests/test_pass_channel_shuffle_to_conv.c - channel_shuffle_to_conv: the
 * Reshape [N,g,C/g,H,W] -> Transpose(0,2,1,3,4) -> Reshape [N,C,H,W] channel
 * shuffle becomes a 1x1 Conv with a permutation weight. */
#include <stdio.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("channel_shuffle_to_conv")

/* The shuffle of x through the constants v (the view) and o (the output
 * shape), as text after their declarations; PERM is the Transpose's. */
#define SHUFFLE_PERM(perm) "r = Reshape(x, v); t = Transpose(r) {perm=" perm "}; y = Reshape(t, o)\n"
#define SHUFFLE SHUFFLE_PERM("[0,2,1,3,4]")

static const struct {
    const char *graph;
    int64_t C, G;
} shuffles[] = {
    {"x: float[1,6,3,4]; v: int64[5] = [1,2,3,3,4]; o: int64[4] = [1,6,3,4]\n" SHUFFLE "return y", 6, 2},
    {"x: float[2,12,2,3]; v: int64[5] = [2,3,4,2,3]; o: int64[4] = [2,12,2,3]\n" SHUFFLE "return y", 12, 3},
    {"x: float[2,12,2,3]; v: int64[5] = [0,4,-1,2,3]; o: int64[4] = [0,12,2,3]\n" SHUFFLE "return y", 12, 4},
    {"x: float[1,4,1,1]; v: int64[5] = [1,1,4,1,1]; o: int64[4] = [1,4,1,1]\n" SHUFFLE "return y", 4, 1},
};

/* One Conv that keeps the output's name; its weight: output o reads input
 * (o % g) * (C/g) + o / g, with 1. */
START_TEST(becomes_conv)
{
    char expect[128];
    int64_t C = shuffles[_i].C, G = shuffles[_i].G;
    snprintf(expect, sizeof expect, "y = Conv(x, _:const:shape=[%lld,%lld,1,1])", (long long)C, (long long)C);
    PC_CASE(shuffles[_i].graph, 1, expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(shuffles[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    const ph_tensor *w = ph_value_const(ph_node_input(tk_find_op(g, PH_OP_Conv), 1));
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(ph_tensor_numel(w), C * C);
    double vals[144];
    ck_assert_int_eq(ph_tensor_read_f64(w, ph_tensor_rank(w), ph_tensor_dims(w), vals), 0);
    for (int64_t o = 0; o < C; o++)
        for (int64_t c = 0; c < C; c++)
            ck_assert(vals[o * C + c] == (c == (o % G) * (C / G) + o / G ? 1.0 : 0.0));
    ph_model_free(m);
}
END_TEST

/* A symbolic batch dim: the Conv does not need it. */
START_TEST(symbolic_batch)
{
    ph_test_options o = {.max_iterations = 4, .seed = 6, .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};
    PC_CASE_OPTS(&o,
                 "x: float[n,8,3,4]; v: int64[5] = [0,2,4,3,4]; o: int64[4] = [0,8,3,4]\n" SHUFFLE
                 "z = Neg(y)\nreturn z",
                 1, "c = Conv(x, _:const); z = Neg(c)");
}
END_TEST

#define X_V_O "x: float[1,6,3,4]; v: int64[5] = [1,2,3,3,4]; o: int64[4] = [1,6,3,4]\n"

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* the view has another reader */
    {X_V_O SHUFFLE "n = Neg(r)\nreturn y, n", 0},
    /* the transposed value has another reader */
    {X_V_O SHUFFLE "n = Neg(t)\nreturn y, n", 0},
    /* the view is a graph output */
    {X_V_O SHUFFLE "return y, r", 0},
    /* the transposed value is a graph output */
    {X_V_O SHUFFLE "return y, t", 0},
    /* W unknown, without a name (the evaluator cannot size it for -1) */
    {"x: float[1,6,3,?]; v: int64[5] = [1,2,3,3,-1]; o: int64[4] = [1,6,3,-1]\n" SHUFFLE "return y", 1},
    /* integers */
    {"x: int32[1,6,3,4]; v: int64[5] = [1,2,3,3,4]; o: int64[4] = [1,6,3,4]\n" SHUFFLE "return y", 0},
    /* another permutation */
    {"x: float[1,6,3,4]; v: int64[5] = [1,2,3,3,4]; o: int64[4] = [1,6,4,3]\n" SHUFFLE_PERM("[0,1,2,4,3]")
     "return y", 0},
    /* another final shape */
    {"x: float[1,6,3,4]; v: int64[5] = [1,2,3,3,4]; o: int64[4] = [1,6,12,1]\n" SHUFFLE "return y", 0},
    /* the view's shape is computed at run time (the evaluator's random
     * int64s are no view of x) */
    {"x: float[1,6,3,4]; v: int64[5]; o: int64[4] = [1,6,3,4]\n" SHUFFLE "return y", 1},
};

START_TEST(left_alone)
{
    if (alone[_i].unchecked)
        PC_UNTOUCHED_UNCHECKED(alone[_i].graph);
    else
        PC_UNTOUCHED(alone[_i].graph);
}
END_TEST

/* Reshape(x, view) -> Transpose -> Reshape(out) in the body g. */
static ph_value *shuffle(ph_graph *g, ph_value *x, const int64_t *view, const int64_t *out)
{
    ph_value *in[2] = {x, tk_ints(g, "view", 5, view)};
    ph_value *r = ph_node_output(tk_node(g, "Reshape", 2, in), 0);
    ph_value *in2[2] = {tk_transpose(g, r, 5, TK_I64(0, 2, 1, 3, 4)), tk_ints(g, "out", 4, out)};
    return ph_node_output(tk_node(g, "Reshape", 2, in2), 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,6,2,2]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    tk_output(then_g, shuffle(then_g, x, TK_I64(1, 2, 3, 2, 2), TK_I64(1, 6, 2, 2)));
    tk_output(else_g, tk_op1(else_g, "Neg", shuffle(else_g, x, TK_I64(1, 3, 2, 2, 2), TK_I64(1, 6, 2, 2))));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Conv(x, _:const:shape=[6,6,1,1])");
    PC_GRAPH_IS(else_g, "c = Conv(x, _:const:shape=[6,6,1,1]); y = Neg(c)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("channel_shuffle_to_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, becomes_conv, 0, (int)(sizeof shuffles / sizeof *shuffles));
    tcase_add_test(tc, symbolic_batch);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
