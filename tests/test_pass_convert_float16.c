/* tests/test_pass_convert_float16.c - convert_float16: float32 weights and
 * activations become float16; the model's inputs and outputs keep their
 * types; the block list stays float32 with Casts around it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("convert_float16")

static ph_model *model(const char *text)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(text, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    return m;
}

static int run_on(ph_model *m, const ph_test_options *o)
{
    ph_error err = {0};
    int rc = ph_test_run(pass, m, o, NULL, &err);
    ck_assert_msg(rc >= 0, "%s", err.message);
    return rc;
}

/* Values of the constant v as doubles (at most 16). */
static void const_values(const ph_value *v, double *out, size_t n)
{
    const ph_tensor *t = ph_value_const(v);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_numel(t), (int64_t)n);
    ck_assert_int_eq(ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), out), 0);
}

/* every node of g that reads a Cast's output is no Cast (no Cast of a Cast)
 * and no Cast converts a value to the dtype it has */
static void no_redundant_cast(const ph_graph *g)
{
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_op(n) != PH_OP_Cast)
            continue;
        ph_value *in = ph_node_input(n, 0);
        ph_node *p = ph_value_producer(in);
        ck_assert_msg(!p || ph_node_op(p) != PH_OP_Cast, "Cast %s reads Cast %s", ph_node_name(n),
                      ph_node_name(p));
        ck_assert_int_ne(ph_value_dtype(in), ph_node_attr_int(n, "to", 0));
    }
}

/* An MLP: the weights float16 in place, one Cast after the input, one
 * before the output, which keeps its name and type */
START_TEST(mlp_converted_with_casts_at_the_borders)
{
    const char *graph = "x: float[2,8]; w: const float[8,4]; b: const float[4]\n"
                        "m = MatMul(x, w); a = Add(m, b); y = Relu(a)\nreturn y";
    PC_CASE(graph, 1, "c = Cast(x) {to=10}\nm = MatMul(c, w)\na = Add(m, b)\nr = Relu(a)\ny = Cast(r) {to=1}");
    ph_model *m = model(graph);
    ph_graph *g = ph_model_graph(m);
    const char *out = ph_value_name(ph_graph_output(g, 0));
    char *name = strdup(out);
    ck_assert_int_eq(run_on(m, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(g, 0)), PH_DT_FLOAT);
    ck_assert_int_eq(ph_value_dtype(ph_graph_input(g, 0)), PH_DT_FLOAT);
    ck_assert_int_eq(ph_tensor_dtype(ph_value_const(ph_graph_find_value(g, "w"))), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_tensor_dtype(ph_value_const(ph_graph_find_value(g, "b"))), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_dtype(ph_node_output(tk_find_op(g, PH_OP_MatMul), 0)), PH_DT_FLOAT16);
    ck_assert_int_eq(run_on(m, NULL), 0); /* nothing left to convert */
    free(name);
    ph_model_free(m);
}
END_TEST

/* Softmax is in the default block list: float32 between two Casts; with
 * keep_float32_ops = Relu, Softmax converts and Relu stays */
START_TEST(block_listed_ops_kept_in_float32)
{
    const char *graph = "x: float[2,8]\nh = Relu(x); s = Softmax(h) {axis=1}; y = Neg(s)\nreturn y";
    PC_CASE(graph, 1,
            "c = Cast(x) {to=10}\nh = Relu(c)\nh32 = Cast(h) {to=1}\ns = Softmax(h32)\ns16 = Cast(s) {to=10}\n"
            "n = Neg(s16)\ny = Cast(n) {to=1}");
    static const char *const relu[] = {"keep_float32_ops=Relu", NULL};
    ph_test_options o = pc_defaults;
    o.params = relu;
    PC_CASE_OPTS(&o, graph, 1,
                 "h = Relu(x)\nc = Cast(h) {to=10}\ns = Softmax(c)\nn = Neg(s)\ny = Cast(n) {to=1}");
    /* the block list's weights stay float32 only where a float32 reader needs them */
    PC_CASE("x: float[2,8]; w: const float[8]\na = Add(x, w); p = Pow(a, w); y = Mul(p, w)\nreturn y", 1,
            "c = Cast(x) {to=10}\na = Add(c, w16:const)\na32 = Cast(a) {to=1}\np = Pow(a32, w)\n"
            "p16 = Cast(p) {to=10}\nm = Mul(p16, w16)\ny = Cast(m) {to=1}");
}
END_TEST

/* An input read by three nodes: one Cast.  An output that another node
 * reads too: the Cast before the output serves a float32 reader as well.
 * A float16 input's Cast to float32 read by converted nodes: they read the
 * input (no Cast pair back to back). */
START_TEST(borders_shared_and_no_redundant_cast)
{
    PC_CASE("x: float[4]\na = Relu(x); b = Neg(x); c = Abs(x); s = Sum(a, b, c); r = ReduceSum(s) {keepdims=1}\n"
            "return s, r",
            1, "x16 = Cast(x) {to=10}\na = Relu(x16)\nb = Neg(x16)\nc = Abs(x16)\ns16 = Sum(a, b, c)\n"
               "s:shared = Cast(s16) {to=1}\nr = ReduceSum(s)");
    PC_CASE("h: float16[4]\nf = Cast(h) {to=1}; y = Relu(f)\nreturn y", 1, "r = Relu(h)\ny = Cast(r) {to=1}");
    /* Cast(int -> float) becomes Cast(int -> float16); a float32 reader
     * gets its own Cast from the int, not a Cast of the Cast */
    ph_model *m = model("i: int64[3]\nf = Cast(i) {to=1}; a = Relu(f); s = Softmax(f) {axis=0}; y = Add(a, a)\n"
                        "return y, s");
    ck_assert_int_eq(run_on(m, NULL), 1);
    no_redundant_cast(ph_model_graph(m));
    PC_GRAPH_IS(ph_model_graph(m), "f = Cast(i) {to=10}\na = Relu(f)\ny16 = Add(a, a)\ny = Cast(y16) {to=1}\n--\n"
                                   "f32 = Cast(i) {to=1}\ns = Softmax(f32)");
    ph_model_free(m);
    /* an input that is also an output stays as it is */
    PC_CASE("x: float[4]\ny = Relu(x)\nreturn y, x", 1, "c = Cast(x) {to=10}\nr = Relu(c)\ny = Cast(r) {to=1}");
}
END_TEST

/* a constant beyond float16's range: clamped to +-65504, with a warning
 * naming it; infinities stay */
static char warned[512];
static void keep_warning(void *user, ph_log_level level, const char *p, const char *msg)
{
    (void)user;
    (void)p;
    if (level == PH_LOG_WARN)
        snprintf(warned, sizeof warned, "%s", msg);
}

START_TEST(constants_clamped_with_a_warning)
{
    ph_model *m = model("x: float[4]; big: float[4] = [1e5, -7e4, 2.5, -inf]\ny = Add(x, big)\nreturn y");
    ph_test_options o = {.log = keep_warning};
    warned[0] = 0;
    ck_assert_int_eq(run_on(m, &o), 1);
    double v[4];
    const_values(ph_graph_find_value(ph_model_graph(m), "big"), v, 4);
    ck_assert(v[0] == 65504 && v[1] == -65504 && v[2] == 2.5 && isinf(v[3]) && v[3] < 0);
    ck_assert_msg(strstr(warned, "'big'") && strstr(warned, "2 values") && strstr(warned, "65504"), "%s", warned);
    ph_model_free(m);
    /* a value in range: no warning */
    m = model("x: float[4]; s: float[4] = [65504, -1, 0.5, 3]\ny = Add(x, s)\nreturn y");
    warned[0] = 0;
    ck_assert_int_eq(run_on(m, &o), 1);
    ck_assert_str_eq(warned, "");
    ph_model_free(m);
}
END_TEST

/* integer and float64 computations, and a model that is all block list */
START_TEST(int_double_and_kept_only_untouched)
{
    PC_UNTOUCHED("i: int64[2,3]; k: int64[] = [2]\nj = Mul(i, k); s = Shape(j); y = Add(j, j)\nreturn y, s");
    PC_UNTOUCHED("x: double[3]; c: double[3] = [1, 2, 3]\ny = Add(x, c)\nreturn y");
    PC_UNTOUCHED("x: float[2,4]\ns = Softmax(x) {axis=1}; y = ReduceSum(s) {keepdims=1}\nreturn y");
    /* the int part of a mixed model stays as it is, Shape reads float16 */
    PC_CASE("x: float[2,4]\ns = Shape(x); r = Relu(x); y = Reshape(r, s)\nreturn y, s", 1,
            "s = Shape(x)\n--\nc = Cast(x) {to=10}\nr = Relu(c)\nh = Reshape(r, s)\ny = Cast(h) {to=1}");
}
END_TEST

/* Operators whose output dtype is an attribute follow; Resize's scales
 * stay float32 */
START_TEST(dtype_attributes_and_float_only_inputs)
{
    ph_model *m = model("x: float[2,3]; s: int64[2] = [2, 3]\nz = ConstantOfShape(s); e = EyeLike(x) {k=1};\n"
                        "a = Add(x, z); y = Add(a, e)\nreturn y");
    ck_assert_int_eq(run_on(m, NULL), 1);
    ph_graph *g = ph_model_graph(m);
    ph_node *cos = tk_find_op(g, PH_OP_ConstantOfShape), *eye = tk_find_op(g, PH_OP_EyeLike);
    ck_assert_int_eq(ph_tensor_dtype(ph_node_attr_tensor(cos, "value")), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_dtype(ph_node_output(cos, 0)), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_node_attr_int(eye, "dtype", 0), PH_DT_FLOAT16);
    ph_model_free(m);
    PC_CASE("x: float[1,1,2,2]; sc: float[4] = [1, 1, 2, 2]\nr = Resize(x, _, sc) {mode=\"nearest\"}\nreturn r",
            1, "c = Cast(x) {to=10}\nr = Resize(c, roi?, sc)\ny = Cast(r) {to=1}");
    m = model("x: float[1,1,2,2]; sc: float[4] = [1, 1, 2, 2]\nr = Resize(x, _, sc) {mode=\"nearest\"}\nreturn r");
    ck_assert_int_eq(run_on(m, NULL), 1);
    ck_assert_int_eq(ph_tensor_dtype(ph_value_const(ph_graph_find_value(ph_model_graph(m), "sc"))), PH_DT_FLOAT);
    ph_model_free(m);
}
END_TEST

/* An If whose branches read a main-graph input and a weight (values
 * captured from the outer graph): the branches compute in float16, the
 * captured input gets its Cast in the main graph, the If's output is
 * float16 and the main output is cast back under its name. */
START_TEST(if_bodies_and_captured_values)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[2,3]; w: const float[3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g,
                              &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x"), *w = ph_graph_find_value(g, "w");
    tk_output(then_g, tk_op2(then_g, "Mul", x, w));
    ph_value *s = tk_op1(else_g, "Softmax", x); /* kept: float32, a Cast to float16 before the output */
    tk_output(else_g, s);
    tk_infer(m);
    const char *out_name = ph_value_name(ph_graph_output(g, 0));
    char *name = strdup(out_name);
    pc_run_structure(m, 1);
    PC_GRAPH_IS(g, "c = Cast(x) {to=10}\n--\nh = If(cond)\ny = Cast(h) {to=1}");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(g, 0)), PH_DT_FLOAT);
    ph_value *cx = ph_node_output(tk_find_op(g, PH_OP_Cast), 0);
    ck_assert_int_eq(ph_value_dtype(cx), PH_DT_FLOAT16);
    ph_node *mul = tk_find_op(then_g, PH_OP_Mul);
    ck_assert_ptr_eq(ph_node_input(mul, 0), cx);
    ck_assert_ptr_eq(ph_node_input(mul, 1), w);
    ck_assert_int_eq(ph_tensor_dtype(ph_value_const(w)), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(then_g, 0)), PH_DT_FLOAT16);
    PC_GRAPH_IS(else_g, "s = Softmax(x)\ny = Cast(s) {to=10}");
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(else_g, 0)), PH_DT_FLOAT16);
    ph_error err = {0};
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    free(name);
    ph_model_free(m);
}
END_TEST

/* A Loop whose body carries a float state, reads a weight and a main-graph
 * input (captured), and has a block-listed Softmax: the body's float inputs
 * and outputs become float16 with the Loop's, the captured input is cast
 * once in the main graph; checked numerically (the evaluator runs Loop). */
START_TEST(loop_body_numeric)
{
    ph_model *m = model("x: float[4]; s0: float[4]; n: int64[] = [3]; c: bool[] = [1]; w: const float[4]\n"
                        "sf, sm = Loop(n, c, s0)\ny = Add(sf, x)\nreturn y, sm");
    ph_graph *g = ph_model_graph(m);
    ph_node *loop = tk_find_op(g, PH_OP_Loop);
    ph_graph *b = ph_node_add_subgraph(loop, "body");
    ck_assert_ptr_nonnull(b);
    ph_graph_add_input(b, "i", PH_DT_INT64, 0, NULL);
    ph_value *ci = ph_graph_add_input(b, "c_in", PH_DT_BOOL, 0, NULL);
    ph_value *si = ph_graph_add_input(b, "s_in", PH_DT_FLOAT, 1, TK_I64(4));
    ph_value *r = tk_op1(b, "Relu", tk_op2(b, "Mul", si, ph_graph_find_value(g, "w")));
    ph_value *so = tk_op2(b, "Add", r, ph_graph_find_value(g, "x"));
    ph_node *sm = tk_node(b, "Softmax", 1, &so);
    ph_node_set_attr_int(sm, "axis", 0);
    tk_output(b, tk_op1(b, "Identity", ci));
    tk_output(b, so);
    tk_output(b, ph_node_output(sm, 0));
    tk_infer(m);
    ph_test_result res;
    ph_error err = {0};
    int rc = ph_test_run_checked(pass, m, NULL, &res, &err);
    ck_assert_msg(rc == 1, "%d %s", rc, err.message);
    ck_assert_int_eq(ph_value_dtype(ph_graph_input(b, 2)), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(b, 1)), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(b, 2)), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(g, 0)), PH_DT_FLOAT);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(g, 1)), PH_DT_FLOAT);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Cast), 4); /* x and s0 in, y and sm out */
    ck_assert_uint_eq(tk_count_op(b, PH_OP_Cast), 2); /* around the Softmax */
    no_redundant_cast(g);
    no_redundant_cast(b);
    ph_model_free(m);
}
END_TEST

/* A small CNN: within float16's budget on random inputs; the same run
 * with one operator replaced (a bug) fails it. */
static const char *cnn = "x: float[1,3,8,8]; w: const float[4,3,3,3]; b: const float[4]; w2: const float[2,4,1,1]\n"
                         "c = Conv(x, w, b) {pads=[1,1,1,1]}; r = Relu(c); p = MaxPool(r) {kernel_shape=[2,2], "
                         "strides=[2,2]}\nd = Conv(p, w2); g = GlobalAveragePool(d); y = Flatten(g)\nreturn y";

static ph_pass_run_fn real_run;
static int run_then_break(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    int r = real_run(g, p, ctx);
    ph_node *relu = tk_find_op(g, PH_OP_Relu);
    if (r > 0 && relu)
        ph_node_set_op_type(relu, "Sigmoid");
    return r;
}

START_TEST(numeric_check_within_float16_budget_and_a_bug_fails)
{
    ph_model *m = model(cnn);
    ph_test_result res;
    ph_error err = {0};
    int rc = ph_test_run_checked(pass, m, NULL, &res, &err);
    ck_assert_msg(rc == 1, "%s", err.message);
    ck_assert(res.max_abs_err > 0); /* float16 rounds */
    ph_model_free(m);
    ph_pass_desc broken = *pass;
    real_run = pass->run;
    broken.run = run_then_break;
    m = model(cnn);
    rc = ph_test_run_checked(&broken, m, NULL, &res, &err);
    ck_assert_msg(rc == PH_EVERIFY && res.mismatch, "a wrong operator passed: %d %s", rc, err.message);
    ph_model_free(m);
    /* without the declared precision the float32 budget refuses the rounding */
    broken = *pass;
    broken.precision = 0;
    m = model(cnn);
    rc = ph_test_run_checked(&broken, m, NULL, &res, &err);
    ck_assert_msg(rc == PH_EVERIFY, "float16 rounding within float32's budget: %d", rc);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("convert_float16");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, mlp_converted_with_casts_at_the_borders);
    tcase_add_test(tc, block_listed_ops_kept_in_float32);
    tcase_add_test(tc, borders_shared_and_no_redundant_cast);
    tcase_add_test(tc, constants_clamped_with_a_warning);
    tcase_add_test(tc, int_double_and_kept_only_untouched);
    tcase_add_test(tc, dtype_attributes_and_float_only_inputs);
    tcase_add_test(tc, if_bodies_and_captured_values);
    tcase_add_test(tc, loop_body_numeric);
    tcase_add_test(tc, numeric_check_within_float16_budget_and_a_bug_fails);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
