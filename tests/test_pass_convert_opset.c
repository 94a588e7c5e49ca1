/* tests/test_pass_convert_opset.c - convert_opset: the default domain
 * converted down and up to the opset range of the target, adapter by
 * adapter, with the numeric check of the harness (the model before at its
 * opset, after at the new one), the refusals, and If bodies. */
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("convert_opset")

/* The options of a case converting to `range`. */
#define OPTS(range) (&(ph_test_options){.max_iterations = 4, .params = (const char *const[]){"opset=" range, NULL}})
/* The converted graph is `expect` (one rewrite: the model), at opset `to`. */
#define CONVERTS(range, graph, expect) PC_CASE_OPTS(OPTS(range), graph, 1, expect)
/* The same without the numeric check, for an operator version the
 * evaluator does not run (TopK-1, Resize-10, Upsample, training outputs). */
#define OPTS_U(range)                                                                              \
    (&(ph_test_options){.max_iterations = 4, .unchecked = 1, .params = (const char *const[]){"opset=" range, NULL}})
#define CONVERTS_UNCHECKED(range, graph, expect) PC_CASE_OPTS(OPTS_U(range), graph, 1, expect)

static void quiet(void *u, ph_log_level l, const char *p, const char *msg) { (void)u, (void)l, (void)p, (void)msg; }

/* The conversion fails with a message holding each of the words. */
static void refused(const char *range, const char *graph, const char *w1, const char *w2)
{
    char opt[64];
    snprintf(opt, sizeof opt, "opset=%s", range);
    const char *params[] = {opt, NULL};
    ph_test_options o = {.params = params, .log = quiet};
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m, "%s", err.message);
    int rc = ph_test_run(pass, m, &o, NULL, &err);
    ck_assert_msg(rc == PH_EUNSUPPORTED, "%s: rc %d: %s", graph, rc, err.message);
    ck_assert_msg(strstr(err.message, w1) && strstr(err.message, w2), "message: %s", err.message);
    ck_assert_int_eq(ph_model_opset(m, ""), ph_model_opset(m, "")); /* the model is freed intact */
    ph_model_free(m);
}

/* Before 12 a Constant holds only `value`: value_float, value_int,
 * value_floats and value_ints become that tensor, the same numbers. */
START_TEST(constant_value_forms_below_12)
{
    static const char *const graphs[] = {
        "opset 13; x: float[2,3]\nc = Constant() {value_floats=[0.5, -1.5, 2.0]}\ny = Add(x, c)\nreturn y",
        "opset 13; x: float[2,3]\nc = Constant() {value_float=0.25}\ny = Mul(x, c)\nreturn y",
        "opset 13; x: int64[2,3]\nc = Constant() {value_ints=[1, -2, 3]}\ny = Add(x, c)\nreturn y",
        "opset 13; x: int64[2,3]\nc = Constant() {value_int=7}\ny = Mul(x, c)\nreturn y",
    };
    for (size_t g = 0; g < sizeof graphs / sizeof graphs[0]; g++) {
        ph_error err = {0};
        ph_model *m = ph_test_model_text(graphs[g], &err);
        ck_assert_msg(m, "%s", err.message);
        int rc = ph_test_run_checked(pass, m, OPTS("11"), NULL, &err);
        ck_assert_msg(rc == 1, "%s: rc %d: %s", graphs[g], rc, err.message);
        const ph_node *c = ph_value_producer(ph_node_input(ph_value_producer(ph_graph_output(ph_model_graph(m), 0)), 1));
        ck_assert_int_eq(ph_node_op(c), PH_OP_Constant);
        ck_assert_int_eq(ph_node_attr_type(c, "value"), PH_ATTR_TENSOR);
        ck_assert_int_eq(ph_node_attr_count(c), 1);
        ck_assert_int_eq(ph_model_opset(m, ""), 11);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(in_range_untouched)
{
    PC_CASE_OPTS(OPTS("7..13"), "opset 13; x: float[2,3]\ny = Relu(x)\nreturn y", 0, NULL);
    PC_CASE_OPTS(OPTS("11.."), "opset 13; x: float[2,3]\ny = Relu(x)\nreturn y", 0, NULL);
}
END_TEST

START_TEST(squeeze_unsqueeze_down_and_up)
{
    CONVERTS("7..11", "opset 13; x: float[2,3]; a: int64[1] = [0]; b: int64[1] = [-3]\n"
                      "u = Unsqueeze(x, a); y = Squeeze(u, b)\nreturn y",
             "u = Unsqueeze(x) {axes=[0]}\ny = Squeeze(u) {axes=[-3]}");
    CONVERTS("13..17", "opset 11; x: float[2,3]\nu = Unsqueeze(x) {axes=[1]}; y = Squeeze(u) {axes=[1]}\nreturn y",
             "u = Unsqueeze(x, a:const)\ny = Squeeze(u, b:const)");
}
END_TEST

START_TEST(reduce_axes_at_13_and_18)
{
    CONVERTS("..17", "opset 18; x: float[2,3,4]; a: int64[1] = [1]\ny = ReduceMean(x, a) {keepdims=0}\nreturn y",
             "y = ReduceMean(x) {axes=[1], keepdims=0}");
    CONVERTS("11", "opset 13; x: float[2,3,4]; a: int64[2] = [0, 2]\ny = ReduceSum(x, a)\nreturn y",
             "y = ReduceSum(x) {axes=[0, 2]}");
    CONVERTS("13", "opset 11; x: float[2,3,4]\ny = ReduceSum(x) {axes=[1]}\nreturn y", "y = ReduceSum(x, a:const)");
}
END_TEST

START_TEST(split_at_13_and_18)
{
    CONVERTS("11", "opset 13; x: float[2,6]; s: int64[2] = [2, 4]\na, b = Split(x, s) {axis=1}\nreturn a, b",
             "a, b = Split(x) {axis=1, split=[2, 4]}");
    CONVERTS("13", "opset 11; x: float[2,6]\na, b = Split(x) {axis=1, split=[1, 5]}\nreturn a, b",
             "a, b = Split(x, s:const) {axis=1}");
    /* 7 in 3 parts: 3, 3, 1 */
    CONVERTS("11", "opset 18; x: float[7,2]\na, b, c = Split(x) {num_outputs=3}\nreturn a, b, c",
             "a, b, c = Split(x) {split=[3, 3, 1]}");
}
END_TEST

START_TEST(clip_at_11)
{
    CONVERTS("7..10", "opset 13; x: float[2,3]; lo: float[] = [-0.5]; hi: float[] = [0.25]\ny = Clip(x, lo, hi)\nreturn y",
             "y = Clip(x) {min=-0.5, max=0.25}");
    CONVERTS("10", "opset 13; x: float[2,3]; hi: float[] = [0.25]\ny = Clip(x, _, hi)\nreturn y",
             "y = Clip(x) {max=0.25}");
    CONVERTS("11..", "opset 9; x: float[2,3]\ny = Clip(x) {min=0.0, max=0.5}\nreturn y",
             "y = Clip(x, lo:const, hi:const)");
}
END_TEST

START_TEST(pad_at_11_and_18)
{
    CONVERTS("10", "opset 13; x: float[2,3]; p: int64[4] = [0, 1, 1, 0]; v: float[] = [2]\ny = Pad(x, p, v)\nreturn y",
             "y = Pad(x) {pads=[0, 1, 1, 0], value=2.0}");
    CONVERTS("11", "opset 10; x: float[2,3]\ny = Pad(x) {pads=[1, 0, 0, 2], value=0.5}\nreturn y",
             "y = Pad(x, p:const, v:const)");
    CONVERTS("11", "opset 18; x: float[2,3]; p: int64[2] = [1, 2]; a: int64[1] = [1]\ny = Pad(x, p, _, a)\nreturn y",
             "y = Pad(x, p2:const)");
}
END_TEST

START_TEST(slice_at_10)
{
    CONVERTS("9", "opset 13; x: float[4,6]; s: int64[2] = [1, 0]; e: int64[2] = [3, 5]; a: int64[2] = [0, 1]\n"
                  "y = Slice(x, s, e, a)\nreturn y",
             "y = Slice(x) {starts=[1, 0], ends=[3, 5], axes=[0, 1]}");
    CONVERTS("10..", "opset 9; x: float[4,6]\ny = Slice(x) {starts=[1], ends=[-1], axes=[1]}\nreturn y",
             "y = Slice(x, s:const, e:const, a:const)");
    /* ends computed from the Shape of an input of known dims: a shape
     * constant (ph_value_const_ints), written as the attribute; the Shape
     * goes.  Of a symbolic dim: refused. */
    CONVERTS("9", "opset 13; x: float[4,6]; z: float[3,5]; s: int64[2] = [1, 0]; a: int64[2] = [0, 1]\n"
                  "e = Shape(z); y = Slice(x, s, e, a)\nreturn y",
             "y = Slice(x) {starts=[1, 0], ends=[3, 5], axes=[0, 1]}");
    refused("9", "opset 13; x: float[4,6]; z: float[N,5]; s: int64[2] = [1, 0]; a: int64[2] = [0, 1]\n"
                 "e = Shape(z); y = Slice(x, s, e, a)\nreturn y", "Slice", "computed");
}
END_TEST

START_TEST(topk_at_10_and_11)
{
    CONVERTS_UNCHECKED("9", "opset 11; x: float[3,8]; k: int64[1] = [2]\nv, i = TopK(x, k)\nreturn v, i", "v, i = TopK(x) {k=2}");
    CONVERTS_UNCHECKED("11", "opset 9; x: float[3,8]\nv, i = TopK(x) {k=3}\nreturn v, i", "v, i = TopK(x, k:const)");
}
END_TEST

START_TEST(dropout_at_12)
{
    CONVERTS("11", "opset 13; x: float[3,8]; r: float[] = [0.25]\ny = Dropout(x, r)\nreturn y",
             "y = Dropout(x) {ratio=0.25}");
    CONVERTS("13", "opset 11; x: float[3,8]\ny = Dropout(x) {ratio=0.1}\nreturn y", "y = Dropout(x, r:const)");
}
END_TEST

/* Before 13 softmax is over the dims from axis on, flattened; from 13 over
 * one axis: the last axis is the same either way, another one is not. */
START_TEST(softmax_axis_semantics)
{
    CONVERTS("13", "opset 11; x: float[2,3,4]\ny = Softmax(x) {axis=2}\nreturn y", "y = Softmax(x) {axis=2}");
    CONVERTS("13", "opset 11; x: float[2,3,4]\ny = LogSoftmax(x)\nreturn y",
             "f = Flatten(x) {axis=1}\ns = Shape(x)\nm = LogSoftmax(f) {axis=1}\ny = Reshape(m, s)");
    CONVERTS("11", "opset 13; x: float[2,3,4]\ny = Softmax(x) {axis=1}\nreturn y",
             "t = Transpose(x) {perm=[0, 2, 1]}\nm = Softmax(t) {axis=2}\ny = Transpose(m) {perm=[0, 2, 1]}");
    CONVERTS("11", "opset 13; x: float[2,3,4]\ny = Hardmax(x)\nreturn y", "y = Hardmax(x) {axis=2}");
}
END_TEST

START_TEST(layernorm_and_gelu_decomposed)
{
    CONVERTS("11", "opset 17; x: float[2,3,8]; s: const float[8]; b: const float[8]\n"
                   "y = LayerNormalization(x, s, b) {epsilon=1e-3}\nreturn y",
             "m = ReduceMean(x) {axes=[2], keepdims=1}\nd = Sub(x, m)\nq = Mul(d, d)\n"
             "v = ReduceMean(q) {axes=[2], keepdims=1}\ne = Add(v, _:const)\nr = Sqrt(e)\nn = Div(d, r)\n"
             "k = Mul(n, s)\ny = Add(k, b)");
    CONVERTS("17", "opset 20; x: float[2,8]\ny = Gelu(x)\nreturn y",
             "h = Mul(x, _:const)\nt = Mul(x, _:const)\ne = Erf(t)\no = Add(e, _:const)\ny = Mul(h, o)");
    CONVERTS("17", "opset 20; x: float[2,8]\ny = Gelu(x) {approximate=\"tanh\"}\nreturn y", 
             "h = Mul(x, _:const)\nx2 = Mul(x, x)\nx3 = Mul(x2, x)\nc = Mul(x3, _:const)\na = Add(x, c)\n"
             "t = Mul(a, _:const)\ne = Tanh(t)\no = Add(e, _:const)\ny = Mul(h, o)");
}
END_TEST

START_TEST(hardswish_and_comparisons_decomposed)
{
    CONVERTS("11", "opset 14; x: float[2,8]\ny = HardSwish(x)\nreturn y",
             "h = HardSigmoid(x) {alpha=0.16666667, beta=0.5}\ny = Mul(x, h)");
    CONVERTS("11", "opset 12; a: float[2,8]; b: float[8]\ny = GreaterOrEqual(a, b)\nz = LessOrEqual(a, b)\nreturn y, z",
             "g = Greater(a, b)\ne = Equal(a, b)\ny = Or(g, e)\n--\nl = Less(a, b)\nf = Equal(a, b)\nz = Or(l, f)");
    /* Equal takes no floats before 11: left for the check to refuse */
    refused("10", "opset 12; a: float[2,8]; b: float[8]\ny = GreaterOrEqual(a, b)\nreturn y", "GreaterOrEqual",
            "does not exist");
}
END_TEST

START_TEST(batchnorm_outputs_and_gemm_c)
{
    CONVERTS_UNCHECKED("14..", "opset 13; x: float[2,3,4,4]; s: const float[3]; b: const float[3]; m: const float[3]; "
                     "v: float[3] = [0.5]\ny, rm, rv = BatchNormalization(x, s, b, m, v)\nreturn y",
             "y = BatchNormalization(x, s, b, m, v)");
    CONVERTS("9", "opset 13; a: float[2,3]; w: const float[3,4]\ny = Gemm(a, w)\nreturn y",
             "y = Gemm(a, w, c:const)");
}
END_TEST

START_TEST(resize_and_upsample)
{
    CONVERTS_UNCHECKED("10", "opset 13; x: float[1,2,3,3]; s: float[4] = [1, 1, 2, 3]\n"
                   "y = Resize(x, _, s) {coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"floor\"}\nreturn y",
             "y = Resize(x, s2:const)");
    CONVERTS_UNCHECKED("9", "opset 13; x: float[1,2,3,3]; z: int64[4] = [1, 2, 6, 6]\n"
                  "y = Resize(x, _, _, z) {coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"floor\"}\nreturn y",
             "y = Upsample(x, s:const)");
    CONVERTS_UNCHECKED("11", "opset 9; x: float[1,2,3,3]; s: float[4] = [1, 1, 3, 2]\ny = Upsample(x, s)\nreturn y",
             "y = Resize(x, r:const, s) {coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"floor\"}");
    CONVERTS_UNCHECKED("13", "opset 7; x: float[1,2,3,3]\ny = Upsample(x) {scales=[1.0, 1.0, 2.0, 2.0], mode=\"linear\"}\nreturn y",
             "y = Resize(x, r?, s:const) {coordinate_transformation_mode=\"asymmetric\", mode=\"linear\"}");
}
END_TEST

START_TEST(refusals)
{
    refused("11", "opset 13; x: float[2,3]; a: int64[1]\ny = Unsqueeze(x, a)\nreturn y", "Unsqueeze", "computed");
    refused("10", "opset 13; x: float[1,2,3,3]; s: float[4] = [1, 1, 2, 2]\ny = Resize(x, _, s)\nreturn y",
            "Resize", "half_pixel");
    refused("10", "opset 13; x: float[2,3]; k: int64[1]\nv, i = TopK(x, k) {largest=0}\nreturn v, i", "TopK",
            "largest");
    refused("9", "opset 13; x: float[2,3]; lo: float[]\ny = Clip(x, lo)\nreturn y", "Clip", "computed");
    refused("11", "opset 13; x: float[2,8]\ny = Shape(x) {start=1}\nreturn y", "Shape", "start");
    refused("11", "opset 6; x: float[2,8]\ny = Relu(x)\nreturn y", "from opset 6", "adapters cover opsets 7");
    refused("11", "opset 17; x: float[2,8]\ny = Trilu(x)\nreturn y", "Trilu", "does not exist");
    refused("11", "opset 18; x: float[2,3]; a: int64[0]\ny = ReduceMean(x, a) {noop_with_empty_axes=1}\nreturn y",
            "ReduceMean", "noop_with_empty_axes");
}
END_TEST

/* Bodies are converted with the main graph. */
START_TEST(if_bodies)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("opset 13; x: float[2,3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    int64_t zero = 0, one = 1;
    ph_value *a = ph_graph_add_initializer(then_g, "a", ph_tensor_new(PH_DT_INT64, 1, &one, &zero));
    ph_value *in[2] = {x, a};
    ph_node *u = ph_node_create(then_g, NULL, "Unsqueeze", 2, in, 1);
    tk_output(then_g, ph_node_output(u, 0));
    ph_node *s = ph_node_create(else_g, NULL, "Softmax", 1, &x, 1);
    ph_node_set_attr_int(s, "axis", 0);
    ph_value *so = ph_node_output(s, 0);
    ph_node *u2 = ph_node_create(else_g, NULL, "Unsqueeze", 2, (ph_value *[]){so, ph_graph_add_initializer(else_g, "b", ph_tensor_new(PH_DT_INT64, 1, &one, &zero))}, 1);
    tk_output(else_g, ph_node_output(u2, 0));
    ph_error err = {0};
    const char *params[] = {"opset=11", NULL};
    ph_test_options o = {.params = params};
    ck_assert_msg(ph_test_run(pass, m, &o, NULL, &err) == 1, "%s", err.message);
    ck_assert_int_eq(ph_model_opset(m, ""), 11);
    PC_GRAPH_IS(then_g, "y = Unsqueeze(x) {axes=[0]}");
    PC_GRAPH_IS(else_g, "t = Transpose(x) {perm=[1, 0]}\nm = Softmax(t) {axis=1}\nb = Transpose(m)\ny = Unsqueeze(b) {axes=[0]}");
    ph_model_free(m);
}
END_TEST

/* A Loop body too: its Unsqueeze takes its axes as an attribute, its
 * Softmax over axis 0 (not the last) keeps its meaning. */
START_TEST(loop_body)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text("opset 13; x: float[2,3]; n: int64[] = [2]; c: bool[] = [1]\n"
                                     "y = Loop(n, c, x)\nreturn y", &err);
    ck_assert_msg(m, "%s", err.message);
    ph_node *loop = ph_value_producer(ph_graph_output(ph_model_graph(m), 0));
    ph_graph *body = ph_node_add_subgraph(loop, "body");
    int64_t dims[2] = {2, 3}, zero = 0, one = 1;
    ph_graph_add_input(body, "i", PH_DT_INT64, 0, NULL);
    ph_value *cin = ph_graph_add_input(body, "cin", PH_DT_BOOL, 0, NULL);
    ph_value *v = ph_graph_add_input(body, "v", PH_DT_FLOAT, 2, dims);
    ph_node *sm = ph_node_create(body, NULL, "Softmax", 1, &v, 1);
    ph_node_set_attr_int(sm, "axis", 0);
    ph_value *a = ph_graph_add_initializer(body, "a", ph_tensor_new(PH_DT_INT64, 1, &one, &zero));
    ph_node *un = ph_node_create(body, NULL, "Unsqueeze", 2, (ph_value *[]){ph_node_output(sm, 0), a}, 1);
    ph_node *sq = ph_node_create(body, NULL, "Squeeze", 2, (ph_value *[]){ph_node_output(un, 0), a}, 1);
    ph_node *id = ph_node_create(body, NULL, "Identity", 1, &cin, 1);
    ph_graph_add_output(body, ph_node_output(id, 0));
    ph_graph_add_output(body, ph_node_output(sq, 0));
    const char *params[] = {"opset=7..11", NULL};
    ph_test_options o = {.params = params};
    ck_assert_msg(ph_test_run(pass, m, &o, NULL, &err) == 1, "%s", err.message);
    ck_assert_int_eq(ph_model_opset(m, ""), 11);
    PC_GRAPH_IS(body, "t = Transpose(v) {perm=[1, 0]}\ns = Softmax(t) {axis=1}\nb = Transpose(s) {perm=[1, 0]}\n"
                      "u = Unsqueeze(b) {axes=[0]}\nq = Squeeze(u) {axes=[0]}\n--\nk = Identity(cin)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("convert_opset");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, in_range_untouched);
    tcase_add_test(tc, squeeze_unsqueeze_down_and_up);
    tcase_add_test(tc, reduce_axes_at_13_and_18);
    tcase_add_test(tc, split_at_13_and_18);
    tcase_add_test(tc, clip_at_11);
    tcase_add_test(tc, pad_at_11_and_18);
    tcase_add_test(tc, slice_at_10);
    tcase_add_test(tc, topk_at_10_and_11);
    tcase_add_test(tc, dropout_at_12);
    tcase_add_test(tc, softmax_axis_semantics);
    tcase_add_test(tc, layernorm_and_gelu_decomposed);
    tcase_add_test(tc, hardswish_and_comparisons_decomposed);
    tcase_add_test(tc, batchnorm_outputs_and_gemm_c);
    tcase_add_test(tc, resize_and_upsample);
    tcase_add_test(tc, constant_value_forms_below_12);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, if_bodies);
    tcase_add_test(tc, loop_body);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
