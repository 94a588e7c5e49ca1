/* tests/test_pass_fuse_layernorm.c - fuse_layernorm: the decomposed layer
 * normalization becomes LayerNormalization (opset >= 17). */
#include <stdio.h>
#include <string.h>

#include "passcase.h"

PASS_FIXTURE("fuse_layernorm")

/* How to write the chain. */
typedef struct lnopt {
    int opset18;       /* axes as an input (else attribute) */
    const char *axes;  /* of the first ReduceMean, "[-1]"; NULL: absent (all axes) */
    const char *axes2; /* of the second (NULL: as axes) */
    int square;        /* Mul(d, d) instead of Pow(d, 2) */
    float exponent;    /* Pow exponent (0: 2) */
    const char *gamma, *beta; /* their shapes, "[8]"; NULL: none */
    int keepdims0;     /* keepdims = 0 on the second ReduceMean */
    /* negative cases */
    int axes_input;    /* the first mean's axes from a graph input */
    int eps_input;     /* eps from a graph input */
    int sub_other;     /* the Sub reads Neg(x) instead of the mean's input */
} lnopt;

/* ReduceMean of v into out with axes (NULL: none) as o says. */
static int mean_text(char *buf, size_t size, const lnopt *o, const char *out, const char *v, const char *axes,
                     int keepdims0)
{
    char attrs[64] = "";
    if (!o->opset18 && axes)
        snprintf(attrs, sizeof attrs, "axes=%s%s", axes, keepdims0 ? ", keepdims=0" : "");
    else if (keepdims0)
        snprintf(attrs, sizeof attrs, "keepdims=0");
    if (o->opset18 && axes)
        return snprintf(buf, size, "%s_ax: int64[%d] = %s; %s = ReduceMean(%s, %s_ax) {%s}\n", out,
                        (int)(strchr(axes, ',') ? 2 : 1), axes, out, v, out, attrs);
    return snprintf(buf, size, "%s = ReduceMean(%s) {%s}\n", out, v, attrs);
}

/* The chain on x (of dims `x`) -> Relu r -> ... -> Neg y at `opset`, then
 * the outputs y and `outs` (neg 0: the chain's end is y itself). */
static const char *ln_text(int opset, const char *x, const lnopt *o, const char *outs, int neg)
{
    static char buf[2048];
    size_t n = (size_t)snprintf(buf, sizeof buf, "opset %d\nx: float%s; r = Relu(x)\n", opset, x);
    if (o->axes_input)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "ax: int64[1]; mu = ReduceMean(r, ax)\n");
    else
        n += (size_t)mean_text(buf + n, sizeof buf - n, o, "mu", "r", o->axes, 0);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%sd = Sub(%s, mu)\n", o->sub_other ? "nr = Neg(r); " : "",
                          o->sub_other ? "nr" : "r");
    if (o->square)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "q = Mul(d, d)\n");
    else
        n += (size_t)snprintf(buf + n, sizeof buf - n, "two: float[] = [%.9g]; q = Pow(d, two)\n",
                              (double)(o->exponent ? o->exponent : 2.0f));
    n += (size_t)mean_text(buf + n, sizeof buf - n, o, "v", "q", o->axes2 ? o->axes2 : o->axes, o->keepdims0);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s; ve = Add(v, eps); s = Sqrt(ve); z0 = Div(d, s)\n",
                          o->eps_input ? "eps: float[]" : "eps: float[] = [1e-05]");
    const char *last = "z0";
    if (o->gamma) {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "gamma: const float%s; z1 = Mul(z0, gamma)\n", o->gamma);
        last = "z1";
    }
    if (o->beta) {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "beta: const float%s; z2 = Add(beta, %s)\n", o->beta, last);
        last = "z2";
    }
    snprintf(buf + n, sizeof buf - n, neg ? "y = Neg(%s)\nreturn y%s" : "return %s%s", last, outs ? outs : "");
    return buf;
}

static const struct {
    lnopt o;
    int k; /* normalized axes */
} fused[] = {
    {{.axes = "[-1]", .gamma = "[8]", .beta = "[8]"}, 1},
    {{.axes = "[2]", .square = 1}, 1},
    {{.axes = "[-1]", .gamma = "[1,1,8]"}, 1},
    {{.axes = "[2]", .square = 1, .beta = "[1,8]"}, 1},
    {{.opset18 = 1, .axes = "[-1]", .gamma = "[8]", .beta = "[]"}, 1},
    {{.axes = "[-1, 1]", .axes2 = "[1, 2]", .gamma = "[3,8]", .beta = "[8]"}, 2},
    {{.opset18 = 1, .axes = "[1, 2]", .square = 1, .gamma = "[1]"}, 2},
    {{.gamma = "[2,3,8]"}, 3}, /* all axes */
};

/* x [2,3,8]: one LayerNormalization over the last k axes, its scale of
 * rank k, beta when there was one */
START_TEST(fuses)
{
    const lnopt *o = &fused[_i].o;
    char expect[256];
    snprintf(expect, sizeof expect,
             "r = Relu(x)\nl = LayerNormalization(r, _:const:rank=%d%s) {axis=%d, epsilon=0.00001}\ny = Neg(l)",
             fused[_i].k, o->beta ? ", _:const" : "", -fused[_i].k);
    PC_CASE(ln_text(o->opset18 ? 18 : 17, "[2,3,8]", o, NULL, 1), 1, expect);
}
END_TEST

/* A symbolic batch dim is fine: only the normalized dims must be known. */
START_TEST(symbolic_batch)
{
    const lnopt o = {.axes = "[-1]", .gamma = "[6]", .beta = "[6]"};
    PC_CASE(ln_text(17, "[batch,6]", &o, NULL, 1), 1, "r = Relu(x)\nl = LayerNormalization(r, _, _)\ny = Neg(l)");
}
END_TEST

/* gamma/beta that do not fit stay as Mul/Add after the LayerNormalization. */
static const struct {
    lnopt o;
    const char *expect;
} unfit[] = {
    /* gamma varies along axis 1, which is not normalized */
    {{.axes = "[-1]", .gamma = "[3,1]", .beta = "[8]"},
     "r = Relu(x)\nl = LayerNormalization(r, _:const)\nm = Mul(l, gamma)\na = Add(beta, m)\ny = Neg(a)"},
    /* beta widens the output to rank 4 */
    {{.axes = "[-1]", .gamma = "[8]", .beta = "[2,1,1,8]"},
     "r = Relu(x)\nl = LayerNormalization(r, _:const)\na = Add(beta, l)\ny = Neg(a)"},
};

START_TEST(unfit_affine_stays)
{
    PC_CASE(ln_text(17, "[2,3,8]", &unfit[_i].o, NULL, 1), 1, unfit[_i].expect);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const lnopt o = {.axes = "[-1]", .gamma = "[4]", .beta = "[4]"};
    const char *graph = ln_text(17, "[3,4]", &o, NULL, 0);
    PC_CASE(graph, 1, "r = Relu(x)\nz2 = LayerNormalization(r, _, _)");
    PC_OUTPUT_NAME_KEPT(ln_text(17, "[3,4]", &o, NULL, 0), 1);
}
END_TEST

#define LN .axes = "[-1]", .gamma = "[8]", .beta = "[8]"
static const struct {
    lnopt o;
    int opset;
    const char *x, *outs;
    int mode;
} alone[] = {
    {{LN}, 16, "[2,3,8]", NULL, PC_CHECKED},                              /* no LayerNormalization yet */
    {{LN, .keepdims0 = 1}, 17, "[8,8]", NULL, PC_CHECKED},                /* keepdims 0 */
    {{.axes = "[1]", .gamma = "[8]", .beta = "[8]"}, 17, "[2,3,8]", NULL, PC_CHECKED}, /* not the last axis */
    {{LN, .axes2 = "[1]"}, 17, "[2,3,8]", NULL, PC_CHECKED},              /* the two means differ */
    {{LN, .exponent = 3}, 17, "[2,3,8]", NULL, PC_CHECKED},               /* Pow 3 */
    {{LN}, 17, "[2,3,?]", NULL, PC_UNCHECKED},                            /* normalized dim unknown */
    {{LN, .opset18 = 1, .axes_input = 1}, 18, "[2,3,8]", NULL, PC_UNCHECKED}, /* axes of the first mean at run time */
    {{.axes = "[0, 2]", .gamma = "[8]", .beta = "[8]"}, 17, "[2,3,8]", NULL, PC_CHECKED}, /* axes {0, 2}: not trailing */
    {{LN}, 17, "[2,3,8]", ", d", PC_CHECKED},                             /* the Sub output has a third consumer */
    {{LN}, 17, "[2,3,8]", ", mu", PC_CHECKED},                            /* the first mean is a graph output */
    {{LN, .eps_input = 1}, 17, "[2,3,8]", NULL, PC_CHECKED},              /* eps is not constant */
    {{LN, .sub_other = 1}, 17, "[2,3,8]", NULL, PC_CHECKED},              /* the Sub reads another value */
    /* opset 18 with the axes still an attribute (an opset-17 model relabelled) */
    {{LN}, 18, "[2,3,8]", NULL, PC_NO_SHAPES},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, ln_text(alone[_i].opset, alone[_i].x, &alone[_i].o, alone[_i].outs, 1));
}
END_TEST

/* double: LayerNormalization would compute in float32. */
START_TEST(double_left_alone)
{
    PC_UNTOUCHED("x: double[3,4]; two: double[] = [2]; eps: double[] = [1e-05]\n"
                 "r = Relu(x); mu = ReduceMean(r) {axes=[-1]}; d = Sub(r, mu); q = Pow(d, two)\n"
                 "v = ReduceMean(q) {axes=[-1]}; ve = Add(v, eps); s = Sqrt(ve); y = Div(d, s)\nreturn y");
}
END_TEST

/* The text has no subgraphs of its own: the If bodies as text too. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text(
        "x: float[3,4]; cond: bool[]\ny = If(cond)\nreturn y",
        "x: float[3,4]; two: float[] = [2]; eps: float[] = [1e-05]; gamma: const float[4]; beta: const float[4]\n"
        "mu = ReduceMean(x) {axes=[-1]}; d = Sub(x, mu); q = Pow(d, two); v = ReduceMean(q) {axes=[-1]}\n"
        "ve = Add(v, eps); s = Sqrt(ve); z0 = Div(d, s); z1 = Mul(z0, gamma); z2 = Add(beta, z1)\nreturn z2",
        "x: float[3,4]; eps: float[] = [1e-05]\n"
        "mu = ReduceMean(x) {axes=[-1]}; d = Sub(x, mu); q = Mul(d, d); v = ReduceMean(q) {axes=[-1]}\n"
        "ve = Add(v, eps); s = Sqrt(ve); z0 = Div(d, s)\nreturn z0",
        &then_g, &else_g);
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = LayerNormalization(x, _:const, _:const)");
    PC_GRAPH_IS(else_g, "y = LayerNormalization(x, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_layernorm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, fuses, 0, (int)(sizeof fused / sizeof *fused));
    tcase_add_test(tc, symbolic_batch);
    tcase_add_loop_test(tc, unfit_affine_stays, 0, (int)(sizeof unfit / sizeof *unfit));
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, double_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
