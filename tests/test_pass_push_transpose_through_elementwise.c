/* tests/test_pass_push_transpose_through_elementwise.c -
 * push_transpose_through_elementwise, alone and in a fixpoint with the
 * passes that cancel the Transposes it moves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("push_transpose_through_elementwise")

#define NHWC "{perm=[0,2,3,1]}"
#define NCHW "{perm=[0,3,1,2]}"

/* The model of `graph` after the pass ran to a fixpoint.  Caller frees. */
static ph_model *after(const char *graph)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ck_assert_int_ge(ph_test_run(pass, m, &pc_defaults, NULL, &err), 0);
    return m;
}

/* Two inputs transposed the same way: two Transposes become one; the output
 * keeps its name. */
START_TEST(binary_two_transposes_become_one)
{
    const char *graph = "a: float[2,3,4,5]; b: float[2,3,1,5]\n"
                        "ta = Transpose(a) " NHWC "; tb = Transpose(b) " NHWC "; y = Sub(ta, tb)\nreturn y";
    PC_CASE(graph, 1, "s = Sub(a, b)\ny = Transpose(s) " NHWC);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    char *name = strdup(ph_value_name(ph_graph_output(ph_model_graph(m), 0)));
    ph_model_free(m);
    m = after(graph);
    ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(m), 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* Transpose -> Mul(constant of lower rank) -> Relu -> Transpose: the
 * Transpose walks down (k = 1 with a Transpose below) through Mul, then
 * Relu; the constant over W and C is aligned to rank 4 and permuted; the
 * two Transposes left are for merge_consecutive_transpose. */
START_TEST(single_transpose_walks_to_the_next_one)
{
    const char *graph = "x: float[2,3,4,5]; c: const float[5,3]\n"
                        "t = Transpose(x) " NHWC "; m = Mul(t, c); r = Relu(m); y = Transpose(r) " NCHW "\nreturn y";
    PC_CASE(graph, 2, "m = Mul(x, _:const:shape=[1,3,1,5])\nr = Relu(m)\nt = Transpose(r)\ny = Transpose(t)");
    ph_model *m = after(graph);
    ck_assert_ptr_null(ph_graph_find_value(ph_model_graph(m), "c")); /* the old constant is gone */
    ph_model_free(m);
}
END_TEST

/* A one-element constant and a scalar stay as they are: Add (k = 2), then
 * Mul and Clip (k = 1). */
START_TEST(one_element_constants_stay)
{
    const char *graph = "a: float[2,3,4]; b: float[2,3,4]; lo: float[] = [-0.25]; one: const float[1,1]\n"
                        "ta = Transpose(a) {perm=[2,0,1]}; tb = Transpose(b) {perm=[2,0,1]}; s = Add(ta, tb)\n"
                        "m = Mul(s, one); cl = Clip(m, lo); y = Transpose(cl) {perm=[1,2,0]}\nreturn y";
    PC_CASE(graph, 3, "s = Add(a, b)\nm = Mul(s, one)\ncl = Clip(m, lo)\nt = Transpose(cl)\ny = Transpose(t)");
    ph_model *m = after(graph);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 2);
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph, *expect;
} pushes[] = {
    /* Concat of two transposed inputs and a constant: the axis moves from
     * the transposed channel axis 3 to axis P[3] = 1 */
    {"a: float[1,2,3,4]; b: float[1,5,3,4]; c: const float[1,3,4,6]\n"
     "ta = Transpose(a) " NHWC "; tb = Transpose(b) " NHWC "; y = Concat(ta, c, tb) {axis=-1}\nreturn y",
     "k = Concat(a, _:const:shape=[1,6,3,4], b) {axis=1}\ny = Transpose(k) " NHWC},
    /* Where: a transposed bool condition, two transposed branches */
    {"cond: bool[2,3,4]; a: float[2,3,4]; b: float[2,1,4]\n"
     "tc = Transpose(cond) {perm=[1,2,0]}; ta = Transpose(a) {perm=[1,2,0]}; tb = Transpose(b) {perm=[1,2,0]}\n"
     "y = Where(tc, ta, tb)\nreturn y",
     "w = Where(cond, a, b)\ny = Transpose(w) {perm=[1,2,0]}"},
};

START_TEST(pushed_below)
{
    PC_CASE(pushes[_i].graph, 1, pushes[_i].expect);
}
END_TEST

/* Mul(t, t) reads one Transpose twice: k = 1, pushed towards the
 * Transpose below; a Concat of ten Transposes becomes one. */
START_TEST(one_transpose_twice_and_many_transposes)
{
    char graph[2048], expect[1024];
    int n = snprintf(graph, sizeof graph, "x: float[2,3,4]\nt = Transpose(x) {perm=[1,0,2]}; m = Mul(t, t)\n"
                                          "y = Transpose(m) {perm=[1,0,2]}\n");
    int e = snprintf(expect, sizeof expect, "m = Mul(x, x)\nt = Transpose(m)\ny = Transpose(t)\n--\nc = Concat(");
    for (int i = 0; i < 10; i++) {
        n += snprintf(graph + n, sizeof graph - (size_t)n, "r%d = Relu(x); t%d = Transpose(r%d) {perm=[2,0,1]}\n", i, i, i);
        e += snprintf(expect + e, sizeof expect - (size_t)e, "%sr%d", i ? ", " : "", i);
    }
    snprintf(graph + n, sizeof graph - (size_t)n,
             "c = Concat(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9) {axis=0}\nreturn y, c");
    e += snprintf(expect + e, sizeof expect - (size_t)e, ") {axis=2}\nz = Transpose(c)");
    for (int i = 0; i < 10; i++)
        e += snprintf(expect + e, sizeof expect - (size_t)e, "\n--\nr%d = Relu(x)", i);
    PC_CASE(graph, 2, expect);
}
END_TEST

#define AB "a: float[2,3,4,5]; b: float[2,3,4,5]\nta = Transpose(a) " NHWC "; tb = Transpose(b) " NHWC "\n"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* a Transpose has another consumer */
    {AB "y = Add(ta, tb); n = Neg(ta)\nreturn y, n", 0},
    /* a Transpose output is a graph output */
    {AB "y = Add(ta, tb)\nreturn y, tb", 0},
    /* different perms */
    {AB "c: float[2,3,5,4]\ntc = Transpose(c) {perm=[0,3,2,1]}; y = Add(ta, tc)\nreturn y", 0},
    /* an input neither transposed nor constant */
    {AB "c: float[2,4,5,3]\ny = Add(ta, c)\nreturn y", 0},
    /* one Transpose and nothing below to meet: no gain */
    {AB "c: const float[3]\ns = Add(ta, c); y = Relu(s)\nreturn y", 0},
    /* a constant of higher rank broadcasts the output up */
    {AB "c: const float[2,1,1,1,3]\ns = Add(ta, c); y = Transpose(s) {perm=[0,1,4,2,3]}\nreturn y", 0},
    /* not elementwise */
    {AB "s = Softmax(ta); y = Transpose(s) " NCHW "\nreturn y", 0},
    /* the identity perm is for eliminate_nop_transpose */
    {"a: float[2,3,4,5]; b: float[2,3,4,5]\nta = Transpose(a) {perm=[0,1,2,3]}; tb = Transpose(b) {perm=[0,1,2,3]}\n"
     "y = Add(ta, tb)\nreturn y", 0},
    /* no perm and unknown rank */
    {"u: float[*]; w: float[*]\ntu = Transpose(u); tw = Transpose(w); y = Add(tu, tw)\nreturn y", 1},
    /* the path down has a second reader before the Transpose */
    {AB "r = Relu(ta); y = Transpose(r) " NCHW "; n = Neg(r)\nreturn y, n, tb", 0},
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
    ph_model *m = pc_if_model("a: float[2,3,4]; b: float[2,3,4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *a = ph_graph_find_value(ph_model_graph(m), "a"), *b = ph_graph_find_value(ph_model_graph(m), "b");
    const int64_t *p = TK_I64(0, 2, 1);
    ph_value *mul = tk_op2(body[0], "Mul", tk_transpose(body[0], a, 3, p), tk_transpose(body[0], b, 3, p));
    tk_output(body[0], tk_transpose(body[0], mul, 3, p));
    tk_output(body[1], tk_transpose(body[1], tk_op1(body[1], "Tanh", tk_transpose(body[1], a, 3, p)), 3, p));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "m = Mul(a, b)\nt = Transpose(m)\ny = Transpose(t)");
    PC_GRAPH_IS(body[1], "h = Tanh(a)\nt = Transpose(h)\ny = Transpose(t)");
    ph_model_free(m);
}
END_TEST

/* The pass with the passes that remove what it brings together, run in
 * turns (each run checked bit for bit) until none changes anything:
 * Transpose -> Add(constant) -> Relu -> inverse Transpose ends with no
 * Transpose at all, in a few rounds. */
START_TEST(fixpoint_with_transpose_cleanup)
{
    static const char *const names[] = {"merge_consecutive_transpose", "eliminate_nop_transpose", "simplify_layout_chain"};
    ph_test_pass *loaded[3] = {NULL, NULL, NULL};
    const ph_pass_desc *passes[4] = {pass};
    size_t n = 1;
    for (size_t i = 0; i < 3; i++) {
        char path[1024];
        ph_error err = {0};
        snprintf(path, sizeof path, "%s/plugins/%s.so", PH_BUILD_DIR, names[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue; /* not built in this tree: skip it */
        fclose(f);
        ck_assert_msg(ph_test_load_pass(path, names[i], &loaded[i], &err) == 0, "%s", err.message);
        passes[n++] = ph_test_pass_desc(loaded[i]);
    }
    ck_assert_msg(n >= 2, "merge_consecutive_transpose must be built");
    ph_error err = {0};
    ph_model *m = ph_test_model_text("x: float[1,3,4,5]; bias: const float[3]\n"
                                     "t = Transpose(x) " NHWC "; s = Add(t, bias); r = Relu(s); y = Transpose(r) " NCHW "\n"
                                     "return y",
                                     &err);
    int rounds = 0, changed = 1;
    while (changed) {
        ck_assert_msg(rounds < 6, "no fixpoint after %d rounds", rounds);
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            int rc = ph_test_run_checked(passes[i], m, NULL, NULL, &err);
            ck_assert_msg(rc >= 0, "%s: %s", passes[i]->name, err.message);
            changed += rc;
        }
        rounds++;
    }
    PC_GRAPH_IS(ph_model_graph(m), "s = Add(x, _:const)\ny = Relu(s)");
    ck_assert_int_le(rounds, 4);
    ph_model_free(m);
    for (size_t i = 0; i < 3; i++)
        ph_test_pass_free(loaded[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("push_transpose_through_elementwise");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, binary_two_transposes_become_one);
    tcase_add_test(tc, single_transpose_walks_to_the_next_one);
    tcase_add_test(tc, one_element_constants_stay);
    tcase_add_loop_test(tc, pushed_below, 0, (int)(sizeof pushes / sizeof *pushes));
    tcase_add_test(tc, one_transpose_twice_and_many_transposes);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_an_if_branch);
    tcase_add_test(tc, fixpoint_with_transpose_cleanup);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
