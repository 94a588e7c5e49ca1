/* tests/test_pass_eliminate_nop_reshape.c - eliminate_nop_reshape: a
 * Reshape (Flatten, Squeeze, Unsqueeze) that provably keeps its input's
 * shape goes. */
#include <stdio.h>
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_nop_reshape")

/* x [2,3,4] -> Relu -> Reshape [2,3,4] -> Neg: the target is pruned */
START_TEST(same_static_shape_removed)
{
    const char *graph = "x: float[2,3,4]; t: int64[3] = [2, 3, 4]; r = Relu(x); s = Reshape(r, t); y = Neg(s); return y";
    PC_CASE(graph, 1, "r = Relu(x)\ny = Neg(r)");
    PC_INITIALIZERS_AFTER(graph, 1, 0);
}
END_TEST

/* [batch,3,4] -> Reshape [0,-1,4]: the inference proves [batch,3,4]. */
START_TEST(symbolic_zero_minus_one_removed)
{
    PC_CASE("x: float[batch,3,4]; t: int64[3] = [0, -1, 4]; r = Relu(x); s = Reshape(r, t); y = Neg(s); return y", 1,
            "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* Flatten of a 2-D tensor at axis 1, Squeeze with nothing to squeeze,
 * Unsqueeze of no axes: all keep the shape. */
START_TEST(flatten_squeeze_unsqueeze_removed)
{
    const char *graph = "x: float[5,7]; axes: const int64[0]\n"
                        "r = Relu(x); f = Flatten(r); s = Squeeze(f); u = Unsqueeze(s, axes); y = Neg(u)\nreturn y";
    PC_CASE(graph, 3, "r = Relu(x)\ny = Neg(r)");
    PC_INITIALIZERS_AFTER(graph, 3, 0);
}
END_TEST

/* The Reshape's output is a graph output and also read by a node: the Relu
 * output takes over its name, and the other reader follows. */
START_TEST(graph_output_in_middle_redirected)
{
    const char *graph = "x: float[3,4]; t: int64[2] = [3, 4]; r = Relu(x); s = Reshape(r, t); y = Neg(s); return s, y";
    PC_CASE(graph, 1, "s = Relu(x)\n--\ny = Neg(s)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* The target is shared with a Reshape that does change the shape: it stays. */
START_TEST(shared_target_kept_for_other_user)
{
    const char *graph = "a: float[3,4]; b: float[4,3]; t: int64[2] = [3, 4]\n"
                        "ra = Relu(a); p = Reshape(ra, t); y1 = Neg(p)\nrb = Relu(b); q = Reshape(rb, t); y2 = Neg(q)\n"
                        "return y1, y2";
    PC_CASE(graph, 1, "ra = Relu(a)\ny1 = Neg(ra)\n--\nrb = Relu(b)\nq = Reshape(rb, t)\ny2 = Neg(q)");
    PC_INITIALIZERS_AFTER(graph, 1, 1);
}
END_TEST

/* ---- negative cases */

static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} kept[] = {
    /* the shape changes */
    {"x: float[2,3,4]; t: int64[2] = [6, 4]; r = Relu(x); s = Reshape(r, t); y = Neg(s); return y", 0},
    /* same element count, same rank, dims permuted: still a real reshape */
    {"x: float[3,4]; t: int64[2] = [4, 3]; r = Relu(x); s = Reshape(r, t); y = Neg(s); return y", 0},
    /* a graph input to a graph output */
    {"x: float[3,4]; t: int64[2] = [3, 4]; y = Reshape(x, t); return y", 0},
    /* the target comes from a graph input: the output shape is unknown */
    {"x: float[3,4]; t: int64[2]; r = Relu(x); s = Reshape(r, t); y = Neg(s); return y", 1},
    /* the input's shape is unknown */
    {"x: float[*]; t: int64[2] = [3, 4]; r = Relu(x); s = Reshape(r, t); y = Neg(s); return y", 1},
    /* a Squeeze that squeezes */
    {"x: float[2,1,4]; r = Relu(x); s = Squeeze(r); y = Neg(s); return y", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(kept[_i].mode, kept[_i].graph);
}
END_TEST

/* x declared `x` -> Reshape(runtime target) declared [SYM,4] or [?,4] (the
 * text cannot declare a node output's shape): kept (structure only: the
 * target is random). */
static void declared_kept(const char *x, const char *sym)
{
    char text[256];
    snprintf(text, sizeof text, "x: %s; t: int64[2]; r = Relu(x); s = Reshape(r, t); y = Neg(s); return y", x);
    ph_model *m = pc_model(text);
    ph_value *s = pc_node_output(m, 1);
    tk_set_shape(s, 2, TK_I64(-1, 4));
    if (sym)
        ck_assert_int_eq(ph_value_set_dim_param(s, 0, sym), 0);
    pc_run_structure(m, 0);
    PC_GRAPH_IS(ph_model_graph(m), "r = Relu(x)\ns = Reshape(r, t)\ny = Neg(s)");
    ph_model_free(m);
}

/* [batch,4] -> [seq,4]: different names */
START_TEST(symbols_differ_by_name_kept)
{
    declared_kept("float[batch,4]", "seq");
}
END_TEST

/* [?,4] -> [?,4]: two unknown dims (no names) are not provably equal */
START_TEST(unnamed_unknown_dims_kept)
{
    declared_kept("float[?,4]", NULL);
}
END_TEST

/* another domain's Reshape, its output declared [3,4] */
START_TEST(other_domain_kept)
{
    ph_model *m = pc_model("x: float[3,4]; t: int64[2] = [3, 4]; r = Relu(x); s = Reshape@com.example(r, t); y = Neg(s)\n"
                           "return y");
    tk_set_shape(pc_node_output(m, 1), 2, TK_I64(3, 4));
    pc_run_structure(m, 0);
    PC_GRAPH_IS(ph_model_graph(m), "r = Relu(x)\ns = Reshape@com.example(r, t)\ny = Neg(s)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_reshape");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, same_static_shape_removed);
    tcase_add_test(tc, symbolic_zero_minus_one_removed);
    tcase_add_test(tc, flatten_squeeze_unsqueeze_removed);
    tcase_add_test(tc, graph_output_in_middle_redirected);
    tcase_add_test(tc, shared_target_kept_for_other_user);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof kept / sizeof *kept));
    tcase_add_test(tc, symbols_differ_by_name_kept);
    tcase_add_test(tc, unnamed_unknown_dims_kept);
    tcase_add_test(tc, other_domain_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
