/* tests/test_pass_slices_to_split.c - slices_to_split: Slices of one tensor
 * that partition one axis become one Split. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("slices_to_split")

/* The Split's sizes (input or attribute) into out; their count. */
static ptrdiff_t split_sizes(const ph_node *split, int64_t *out)
{
    if (ph_node_input_count(split) > 1)
        return ph_value_const_ints(ph_node_input(split, 1), out, NULL, 16);
    const int64_t *v;
    ptrdiff_t n = ph_node_attr_ints(split, "split", &v);
    if (n > 0)
        memcpy(out, v, (size_t)n * sizeof *v);
    return n;
}

/* After the pass: the sizes of the Split that makes output 0's input (or
 * output 0), as want[0..n); `inits` initializers left (-1: not checked). */
static void split_is(const char *graph, size_t n, const int64_t *want, int inits)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ph_node *split = ph_value_producer(ph_graph_output(ph_model_graph(m), 0));
    if (ph_node_op(split) != PH_OP_Split)
        split = ph_value_producer(ph_node_input(split, 0));
    int64_t sz[16];
    ck_assert_int_eq(split_sizes(split, sz), (ptrdiff_t)n);
    for (size_t k = 0; k < n; k++)
        ck_assert_int_eq(sz[k], want[k]);
    if (inits >= 0)
        ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), (size_t)inits);
    ph_model_free(m);
}

#define CUT(y, x, s, e, a) y " = Slice(" x ", " s ", " e ", " a ")"

/* out of order, negative and clamped bounds; only the sizes are left */
START_TEST(three_slices_become_one_split)
{
    const char *graph = "x: float[2,6,3]; s5: int64[1] = [5]; emax: int64[1] = [9223372036854775807]; a1: int64[1] = [1]\n"
                        "sm6: int64[1] = [-6]; em4: int64[1] = [-4]; am2: int64[1] = [-2]; s2: int64[1] = [2]; e5: int64[1] = [5]\n"
                        "c = Slice(x, s5, emax, a1); a = Slice(x, sm6, em4, am2); b = Slice(x, s2, e5, a1)\n"
                        "nc = Neg(c); na = Neg(a); nb = Neg(b)\nreturn nc, na, nb";
    PC_CASE(graph, 1, "a, b, c = Split(x, _:const) {axis=1}\n--\nnc = Neg(c)\n--\nna = Neg(a)\n--\nnb = Neg(b)");
    split_is(graph, 3, TK_I64(2, 3, 1), 1);
}
END_TEST

/* graph outputs keep their names, x has another reader */
START_TEST(graph_outputs_and_other_readers_keep_working)
{
    const char *graph = "x: float[4,5]; s0: int64[1] = [0]; s1: int64[1] = [1]; e4: int64[1] = [4]; a0: int64[1] = [0]\n"
                        "a = Slice(x, s0, s1, a0); b = Slice(x, s1, e4, a0); nb = Neg(b); nx = Neg(x)\nreturn a, b, nb, nx";
    PC_CASE(graph, 1, "a, b = Split(x, _:const)\n--\nnb = Neg(b)\n--\nnx = Neg(x)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *na = strdup(ph_value_name(ph_graph_output(g, 0))), *nb = strdup(ph_value_name(ph_graph_output(g, 1)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), na);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), nb);
    free(na);
    free(nb);
    ph_model_free(m);
}
END_TEST

#define X342 "x: float[3,4,2]; s0: int64[1] = [0]; s1: int64[1] = [1]; e4: int64[1] = [4]; a1: int64[1] = [1]\n"
#define TWO "na = Neg(a); nb = Neg(b)\nreturn na, nb"
static const struct {
    const char *graph, *expect;
} forms[] = {
    {X342 "a = Slice(x, s0, s1, a1); b = Slice(x, s1, e4, a1)\n" TWO,
     "a, b = Split(x, _:const) {axis=1}\n--\nna = Neg(a)\n--\nnb = Neg(b)"},
    /* opset 11: the sizes an attribute */
    {"opset 11\n" X342 "a = Slice(x, s0, s1, a1); b = Slice(x, s1, e4, a1)\n" TWO,
     "a, b = Split(x) {axis=1, split=[1,3]}\n--\nna = Neg(a)\n--\nnb = Neg(b)"},
    /* opset 9: attributes */
    {"opset 9\nx: float[3,4,2]\na = Slice(x) {starts=[0], ends=[1], axes=[1]}; b = Slice(x) {starts=[1], ends=[4], axes=[1]}\n" TWO,
     "a, b = Split(x) {axis=1, split=[1,3]}\n--\nna = Neg(a)\n--\nnb = Neg(b)"},
    /* a second axis named, whole; steps given */
    {"x: float[3,4,2]; sa: int64[2] = [0, 0]; ea: int64[2] = [3, 1]; sb: int64[2] = [0, 1]; eb: int64[2] = [3, 4]\n"
     "ax: int64[2] = [0, 1]; st: int64[2] = [1, 1]\na = Slice(x, sa, ea, ax, st); b = Slice(x, sb, eb, ax, st)\n" TWO,
     "a, b = Split(x, _:const) {axis=1}\n--\nna = Neg(a)\n--\nnb = Neg(b)"},
};

START_TEST(forms_and_opsets)
{
    PC_CASE(forms[_i].graph, 1, forms[_i].expect);
    split_is(forms[_i].graph, 2, TK_I64(1, 3), -1);
}
END_TEST

/* two halves of axis 0 and 60 pieces of axis 1: two Splits */
START_TEST(two_axes_two_splits_and_many_pieces)
{
    static char graph[16384], expect[8192];
    int n = snprintf(graph, sizeof graph, "x: float[4,60]; a0: int64[1] = [0]; a1: int64[1] = [1]\n");
    for (int i = 0; i <= 60; i++)
        n += snprintf(graph + n, sizeof graph - (size_t)n, "i%d: int64[1] = [%d]\n", i, i);
    n += snprintf(graph + n, sizeof graph - (size_t)n, "h0 = Slice(x, i0, i2, a0); h1 = Slice(x, i2, i4, a0)\n"
                                                       "n0 = Neg(h0); n1 = Neg(h1)\n");
    int e = snprintf(expect, sizeof expect, "h0, h1 = Split(x, _:const) {axis=0}\n--\nn0 = Neg(h0)\n--\nn1 = Neg(h1)\n--\np0");
    for (int i = 0; i < 60; i++) {
        n += snprintf(graph + n, sizeof graph - (size_t)n, "p%d = Slice(x, i%d, i%d, a1); m%d = Neg(p%d)\n", i, i, i + 1, i, i);
        if (i)
            e += snprintf(expect + e, sizeof expect - (size_t)e, ", p%d", i);
    }
    e += snprintf(expect + e, sizeof expect - (size_t)e, " = Split(x, _:const) {axis=1}");
    n += snprintf(graph + n, sizeof graph - (size_t)n, "return n0, n1");
    for (int i = 0; i < 60; i++) {
        n += snprintf(graph + n, sizeof graph - (size_t)n, ", m%d", i);
        e += snprintf(expect + e, sizeof expect - (size_t)e, "\n--\nm%d = Neg(p%d)", i, i);
    }
    PC_CASE(graph, 2, expect);
}
END_TEST

#define X26 "x: float[2,6]; s0: int64[1] = [0]; s2: int64[1] = [2]; s3: int64[1] = [3]; e3: int64[1] = [3]\n" \
            "e6: int64[1] = [6]; s6: int64[1] = [6]; a0: int64[1] = [0]; a1: int64[1] = [1]\n"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* a gap */
    {X26 "a = Slice(x, s0, s2, a1); b = Slice(x, s3, e6, a1)\n" TWO, 0},
    /* an overlap */
    {X26 "a = Slice(x, s0, e3, a1); b = Slice(x, s2, e6, a1)\n" TWO, 0},
    /* step 2 */
    {X26 "two: int64[1] = [2]; s4: int64[1] = [4]\n"
     "a = Slice(x, s0, e3, a1); b = Slice(x, s3, e6, a1, two); c = Slice(x, s4, e6, a1); nc = Neg(c)\n"
     "na = Neg(a); nb = Neg(b)\nreturn nc, na, nb", 0},
    /* starts not constant */
    {X26 "st: int64[1]\na = Slice(x, s0, e3, a1); b = Slice(x, st, e6, a1)\n" TWO, 0},
    /* different axes */
    {X26 "s1: int64[1] = [1]\na = Slice(x, s0, e3, a1); b = Slice(x, s1, s2, a0)\n" TWO, 0},
    /* the axis' dim is unknown */
    {"x: float[2,?]; s0: int64[1] = [0]; e3: int64[1] = [3]; s3: int64[1] = [3]; e6: int64[1] = [6]; a1: int64[1] = [1]\n"
     "a = Slice(x, s0, e3, a1); b = Slice(x, s3, e6, a1)\n" TWO, 1},
    /* a single Slice (the rest is not read) */
    {X26 "a = Slice(x, s0, e6, a1); b = Relu(x)\n" TWO, 0},
    /* two axes cut in one Slice */
    {"x: float[2,6]; sa: int64[2] = [0, 0]; ea: int64[2] = [1, 3]; sb: int64[2] = [1, 3]; eb: int64[2] = [2, 6]\n"
     "ax: int64[2] = [0, 1]\na = Slice(x, sa, ea, ax); b = Slice(x, sb, eb, ax)\n" TWO, 0},
    /* an empty Slice among them */
    {X26 "a = Slice(x, s0, e6, a1); b = Slice(x, s6, e6, a1)\n" TWO, 0},
    /* x's rank unknown: no rewrite, and none reported (the pass once counted
     * every such x as one, in every round) */
    {"x: float[*]; s0: int64[1] = [0]; e3: int64[1] = [3]; s3: int64[1] = [3]; e6: int64[1] = [6]; a1: int64[1] = [1]\n"
     "a = Slice(x, s0, e3, a1); b = Slice(x, s3, e6, a1)\n" TWO, 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

static ph_value *cut(ph_graph *g, ph_value *x, int64_t axis, int64_t s, int64_t e)
{
    return tk_slice(g, x, 1, TK_I64(s), TK_I64(e), TK_I64(axis), NULL);
}

/* The text has no subgraphs: the If's bodies are built with the IR calls;
 * the outer Slice alone is no partition. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[2,6]; cond: bool[]; s0: int64[1] = [0]; e3: int64[1] = [3]; a1: int64[1] = [1]\n"
                              "y = If(cond); o = Slice(x, s0, e3, a1); n = Neg(o)\nreturn y, n",
                              &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], tk_op2(body[0], "Add", cut(body[0], x, 1, 0, 3), cut(body[0], x, 1, 3, 6)));
    tk_output(body[1], tk_op2(body[1], "Sub", cut(body[1], x, 1, 0, 3), cut(body[1], x, 1, 3, 6)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "a, b = Split(x, _:const)\ny = Add(a, b)");
    PC_GRAPH_IS(body[1], "a, b = Split(x, _:const)\ny = Sub(a, b)");
    PC_GRAPH_IS(ph_model_graph(m), "y = If(cond)\n--\no = Slice(x, s0, e3, a1)\nn = Neg(o)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("slices_to_split");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, three_slices_become_one_split);
    tcase_add_test(tc, graph_outputs_and_other_readers_keep_working);
    tcase_add_loop_test(tc, forms_and_opsets, 0, (int)(sizeof forms / sizeof *forms));
    tcase_add_test(tc, two_axes_two_splits_and_many_pieces);
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
