/* tests/test_pass_eliminate_qdq_pairs.c - eliminate_qdq_pairs: a
 * QuantizeLinear -> DequantizeLinear pair of the same scale and zero point
 * goes (approximate: the rounding to the quantized grid goes with it).  The
 * evaluator has no QuantizeLinear, so the cases check structure and the
 * first one compares with the pair computed here. */
#include <math.h>
#include <string.h>

#include "passcase.h"

PASS_FIXTURE("eliminate_qdq_pairs")

/* Round half to even, as QuantizeLinear does. */
static float dequant_quant(float x, float s, int z)
{
    float v = nearbyintf(x / s) + (float)z;
    v = v < -128 ? -128 : v > 127 ? 127 : v;
    return (v - (float)z) * s;
}

/* Relu -> Q/DQ (scale 0.25, int8 zero point 3, one shared scale value and
 * two equal zero-point initializers) -> Neg.  The result after the pass is
 * compared with the pair computed here: equal up to half a scale step, and
 * exactly -relu(x). */
START_TEST(pair_removed_within_half_a_step)
{
    const char *graph = "x: float[64]; s: float[] = [0.25]; z: int8[] = [3]; z2: int8[] = [3]\n"
                        "r = Relu(x); q = QuantizeLinear(r, s, z); d = DequantizeLinear(q, s, z2); y = Neg(d)\nreturn y";
    PC_CASE_OPTS(&pc_unchecked, graph, 1, "r = Relu(x)\ny = Neg(r)");
    ph_model *m = pc_run_text(graph, 1);
    ph_graph *g = ph_model_graph(m);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    float xs[64];
    for (int i = 0; i < 64; i++)
        xs[i] = (float)(i - 20) * 0.37f;
    ph_tensor *in = ph_tensor_new(PH_DT_FLOAT, 1, (const int64_t[]){64}, xs), *out = NULL;
    ph_eval *e = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_eval_new(g, &e, &err) == 0, "%s", err.message);
    ck_assert_msg(ph_eval_run(e, (const ph_tensor *const *)&in, 1, &out, 1, &err) == 0, "%s", err.message);
    float ys[64];
    memcpy(ys, ph_tensor_data(out), sizeof ys);
    for (int i = 0; i < 64; i++) {
        float relu = xs[i] > 0 ? xs[i] : 0, before = -dequant_quant(relu, 0.25f, 3);
        ck_assert_float_eq(ys[i], -relu);
        ck_assert_msg(fabsf(ys[i] - before) <= 0.125f, "element %d: %g after, %g before", i, (double)ys[i],
                      (double)before);
    }
    ph_tensor_free(in);
    ph_tensor_free(out);
    ph_eval_free(e);
    ph_model_free(m);
}
END_TEST

/* No zero points, two equal scale initializers, a graph input feeding the
 * pair and a graph output after it (which keeps its name). */
START_TEST(no_zero_points_graph_input_and_output)
{
    const char *graph = "a: float[2,3]; b: float[2,3]; s: float[] = [0.5]; s2: float[] = [0.5]; t: float[] = [0.5]\n"
                        "t2: float[] = [0.5]\n"
                        "r = Relu(b); q2 = QuantizeLinear(r, t); y2 = DequantizeLinear(q2, t2)\n"
                        "q = QuantizeLinear(a, s); d = DequantizeLinear(q, s2); n = Neg(d)\nreturn y2, n";
    PC_CASE_OPTS(&pc_unchecked, graph, 2, "y2 = Relu(b)\n--\nn = Neg(a)");
    PC_OUTPUT_NAME_KEPT(graph, 2);
}
END_TEST

START_TEST(descriptor_is_off_and_approximate)
{
    ck_assert_int_eq(pass->on_by_default, 0);
    ck_assert_int_eq(pass->exactness, PH_APPROX);
    ck_assert_int_eq(pass->stages, PH_STAGE_OPTIMIZE);
}
END_TEST

/* ---- negative cases: each model is left alone (structure only) */

#define R "x: float[4,4]; r = Relu(x)\n"
#define QDQ(qargs, dqargs) "q = QuantizeLinear(r, " qargs "); d = DequantizeLinear(q, " dqargs ")"
static const struct {
    const char *graph;
} alone[] = {
    /* another scale; another zero point; one zero point only */
    {R "s: float[] = [0.25]; s2: float[] = [0.5]\n" QDQ("s", "s2") "; y = Neg(d)\nreturn y"},
    {R "s: float[] = [0.25]; z: int8[] = [0]; z2: int8[] = [1]\n" QDQ("s, z", "s, z2") "; y = Neg(d)\nreturn y"},
    {R "s: float[] = [0.25]; z: int8[] = [0]\n" QDQ("s, z", "s") "; y = Neg(d)\nreturn y"},
    /* a scale known at run time; a zero point known at run time */
    {R "s: float[]\n" QDQ("s", "s") "; y = Neg(d)\nreturn y"},
    {R "s: float[] = [0.25]; z: int8[]\n" QDQ("s, z", "s, z") "; y = Neg(d)\nreturn y"},
    /* per-channel scales along different axes */
    {R "s: const float[4]\nq = QuantizeLinear(r, s); d = DequantizeLinear(q, s) {axis=0}; y = Neg(d)\nreturn y"},
    /* int32 in, float out */
    {R "i: int32[4,4]; s: float[] = [1.0]\nq = QuantizeLinear(i, s); d = DequantizeLinear(q, s); y = Neg(d); z = Neg(r)\n"
     "return y, z"},
    /* a Dequantize to another dtype than the Quantize input's (opset 23 form) */
    {R "s: float[] = [0.25]\nq = QuantizeLinear(r, s); y = DequantizeLinear(q, s) {output_dtype=10}\nreturn y"},
    /* the quantized value is read elsewhere; is a graph output */
    {R "s: float[] = [0.25]\n" QDQ("s", "s") "; y = Neg(d); i = Identity(q)\nreturn y, i"},
    {R "s: float[] = [0.25]\n" QDQ("s", "s") "; y = Neg(d)\nreturn y, q"},
    /* a graph input to a graph output */
    {R "x2: float[4,4]; s: float[] = [0.25]\nq = QuantizeLinear(x2, s); y = DequantizeLinear(q, s); z = Neg(r)\n"
     "return y, z"},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_UNCHECKED(alone[_i].graph);
}
END_TEST

/* The text has no subgraphs of its own: the If bodies as text too; their
 * scales are the main graph's. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text("x: float[3,4]; cond: bool[]; s: float[] = [0.25]; s2: float[] = [0.5]\ny = If(cond)\nreturn y",
                             "x: float[3,4]; s: float[]\nq = QuantizeLinear(x, s); d = DequantizeLinear(q, s); y = Neg(d)\n"
                             "return y",
                             "x: float[3,4]; s: float[]; s2: float[]\n"
                             "q = QuantizeLinear(x, s); d = DequantizeLinear(q, s2); y = Neg(d)\nreturn y",
                             &then_g, &else_g);
    pc_run_structure(m, 1); /* the pass changes values by design: structure only */
    PC_GRAPH_IS(then_g, "y = Neg(x)");
    PC_GRAPH_IS(else_g, "q = QuantizeLinear(x, s)\nd = DequantizeLinear(q, s2)\ny = Neg(d)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_qdq_pairs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, pair_removed_within_half_a_step);
    tcase_add_test(tc, no_zero_points_graph_input_and_output);
    tcase_add_test(tc, descriptor_is_off_and_approximate);
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
