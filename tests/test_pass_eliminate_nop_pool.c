/* tests/test_pass_eliminate_nop_pool.c - eliminate_nop_pool: a MaxPool or
 * AveragePool of a 1x1 kernel, unit strides and dilations and no padding
 * goes. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_nop_pool")

/* x [1,2,5,4] -> Relu -> POOL {ATTRS} -> Neg */
#define POOL(op, attrs) "x: float[1,2,5,4]; r = Relu(x); p = " op "(r) {kernel_shape=[1,1]" attrs "}; y = Neg(p); return y"
#define GONE "r = Relu(x)\ny = Neg(r)"

static const struct {
    const char *graph;
} removed[] = {
    {POOL("MaxPool", "")},
    /* every attribute spelled out with its no-op value */
    {POOL("AveragePool", ", strides=[1,1], pads=[0,0,0,0], auto_pad=\"VALID\", ceil_mode=1, count_include_pad=1")},
    {POOL("MaxPool", ", dilations=[1,1], strides=[1,1]")},
    /* 1-D: kernel [1] on [N,C,L] */
    {"x: float[1,2,7]; r = Relu(x); p = MaxPool(r) {kernel_shape=[1], pads=[0,0]}; y = Neg(p); return y"},
};

START_TEST(nop_pools_removed)
{
    PC_CASE(removed[_i].graph, 1, GONE);
}
END_TEST

/* The pool's output is a graph output: the Relu's value takes its name. */
START_TEST(pool_output_graph_output_redirected)
{
    const char *graph = "x: float[2,3,2,2]; r = Relu(x); y = AveragePool(r) {kernel_shape=[1,1]}; return y";
    PC_CASE(graph, 1, "y = Relu(x)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* MaxPool declares its Indices output but nobody reads it. */
START_TEST(maxpool_unused_indices_removed)
{
    PC_CASE("x: float[1,1,3,3]; r = Relu(x); p, i = MaxPool(r) {kernel_shape=[1,1]}; y = Neg(p); return y", 1, GONE);
}
END_TEST

/* ---- negative cases: the graph must come back untouched */

static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} kept[] = {
    {POOL("MaxPool", ", strides=[2,2]"), 0},
    {POOL("AveragePool", ", strides=[1,2]"), 0},
    {POOL("MaxPool", ", pads=[0,0,1,0]"), 0},
    {"x: float[1,2,5,4]; r = Relu(x); p = AveragePool(r) {kernel_shape=[1,2]}; y = Neg(p); return y", 0},
    {POOL("MaxPool", ", dilations=[2,1]"), 0},
    /* malformed strides */
    {POOL("MaxPool", ", strides=[1,1,1]"), 1},
    /* MaxPool's indices are read */
    {"x: float[1,1,3,3]; r = Relu(x); p, i = MaxPool(r) {kernel_shape=[1,1]}; y = Neg(p); return y, i", 0},
    /* a graph input straight to a graph output: the output name cannot move */
    {"x: float[1,1,3,3]; y = MaxPool(x) {kernel_shape=[1,1]}; return y", 0},
    /* another domain */
    {"x: float[1,2,5,4]; r = Relu(x); p = MaxPool@com.example(r) {kernel_shape=[1,1]}; y = Neg(p); return y", 1},
    /* other pools */
    {"x: float[1,1,3,3]; r = Relu(x); y = LpPool(r) {kernel_shape=[1,1]}; return y", 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(kept[_i].mode, kept[_i].graph);
}
END_TEST

START_TEST(missing_kernel_kept)
{
    pc_invalid_untouched("x: float[1,2,5,4]; r = Relu(x); p = MaxPool(r); y = Neg(p); return y",
                         "required attribute 'kernel_shape' (INTS) is missing", "r = Relu(x)\np = MaxPool(r)\ny = Neg(p)");
}
END_TEST

/* The demo CNN has one no-op MaxPool (kernel 1, stride 1) and a real one
 * (a model file: kept in C on the public harness). */
START_TEST(cnn_nop_maxpool_removed)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/cnn_small.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_MaxPool), 2);
    ph_test_options o = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, &o, NULL, &err), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_MaxPool), 1);
    const int64_t *k;
    ck_assert_int_eq(ph_node_attr_ints(tk_find_op(g, PH_OP_MaxPool), "kernel_shape", &k), 2);
    ck_assert_int_eq(k[0], 3);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_pool");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, nop_pools_removed, 0, (int)(sizeof removed / sizeof *removed));
    tcase_add_test(tc, pool_output_graph_output_redirected);
    tcase_add_test(tc, maxpool_unused_indices_removed);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof kept / sizeof *kept));
    tcase_add_test(tc, missing_kernel_kept);
    tcase_add_test(tc, cnn_nop_maxpool_removed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
