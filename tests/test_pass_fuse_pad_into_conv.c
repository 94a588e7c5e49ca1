/* tests/test_pass_fuse_pad_into_conv.c - fuse_pad_into_conv: a zero Pad on
 * spatial dims moved into the pads of the Conv (or counting AveragePool)
 * after it. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_pad_into_conv")

#define X "x: float[1,4,5,5]\n"
#define W "w: const float[6,4,3,3]; b: const float[6]\n"

static const struct {
    const char *graph, *expect;
} moves[] = {
    /* merged with the Conv's own pads; grouped, dilated */
    {X "w: const float[6,2,3,3]; b: const float[6]; pads: int64[8] = [0, 0, 1, 2, 0, 0, 2, 1]\n"
     "p = Pad(x, pads); c = Conv(p, w, b) {group=2, pads=[1,1,1,1], dilations=[2,2]}; y = Relu(c)\nreturn y",
     "c = Conv(x, _:const, _:const) {pads=[2,3,3,2], group=2}\ny = Relu(c)"},
    /* explicit constant_value 0, no bias */
    {X "w: const float[6,4,3,3]; pads: int64[8] = [0, 0, 1, 0, 0, 0, 0, 2]; zero: float[] = [0]\n"
     "p = Pad(x, pads, zero); c = Conv(p, w); y = Relu(c)\nreturn y",
     "c = Conv(x, _:const) {pads=[1,0,0,2]}\ny = Relu(c)"},
    /* opset 10: attributes */
    {"opset 10\n" X W "p = Pad(x) {pads=[0,0,2,1,0,0,1,2], value=0.0, mode=\"constant\"}\n"
     "c = Conv(p, w, b); y = Relu(c)\nreturn y",
     "c = Conv(x, _:const, _:const) {pads=[2,1,1,2]}\ny = Relu(c)"},
    /* opset 18: axes, one of them negative */
    {"opset 18\n" X W "pads: int64[4] = [1, 2, 0, 1]; axes: int64[2] = [-1, 2]\n"
     "p = Pad(x, pads, _, axes); c = Conv(p, w, b); y = Relu(c)\nreturn y",
     "c = Conv(x, _:const, _:const) {pads=[2,1,1,0]}\ny = Relu(c)"},
    /* AveragePool counting the padding; strided */
    {X "pads: int64[8] = [0, 0, 1, 1, 0, 0, 1, 0]\n"
     "p = Pad(x, pads); c = AveragePool(p) {kernel_shape=[3,3], count_include_pad=1, pads=[1,0,0,1], strides=[2,1]}\n"
     "y = Relu(c)\nreturn y",
     "c = AveragePool(x) {pads=[2,1,1,1], strides=[2,1]}\ny = Relu(c)"},
    /* 1-D */
    {"x: float[1,4,7]; w: const float[6,4,3]; b: const float[6]; pads: int64[6] = [0, 0, 2, 0, 0, 1]\n"
     "p = Pad(x, pads); c = Conv(p, w, b); y = Relu(c)\nreturn y",
     "c = Conv(x, _:const, _:const) {pads=[2,1]}\ny = Relu(c)"},
    /* weights from a graph input: not needed constant */
    {X "w: float[6,4,3,3]; pads: int64[8] = [0, 0, 1, 1, 0, 0, 1, 1]\n"
     "p = Pad(x, pads); c = Conv(p, w); y = Relu(c)\nreturn y",
     "c = Conv(x, w) {pads=[1,1,1,1]}\ny = Relu(c)"},
    /* pads from a Constant node */
    {X W "k = Constant() {value_ints=[0,0,0,1,0,0,3,0]}\np = Pad(x, k); c = Conv(p, w, b); y = Relu(c)\nreturn y",
     "c = Conv(x, _:const, _:const) {pads=[0,1,3,0]}\ny = Relu(c)"},
    /* Pad pads all zero: nothing to add, but still one node less */
    {X "pads: int64[8] = [0]\n"
     "p = Pad(x, pads); c = AveragePool(p) {kernel_shape=[3,3], count_include_pad=1}; y = Relu(c)\nreturn y",
     "c = AveragePool(x) {pads=[0,0,0,0]}\ny = Relu(c)"},
};

START_TEST(moves_pads_into_the_consumer)
{
    PC_CASE(moves[_i].graph, 1, moves[_i].expect);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = X W "pads: int64[8] = [0, 0, 1, 1, 0, 0, 1, 1]\np = Pad(x, pads); y = Conv(p, w, b)\nreturn y";
    PC_CASE(graph, 1, "y = Conv(x, _:const, _:const) {pads=[1,1,1,1]}");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

#define P1 "pads: int64[8] = [0, 0, 1, 1, 0, 0, 1, 1]\n"
/* unchecked: 1 no numeric check (the evaluator cannot run it), 2 neither
 * shapes (a model shape inference refuses, as the loader would) */
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* another consumer */
    {X W P1 "p = Pad(x, pads); y = Conv(p, w, b); r = Relu(p)\nreturn y, r", 0},
    /* a graph output */
    {X W P1 "p = Pad(x, pads); y = Conv(p, w, b)\nreturn y, p", 0},
    /* pads not constant */
    {X W "pads: int64[8]\np = Pad(x, pads); y = Conv(p, w, b)\nreturn y", 1},
    /* reflect */
    {X W P1 "p = Pad(x, pads) {mode=\"reflect\"}; y = Conv(p, w, b)\nreturn y", 0},
    /* pads with ones */
    {X W P1 "one: float[] = [1]\np = Pad(x, pads, one); y = Conv(p, w, b)\nreturn y", 0},
    /* pads with -0 */
    {X W P1 "nz: float[] = [-0.0]\np = Pad(x, pads, nz); y = Conv(p, w, b)\nreturn y", 0},
    /* pads C */
    {X W "pads: int64[8] = [0, 1, 1, 1, 0, 0, 1, 1]\np = Pad(x, pads); y = Conv(p, w, b)\nreturn y", 2},
    /* crops */
    {X W "pads: int64[8] = [0, 0, 1, -1, 0, 0, 1, 1]\np = Pad(x, pads); y = Conv(p, w, b)\nreturn y", 2},
    /* MaxPool: the padded zeros would join the max */
    {X P1 "p = Pad(x, pads); y = MaxPool(p) {kernel_shape=[3,3]}\nreturn y", 0},
    /* AveragePool not counting the padding: the divisor would change */
    {X P1 "p = Pad(x, pads); y = AveragePool(p) {kernel_shape=[3,3], count_include_pad=0}\nreturn y", 0},
    /* ceil_mode: which last windows exist would change */
    {X P1 "p = Pad(x, pads)\n"
     "y = AveragePool(p) {kernel_shape=[3,3], count_include_pad=1, ceil_mode=1, strides=[2,2]}\nreturn y", 0},
    /* auto_pad SAME_UPPER */
    {X W P1 "p = Pad(x, pads); y = Conv(p, w, b) {auto_pad=\"SAME_UPPER\"}\nreturn y", 0},
    /* value not constant */
    {X W P1 "v: float[]\np = Pad(x, pads, v); y = Conv(p, w, b)\nreturn y", 0},
    /* opset 10, value 1 */
    {"opset 10\n" X W "p = Pad(x) {pads=[0,0,1,1,0,0,1,1], value=1.0, mode=\"constant\"}; y = Conv(p, w, b)\nreturn y", 0},
    /* the pool's pad would reach the kernel */
    {X "pads: int64[8] = [0, 0, 1, 3, 0, 0, 1, 1]\n"
     "p = Pad(x, pads); y = AveragePool(p) {kernel_shape=[3,3], count_include_pad=1}\nreturn y", 0},
    /* auto_pad VALID */
    {X W P1 "p = Pad(x, pads); y = Conv(p, w, b) {auto_pad=\"VALID\"}\nreturn y", 0},
    /* axes before opset 18 */
    {X W "pads: int64[4] = [1, 1, 1, 1]; axes: int64[2] = [2, 3]\np = Pad(x, pads, _, axes); y = Conv(p, w, b)\nreturn y", 1},
    /* malformed Conv pads */
    {X W P1 "p = Pad(x, pads); y = Conv(p, w, b) {pads=[1,1]}\nreturn y", 2},
    /* pads N */
    {X W "pads: int64[8] = [1, 0, 1, 1, 0, 0, 1, 1]\np = Pad(x, pads); y = Conv(p, w, b)\nreturn y", 0},
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
    ph_model *m = pc_if_model("x: float[1,4,5,5]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    for (int i = 0; i < 2; i++) {
        ph_value *pin[2] = {x, tk_ints(body[i], "pads", 8, TK_I64(0, 0, 1, 1, 0, 0, 1, 1))};
        ph_value *p = ph_node_output(tk_node(body[i], "Pad", 2, pin), 0);
        ph_node *n;
        if (i == 0) { /* Conv */
            ph_value *cin[3] = {p, tk_init(body[i], "w", 4, TK_I64(6, 4, 3, 3), 7), tk_init(body[i], "b", 1, TK_I64(6), 8)};
            n = tk_node(body[i], "Conv", 3, cin);
        } else { /* an AveragePool not counting the padding */
            n = tk_node(body[i], "AveragePool", 1, &p);
            ph_node_set_attr_ints(n, "kernel_shape", 2, TK_I64(3, 3));
            ph_node_set_attr_int(n, "count_include_pad", 0);
        }
        tk_output(body[i], ph_node_output(n, 0));
    }
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "y = Conv(x, _:const, _:const) {pads=[1,1,1,1]}");
    PC_GRAPH_IS(body[1], "p = Pad(x, _:const)\ny = AveragePool(p)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_pad_into_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, moves_pads_into_the_consumer, 0, (int)(sizeof moves / sizeof *moves));
    tcase_add_test(tc, graph_output_keeps_its_name);
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
