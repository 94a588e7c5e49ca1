/* tests/test_pass_merge_consecutive_slice.c - merge_consecutive_slice: a
 * Slice of a Slice becomes one Slice (different axes side by side, the same
 * axis composed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("merge_consecutive_slice")

#define BIG INT64_MAX
#define SMALL INT64_MIN
#define BIG_TEXT "9223372036854775807"
#define SMALL_TEXT "-9223372036854775808"
#define ONE "r = Relu(x)\ns = Slice(r, _:const, _:const, _?, _?)\nn = Neg(s)"

/* The constant int64 operand `i` of the only Slice of g equals want[0..n). */
static void assert_operand(const ph_graph *g, size_t i, size_t n, const int64_t *want)
{
    ph_node *slice = NULL;
    for (ph_node *k = ph_graph_first_node(g); k; k = ph_node_next(k))
        if (!ph_node_is_removed(k) && ph_node_op(k) == PH_OP_Slice) {
            ck_assert_msg(slice == NULL, "two Slices");
            slice = k;
        }
    ck_assert_ptr_nonnull(slice);
    int64_t got[16];
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(slice, i), got, NULL, 16), (ptrdiff_t)n);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(got[k] == want[k], "operand %zu [%zu] = %lld, want %lld", i, k, (long long)got[k],
                      (long long)want[k]);
}

/* The model of `graph` after one run of the pass (asserting `rewrites`). */
static ph_model *after(const char *graph, int rewrites)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), rewrites);
    return m;
}

/* slices of different axes -> one Slice of both, starts as written */
START_TEST(different_axes)
{
    const char *graph = "x: float[4,6,8]; st1: int64[1] = [1]; en1: int64[1] = [3]; ax1: int64[1] = [0]\n"
                        "st2: int64[2] = [-5, 0]; en2: int64[2] = [-1, " BIG_TEXT "]; ax2: int64[2] = [-1, 1]; sp2: int64[2] = [2, 3]\n"
                        "r = Relu(x); a = Slice(r, st1, en1, ax1); s = Slice(a, st2, en2, ax2, sp2); n = Neg(s)\nreturn n";
    PC_CASE(graph, 1, ONE);
    ph_model *m = after(graph, 1);
    ph_graph *g = ph_model_graph(m);
    assert_operand(g, 1, 3, (const int64_t[]){1, 0, -5});
    assert_operand(g, 2, 3, (const int64_t[]){3, BIG, -1});
    assert_operand(g, 3, 3, (const int64_t[]){0, 1, 2});
    assert_operand(g, 4, 3, (const int64_t[]){1, 3, 2});
    ph_model_free(m);
}
END_TEST

/* [2:18:3] then [1:100:2] of 20 = 5, 11, 17 = [5:18:6] */
START_TEST(same_axis_composed)
{
    const char *graph = "x: float[3,20]; st1: int64[1] = [2]; en1: int64[1] = [18]; ax1: int64[1] = [1]; sp1: int64[1] = [3]\n"
                        "st2: int64[1] = [1]; en2: int64[1] = [100]; ax2: int64[1] = [-1]; sp2: int64[1] = [2]\n"
                        "r = Relu(x); a = Slice(r, st1, en1, ax1, sp1); s = Slice(a, st2, en2, ax2, sp2); n = Neg(s)\nreturn n";
    PC_CASE(graph, 1, ONE);
    ph_model *m = after(graph, 1);
    ph_graph *g = ph_model_graph(m);
    assert_operand(g, 1, 1, (const int64_t[]){5});
    assert_operand(g, 2, 1, (const int64_t[]){18});
    assert_operand(g, 3, 1, (const int64_t[]){1});
    assert_operand(g, 4, 1, (const int64_t[]){6});
    ph_model_free(m);
}
END_TEST

/* Three Slices, mixing shared and separate axes, fold in one run. */
START_TEST(chain_of_three)
{
    PC_CASE("x: float[5,7,9]; st1: int64[2] = [1, -8]; en1: int64[2] = [" BIG_TEXT ", 8]; ax1: int64[2] = [0, 2]\n"
            "st2: int64[2] = [6, 1]; en2: int64[2] = [0, 5]; ax2: int64[2] = [1, 2]; sp2: int64[2] = [-2, 1]\n"
            "st3: int64[1] = [-1]; en3: int64[1] = [" SMALL_TEXT "]; ax3: int64[1] = [0]; sp3: int64[1] = [-1]\n"
            "r = Relu(x); a = Slice(r, st1, en1, ax1); b = Slice(a, st2, en2, ax2, sp2); s = Slice(b, st3, en3, ax3, sp3)\n"
            "n = Neg(s)\nreturn n",
            2, ONE);
}
END_TEST

/* Every combination of a sample of starts, ends and steps of both signs,
 * out of range included, on one axis: the composite selects exactly what
 * the two Slices did (the harness checks the values bit for bit). */
START_TEST(same_axis_exhaustive)
{
    static const char *const starts[] = {"-9", "-3", "0", "2", "6", BIG_TEXT, SMALL_TEXT};
    static const char *const ends[] = {"-8", "-1", "1", "4", "7", BIG_TEXT, SMALL_TEXT};
    static const char *const steps[] = {"1", "2", "3", "-1", "-2"};
    uint64_t state = 12345;
    for (int t = 0; t < 400; t++) {
        const char *p[6];
        for (int i = 0; i < 2; i++) {
            state = state * 6364136223846793005u + 1442695040888963407u;
            p[3 * i] = starts[(state >> 33) % 7];
            p[3 * i + 1] = ends[(state >> 40) % 7];
            p[3 * i + 2] = steps[(state >> 50) % 5];
        }
        char graph[1024];
        snprintf(graph, sizeof graph,
                 "x: float[2,7]; st1: int64[1] = [%s]; en1: int64[1] = [%s]; sp1: int64[1] = [%s]; ax: int64[1] = [1]\n"
                 "st2: int64[1] = [%s]; en2: int64[1] = [%s]; sp2: int64[1] = [%s]; am: int64[1] = [-1]\n"
                 "r = Relu(x); a = Slice(r, st1, en1, ax, sp1); s = Slice(a, st2, en2, am, sp2); n = Neg(s)\nreturn n",
                 p[0], p[1], p[2], p[3], p[4], p[5]);
        ph_error err = {0};
        ph_test_options o = {.max_iterations = 4, .seed = (uint64_t)t};
        int rc = ph_test_case(pass, graph, &o, 1, ONE, &err);
        ck_assert_msg(rc == 0, "case %d: [%s:%s:%s] then [%s:%s:%s]: %s", t, p[0], p[1], p[2], p[3], p[4], p[5], err.message);
    }
}
END_TEST

/* An empty first range leaves nothing for the second: start = end = 0. */
START_TEST(empty_composite)
{
    const char *graph = "x: float[3,4]; st1: int64[1] = [3]; en1: int64[1] = [1]; ax: int64[1] = [1]\n"
                        "st2: int64[1] = [0]; en2: int64[1] = [" BIG_TEXT "]\n"
                        "r = Relu(x); a = Slice(r, st1, en1, ax); s = Slice(a, st2, en2, ax); n = Neg(s)\nreturn n";
    PC_CASE(graph, 1, ONE);
    ph_model *m = after(graph, 1);
    assert_operand(ph_model_graph(m), 1, 1, (const int64_t[]){0});
    assert_operand(ph_model_graph(m), 2, 1, (const int64_t[]){0});
    ph_model_free(m);
}
END_TEST

/* A negative step on an empty axis selects nothing (it selected one
 * element once, in ph_slice_length and in the evaluator). */
START_TEST(empty_axis_negative_step)
{
    int64_t first = -5;
    ck_assert_int_eq(ph_slice_length(0, -1, SMALL, -1, &first), 0);
    ck_assert_int_eq(ph_slice_length(0, BIG, SMALL, -2, NULL), 0);
    ck_assert_int_eq(ph_slice_length(0, 0, BIG, 1, NULL), 0);
    ck_assert_int_eq(ph_slice_length(3, -1, SMALL, -1, &first), 3);
    ck_assert_int_eq(first, 2);
    /* [1:1] empties the axis, then [::-1] of nothing; merged: still empty */
    PC_CASE("x: float[3,4]; st1: int64[1] = [1]; en1: int64[1] = [1]; ax: int64[1] = [1]\n"
            "st2: int64[1] = [-1]; en2: int64[1] = [" SMALL_TEXT "]; sp2: int64[1] = [-1]\n"
            "r = Relu(x); a = Slice(r, st1, en1, ax); s = Slice(a, st2, en2, ax, sp2); n = Neg(s)\nreturn n",
            1, ONE);
}
END_TEST

/* The second Slice's output is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    const char *graph = "x: float[10]; st1: int64[1] = [1]; en1: int64[1] = [9]; st2: int64[1] = [2]; en2: int64[1] = [5]\n"
                        "a = Slice(x, st1, en1); y = Slice(a, st2, en2)\nreturn y";
    PC_CASE(graph, 1, "y = Slice(x, _:const, _:const, _?, _?)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    char *name = strdup(ph_value_name(ph_graph_output(ph_model_graph(m), 0)));
    ph_model_free(m);
    m = after(graph, 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(m), 0)), name);
    assert_operand(ph_model_graph(m), 1, 1, (const int64_t[]){3});
    assert_operand(ph_model_graph(m), 2, 1, (const int64_t[]){6});
    free(name);
    ph_model_free(m);
}
END_TEST

/* Opset 9: attributes in, attributes out; axis 1: [2:9] of 10 = 2..8, then
 * [-4:-2] of 7 = 3, 4 -> 5, 6. */
START_TEST(opset9_attributes)
{
    const char *graph = "opset 9\nx: float[4,10]\nr = Relu(x); a = Slice(r) {starts=[1,2], ends=[" BIG_TEXT ",-1]}\n"
                        "s = Slice(a) {starts=[-4], ends=[-2], axes=[1]}; n = Neg(s)\nreturn n";
    PC_CASE_OPTS(&pc_unchecked, graph, 1, "r = Relu(x)\ns = Slice(r) {starts=[1,5], axes=[0,1]}\nn = Neg(s)");
    ph_model *m = after(graph, 1);
    ph_node *s = ph_value_producer(ph_node_input(ph_value_producer(ph_graph_output(ph_model_graph(m), 0)), 0));
    const int64_t *v;
    ck_assert_int_eq(ph_node_attr_ints(s, "ends", &v), 2);
    ck_assert(v[0] == BIG && v[1] == 7);
    ph_model_free(m);
}
END_TEST

/* ... while different axes need no length: merged, and right for any N. */
START_TEST(different_axes_symbolic_dim_merged)
{
    PC_CASE("x: float[N,6]; st1: int64[1] = [1]; en1: int64[1] = [" BIG_TEXT "]; a0: int64[1] = [0]\n"
            "st2: int64[1] = [-4]; en2: int64[1] = [-1]; a1: int64[1] = [1]\n"
            "r = Relu(x); a = Slice(r, st1, en1, a0); s = Slice(a, st2, en2, a1); n = Neg(s)\nreturn n",
            1, ONE);
}
END_TEST

/* ---- negative cases */

#define TWO "st1: int64[1] = [1]; en1: int64[1] = [9]; st2: int64[1] = [1]; en2: int64[1] = [5]\n"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* the middle value has another consumer */
    {"x: float[10]\n" TWO "r = Relu(x); a = Slice(r, st1, en1); s = Slice(a, st2, en2); n = Neg(s); m = Neg(a)\nreturn n, m", 0},
    /* the middle value is a graph output */
    {"x: float[10]\n" TWO "r = Relu(x); a = Slice(r, st1, en1); s = Slice(a, st2, en2); n = Neg(s)\nreturn n, a", 0},
    /* the same axis on a symbolic dim: the composite needs the length */
    {"x: float[N,4]; st1: int64[1] = [1]; en1: int64[1] = [" BIG_TEXT "]; a0: int64[1] = [0]; st2: int64[1] = [0]\n"
     "en2: int64[1] = [2]\nr = Relu(x); a = Slice(r, st1, en1, a0); s = Slice(a, st2, en2, a0); n = Neg(s)\nreturn n", 0},
    /* unknown rank */
    {"x: float[*]; st1: int64[1] = [1]; en1: int64[1] = [3]; a0: int64[1] = [0]; st2: int64[1] = [0]; en2: int64[1] = [2]\n"
     "a1: int64[1] = [1]\nr = Relu(x); a = Slice(r, st1, en1, a0); s = Slice(a, st2, en2, a1); n = Neg(s)\nreturn n", 1},
    /* starts computed at run time */
    {"x: float[10]; st: int64[1]\n" TWO "r = Relu(x); a = Slice(r, st, en1); s = Slice(a, st2, en2); n = Neg(s)\nreturn n", 0},
    /* another domain */
    {"x: float[10]\n" TWO "r = Relu(x); a = Slice@com.example(r, st1, en1); s = Slice(a, st2, en2); n = Neg(s)\nreturn n", 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

/* An end that is a symbolic dim (Shape(x)[0]) cannot be written as a number. */
START_TEST(symbolic_end_kept)
{
    PC_UNTOUCHED("x: float[N,6]; z: int64[1] = [0]; o: int64[1] = [1]; s1: int64[1] = [1]; e5: int64[1] = [5]\n"
                 "r = Relu(x); sh = Shape(r); n = Slice(sh, z, o); a = Slice(r, s1, e5, o); s = Slice(a, z, n, z)\n"
                 "y = Neg(s)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[4,6]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_value *s = tk_slice(body[0], x, 1, TK_I64(1), TK_I64(3), TK_I64(0), NULL);
    tk_output(body[0], tk_slice(body[0], s, 1, TK_I64(0), TK_I64(4), TK_I64(1), NULL));
    tk_output(body[1], tk_op1(body[1], "Relu", x));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "y = Slice(x, _:const, _:const, _:const)");
    assert_operand(body[0], 1, 2, (const int64_t[]){1, 0});
    assert_operand(body[0], 3, 2, (const int64_t[]){0, 1});
    PC_GRAPH_IS(body[1], "y = Relu(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_slice");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, different_axes);
    tcase_add_test(tc, same_axis_composed);
    tcase_add_test(tc, chain_of_three);
    tcase_add_test(tc, same_axis_exhaustive);
    tcase_add_test(tc, empty_composite);
    tcase_add_test(tc, empty_axis_negative_step);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, opset9_attributes);
    tcase_add_test(tc, different_axes_symbolic_dim_merged);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, symbolic_end_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
