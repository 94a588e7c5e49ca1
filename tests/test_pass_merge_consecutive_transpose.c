/* tests/test_pass_merge_consecutive_transpose.c - merge_consecutive_transpose:
 * two Transposes in a row become one (or none when they cancel). */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"

PASS_FIXTURE("merge_consecutive_transpose")

static const struct {
    const char *graph;
    int rewrites;
    const char *expect;
} merges[] = {
    /* [0,2,1] then [0,2,1] on [2,3,4] cancel */
    {"x: float[2,3,4]\nr = Relu(x); a = Transpose(r) {perm=[0,2,1]}; b = Transpose(a) {perm=[0,2,1]}; n = Neg(b)\n"
     "return n", 1, "r = Relu(x)\nn = Neg(r)"},
    /* [0,2,3,1] then [0,1,3,2] = one Transpose [0,2,1,3] */
    {"x: float[2,3,4,5]\na = Transpose(x) {perm=[0,2,3,1]}; b = Transpose(a) {perm=[0,1,3,2]}\nreturn b", 1,
     "b = Transpose(x) {perm=[0,2,1,3]}"},
    /* a chain of three folds in one run: p1=[1,0,2], p2=[0,2,1] -> [1,2,0];
     * then p3=[2,1,0] -> [0,2,1] */
    {"x: float[2,3,4]\nr = Relu(x); a = Transpose(r) {perm=[1,0,2]}; b = Transpose(a) {perm=[0,2,1]}\n"
     "c = Transpose(b) {perm=[2,1,0]}; n = Neg(c)\nreturn n", 2,
     "r = Relu(x)\nt = Transpose(r) {perm=[0,2,1]}\nn = Neg(t)"},
    /* no perm = reversed dims; twice reversed is the identity (rank known) */
    {"x: float[2,3,4]\nr = Relu(x); a = Transpose(r); b = Transpose(a); n = Neg(b)\nreturn n", 1, "r = Relu(x)\nn = Neg(r)"},
    /* the first Transpose also feeds a graph output (a value in the middle
     * of the pattern is used elsewhere): it stays for that user, the second
     * one is folded */
    {"x: float[3,5]\nr = Relu(x); a = Transpose(r) {perm=[1,0]}; b = Transpose(a) {perm=[1,0]}; n = Neg(b)\n"
     "return a, n", 1, "r = Relu(x)\n--\na = Transpose(r)\n--\nn = Neg(r)"},
    /* the first Transpose has another consumer: the second is composed to
     * read x directly, the first stays once for the other consumer */
    {"x: float[2,3,4]\na = Transpose(x) {perm=[2,0,1]}; r = Relu(a); b = Transpose(a) {perm=[0,2,1]}\nreturn r, b", 1,
     "a = Transpose(x)\nr = Relu(a)\n--\nb = Transpose(x) {perm=[2,1,0]}"},
};

START_TEST(merges_transposes)
{
    PC_CASE(merges[_i].graph, merges[_i].rewrites, merges[_i].expect);
}
END_TEST

/* One perm given, the other missing: the rank comes from the given perm
 * even though no value has a known shape. */
START_TEST(missing_perm_rank_from_other_perm)
{
    /* [1,2,0] then [2,1,0]: c[j] = p1[p2[j]] = [0,2,1] */
    PC_CASE_OPTS(&pc_unchecked, "x: float[*]\nr = Relu(x); a = Transpose(r) {perm=[1,2,0]}; b = Transpose(a); n = Neg(b)\n"
                                "return n",
                 1, "r = Relu(x)\nt = Transpose(r) {perm=[0,2,1]}\nn = Neg(t)");
}
END_TEST

/* Identity composite, but x is a graph input and y a graph output: y cannot
 * be redirected, so one identity-perm Transpose remains under y's name. */
START_TEST(identity_between_graph_input_and_output)
{
    const char *graph = "x: float[3,4]\na = Transpose(x) {perm=[1,0]}; y = Transpose(a) {perm=[1,0]}\nreturn y";
    PC_CASE(graph, 1, "y = Transpose(x) {perm=[0,1]}");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* ---- negative cases */

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* unknown rank, no perms */
    {"x: float[*]\nr = Relu(x); a = Transpose(r); b = Transpose(a); n = Neg(b)\nreturn n", 1},
    /* one Transpose, a Neg, another */
    {"x: float[2,3,4]\nr = Relu(x); a = Transpose(r) {perm=[0,2,1]}; n = Neg(a); b = Transpose(n) {perm=[0,2,1]}\nreturn b", 0},
    /* ranks that disagree */
    {"x: float[*]\nr = Relu(x); a = Transpose(r) {perm=[0,2,1]}; b = Transpose(a) {perm=[1,0]}\nreturn b", 1},
    /* an invalid perm */
    {"x: float[*]\nr = Relu(x); a = Transpose(r) {perm=[0,0,1]}; b = Transpose(a) {perm=[0,2,1]}\nreturn b", 1},
    /* another domain */
    {"x: float[2,3]\nr = Relu(x); a = Transpose@com.example(r) {perm=[1,0]}; b = Transpose(a) {perm=[1,0]}\nreturn b", 1},
};

START_TEST(left_alone)
{
    static const ph_test_options no_shapes = {.max_iterations = 4, .unchecked = 1, .no_shapes = 1};
    PC_CASE_OPTS(alone[_i].unchecked ? &no_shapes : &pc_defaults, alone[_i].graph, 0, NULL);
}
END_TEST

/* The demo transformer has two directly consecutive pairs: one composes to
 * a single Transpose, one cancels (a real model file: kept as C). */
START_TEST(transformer_pairs)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    size_t before = 0, after = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        before += ph_node_op(n) == PH_OP_Transpose;
    rc = ph_test_run_checked(pass, m, NULL, NULL, &err);
    ck_assert_msg(rc == 2, "%d: %s", rc, err.message);
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        after += !ph_node_is_removed(n) && ph_node_op(n) == PH_OP_Transpose;
    ck_assert_uint_eq(after, before - 3);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 0);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_transpose");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, merges_transposes, 0, (int)(sizeof merges / sizeof *merges));
    tcase_add_test(tc, missing_perm_rank_from_other_perm);
    tcase_add_test(tc, identity_between_graph_input_and_output);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, transformer_pairs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
