/* tests/test_pass_fuse_transpose_into_matmul.c - fuse_transpose_into_matmul:
 * a Transpose swapping the last two dims of a MatMul or Gemm operand becomes
 * Gemm's transA/transB, or a transposed constant. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"

PASS_FIXTURE("fuse_transpose_into_matmul")

static const struct {
    const char *graph, *expect;
} folds[] = {
    /* MatMul, A transposed: a Gemm */
    {"a: float[5,3]; b: float[5,4]\nt = Transpose(a) {perm=[1,0]}; y = MatMul(t, b)\nreturn y",
     "y = Gemm(a, b) {transA=1, transB(0)=0, alpha(1.0)=1.0}"},
    /* B transposed without a perm attribute (reversed dims, rank known 2) */
    {"a: float[3,6]; b: float[4,6]\nt = Transpose(b); y = MatMul(a, t)\nreturn y",
     "y = Gemm(a, b) {transA(0)=0, transB=1}"},
    /* both operands: one rewrite */
    {"a: float[6,3]; b: float[4,6]\nta = Transpose(a) {perm=[1,0]}; tb = Transpose(b) {perm=[1,0]}\n"
     "y = MatMul(ta, tb)\nreturn y",
     "y = Gemm(a, b) {transA=1, transB=1}"},
    /* Gemm already transposing B, with alpha, beta and C: the flag toggles
     * (transB=1 of T(b) reads b as it is) */
    {"a: float[3,5]; b: float[5,4]; c: const float[4]\n"
     "t = Transpose(b) {perm=[1,0]}; y = Gemm(a, t, c) {transB=1, alpha=0.5, beta=2.0}\nreturn y",
     "y = Gemm(a, b, c) {transB=0, transA(0)=0, alpha=0.5, beta=2.0}"},
    /* a 2-D constant on A: stays a MatMul with a transposed initializer */
    {"w: const float[4,3]; x: float[4,2]\nt = Transpose(w) {perm=[1,0]}; y = MatMul(t, x)\nreturn y",
     "y = MatMul(_:const:shape=[3,4], x)"},
    /* the Transpose also feeds a graph output (middle of the pattern): the
     * MatMul stops reading it, the Transpose stays for the output */
    {"a: float[5,3]; b: float[5,2]\nt = Transpose(a) {perm=[1,0]}; y = MatMul(t, b)\nreturn t, y",
     "t = Transpose(a)\n--\ny = Gemm(a, b) {transA=1}"},
    /* ... or for another consumer */
    {"a: float[5,3]; b: float[5,2]\nt = Transpose(a) {perm=[1,0]}; n = Neg(t); y = MatMul(t, b)\nreturn n, y",
     "t = Transpose(a)\nn = Neg(t)\n--\ny = Gemm(a, b) {transA=1}"},
};

START_TEST(folds_into_the_product)
{
    PC_CASE(folds[_i].graph, 1, folds[_i].expect);
}
END_TEST

/* Gemm's operands are 2-D by definition: no perm and no known rank (no
 * shape inference) is fine. */
START_TEST(gemm_transpose_without_perm_or_shape)
{
    ph_test_options o = {.max_iterations = 4, .no_shapes = 1};
    PC_CASE_OPTS(&o, "a: float[4,3]; b: float[4,2]\nr = Relu(a); t = Transpose(r); y = Gemm(t, b)\nreturn y", 1,
                 "r = Relu(a)\ny = Gemm(r, b) {transA=1}");
}
END_TEST

/* N-D MatMul with a constant transposed weight: a new initializer holds the
 * transposed data and the old one goes away. */
START_TEST(nd_constant_weight_transposed_in_place)
{
    const char *graph = "x: float[2,3,4,5]; w: const float[2,3,6,5]\n"
                        "t = Transpose(w) {perm=[0,1,3,2]}; y = MatMul(x, t)\nreturn y";
    PC_CASE(graph, 1, "y = MatMul(x, _:const:shape=[2,3,5,6])");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 1);
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* a constant whose Transpose has another user: no second copy of the weight */
    {"w: const float[2,4,3]; x: float[2,5,3]\nt = Transpose(w) {perm=[0,2,1]}; y = MatMul(x, t)\nreturn t, y", 0},
    /* N-D MatMul with a non-constant transposed operand: Gemm cannot take it */
    {"a: float[2,5,3]; b: float[2,5,4]\nt = Transpose(a) {perm=[0,2,1]}; y = MatMul(t, b)\nreturn y", 0},
    /* perms that are not a swap of the last two */
    {"w: const float[3,2,4]; w2: const float[4,3,2]; x: float[2,5,3]\n"
     "t = Transpose(w) {perm=[1,0,2]}; y = MatMul(x, t); t2 = Transpose(w2); y2 = MatMul(x, t2)\nreturn y, y2", 0},
    /* unknown rank, no perm */
    {"a: float[*]; b: float[5,2]\nr = Relu(a); t = Transpose(r); y = MatMul(t, b)\nreturn y", 1},
    /* A is a 2-D swap, but B's rank is unknown: Gemm would be a guess */
    {"a: float[5,3]; b: float[*]\nr = Relu(b); t = Transpose(a) {perm=[1,0]}; y = MatMul(t, r)\nreturn y", 1},
    /* B is 3-D */
    {"a: float[5,3]; b: float[2,5,4]\nt = Transpose(a) {perm=[1,0]}; y = MatMul(t, b)\nreturn y", 0},
    /* opset 10: Gemm needs C there, so no MatMul becomes a Gemm */
    {"opset 10\na: float[5,3]; b: float[5,2]\nt = Transpose(a) {perm=[1,0]}; y = MatMul(t, b)\nreturn y", 0},
    /* the identity perm */
    {"a: float[3,5]; b: float[5,2]\nt = Transpose(a) {perm=[0,1]}; y = MatMul(t, b)\nreturn y", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

/* The transformer's head: MatMuls fed by Transposes of an initializer and of
 * activations.  Whatever folds, the outputs agree and nothing folds further
 * (kept as C: a real model file). */
START_TEST(transformer_folds_and_verifies)
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
    ck_assert_msg(rc > 0, "%d: %s", rc, err.message);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 0);
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        after += !ph_node_is_removed(n) && ph_node_op(n) == PH_OP_Transpose;
    ck_assert_uint_lt(after, before);
    ph_model_free(m);
}
END_TEST

/* Cancelling pairs must go first: x -> T -> T -> MatMul would otherwise keep
 * one Transpose and turn the MatMul into a transposing Gemm. */
START_TEST(runs_after_merge_consecutive_transpose)
{
    int found = 0;
    for (const char *const *a = pass->run_after; a && *a; a++)
        found |= strcmp(*a, "merge_consecutive_transpose") == 0;
    ck_assert_msg(found, "run_after does not name merge_consecutive_transpose");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_fuse_transpose_into_matmul");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, folds_into_the_product, 0, (int)(sizeof folds / sizeof *folds));
    tcase_add_test(tc, gemm_transpose_without_perm_or_shape);
    tcase_add_test(tc, nd_constant_weight_transposed_in_place);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, transformer_folds_and_verifies);
    tcase_add_test(tc, runs_after_merge_consecutive_transpose);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
