/* tests/test_pass_fuse_gelu.c - fuse_gelu: the Erf and Tanh GELU subgraphs
 * -> com.microsoft Gelu/FastGelu, or the default-domain Gelu at opset >= 20.
 * The evaluator has no com.microsoft operators, so below opset 20 these
 * check structure (scripts/test_ort.sh checks the numbers in ONNX Runtime);
 * at opset 20 and for the graphs left alone the evaluator compares before
 * and after. */
#include <stdio.h>
#include <string.h>

#include "passcase.h"

PASS_FIXTURE("fuse_gelu")

/* What a case changes in the subgraph. */
typedef struct gelu_spec {
    int tanh_form; /* 0: Erf form, 1: Tanh form */
    int alt;       /* Erf: 1 = Mul by 1/sqrt(2) (else Div by sqrt(2)); Tanh: 1 = Pow (else x*(x*x)) */
    int half;      /* 0: 0.5 last, 1: on x, 2: on (1 + ...), 3: no 0.5 (folded away) */
    float k, one, h, three, kappa, beta; /* 0: the exporters' value */
    int const_rank;                      /* rank of the 0.5 constant */
    int other_x;   /* 0.5 last: x * a reads another input than the x in Erf */
} gelu_spec;

static float or_default(float v, float dflt) { return v != 0 ? v : dflt; }

/* The subgraph as text: x [2,5] -> Relu r -> GELU y at `opset`, then the
 * lines `more` and the outputs y and `outs`. */
static const char *gelu_text(int opset, const gelu_spec *s, const char *more, const char *outs)
{
    static char buf[2048];
    int n = snprintf(buf, sizeof buf, "opset %d\nx: float[2,5]; other: float[2,5]\nr = Relu(x)\n", opset);
    if (!s->tanh_form) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, "k: float[] = [%.9g]; one: float[] = [%.9g]\n%s\n"
                      "e = Erf(d); a = Add(e, one)\n",
                      (double)or_default(s->k, s->alt ? 0.7071067690849304f : 1.4142135381698608f),
                      (double)or_default(s->one, 1.0f), s->alt ? "d = Mul(r, k)" : "d = Div(r, k)");
    } else {
        if (s->alt)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "three: float[] = [%.9g]\n", (double)or_default(s->three, 3.0f));
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "kappa: float[] = [%.9g]; beta: float[] = [%.9g]; one: float[] = [%.9g]\n"
                      "%s\nkc = Mul(kappa, cube); s = Add(r, kc); u = Mul(beta, s); t = Tanh(u); a = Add(one, t)\n",
                      (double)or_default(s->kappa, 0.044715f),
                      (double)or_default(s->beta, 0.7978845834732056f), (double)or_default(s->one, 1.0f),
                      s->alt ? "cube = Pow(r, three)" : "sq = Mul(r, r); cube = Mul(r, sq)");

    }
    if (s->half != 3)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "h: float[%s] = [%.9g]\n",
                      s->const_rank == 3 ? "1,1,1" : "", (double)or_default(s->h, 0.5f));
    static const char *const tails[] = {"xa = Mul(%s, a); y = Mul(xa, h)\n", "hx = Mul(h, %s); y = Mul(hx, a)\n",
                                        "ah = Mul(a, h); y = Mul(%s, ah)\n", "y = Mul(%s, a)\n"};
    n += snprintf(buf + n, sizeof buf - (size_t)n, tails[s->half], s->other_x ? "other" : "r");
    snprintf(buf + n, sizeof buf - (size_t)n, "%s\nreturn y%s", more ? more : "", outs ? outs : "");
    return buf;
}

static const gelu_spec forms[] = {
    {.half = 0}, {.half = 1}, {.half = 2},
    {.alt = 1, .half = 0}, {.alt = 1, .half = 1}, {.alt = 1, .half = 2},
    {.tanh_form = 1, .half = 0}, {.tanh_form = 1, .half = 1}, {.tanh_form = 1, .half = 2},
    {.tanh_form = 1, .alt = 1, .half = 0}, {.tanh_form = 1, .alt = 1, .half = 1}, {.tanh_form = 1, .alt = 1, .half = 2},
};

/* one com.microsoft Gelu or FastGelu of the Relu; the constants went with
 * the subgraph, the output keeps its rank */
START_TEST(fuses_every_form)
{
    const char *graph = gelu_text(17, &forms[_i], NULL, NULL);
    PC_CASE_OPTS(&pc_unchecked, graph, 1,
                 forms[_i].tanh_form ? "opset@com.microsoft == 1\nr = Relu(x)\ny = FastGelu@com.microsoft(r)"
                                     : "opset@com.microsoft == 1\nr = Relu(x)\ny = Gelu@com.microsoft(r)");
    ph_model *m = pc_run_text(graph, 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 0);
    ck_assert_int_eq(ph_value_rank(ph_graph_output(ph_model_graph(m), 0)), 2);
    ph_model_free(m);
}
END_TEST

/* At opset 20 the default-domain Gelu: the evaluator checks the numbers. */
static const gelu_spec opset20[] = {
    {.alt = 1, .half = 1},
    {.tanh_form = 1, .alt = 1, .half = 1},
};

START_TEST(opset20_default_domain)
{
    const char *graph = gelu_text(20, &opset20[_i], NULL, NULL);
    PC_CASE(graph, 1, opset20[_i].tanh_form ? "r = Relu(x)\ny = Gelu(r) {approximate=\"tanh\"}"
                                            : "r = Relu(x)\ny = Gelu(r) {approximate(\"none\")=\"none\"}");
    ph_model *m = pc_run_text(gelu_text(20, &opset20[_i], NULL, NULL), 1);
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), -1);
    ph_model_free(m);
}
END_TEST

/* x * (1 + ...) without the 0.5, as left when the optimize stage folded the
 * 0.5 into the next MatMul: Mul(Gelu(x), 2); at opset 20 checked by the
 * evaluator. */
static const struct {
    gelu_spec spec;
    int opset;
} halfless[] = {
    {{.half = 3}, 17},
    {{.alt = 1, .half = 3}, 17},
    {{.tanh_form = 1, .half = 3}, 17},
    {{.tanh_form = 1, .alt = 1, .half = 3}, 17},
    {{.half = 3}, 20},
    {{.tanh_form = 1, .half = 3}, 20},
};

START_TEST(without_the_half)
{
    const gelu_spec *s = &halfless[_i].spec;
    char expect[256];
    snprintf(expect, sizeof expect, "r = Relu(x)\ng = %s(r)\ny = Mul(g, _:scalar=2)",
             halfless[_i].opset >= 20 ? "Gelu" : s->tanh_form ? "FastGelu@com.microsoft" : "Gelu@com.microsoft");
    PC_CASE_OPTS(halfless[_i].opset >= 20 ? &pc_defaults : &pc_unchecked, gelu_text(halfless[_i].opset, s, NULL, NULL),
                 1, expect);
}
END_TEST

/* x * (1 + Erf) * 0.6: no GELU with its 0.5, but twice one, scaled */
START_TEST(scaled_by_another_factor)
{
    const gelu_spec s = {.h = 0.6f};
    PC_CASE_OPTS(&pc_unchecked, gelu_text(17, &s, NULL, NULL), 1,
                 "r = Relu(x)\ng = Gelu@com.microsoft(r)\nm = Mul(g, _:scalar=2)\ny = Mul(m, h)");
}
END_TEST

/* Constants within 1e-4 (relative) of the exact ones are accepted. */
static const gelu_spec near[] = {
    {.k = 1.41421f},
    {.tanh_form = 1, .beta = 0.79788f, .kappa = 0.0447151f},
    {.h = 0.50004f},
};

START_TEST(tolerance)
{
    PC_CASE_OPTS(&pc_unchecked, gelu_text(17, &near[_i], NULL, NULL), 1,
                 near[_i].tanh_form ? "r = Relu(x)\ny = FastGelu@com.microsoft(r)" : "r = Relu(x)\ny = Gelu@com.microsoft(r)");
}
END_TEST

static const struct {
    gelu_spec spec;
    const char *more, *outs;
} bad[] = {
    {{.h = 0.6f, .half = 1}, NULL, NULL},                     /* not 0.5 (on x) */
    {{.h = 0.6f, .half = 2}, NULL, NULL},                     /* not 0.5 (on 1 + Erf) */
    {{.k = 1.5f}, NULL, NULL},                                /* not sqrt(2) */
    {{.alt = 1, .k = 1.4142135f}, NULL, NULL},                /* Mul by sqrt(2) instead of 1/sqrt(2) */
    {{.one = 1.001f}, NULL, NULL},                            /* outside the tolerance */
    {{.tanh_form = 1, .kappa = 0.05f}, NULL, NULL},           /* not 0.044715 */
    {{.tanh_form = 1, .beta = 0.8f}, NULL, NULL},             /* not sqrt(2/pi) */
    {{.tanh_form = 1, .alt = 1, .three = 3.0001f}, NULL, NULL}, /* Pow exponent must be exactly 3 */
    {{.const_rank = 3}, NULL, NULL},                          /* 0.5 of shape [1,1,1] broadcasts [2,5] up */
    {{0}, "z = Neg(a)", ", z"},                                /* an intermediate value has another consumer */
    {{0}, NULL, ", a"},                                        /* an intermediate value is a graph output */
    {{.other_x = 1}, NULL, NULL},                             /* x * a * 0.5 of another x than the one in Erf */
    {{.tanh_form = 1}, "z = Neg(cube)", ", z"},                /* the Tanh form with the cube read elsewhere */
};

START_TEST(left_alone)
{
    PC_UNTOUCHED(gelu_text(17, &bad[_i].spec, bad[_i].more, bad[_i].outs));
}
END_TEST

/* x of unknown dtype and rank (the text always gives a dtype) */
START_TEST(unknown_dtype_left_alone)
{
    const gelu_spec s = {0};
    ph_model *m = pc_model(gelu_text(17, &s, NULL, NULL));
    ck_assert_int_eq(ph_value_set_type(ph_graph_input(ph_model_graph(m), 0), PH_DT_UNDEFINED, -1, NULL), 0);
    pc_run_structure(m, 0);
    ck_assert_uint_eq(ph_graph_node_count(ph_model_graph(m)), 6); /* Relu, Div, Erf, Add, Mul, Mul */
    ph_model_free(m);
}
END_TEST

START_TEST(double_is_left_alone)
{
    PC_UNTOUCHED("x: double[2,5]; k: double[] = [1.4142135623730951]; one: double[] = [1]; h: double[] = [0.5]\n"
                 "d = Div(x, k); e = Erf(d); a = Add(e, one); xa = Mul(x, a); y = Mul(xa, h)\nreturn y");
}
END_TEST

/* The text has no subgraphs of its own: the If bodies as text too. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text(
        "x: float[2,5]; cond: bool[]\ny = If(cond)\nreturn y",
        "x: float[2,5]; k: float[] = [1.4142135381698608]; one: float[] = [1]; h: float[] = [0.5]\n"
        "d = Div(x, k); e = Erf(d); a = Add(e, one); ah = Mul(a, h); y = Mul(x, ah)\nreturn y",
        "x: float[2,5]; three: float[] = [3]; kappa: float[] = [0.044715]; beta: float[] = [0.7978845834732056]\n"
        "one: float[] = [1]; h: float[] = [0.5]\n"
        "cube = Pow(x, three); kc = Mul(kappa, cube); s = Add(x, kc); u = Mul(beta, s); t = Tanh(u); a = Add(one, t)\n"
        "xa = Mul(x, a); y = Mul(xa, h)\nreturn y",
        &then_g, &else_g);
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Gelu@com.microsoft(x)");
    PC_GRAPH_IS(else_g, "y = FastGelu@com.microsoft(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_gelu");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, fuses_every_form, 0, (int)(sizeof forms / sizeof *forms));
    tcase_add_loop_test(tc, opset20_default_domain, 0, (int)(sizeof opset20 / sizeof *opset20));
    tcase_add_loop_test(tc, without_the_half, 0, (int)(sizeof halfless / sizeof *halfless));
    tcase_add_test(tc, scaled_by_another_factor);
    tcase_add_loop_test(tc, tolerance, 0, (int)(sizeof near / sizeof *near));
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, unknown_dtype_left_alone);
    tcase_add_test(tc, double_is_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
