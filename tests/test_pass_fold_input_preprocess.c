/* tests/test_pass_fold_input_preprocess.c - fold_input_preprocess: per-channel
 * scale, mean and channel reversal of a graph input folded into the first
 * Conv. */
#include "passcase.h"

PASS_FIXTURE("fold_input_preprocess")

#define I64MIN "-9223372036854775808"

/* (x - mean) / std, BGR <-> RGB by a Gather: three folds, one Conv of x */
START_TEST(mean_std_and_bgr_chain)
{
    const char *graph = "x: float[1,3,6,6]; mean: const float[1,3,1,1]; std: const float[3,1,1]; idx: int64[3] = [2, 1, 0]\n"
                        "w: const float[4,3,3,3]; b: const float[4]\n"
                        "a = Sub(x, mean); d = Div(a, std); g = Gather(d, idx) {axis=1}; c = Conv(g, w, b); y = Relu(c)\n"
                        "return y";
    PC_CASE(graph, 3, "c = Conv(x, _:const, _:const)\ny = Relu(c)");
    PC_INITIALIZERS_AFTER(graph, 3, 2); /* W' and b' */
}
END_TEST

/* Scale and reversal fold through padding; no bias is created for them. */
START_TEST(scale_and_reverse_slice_with_padding)
{
    const char *graph = "x: float[2,3,5,5]; st: int64[1] = [-1]; en: int64[1] = [" I64MIN "]; ax: int64[1] = [1]\n"
                        "stp: int64[1] = [-1]; s: const float[1]; s2: const float[1,3,1,1]; w: const float[2,3,3,3]\n"
                        "v = Slice(x, st, en, ax, stp); m = Mul(s, v); m2 = Mul(m, s2); y = Conv(m2, w) {pads=[1,1,1,1]}\n"
                        "return y";
    PC_CASE(graph, 3, "y = Conv(x, _:const)");
    PC_INITIALIZERS_AFTER(graph, 3, 1); /* W' */
}
END_TEST

/* a - x and x + a into a Conv that cannot pad: VALID, and SAME with a 1x1
 * kernel: a bias is made */
static const struct {
    const char *graph;
} unpadded[] = {
    {"x: float[1,3,4,4]; a: const float[1,3,1,1]; a2: const float[3,1,1]; w: const float[5,3,3,3]\n"
     "v = Sub(a, x); u = Add(a2, v); y = Conv(u, w) {auto_pad=\"VALID\"}\nreturn y"},
    {"x: float[1,3,4,4]; a: const float[1,3,1,1]; a2: const float[3,1,1]; w: const float[5,3,1,1]; b: const float[5]\n"
     "v = Sub(a, x); u = Add(a2, v); y = Conv(u, w, b) {auto_pad=\"SAME_UPPER\", strides=[2,2]}\nreturn y"},
};

START_TEST(sub_from_and_add_without_padding)
{
    PC_CASE(unpadded[_i].graph, 2, "y = Conv(x, _:const, _:const)");
}
END_TEST

/* x [1,3,5,5] -> OP(x, s) -> Conv(w [2,3,3,3], b) */
#define X "x: float[1,3,5,5]; w: const float[2,3,3,3]; b: const float[2]\n"
#define S "s: const float[1,3,1,1]\n"
static const struct {
    const char *graph;
    int mode;
} alone[] = {
    /* a mean into padding: the border would change */
    {X S "v = Sub(x, s); y = Conv(v, w, b) {pads=[1,1,1,1]}\nreturn y", PC_CHECKED},
    /* the preprocessed value has another reader; is a graph output */
    {X S "v = Mul(x, s); y = Conv(v, w, b); z = Relu(v)\nreturn y, z", PC_CHECKED},
    {X S "v = Mul(x, s); y = Conv(v, w, b)\nreturn y, v", PC_CHECKED},
    /* the operand is not constant */
    {X "s: float[1,3,1,1]\nv = Mul(x, s); y = Conv(v, w, b)\nreturn y", PC_CHECKED},
    /* x is not a graph input */
    {X S "r = Relu(x); v = Mul(r, s); y = Conv(v, w, b)\nreturn y", PC_CHECKED},
    /* the graph input is read by something else as well */
    {X S "v = Mul(x, s); y = Conv(v, w, b); z = Neg(x)\nreturn y, z", PC_CHECKED},
    /* the input's channels unknown */
    {"x: float[1,?,5,5]; w: const float[2,3,3,3]; b: const float[2]\n" S "v = Mul(x, s); y = Conv(v, w, b)\nreturn y",
     PC_UNCHECKED},
    /* the Mul would broadcast a one-channel input to three */
    {"x: float[1,1,5,5]; w: const float[2,3,3,3]; b: const float[2]\n" S "v = Mul(x, s); y = Conv(v, w, b)\nreturn y",
     PC_CHECKED},
    /* a Sub into SAME padding */
    {X S "v = Sub(x, s); y = Conv(v, w, b) {auto_pad=\"SAME_LOWER\"}\nreturn y", PC_CHECKED},
    /* varies along axis 2, not per channel */
    {X "s: const float[1,1,5,1]\nv = Mul(x, s); y = Conv(v, w, b)\nreturn y", PC_CHECKED},
    /* not a permutation */
    {X "idx: int64[3] = [0, 0, 1]\nv = Gather(x, idx) {axis=1}; y = Conv(v, w, b)\nreturn y", PC_CHECKED},
    /* a reversal of rows (axis 2), not of channels */
    {X "st: int64[1] = [-1]; en: int64[1] = [" I64MIN "]; ax: int64[1] = [2]; stp: int64[1] = [-1]\n"
     "v = Slice(x, st, en, ax, stp); y = Conv(v, w, b)\nreturn y", PC_CHECKED},
    /* grouped: W is [3, 1, 3, 3] */
    {"x: float[1,3,5,5]; w: const float[3,1,3,3]\n" S "v = Mul(x, s); y = Conv(v, w) {group=3}\nreturn y", PC_CHECKED},
    /* Div by a zero channel */
    {X "z: float[3,1,1] = [1, 0, 2]\nv = Div(x, z); y = Conv(v, w, b)\nreturn y", PC_CHECKED},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, alone[_i].graph);
}
END_TEST

/* The text has no subgraphs of its own: the If bodies as text too.  The
 * else branch's Conv reads a constant, not the graph input. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text("x: float[1,3,5,5]; cond: bool[]\ny = If(cond)\nreturn y",
                             "x: float[1,3,5,5]; s: const float[1,3,1,1]; w: const float[2,3,3,3]; b: const float[2]\n"
                             "v = Mul(x, s); y = Conv(v, w, b) {pads=[1,1,1,1]}\nreturn y",
                             "k: const float[1,3,5,5]; w: const float[2,3,3,3]; b: const float[2]\n"
                             "y = Conv(k, w, b) {pads=[1,1,1,1]}\nreturn y",
                             &then_g, &else_g);
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Conv(x, _:const, _:const)");
    PC_GRAPH_IS(else_g, "y = Conv(k, w, b)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fold_input_preprocess");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, mean_std_and_bgr_chain);
    tcase_add_test(tc, scale_and_reverse_slice_with_padding);
    tcase_add_loop_test(tc, sub_from_and_add_without_padding, 0, (int)(sizeof unpadded / sizeof *unpadded));
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
