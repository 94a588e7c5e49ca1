/* tests/test_pass_eliminate_inverse_pairs.c - eliminate_inverse_pairs: an
 * op followed by its inverse goes (Squeeze/Unsqueeze, Reshape/Reshape,
 * lossless Cast/Cast, Concat then the Slice of one of its inputs). */
#include "passcase.h"

PASS_FIXTURE("eliminate_inverse_pairs")

#define I64MAX "9223372036854775807"

/* ---- Squeeze / Unsqueeze */

/* [2,1,3] -> Squeeze [1] -> Unsqueeze [-2] (the same axis); [2,3] ->
 * Unsqueeze [0,-1] -> Squeeze [3,0]; [1,3,1] -> Squeeze (all ones) ->
 * Unsqueeze [2,0]; [2,3] -> Unsqueeze [1] -> Squeeze (all ones: only the
 * new one).  The axes are pruned. */
START_TEST(squeeze_unsqueeze_removed)
{
    const char *graph =
        "x: float[2,1,3]; z: float[2,3]; w: float[1,3,1]; v: float[2,3]\n"
        "a1: int64[1] = [1]; a2: int64[1] = [-2]; a3: int64[2] = [0, -1]; a4: int64[2] = [3, 0]; a5: int64[2] = [2, 0]\n"
        "a6: int64[1] = [1]\n"
        "r = Relu(x); p = Squeeze(r, a1); q = Unsqueeze(p, a2); y1 = Neg(q)\n"
        "t = Sin(z); u = Unsqueeze(t, a3); s = Squeeze(u, a4); y2 = Neg(s)\n"
        "c = Cos(w); cs = Squeeze(c); cu = Unsqueeze(cs, a5); y3 = Neg(cu)\n"
        "b = Abs(v); bu = Unsqueeze(b, a6); bs = Squeeze(bu); y4 = Neg(bs)\n"
        "return y1, y2, y3, y4";
    PC_CASE(graph, 4, "r = Relu(x)\ny1 = Neg(r)\n--\nt = Sin(z)\ny2 = Neg(t)\n--\nc = Cos(w)\ny3 = Neg(c)\n--\n"
                      "b = Abs(v)\ny4 = Neg(b)");
    PC_INITIALIZERS_AFTER(graph, 4, 0);
}
END_TEST

/* Opset 11: axes are attributes. */
START_TEST(squeeze_unsqueeze_attribute_axes_removed)
{
    PC_CASE("opset 11; x: float[2,1,3]\nr = Relu(x); p = Squeeze(r) {axes=[-2]}; q = Unsqueeze(p) {axes=[1]}; y = Neg(q)\n"
            "return y",
            1, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* x [2,1,1,3] -> Relu -> Squeeze -> Unsqueeze (or the reverse) -> Neg */
#define X "x: float[2,1,1,3]; one: int64[1] = [1]; r = Relu(x)\n"
static const struct {
    const char *graph;
    int mode;
} squeeze_kept[] = {
    /* other axes */
    {X "two: int64[1] = [2]; m = Squeeze(r, one); u = Unsqueeze(m, two); y = Neg(u)\nreturn y", PC_CHECKED},
    /* the middle value has another reader; is a graph output */
    {X "m = Squeeze(r, one); u = Unsqueeze(m, one); y = Neg(u); z = Abs(m)\nreturn y, z", PC_CHECKED},
    {X "m = Squeeze(r, one); u = Unsqueeze(m, one); y = Neg(u)\nreturn y, m", PC_CHECKED},
    /* axes not constant */
    {X "a: int64[1]; m = Squeeze(r, a); u = Unsqueeze(m, one); y = Neg(u)\nreturn y", PC_UNCHECKED},
    /* Squeeze of every 1 (two axes), Unsqueeze of one */
    {X "m = Squeeze(r); u = Unsqueeze(m, one); y = Neg(u)\nreturn y", PC_CHECKED},
    /* Unsqueeze [0], Squeeze of every 1: also x's own */
    {X "zero: int64[1] = [0]; m = Unsqueeze(r, zero); u = Squeeze(m); y = Neg(u)\nreturn y", PC_CHECKED},
    /* Unsqueeze [0] then Squeeze [2]: [1,2,1,1,3] -> [1,2,1,3], not x */
    {X "zero: int64[1] = [0]; two: int64[1] = [2]; m = Unsqueeze(r, zero); u = Squeeze(m, two); y = Neg(u)\nreturn y",
     PC_CHECKED},
    /* x straight to a graph output */
    {"x: float[2,1,1,3]; one: int64[1] = [1]; m = Squeeze(x, one); y = Unsqueeze(m, one)\nreturn y", PC_CHECKED},
    /* Squeeze of every 1 needs every dim: [?,1,3] might squeeze dim 0 too */
    {"x: float[?,1,3]; one: int64[1] = [1]; r = Relu(x); m = Squeeze(r); u = Unsqueeze(m, one); y = Neg(u)\nreturn y",
     PC_UNCHECKED},
    /* negative axes need the rank */
    {"x: float[*]; a: int64[1] = [-1]; r = Relu(x); m = Squeeze(r, a); u = Unsqueeze(m, a); y = Neg(u)\nreturn y",
     PC_UNCHECKED},
};

START_TEST(squeeze_pairs_left_alone)
{
    PC_UNTOUCHED_AS(squeeze_kept[_i].mode, squeeze_kept[_i].graph);
}
END_TEST

/* ---- Reshape */

START_TEST(reshape_pair_removed)
{
    const char *graph = "x: float[2,3,4]; z: float[2,3,4]; s1: int64[2] = [6, 4]; s2: int64[3] = [2, 3, 4]\n"
                        "s3: int64[3] = [2, -1, 4]\n"
                        "r = Relu(x); p = Reshape(r, s1); q = Reshape(p, s2); y1 = Neg(q)\n"
                        "t = Sin(z); f = Flatten(t); g = Reshape(f, s3); y2 = Neg(g)\nreturn y1, y2";
    PC_CASE(graph, 2, "r = Relu(x)\ny1 = Neg(r)\n--\nt = Sin(z)\ny2 = Neg(t)");
    PC_INITIALIZERS_AFTER(graph, 2, 0);
}
END_TEST

/* The same with a symbolic batch: [batch,3,4] -> [0,12] -> [0,3,4]: the
 * inference keeps `batch` by name only through 0, so the second target
 * copies dim 0. */
START_TEST(reshape_pair_symbolic_removed)
{
    PC_CASE("x: float[batch,3,4]; s1: int64[2] = [0, 12]; s2: int64[3] = [0, 3, 4]\n"
            "r = Relu(x); p = Reshape(r, s1); q = Reshape(p, s2); y = Neg(q)\nreturn y",
            1, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* another final shape; a runtime target (the final shape unknown); the
 * middle value has another reader */
START_TEST(reshape_pairs_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("x: float[2,3,4]; z: float[3,4]; w: float[3,4]; t: int64[2]\n"
                           "s1: int64[2] = [6, 4]; s2: int64[3] = [3, 2, 4]; s12: int64[1] = [12]; s34: int64[2] = [3, 4]\n"
                           "r = Relu(x); p = Reshape(r, s1); q = Reshape(p, s2); y1 = Neg(q)\n"
                           "rz = Relu(z); pz = Reshape(rz, s12); qz = Reshape(pz, t); y2 = Neg(qz)\n"
                           "rw = Relu(w); m = Reshape(rw, s12); qw = Reshape(m, s34); y3 = Neg(qw); y4 = Abs(m)\n"
                           "return y1, y2, y3, y4");
}
END_TEST

/* ---- Cast (1 float, 6 int32, 7 int64, 9 bool, 10 float16, 11 double, 12 uint32) */

/* float -> double -> float, int32 -> int64 -> int32, bool -> int32 ->
 * bool; float16 -> float -> float16 between two lossy casts that stay */
START_TEST(lossless_cast_pairs_removed)
{
    PC_CASE("x: float[2,3]; i: int32[5]; z: float[4]; b: bool[4]\n"
            "r = Relu(x); c1 = Cast(r) {to=11}; c2 = Cast(c1) {to=1}; y1 = Neg(c2)\n"
            "n = Neg(i); d1 = Cast(n) {to=7}; d2 = Cast(d1) {to=6}; y2 = Abs(d2)\n"
            "s = Sin(z); h = Cast(s) {to=10}; e1 = Cast(h) {to=1}; e2 = Cast(e1) {to=10}; y3 = Cast(e2) {to=1}\n"
            "nb = Not(b); f1 = Cast(nb) {to=6}; f2 = Cast(f1) {to=9}; y4 = Not(f2)\n"
            "return y1, y2, y3, y4",
            4,
            "r = Relu(x)\ny1 = Neg(r)\n--\nn = Neg(i)\ny2 = Abs(n)\n--\ns = Sin(z)\nh = Cast(s) {to=10}\ny3 = Cast(h) {to=1}\n"
            "--\nnb = Not(b)\ny4 = Not(nb)");
}
END_TEST

/* float->int->float, narrower, not back to A, int64->float->int64,
 * 2^53 + 1, 2^24 + 1, the sign, and a middle value with another reader */
START_TEST(lossy_cast_pairs_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; i: int64[5]; j: int32[5]\nr = Relu(x)\n"
                 "a1 = Cast(r) {to=6}; a2 = Cast(a1) {to=1}; y1 = Neg(a2)\n"
                 "b1 = Cast(r) {to=10}; b2 = Cast(b1) {to=1}; y2 = Neg(b2)\n"
                 "c1 = Cast(r) {to=11}; c2 = Cast(c1) {to=10}; y3 = Neg(c2)\n"
                 "ni = Neg(i); d1 = Cast(ni) {to=1}; d2 = Cast(d1) {to=7}; y4 = Abs(d2)\n"
                 "e1 = Cast(ni) {to=11}; e2 = Cast(e1) {to=7}; y5 = Abs(e2)\n"
                 "nj = Neg(j); f1 = Cast(nj) {to=1}; f2 = Cast(f1) {to=6}; y6 = Abs(f2)\n"
                 "g1 = Cast(nj) {to=12}; g2 = Cast(g1) {to=6}; y7 = Abs(g2)\n"
                 "m = Cast(r) {to=11}; h2 = Cast(m) {to=1}; y8 = Neg(h2); y9 = Neg(m)\n"
                 "return y1, y2, y3, y4, y5, y6, y7, y8, y9");
}
END_TEST

/* The input's dtype is unknown: the output of an operator inference does
 * not know. */
START_TEST(unknown_dtype_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[4]; k = Mystery@com.example(x); c1 = Cast(k) {to=11}; c2 = Cast(c1) {to=1}\n"
                           "y = Neg(c2)\nreturn y");
}
END_TEST

/* ---- Concat then Slice */

/* the middle input, by positive indices; the last one, by a negative
 * start, an end past the dim and a whole axis 0; the first one, along axis
 * 0, axis 1 sliced over its known length.  a fed only the Concats. */
START_TEST(concat_slice_removed)
{
    const char *graph =
        "a: float[2,3]; b: float[2,4]; c: float[2,5]\n"
        "s1: int64[1] = [3]; e1: int64[1] = [7]; x1: int64[1] = [1]\n"
        "s2: int64[2] = [0, -5]; e2: int64[2] = [" I64MAX ", 100]; x2: int64[2] = [0, 1]; p2: int64[2] = [1, 1]\n"
        "s3: int64[2] = [0, 0]; e3: int64[2] = [2, 4]\n"
        "ra = Relu(a); sb = Sin(b); cc = Cos(c)\n"
        "k1 = Concat(ra, sb, cc) {axis=1}; l1 = Slice(k1, s1, e1, x1); y1 = Neg(l1)\n"
        "k2 = Concat(ra, sb, cc) {axis=-1}; l2 = Slice(k2, s2, e2, x2, p2); y2 = Neg(l2)\n"
        "k3 = Concat(sb, sb) {axis=0}; l3 = Slice(k3, s3, e3, x2); y3 = Neg(l3)\n"
        "return y1, y2, y3";
    PC_CASE(graph, 3, "sb = Sin(b)\n--\ny1 = Neg(sb)\n--\ncc = Cos(c)\ny2 = Neg(cc)\n--\ny3 = Neg(sb)");
    PC_INITIALIZERS_AFTER(graph, 3, 0);
}
END_TEST

/* Concat(a [2,3], b [2,4]) on axis 1 -> one Slice -> Neg */
#define AB(bdims) "a: float[2,3]; b: float" bdims "; ra = Relu(a); sb = Sin(b); c = Concat(ra, sb) {axis=1}\n"
static const struct {
    const char *graph;
    int mode;
} concat_kept[] = {
    /* two inputs */
    {AB("[2,4]") "s: int64[1] = [2]; e: int64[1] = [7]; x: int64[1] = [1]; l = Slice(c, s, e, x); y = Neg(l)\nreturn y",
     PC_CHECKED},
    /* part of one */
    {AB("[2,4]") "s: int64[1] = [0]; e: int64[1] = [2]; x: int64[1] = [1]; l = Slice(c, s, e, x); y = Neg(l)\nreturn y",
     PC_CHECKED},
    /* step 2 */
    {AB("[2,4]") "s: int64[1] = [3]; e: int64[1] = [7]; x: int64[1] = [1]; p: int64[1] = [2]\n"
     "l = Slice(c, s, e, x, p); y = Neg(l)\nreturn y", PC_CHECKED},
    /* cuts axis 0 */
    {AB("[2,4]") "s: int64[2] = [3, 0]; e: int64[2] = [7, 1]; x: int64[2] = [1, 0]; l = Slice(c, s, e, x); y = Neg(l)\n"
     "return y", PC_CHECKED},
    /* c has another reader */
    {AB("[2,4]") "s: int64[1] = [3]; e: int64[1] = [7]; x: int64[1] = [1]; l = Slice(c, s, e, x); y = Neg(l); z = Abs(c)\n"
     "return y, z", PC_CHECKED},
    /* b's length unknown */
    {AB("[2,?]") "s: int64[1] = [3]; e: int64[1] = [" I64MAX "]; x: int64[1] = [1]; l = Slice(c, s, e, x); y = Neg(l)\n"
     "return y", PC_UNCHECKED},
    /* axis 0 reversed: every element, not in order */
    {AB("[2,4]") "s: int64[2] = [3, -1]; e: int64[2] = [7, -3]; x: int64[2] = [1, 0]; p: int64[2] = [1, -1]\n"
     "l = Slice(c, s, e, x, p); y = Neg(l)\nreturn y", PC_CHECKED},
    /* another axis */
    {AB("[2,4]") "s: int64[1] = [3]; e: int64[1] = [7]; x: int64[1] = [0]; l = Slice(c, s, e, x); y = Neg(l)\nreturn y",
     PC_CHECKED},
    /* starts not constant */
    {AB("[2,4]") "s: int64[1]; e: int64[1] = [7]; x: int64[1] = [1]; l = Slice(c, s, e, x); y = Neg(l)\nreturn y",
     PC_CHECKED},
};

START_TEST(concat_slice_left_alone)
{
    PC_UNTOUCHED_AS(concat_kept[_i].mode, concat_kept[_i].graph);
}
END_TEST

/* ---- interface and bodies */

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[2,3]; r = Relu(x); c = Cast(r) {to=11}; y = Cast(c) {to=1}; n = Neg(y)\nreturn y, n";
    PC_CASE(graph, 1, "y = Relu(x)\n--\nn = Neg(y)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* The text has no subgraphs of its own: the If bodies as text too. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text("x: float[2,1,3]; cond: bool[]\ny = If(cond)\nreturn y",
                             "x: float[2,1,3]; one: int64[1] = [1]\n"
                             "r = Relu(x); p = Squeeze(r, one); q = Unsqueeze(p, one); y = Neg(q)\nreturn y",
                             "x: float[2,1,3]\ns = Sin(x); c = Cast(s) {to=11}; d = Cast(c) {to=1}; y = Neg(d)\nreturn y",
                             &then_g, &else_g);
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "r = Relu(x)\ny = Neg(r)");
    PC_GRAPH_IS(else_g, "s = Sin(x)\ny = Neg(s)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_inverse_pairs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, squeeze_unsqueeze_removed);
    tcase_add_test(tc, squeeze_unsqueeze_attribute_axes_removed);
    tcase_add_loop_test(tc, squeeze_pairs_left_alone, 0, (int)(sizeof squeeze_kept / sizeof *squeeze_kept));
    tcase_add_test(tc, reshape_pair_removed);
    tcase_add_test(tc, reshape_pair_symbolic_removed);
    tcase_add_test(tc, reshape_pairs_left_alone);
    tcase_add_test(tc, lossless_cast_pairs_removed);
    tcase_add_test(tc, lossy_cast_pairs_left_alone);
    tcase_add_test(tc, unknown_dtype_kept);
    tcase_add_test(tc, concat_slice_removed);
    tcase_add_loop_test(tc, concat_slice_left_alone, 0, (int)(sizeof concat_kept / sizeof *concat_kept));
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
