/* tests/test_pass_eliminate_nop_arith.c - eliminate_nop_arith: x + 0,
 * x * 1, x - 0, x / 1, x ^ 1, x and true, x or false go when they change
 * neither the value nor the shape. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_nop_arith")

/* x [2,3] -> Sin -> each no-op in turn -> Neg.  Then the same on Relu,
 * whose negative inputs give -0.0, with the no-ops that keep -0.0 bit for
 * bit (x + (+0.0) would make it +0.0: see the pass's header).  The
 * constants are pruned. */
START_TEST(float_identities_removed)
{
    const char *graph = "x: float[2,3]\n"
                        "z0: float[] = [0]; z1: float[3] = [0]; o1: float[2,1] = [1]\n"
                        "s = Sin(x); a = Add(s, z0); b = Add(z1, a); c = Mul(o1, b); y1 = Neg(c)\n"
                        "z2: float[1,3] = [0]; o2: float[] = [1]; o3: float[] = [1]; i1: int64[1] = [1]; m0: float[] = [-0.0]\n"
                        "r = Relu(x); d = Sub(r, z2); e = Div(d, o2); f = Pow(e, o3); h = Pow(f, i1); k = Add(h, m0)\n"
                        "y2 = Neg(k)\nreturn y1, y2";
    PC_CASE(graph, 8, "s = Sin(x)\ny1 = Neg(s)\n--\nr = Relu(x)\ny2 = Neg(r)");
    PC_INITIALIZERS_AFTER(graph, 8, 0);
}
END_TEST

START_TEST(integer_and_bool_identities_removed)
{
    PC_CASE("x: int64[2,3]; b: bool[4]\n"
            "z0: int64[] = [0]; o1: int64[3] = [1]; o2: int64[] = [1]; z1: int64[] = [0]\n"
            "n = Neg(x); a = Add(n, z0); c = Mul(o1, a); d = Div(c, o2); e = Sub(d, z1); y1 = Abs(e)\n"
            "t: bool[] = [1]; f: bool[4] = [0]\n"
            "w = Not(b); p = And(t, w); q = Or(p, f); y2 = Not(q)\nreturn y1, y2",
            6, "n = Neg(x)\ny1 = Abs(n)\n--\nw = Not(b)\ny2 = Not(w)");
}
END_TEST

/* A scalar cannot change the shape even when x's rank is unknown; a [1,3]
 * constant against [?,3] keeps the shape too. */
START_TEST(scalar_with_unknown_rank_removed)
{
    PC_CASE_OPTS(&pc_unchecked,
                 "x: float[*]; z: float[?,3]; o: float[] = [1]; c: float[1,3] = [0]\n"
                 "r = Relu(x); m = Mul(r, o); y1 = Neg(m)\ns = Relu(z); a = Add(s, c); y2 = Neg(a)\nreturn y1, y2",
                 2, "r = Relu(x)\ny1 = Neg(r)\n--\ns = Relu(z)\ny2 = Neg(s)");
}
END_TEST

/* The output is a graph output and read by another node: the Sin output
 * takes its name, the reader follows. */
START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[2,3]; z: float[] = [0]; s = Sin(x); y = Add(s, z); n = Neg(y); return y, n";
    PC_CASE(graph, 1, "y = Sin(x)\n--\nn = Neg(y)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* ---- negative cases: Relu(x [2,3]) -> one node -> Neg stays */

#define R "x: float[2,3]; r = Relu(x)\n"
#define NEG "y = Neg(v)\nreturn y"
static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} alone[] = {
    {R "c: float[] = [1]; v = Add(r, c)\n" NEG, 0},           /* not 0 */
    {R "c: float[3] = [0]; v = Mul(r, c)\n" NEG, 0},          /* by 0 */
    {R "c: float[] = [0]; v = Sub(c, r)\n" NEG, 0},           /* 0 - x */
    {R "c: float[] = [1]; v = Div(c, r)\n" NEG, 0},           /* 1 / x */
    {R "c: float[] = [1]; v = Pow(c, r)\n" NEG, 0},           /* 1 ^ x */
    {R "c: float[3,1,1] = [1]; v = Div(r, c)\n" NEG, 0},      /* -> [3,2,3] */
    {R "c: float[1,2,3] = [0]; v = Add(r, c)\n" NEG, 0},      /* the rank grows */
    {R "c: float[2,1,1] = [1]; v = Mul(r, c)\n" NEG, 0},      /* the shape grows */
    {R "z: float[]; v = Add(r, z)\n" NEG, 0},                 /* not constant */
    /* a Constant node, not an initializer (constant_to_initializer's job) */
    {R "c = Constant() {value_float=0.0}; v = Add(r, c)\n" NEG, 0},
    {R "c: float[] = [0]; v = Add(r, c) {broadcast=1}\n" NEG, 1}, /* legacy broadcasting */
    {"x: float[2,3]; c: float[] = [0]; y = Add(x, c)\nreturn y", 0}, /* input straight to output */
    {R "c: float[] = [nan]; v = Add(r, c)\n" NEG, 0},         /* NaN */
    /* [?,3] + zeros [2,3]: the unknown dim might be 1, and then the output grows */
    {"x: float[?,3]; c: float[2,3] = [0]; r = Relu(x)\nv = Add(r, c)\n" NEG, 1},
    /* an unknown rank against a [1]: the rank might grow */
    {"x: float[*]; c: float[1] = [1]; r = Relu(x)\nv = Mul(r, c)\n" NEG, 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, alone[_i].graph);
}
END_TEST

/* Another domain's Add (its output given the shape inference cannot know):
 * not the ONNX operator. */
START_TEST(other_domain_kept)
{
    ph_model *m = pc_model(R "c: float[] = [0]; v = Add@com.example(r, c)\n" NEG);
    tk_set_shape(pc_node_output(m, 1), 2, TK_I64(2, 3));
    pc_run_structure(m, 0); /* the evaluator has no such op: structure only */
    PC_GRAPH_IS(ph_model_graph(m), "r = Relu(x)\nv = Add@com.example(r, c)\ny = Neg(v)");
    ph_model_free(m);
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[2,3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    float zero = 0, one = 1;
    ph_value *z = ph_graph_add_initializer(then_g, "z", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &zero));
    tk_output(then_g, tk_op1(then_g, "Neg", tk_op2(then_g, "Add", tk_op1(then_g, "Exp", x), z)));
    ph_value *o = ph_graph_add_initializer(else_g, "o", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &one));
    tk_output(else_g, tk_op1(else_g, "Neg", tk_op2(else_g, "Mul", o, tk_op1(else_g, "Sin", x))));
    /* Exp, not Relu: x + 0 turns a -0 into +0, the float note of the pass */
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "r = Exp(x)\ny = Neg(r)");
    PC_GRAPH_IS(else_g, "s = Sin(x)\ny = Neg(s)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_arith");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, float_identities_removed);
    tcase_add_test(tc, integer_and_bool_identities_removed);
    tcase_add_test(tc, scalar_with_unknown_rank_removed);
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
