/* tests/test_pass_merge_consecutive_arith.c - merge_consecutive_arith: chains
 * of Add/Sub/Mul/Div by constants folded into one (or a scale and a shift). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"
#include <passhost/constant.h>

PASS_FIXTURE("merge_consecutive_arith")

/* The model of `graph` after the pass ran to a fixpoint (at most 10 runs);
 * *rewrites gets their sum.  Caller frees. */
static ph_model *after(const char *graph, int *rewrites)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_test_options o = {.max_iterations = 10};
    int rc = ph_test_run(pass, m, &o, NULL, &err);
    ck_assert_msg(rc >= 0, "%s", err.message);
    if (rewrites)
        *rewrites = rc;
    return m;
}

/* The only node of g with op `op` reads a constant (its second input) equal
 * to want (n elements, read as doubles). */
static void const_operand(const ph_graph *g, ph_op op, size_t n, const double *want)
{
    ph_node *node = NULL;
    for (ph_node *k = ph_graph_first_node(g); k; k = ph_node_next(k))
        if (!ph_node_is_removed(k) && ph_node_op(k) == op) {
            ck_assert_msg(node == NULL, "two nodes of the op");
            node = k;
        }
    ck_assert_ptr_nonnull(node);
    const ph_tensor *t = ph_value_const(ph_node_input(node, 1));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_numel(t), (int64_t)n);
    double got[64];
    ck_assert_int_eq(ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), got), 0);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(got[k] == want[k], "constant[%zu] = %.17g, want %.17g", k, got[k], want[k]);
}

/* A case that folds: ph_test_case, then the folded constant of the node
 * `op` and the initializers left (-1: not checked). */
typedef struct fold_case {
    const char *graph, *expect;
    ph_op op;
    size_t n;
    double want[3];
    int inits;
} fold_case;

static void check_fold(const fold_case *c)
{
    PC_CASE(c->graph, 1, c->expect);
    ph_model *m = after(c->graph, NULL);
    const_operand(ph_model_graph(m), c->op, c->n, c->want);
    if (c->inits >= 0)
        ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), (size_t)c->inits);
    ph_model_free(m);
}

/* x + a + b, x - a + b, x + a - b, x - a - b, and a + x + b: one Add of
 * the signed sum; a and b are gone. */
#define ADDS(o1, o2) "x: float[2,3]; a: float[3] = [1, 2, 3]; b: float[] = [1.5]\nr = Relu(x); t = " o1 "; s = " o2 "(t, b); y = Neg(s)\nreturn y"
#define ADD1 "r = Relu(x)\ns = Add(r, _:const)\ny = Neg(s)"
static const fold_case add_chains[] = {
    {ADDS("Add(r, a)", "Add"), ADD1, PH_OP_Add, 3, {2.5, 3.5, 4.5}, 1},
    {ADDS("Sub(r, a)", "Add"), ADD1, PH_OP_Add, 3, {0.5, -0.5, -1.5}, 1},
    {ADDS("Add(r, a)", "Sub"), ADD1, PH_OP_Add, 3, {-0.5, 0.5, 1.5}, 1},
    {ADDS("Sub(r, a)", "Sub"), ADD1, PH_OP_Add, 3, {-2.5, -3.5, -4.5}, 1},
    {ADDS("Add(a, r)", "Add"), ADD1, PH_OP_Add, 3, {2.5, 3.5, 4.5}, 1},
};

START_TEST(add_chain)
{
    check_fold(&add_chains[_i]);
}
END_TEST

/* x*a*b -> x*(ab); x/a/b -> x/(ab); x/a*b -> x*(b/a); x*a/b -> x*(a/b);
 * a = [2, 4, 0.5], b = 3, in double, rounded once to float */
#define MULS(o1, o2) "x: float[2,3]; a: float[1,3] = [2, 4, 0.5]; b: float[] = [3]\nr = Relu(x); t = " o1 "(r, a); s = " o2 "(t, b); y = Neg(s)\nreturn y"
static const fold_case mul_chains[] = {
    {MULS("Mul", "Mul"), "r = Relu(x)\ns = Mul(r, _:const)\ny = Neg(s)", PH_OP_Mul, 3, {6, 12, 1.5}, -1},
    {MULS("Div", "Div"), "r = Relu(x)\ns = Div(r, _:const)\ny = Neg(s)", PH_OP_Div, 3, {6, 12, 1.5}, -1},
    {MULS("Div", "Mul"), "r = Relu(x)\ns = Mul(r, _:const)\ny = Neg(s)", PH_OP_Mul, 3,
     {(float)(3.0 / 2), (float)(3.0 / 4), 6}, -1},
    {MULS("Mul", "Div"), "r = Relu(x)\ns = Mul(r, _:const)\ny = Neg(s)", PH_OP_Mul, 3,
     {(float)(2.0 / 3), (float)(4.0 / 3), (float)(0.5 / 3)}, -1},
};

START_TEST(mul_chain)
{
    check_fold(&mul_chains[_i]);
}
END_TEST

/* (x + a) * b -> x * b + ab; (x - a) / b -> x / b + (-a / b); b is reused */
#define AM(o1, o2) "x: float[2,3,2]; a: float[3,1] = [1, 2, 3]; b: float[3,1] = [0.5, 4, -2]\nr = Relu(x); t = " o1 "(r, a); s = " o2 "(t, b); y = Neg(s)\nreturn y"
static const fold_case add_then_muls[] = {
    {AM("Add", "Mul"), "r = Relu(x)\nm = Mul(r, b)\ns = Add(m, _:const)\ny = Neg(s)", PH_OP_Add, 3, {0.5, 8, -6}, -1},
    {AM("Sub", "Div"), "r = Relu(x)\nm = Div(r, b)\ns = Add(m, _:const)\ny = Neg(s)", PH_OP_Add, 3, {-2, -0.5, 1.5}, -1},
};

START_TEST(add_then_mul)
{
    check_fold(&add_then_muls[_i]);
}
END_TEST

/* ((x + a) * b + c) * d: folds to x * (bd) + e in one run or more. */
START_TEST(longer_chain)
{
    const char *graph = "x: float[4,3]; a: float[3] = [1, -2, 3]; b: float[] = [2]; c: float[3] = [0.25, 0.5, 0.75]\n"
                        "d: float[] = [-3]\nr = Relu(x); p = Add(r, a); q = Mul(p, b); s = Add(q, c); t = Mul(s, d)\n"
                        "y = Neg(t)\nreturn y";
    ph_test_options o = {.max_iterations = 10};
    PC_CASE_OPTS(&o, graph, -1, "r = Relu(x)\nm = Mul(r, _:const)\ns = Add(m, _:const)\ny = Neg(s)");
    int total;
    ph_model *m = after(graph, &total);
    ck_assert_int_ge(total, 3);
    const_operand(ph_model_graph(m), PH_OP_Mul, 1, (const double[]){-6});
    /* ((x + a) * 2 + c) * -3 = -6x + (-6a - 3c) */
    const_operand(ph_model_graph(m), PH_OP_Add, 3, (const double[]){-6.75, 10.5, -20.25});
    ph_model_free(m);
}
END_TEST

/* Integers: Add and Mul chains and (x + a) * b wrap exactly as before. */
static const struct {
    const char *graph, *expect;
} integers[] = {
    /* x + INT32_MAX + 5 */
    {"x: int32[2,3]; a: int32[3] = [2147483647, 1, -7]; b: int32[] = [5]\nn = Neg(x); t = Add(n, a); y = Add(t, b)\nreturn y",
     "n = Neg(x)\ny = Add(n, _:const)"},
    /* x * 65536 * 65536 wraps to x * 0 */
    {"x: int32[2,3]; a: int32[] = [65536]; b: int32[3] = [65536, 3, -1]\nn = Neg(x); t = Mul(n, a); y = Mul(t, b)\nreturn y",
     "n = Neg(x)\ny = Mul(n, _:const)"},
    /* (x - big) * 3 */
    {"x: int32[2,3]; a: int32[] = [2147483647]; b: int32[3] = [3, -2, 7]\nn = Neg(x); t = Sub(n, a); y = Mul(t, b)\nreturn y",
     "n = Neg(x)\nm = Mul(n, _:const)\ny = Add(m, _:const)"},
    /* int64: x - a - b */
    {"x: int64[2,3]; a: int64[] = [9007199254740991]\nn = Neg(x); t = Sub(n, a); y = Sub(t, a)\nreturn y",
     "n = Neg(x)\ny = Add|Sub(n, _:const)"},
};

START_TEST(integers_wrap_alike)
{
    PC_CASE(integers[_i].graph, 1, integers[_i].expect);
}
END_TEST

/* float16: the folded constant is rounded once from the exact sum; the
 * checked run compares float16 within float16's budget. */
START_TEST(float16)
{
    const char *graph = "x: float[8]; a: float16[] = [0.1]; b: float16[] = [0.2]\n"
                        "h = Cast(x) {to=10}; s = Add(h, a); y = Add(s, b)\nreturn y";
    PC_CASE(graph, 1, "h = Cast(x)\ny = Add(h, _:const:dtype=float16)");
    ph_model *m = after(graph, NULL);
    double want = ph_f16_bits_to_f64(ph_f64_to_f16_bits(ph_f16_bits_to_f64(ph_f64_to_f16_bits(0.1)) +
                                                        ph_f16_bits_to_f64(ph_f64_to_f16_bits(0.2))));
    const_operand(ph_model_graph(m), PH_OP_Add, 1, &want);
    ph_model_free(m);
}
END_TEST

/* The last output is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    const char *graph = "x: float[4]; a: float[] = [2]; b: float[] = [3]\nt = Mul(x, a); y = Mul(t, b)\nreturn y";
    PC_CASE(graph, 1, "y = Mul(x, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    char *name = strdup(ph_value_name(ph_graph_output(ph_model_graph(m), 0)));
    ph_model_free(m);
    m = after(graph, NULL);
    ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(m), 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* a [1,3] and b [3] fold to [1,3], and x [3] keeps its output shape [1,3] */
START_TEST(broadcast_rank_kept_right)
{
    PC_CASE("x: float[3]; a: float[1,3] = [1, 2, 3]; b: float[3] = [3, 2, 1]\nr = Relu(x); t = Mul(r, a); y = Mul(t, b)\n"
            "return y",
            1, "r = Relu(x)\ny = Mul(r, _:const:rank=2)");
}
END_TEST

/* ---- negative cases */

#define X1 "x: float[4]; a: float[] = [1]; b: float[] = [2]\n"
#define UNSAFE(o1, va, o2, vb) "x: float[4]; a: float[] = [" va "]; b: float[] = [" vb "]\nt = " o1 "(x, a); y = " o2 "(t, b)\nreturn y"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* the middle value has another consumer */
    {X1 "t = Add(x, a); y = Add(t, b); n = Neg(t)\nreturn y, n", 0},
    /* the middle value is a graph output */
    {X1 "t = Mul(x, b); y = Mul(t, b)\nreturn y, t", 0},
    /* b is a graph input; a is computed */
    {"x: float[4]; b: float[]; one: float[] = [1]; two: float[] = [2]\n"
     "t = Add(x, one); y = Add(t, b); a = Neg(two); u = Mul(x, a); z = Mul(u, one)\nreturn y, z", 0},
    /* Sub(c, x) and Div(c, x) are not x op c */
    {X1 "t = Sub(a, x); y = Add(t, b); u = Div(a, x); z = Mul(u, b); v = Add(x, b); w = Sub(a, v)\nreturn y, z, w", 0},
    /* opset 6: Add/Mul had legacy broadcast attributes (shape inference
     * does not know them: no shapes, no numeric check) */
    {"opset 6\nx: float[2,3]; a: float[2] = [1, 2]; b: float[] = [1]\nt = Add(x, a) {broadcast=1, axis=0}; y = Add(t, b)\n"
     "return y", 2},
    /* integer division does not compose */
    {"x: int32[4]; two: int32[] = [2]\nt = Div(x, two); y = Div(t, two); u = Div(x, two); z = Mul(u, two)\n"
     "v = Add(x, two); w = Div(v, two)\nreturn y, z, w", 0},
    /* non-finite constants, a divisor 0, a folded factor that overflows or
     * underflows float */
    {UNSAFE("Add", "inf", "Add", "1"), 0},
    {UNSAFE("Mul", "nan", "Mul", "2"), 0},
    {UNSAFE("Div", "0", "Mul", "2"), 0},
    {UNSAFE("Mul", "2", "Div", "0"), 0},
    {UNSAFE("Add", "1", "Div", "0"), 0},
    {UNSAFE("Mul", "1e30", "Mul", "1e30"), 0},
    {UNSAFE("Mul", "1e-30", "Mul", "1e-30"), 0},
    {UNSAFE("Div", "1e-30", "Div", "1e-30"), 0},
    {UNSAFE("Add", "1e30", "Mul", "1e30"), 0},
    {UNSAFE("Add", "3e38", "Add", "3e38"), 0},
    /* a [N,1] and b [1,N] would fold into an [N,N] constant */
    {"x: float[3,3]; a: float[3,1] = [1, 2, 3]; b: float[1,3] = [1, 2, 3]\nt = Add(x, a); y = Add(t, b)\nreturn y", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    float one = 1, three = 3;
    for (int i = 0; i < 2; i++) { /* then: (x + 1) - 3; else: (x + 1) * 3 */
        ph_value *c1 = ph_graph_add_initializer(body[i], "one", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &one));
        ph_value *c3 = ph_graph_add_initializer(body[i], "three", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &three));
        tk_output(body[i], tk_op2(body[i], i ? "Mul" : "Sub", tk_op2(body[i], "Add", x, c1), c3));
    }
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "y = Add(x, _:const)");
    const_operand(body[0], PH_OP_Add, 1, (const double[]){-2});
    PC_GRAPH_IS(body[1], "m = Mul(x, _:const)\ny = Add(m, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_arith");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, add_chain, 0, (int)(sizeof add_chains / sizeof *add_chains));
    tcase_add_loop_test(tc, mul_chain, 0, (int)(sizeof mul_chains / sizeof *mul_chains));
    tcase_add_loop_test(tc, add_then_mul, 0, (int)(sizeof add_then_muls / sizeof *add_then_muls));
    tcase_add_test(tc, longer_chain);
    tcase_add_loop_test(tc, integers_wrap_alike, 0, (int)(sizeof integers / sizeof *integers));
    tcase_add_test(tc, float16);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, broadcast_rank_kept_right);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
