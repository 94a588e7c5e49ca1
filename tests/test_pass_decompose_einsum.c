/* tests/test_pass_decompose_einsum.c - decompose_einsum: Einsum forms of a
 * batched matmul, an elementwise product or a permutation become
 * Transpose/Reshape/MatMul/Mul; trace, diagonal, sum-only and broadcasting
 * forms stay. */
#include <stdio.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("decompose_einsum")

#define EINSUM(eq) "y = Einsum(a, b) {equation=\"" eq "\"}\nreturn y"
#define EINSUM1(eq) "y = Einsum(a) {equation=\"" eq "\"}\nreturn y"

static const struct {
    const char *graph, *expect, *ops;
} good[] = {
    {"a: float[2,3,4]; b: float[2,4,5]\n" EINSUM("bij,bjk->bik"), "y = MatMul(a, b)", "MatMul"},
    {"a: float[2,3,4,5]; b: float[2,3,6,5]\n" EINSUM("bhid,bhjd->bhij"),
     "t = Transpose(b) {perm=[0,1,3,2]}; y = MatMul(a, t)", "Transpose,MatMul"},
    {"a: float[3,4]; b: float[4,5]\n" EINSUM("ij,jk->ik"), "y = MatMul(a, b)", "MatMul"},
    {"a: float[3,4]; b: float[4,5]\n" EINSUM("ij,jk"), "y = MatMul(a, b)", "MatMul"},
    {"a: float[3,4]; b: float[4,5]\n" EINSUM(" i j , j k -> i k "), "y = MatMul(a, b)", "MatMul"},
    {"a: float[3,4]; b: float[3,4]\n" EINSUM("bi,bi->bi"), "y = Mul(a, b)", "Mul"},
    {"a: float[3,4]; b: float[4,3]\n" EINSUM("bi,ib->ib"), "t = Transpose(a) {perm=[1,0]}; y = Mul(t, b)",
     "Transpose,Mul"},
    {"a: float[3,4]; b: float[4,5]\n" EINSUM("ik,kj->ji"), "m = MatMul(a, b); y = Transpose(m) {perm=[1,0]}",
     "MatMul,Transpose"},
    {"a: float[2,3,4]; b: float[2,4]\n" EINSUM("bij,bj->bi"),
     "r = Reshape(b, _:const); m = MatMul(a, r); y = Reshape(m, _:const)", "Reshape,MatMul,Reshape"},
    {"a: float[3]; b: float[5]\n" EINSUM("i,j->ij"),
     "ra = Reshape(a, _:const); rb = Reshape(b, _:const); y = MatMul(ra, rb)", "Reshape,Reshape,MatMul"},
    {"a: float[3,4]; b: float[3,4]\n" EINSUM("bi,bi->b"),
     "ra = Reshape(a, _:const); rb = Reshape(b, _:const); m = MatMul(ra, rb); y = Reshape(m, _:const)",
     "Reshape,Reshape,MatMul,Reshape"},
    {"a: float[2,3,4,2]; b: float[4,2,3,2]\n" EINSUM("abcd,cdef->abef"),
     "ra = Reshape(a, _:const); rb = Reshape(b, _:const); m = MatMul(ra, rb); y = Reshape(m, _:const)",
     "Reshape,Reshape,MatMul,Reshape"},
    {"a: float[2,5,3,4]; b: float[2,6,3,4]\n" EINSUM("bqhd,bkhd->bhqk"),
     "ta = Transpose(a) {perm=[0,2,1,3]}; tb = Transpose(b) {perm=[0,2,3,1]}; y = MatMul(ta, tb)",
     "Transpose,Transpose,MatMul"},
    {"a: float[3,4]\n" EINSUM1("ij->ji"), "y = Transpose(a) {perm=[1,0]}", "Transpose"},
    {"a: float[2,3,4]\n" EINSUM1("abc->cab"), "y = Transpose(a) {perm=[2,0,1]}", "Transpose"},
};

/* the nodes in the order `ops`, the output keeping its name */
START_TEST(forms_decompose)
{
    PC_CASE(good[_i].graph, 1, good[_i].expect);
    char ops[256], name[64];
    ph_error err = {0};
    ph_model *m = ph_test_model_text(good[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), good[_i].ops);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ph_model_free(m);
}
END_TEST

/* Symbolic batch dims: MatMul batches over them; Reshapes copy them with 0. */
static const struct {
    const char *graph, *expect;
} symbolic[] = {
    {"a: float[batch,3,4]; b: float[batch,4,5]\ny = Einsum(a, b) {equation=\"bij,bjk->bik\"}; n = Neg(y)\nreturn n",
     "y = MatMul(a, b); n = Neg(y)"},
    {"a: float[batch,3,4]; b: float[batch,4]\ny = Einsum(a, b) {equation=\"bij,bj->bi\"}; n = Neg(y)\nreturn n",
     "r = Reshape(b, _:const); m = MatMul(a, r); y = Reshape(m, _:const); n = Neg(y)"},
};

START_TEST(symbolic_batch)
{
    ph_test_options o = {.max_iterations = 4, .seed = 3, .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};
    PC_CASE_OPTS(&o, symbolic[_i].graph, 1, symbolic[_i].expect);
}
END_TEST

static const struct {
    const char *graph;
    int unchecked;
} bad[] = {
    {"a: float[3,3]\n" EINSUM1("ii->"), 0},                                  /* trace */
    {"a: float[3,3]\n" EINSUM1("ii->i"), 0},                                 /* diagonal */
    {"a: float[3,4]\n" EINSUM1("ij->i"), 0},                                 /* sum */
    {"a: float[2,3,3]; b: float[2,3,4]\n" EINSUM("bii,bij->bj"), 0},         /* diagonal in one operand */
    {"a: float[3,4]; b: float[4,5]\n" EINSUM("ij,jk->i"), 0},                /* k summed over one operand only */
    {"a: float[2,3,4]; b: float[2,4,5]\n" EINSUM("...ij,...jk->...ik"), 0},  /* ellipsis */
    {"a: float[?,3,4]; b: float[2,4,5]\n" EINSUM("bij,bjk->bik"), 1},        /* b not provably equal */
    {"a: float[3,?]; b: float[?,5]\n" EINSUM("ij,jk->ik"), 0},               /* j likewise */
    {"a: float[3,4]; b: float[4,5]\n" EINSUM("ij,jk->ikk"), 1},              /* repeated output letter */
    {"a: float[3,4]; b: float[4,5]\n" EINSUM("ij,jk->ix"), 1},               /* output letter from nowhere */
    {"a: float[2,3,?]; b: float[2,?]\n" EINSUM("bij,bj->bi"), 0},            /* a Reshape needs an unknown dim */
    {"a: float[*]; b: float[2,4,5]\n" EINSUM("bij,bjk->bik"), 1},            /* unknown rank */
    /* three operands */
    {"a: float[3,4]; b: float[4,5]; c: float[5,6]\ny = Einsum(a, b, c) {equation=\"ij,jk,kl->il\"}\nreturn y", 0},
    /* integer operands */
    {"a: int32[3,4]; b: int32[4,5]\n" EINSUM("ij,jk->ik"), 1}, /* the evaluator has no int32 Einsum */
};

START_TEST(left_alone)
{
    if (bad[_i].unchecked)
        PC_UNTOUCHED_UNCHECKED(bad[_i].graph);
    else
        PC_UNTOUCHED(bad[_i].graph);
}
END_TEST

static ph_value *einsum(ph_graph *g, ph_value *a, ph_value *b)
{
    ph_value *in[2] = {a, b};
    ph_node *n = tk_node(g, "Einsum", 2, in);
    ck_assert_int_eq(ph_node_set_attr_string(n, "equation", "bij,bjk->bik"), 0);
    return ph_node_output(n, 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("a: float[2,3,4]; b: float[2,4,5]; cond: bool[]\ny = If(cond)\nreturn y", &then_g,
                              &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *a = ph_graph_input(g, 0), *b = ph_graph_input(g, 1);
    tk_output(then_g, einsum(then_g, a, b));
    tk_output(else_g, tk_op1(else_g, "Neg", einsum(else_g, a, b)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = MatMul(a, b)");
    PC_GRAPH_IS(else_g, "e = MatMul(a, b); y = Neg(e)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("decompose_einsum");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, forms_decompose, 0, (int)(sizeof good / sizeof *good));
    tcase_add_loop_test(tc, symbolic_batch, 0, (int)(sizeof symbolic / sizeof *symbolic));
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
