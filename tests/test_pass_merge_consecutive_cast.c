/* tests/test_pass_merge_consecutive_cast.c - merge_consecutive_cast: a Cast
 * chain whose middle type loses nothing becomes one Cast (none when it ends
 * at the source type); sibling Casts alike become one. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("merge_consecutive_cast")

/* w: a float [2,8] in [-1000, 1000): varied values for integer casts */
#define WIDE "x: float[2,8]; k: float[] = [1000]\nw = Mul(x, k)\n"
#define W "w = Mul(x, k)\n"

static const struct {
    const char *graph;
    int rewrites;
    const char *expect;
} merges[] = {
    /* int32 -> int64 -> float = int32 -> float (int64 holds every int32);
     * idempotent: float -> int32 -> float stays */
    {WIDE "i = Cast(w) {to=6}; a = Cast(i) {to=7}; y = Cast(a) {to=1}\nreturn y", 1,
     W "i = Cast(w) {to=6}\ny = Cast(i) {to=1}"},
    {"x: float[3,5]\na = Cast(x) {to=11}; y = Cast(a) {to=10}\nreturn y", 1, "y = Cast(x) {to=10}"},
    /* int16 -> int32 -> int8: integers wrap alike either way (values beyond
     * int8 included) */
    {WIDE "i = Cast(w) {to=5}; a = Cast(i) {to=6}; y = Cast(a) {to=3}\nreturn y", 1,
     W "i = Cast(w) {to=5}\ny = Cast(i) {to=3}"},
    /* bool -> int8 -> float = bool -> float; bool -> float -> int64 too (0
     * and 1 fit every integer) */
    {"b: bool[4,4]\na = Cast(b) {to=3}; y = Cast(a) {to=1}; c = Cast(b) {to=1}; z = Cast(c) {to=7}\nreturn y, z", 2,
     "y = Cast(b) {to=1}\n--\nz = Cast(b) {to=7}"},
    /* float -> int32 -> int32: the second Cast changes nothing, whatever
     * the first lost */
    {WIDE "i = Cast(w) {to=6}; y = Cast(i) {to=6}\nreturn y", 1, W "y = Cast(w) {to=6}"},
    /* int32 -> int64 -> int32 is the int32 value itself: no Cast left */
    {WIDE "i = Cast(w) {to=6}; a = Cast(i) {to=7}; b = Cast(a) {to=6}; y = Neg(b)\nreturn y", 1,
     W "i = Cast(w) {to=6}\ny = Neg(i)"},
    /* two Casts of one value to int32 are one; the Cast to int64 stays */
    {WIDE "a = Cast(w) {to=6}; b = Cast(w) {to=7}; c = Cast(w) {to=6}\n"
          "na = Neg(a); nb = Neg(b); ac = Abs(c)\nreturn na, nb, ac",
     1, W "--\na = Cast(w) {to=6}\n--\nna = Neg(a)\n--\nac = Abs(a)\n--\nb = Cast(w) {to=7}\nnb = Neg(b)"},
};

START_TEST(merges_casts)
{
    PC_CASE(merges[_i].graph, merges[_i].rewrites, merges[_i].expect);
}
END_TEST

/* The removed sibling's output was a graph output: the kept one takes its
 * name.  Both graph outputs: both stay. */
START_TEST(siblings_and_graph_outputs)
{
    const char *graph = "x: float[4]\na = Cast(x) {to=6}; b = Cast(x) {to=6}; na = Neg(a)\nreturn na, b";
    PC_CASE(graph, 1, "b = Cast(x) {to=6}\n--\nna = Neg(b)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 1)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), name);
    free(name);
    ph_model_free(m);
    PC_UNTOUCHED("x: float[4]\na = Cast(x) {to=6}; b = Cast(x) {to=6}\nreturn a, b");
}
END_TEST

/* The SDK's table of lossless casts. */
START_TEST(dtype_holds_table)
{
    static const int yes[][2] = {
        {PH_DT_BOOL, PH_DT_UINT8},     {PH_DT_BOOL, PH_DT_BFLOAT16}, {PH_DT_INT8, PH_DT_INT16},
        {PH_DT_UINT8, PH_DT_INT16},    {PH_DT_UINT8, PH_DT_UINT16},  {PH_DT_UINT32, PH_DT_INT64},
        {PH_DT_INT8, PH_DT_BFLOAT16},  {PH_DT_UINT8, PH_DT_FLOAT16}, {PH_DT_UINT16, PH_DT_FLOAT},
        {PH_DT_INT32, PH_DT_DOUBLE},   {PH_DT_UINT32, PH_DT_DOUBLE}, {PH_DT_FLOAT16, PH_DT_FLOAT},
        {PH_DT_BFLOAT16, PH_DT_DOUBLE}, {PH_DT_FLOAT, PH_DT_DOUBLE},  {PH_DT_INT64, PH_DT_INT64},
        {PH_DT_BOOL, PH_DT_BOOL},
    };
    static const int no[][2] = {
        {PH_DT_INT8, PH_DT_UINT8},      {PH_DT_UINT8, PH_DT_INT8},     {PH_DT_INT16, PH_DT_UINT32},
        {PH_DT_UINT64, PH_DT_INT64},    {PH_DT_INT16, PH_DT_FLOAT16},  {PH_DT_UINT16, PH_DT_BFLOAT16},
        {PH_DT_INT32, PH_DT_FLOAT},     {PH_DT_INT64, PH_DT_DOUBLE},   {PH_DT_FLOAT16, PH_DT_BFLOAT16},
        {PH_DT_BFLOAT16, PH_DT_FLOAT16}, {PH_DT_DOUBLE, PH_DT_FLOAT},  {PH_DT_FLOAT, PH_DT_INT64},
        {PH_DT_INT8, PH_DT_BOOL},       {PH_DT_STRING, PH_DT_STRING}, {PH_DT_INT32, PH_DT_STRING},
        {PH_DT_COMPLEX64, PH_DT_COMPLEX128}, {17, PH_DT_FLOAT},
    };
    for (size_t k = 0; k < sizeof yes / sizeof *yes; k++)
        ck_assert_msg(ph_dtype_holds(yes[k][0], yes[k][1]), "%s into %s", ph_dtype_name(yes[k][0]),
                      ph_dtype_name(yes[k][1]));
    for (size_t k = 0; k < sizeof no / sizeof *no; k++)
        ck_assert_msg(!ph_dtype_holds(no[k][0], no[k][1]), "%s into %s", ph_dtype_name(no[k][0]),
                      ph_dtype_name(no[k][1]));
}
END_TEST

/* ---- negative cases */

#define CHAIN(t0, t1, t2) "x: " t0 "[4]\na = Cast(x) {to=" t1 "}; y = Cast(a) {to=" t2 "}\nreturn y"
/* unchecked: 1 no numeric check, 2 no shapes either (Cast-1 is not inferred) */
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* lossy middle types: float16 rounds, int32 truncates, int8 wraps uint8 */
    {CHAIN("float", "10", "1"), 0},
    {CHAIN("float", "6", "1"), 0},
    {CHAIN("float", "16", "11"), 0},
    {CHAIN("uint8", "3", "6"), 0},
    {CHAIN("int32", "1", "7"), 0},
    {CHAIN("int64", "11", "7"), 0},
    {CHAIN("float16", "16", "1"), 0},
    {CHAIN("int16", "10", "6"), 0},
    {CHAIN("int32", "9", "6"), 0},
    {CHAIN("uint16", "5", "7"), 0},
    /* int16 -> float -> int8: float holds int16, but a float out of int8's
     * range converts as the runtime pleases, while int16 -> int8 wraps */
    {WIDE "i = Cast(w) {to=5}; a = Cast(i) {to=1}; y = Cast(a) {to=3}\nreturn y", 0},
    /* to string */
    {CHAIN("int32", "11", "8"), 1},
    /* the middle value has another consumer */
    {"x: int32[4]\nt = Cast(x) {to=7}; y = Cast(t) {to=1}; n = Neg(t)\nreturn y, n", 0},
    /* the middle value is a graph output */
    {"x: int32[4]\nt = Cast(x) {to=7}; y = Cast(t) {to=1}\nreturn y, t", 0},
    /* the source dtype is unknown (an operator inference does not know) */
    {"x: float[4]\nc = Custom@com.example(x); a = Cast(c) {to=11}; y = Cast(a) {to=1}\nreturn y", 1},
    /* Cast-1 (opset 5) names the type by a string */
    {"opset 5\nx: int32[4]\na = Cast(x) {to=\"INT64\"}; y = Cast(a) {to=\"FLOAT\"}; c = Cast(x) {to=\"INT64\"}\n"
     "n = Neg(c)\nreturn y, n", 2},
    /* siblings that differ in saturate */
    {"x: float[4]\na = Cast(x) {to=6}; b = Cast(x) {to=6, saturate=0}; na = Neg(a); nb = Neg(b)\nreturn na, nb", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

static ph_value *cast(ph_graph *g, ph_value *x, int to)
{
    ph_node *n = tk_node(g, "Cast", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(n, "to", to), 0);
    return ph_node_output(n, 0);
}

/* Siblings that live in another graph stay (the text has no subgraphs: the
 * If's bodies are built with the IR calls). */
START_TEST(siblings_in_other_graphs_kept)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[4]; cond: bool[]\ny = If(cond); a = Cast(x) {to=6}; n = Neg(a)\nreturn y, n",
                              &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], tk_op1(body[0], "Neg", cast(body[0], x, PH_DT_INT32)));
    tk_output(body[1], tk_op1(body[1], "Abs", cast(body[1], x, PH_DT_INT32)));
    pc_run_structure(m, 0);
    PC_GRAPH_IS(body[0], "c = Cast(x) {to=6}\ny = Neg(c)");
    PC_GRAPH_IS(body[1], "c = Cast(x) {to=6}\ny = Abs(c)");
    ph_model_free(m);
}
END_TEST

/* A chain in one branch, siblings in the other. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: int32[4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], tk_op1(body[0], "Neg", cast(body[0], cast(body[0], x, PH_DT_INT64), PH_DT_DOUBLE)));
    tk_output(body[1], tk_op2(body[1], "Add", cast(body[1], x, PH_DT_DOUBLE), cast(body[1], x, PH_DT_DOUBLE)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "c = Cast(x) {to=11}\ny = Neg(c)");
    PC_GRAPH_IS(body[1], "c = Cast(x) {to=11}\ny = Add(c, c)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_cast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, merges_casts, 0, (int)(sizeof merges / sizeof *merges));
    tcase_add_test(tc, siblings_and_graph_outputs);
    tcase_add_test(tc, dtype_holds_table);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, siblings_in_other_graphs_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
