/* tests/test_pass_slice_before_elementwise.c - slice_before_elementwise: a
 * Slice of an elementwise op's output moves onto its non-constant input,
 * the constants are sliced at build time. */
#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("slice_before_elementwise")

#define SL(x) "Slice(" x ", _, _, _?, _?)"
#define INT64_MIN_TEXT "-9223372036854775808"

static const struct {
    const char *graph, *expect;
} moves[] = {
    /* the input sliced, the constant cut at build time */
    {"x: float[2,6,8]; c: const float[6,8]; st: int64[2] = [1, -1]; en: int64[2] = [5, " INT64_MIN_TEXT "]\n"
     "ax: int64[2] = [1, 2]; sp: int64[2] = [2, -3]\ny = Add(x, c); s = Slice(y, st, en, ax, sp)\nreturn s",
     "s = " SL("x") "\ny = Add(s, _:const:shape=[2,3])"},
    /* broadcast axes: the operand of dim 1 (or without the axis) is kept.
     * x [1, 8] broadcast along axis 0: only c is sliced there */
    {"x: float[1,8]; c: const float[6,8]; st: int64[1] = [2]; en: int64[1] = [5]; ax: int64[1] = [0]\n"
     "y = Mul(x, c); s = Slice(y, st, en, ax)\nreturn s",
     "y = Mul(x, _:const:shape=[3,8])"},
    /* x [6, 1], c [1, 8]: slicing both axes slices x on 0, c on 1 */
    {"x: float[6,1]; c: const float[1,8]; st: int64[2] = [1, 1]; en: int64[2] = [4, 7]; ax: int64[2] = [0, 1]\n"
     "sp: int64[2] = [1, 2]\ny = Sub(c, x); s = Slice(y, st, en, ax, sp)\nreturn s",
     "s = " SL("x") "\ny = Sub(_:const:shape=[1,3], s)"},
    /* x [8] lower rank: the leading axis is c's alone */
    {"x: float[8]; c: const float[4,8]; st: int64[2] = [1, -3]; en: int64[2] = [3, 100]; ax: int64[2] = [0, -1]\n"
     "y = Div(c, x); s = Slice(y, st, en, ax)\nreturn s",
     "s = " SL("x") "\ny = Div(_:const:shape=[2,3], s)"},
    /* x [3, 1, 5] sliced on all axes but not of y's rank 4 */
    {"x: float[3,1,5]; c: const float[2,1,4,1]; st: int64[2] = [1, 0]; en: int64[2] = [3, 4]; ax: int64[2] = [1, 3]\n"
     "sp: int64[2] = [1, 2]\ny = Max(x, c); s = Slice(y, st, en, ax, sp)\nreturn s",
     "s = " SL("x") "\ny = Max(s, c)"},
};

START_TEST(slices_input_and_constant)
{
    PC_CASE(moves[_i].graph, 1, moves[_i].expect);
}
END_TEST

/* Unary op on a symbolic batch; a Where on a bool input; a chain (moved
 * above the Pow in one run, above the Abs in the next). */
START_TEST(unary_where_and_chain)
{
    PC_CASE("x: float[N,8]; cond: bool[4,6]; a: const float[6]; b: const float[4,1]; z: float[2,3,4]; e: const float[]\n"
            "s0: int64[1] = [0]; e1: int64[1] = [1]; a0: int64[1] = [0]\n"
            "st: int64[2] = [3, 1]; en: int64[2] = [0, 5]; ax: int64[2] = [0, 1]; sp: int64[2] = [-1, 2]\n"
            "s1: int64[1] = [1]; e3: int64[1] = [3]; am: int64[1] = [-1]\n"
            "g = Sigmoid(x); o1 = Slice(g, s0, e1, a0)\nw = Where(cond, a, b); o2 = Slice(w, st, en, ax, sp)\n"
            "ab = Abs(z); p = Pow(ab, e); o3 = Slice(p, s1, e3, am)\nreturn o1, o2, o3",
            4,
            "s = " SL("x") "\no1 = Sigmoid(s)\n--\nc = " SL("cond") "\no2 = Where(c, _:const, _:const)\n--\n"
            "t = " SL("z") "\nab = Abs(t)\no3 = Pow(ab, e)");
}
END_TEST

#define XC "x: float[6,8]; c: const float[6,8]; st: int64[1] = [1]; en: int64[1] = [3]; ax: int64[1] = [0]\n"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* another reader */
    {XC "y = Mul(x, c); s = Slice(y, st, en, ax); r = Relu(y)\nreturn s, r", 0},
    /* a graph output */
    {XC "y = Mul(x, c); s = Slice(y, st, en, ax)\nreturn s, y", 0},
    /* two operands that are not constant */
    {XC "c2: float[6,8]\ny = Mul(x, c2); s = Slice(y, st, en, ax)\nreturn s", 0},
    /* x's dim unknown on an axis where c is not 1 */
    {"x: float[N,8]; c: const float[6,8]; st: int64[1] = [1]; en: int64[1] = [3]; ax: int64[1] = [0]\n"
     "y = Mul(x, c); s = Slice(y, st, en, ax)\nreturn s", 0},
    /* x's rank unknown */
    {"x: float[*]; c: const float[6,8]; st: int64[1] = [1]; en: int64[1] = [3]; ax: int64[1] = [0]\n"
     "y = Mul(x, c); s = Slice(y, st, en, ax)\nreturn s", 1},
    /* the starts are not constant */
    {"x: float[6,8]; c: const float[6,8]; st: int64[1]; en: int64[1] = [3]; ax: int64[1] = [0]\n"
     "y = Mul(x, c); s = Slice(y, st, en, ax)\nreturn s", 0},
    /* not elementwise */
    {XC "y = Softmax(x); s = Slice(y, st, en, ax)\nreturn s", 0},
};

START_TEST(left_alone)
{
    /* N is 6 when evaluated */
    ph_test_options o = {.max_iterations = 4, .sizes = (const int64_t[]){6}, .n_sizes = 1, .unchecked = alone[_i].unchecked};
    PC_CASE_OPTS(&o, alone[_i].graph, 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[6,8]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_value *y = tk_op2(body[0], "Add", x, tk_init(body[0], "c", 2, TK_I64(6, 1), 3));
    tk_output(body[0], tk_slice(body[0], y, 1, TK_I64(0), TK_I64(2), TK_I64(0), NULL));
    tk_output(body[1], tk_slice(body[1], tk_op1(body[1], "Neg", x), 1, TK_I64(4), TK_I64(6), TK_I64(0), NULL));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "s = " SL("x") "\ny = Add(s, _:const:shape=[2,1])");
    PC_GRAPH_IS(body[1], "s = " SL("x") "\ny = Neg(s)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("slice_before_elementwise");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, slices_input_and_constant, 0, (int)(sizeof moves / sizeof *moves));
    tcase_add_test(tc, unary_where_and_chain);
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
