/* tests/test_pass_fold_transpose_bn_transpose.c - fold_transpose_bn_transpose:
 * Transpose -> BatchNormalization -> inverse Transpose becomes Mul + Add. */
#include <stdio.h>

#include "passcase.h"

PASS_FIXTURE("fold_transpose_bn_transpose")

/* BatchNormalization parameters over 4, 5 and 6 channels (variance > 0) */
#define P(c, var) "s: const float[" c "]; bb: const float[" c "]; mean: const float[" c "]; var: float[" c "] = " var "\n"
#define P4 P("4", "[0.6, 1.3, 0.9, 1.5]")
#define P5 P("5", "[0.6, 1.3, 0.9, 1.5, 1.1]")
#define P6 P("6", "[0.6, 1.3, 0.9, 1.5, 1.1, 0.7]")
/* Transpose(r, p) -> BN -> Transpose(q) -> y */
#define TBT(p, q) "t = Transpose(r)" p "\nn = BatchNormalization(t, s, bb, mean, var) {epsilon=0.001}\ny = Transpose(n)" q "\n"

static const struct {
    const char *graph;
} folds[] = {
    /* NHWC: to NCHW and back */
    {"x: float[2,3,3,5]; r = Relu(x)\n" P5 TBT(" {perm=[0,3,1,2]}", " {perm=[0,2,3,1]}") "return y"},
    /* [N, L, C] with a swap, symbolic batch */
    {"x: float[batch,4,6]; r = Relu(x)\n" P6 TBT(" {perm=[0,2,1]}", " {perm=[0,2,1]}") "return y"},
    /* rank 2, both perms absent (reversed dims): the channel is x's axis 0 */
    {"x: float[4,3]; r = Relu(x)\n" P4 TBT("", "") "return y"},
    /* a rotation whose channel lands on axis 2 of x */
    {"x: float[3,4,5]; r = Relu(x)\n" P5 TBT(" {perm=[1,2,0]}", " {perm=[2,0,1]}") "return y"},
};

/* Mul and Add by constants; the BN's 4 parameters gone for those 2 */
START_TEST(folds_to_mul_add)
{
    PC_CASE(folds[_i].graph, 1, "r = Relu(x)\nm = Mul(r, _:const)\ny = Add(m, _:const)");
    PC_INITIALIZERS_AFTER(folds[_i].graph, 1, 2);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[2,3,4]; r = Relu(x)\n" P4 TBT(" {perm=[0,2,1]}", " {perm=[0,2,1]}") "return y";
    PC_CASE(graph, 1, "r = Relu(x)\nm = Mul(r, _:const)\ny = Add(m, _:const)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

#define X "x: float[2,3,3,5]; r = Relu(x)\n"
#define NCHW TBT(" {perm=[0,3,1,2]}", " {perm=[0,2,3,1]}")
static const struct {
    const char *graph;
    int mode;
} alone[] = {
    /* not inverses: the same rotation twice */
    {X P5 TBT(" {perm=[0,3,1,2]}", " {perm=[0,3,1,2]}") "return y", PC_CHECKED},
    /* the first Transpose has another consumer */
    {X P5 NCHW "z = Neg(t)\nreturn y, z", PC_CHECKED},
    /* the BN output is a graph output */
    {X P5 NCHW "return y, n", PC_CHECKED},
    /* a BN parameter is not constant */
    {X "s: const float[5]; bb: const float[5]; mean: const float[5]; var: float[5]\n" NCHW "return y", PC_CHECKED},
    /* training mode */
    {X P5 "t = Transpose(r) {perm=[0,3,1,2]}\n"
     "n = BatchNormalization(t, s, bb, mean, var) {epsilon=0.001, training_mode=1}\ny = Transpose(n) {perm=[0,2,3,1]}\n"
     "return y", PC_UNCHECKED},
    /* opset 6 */
    {"opset 6\n" X P5 NCHW "return y", PC_UNCHECKED},
    /* perms absent and the rank unknown */
    {"x: float[*]; r = Relu(x)\n" P5 TBT("", "") "return y", PC_UNCHECKED},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, alone[_i].graph);
}
END_TEST

/* The text has no subgraphs of its own: the If bodies as text too. */
START_TEST(inside_an_if_branch)
{
    const char *body = "x: float[2,3,4]\n" P4 "t = Transpose(x) {perm=[0,2,1]}\n"
                       "n = BatchNormalization(t, s, bb, mean, var)\ny = Transpose(n) {perm=[0,2,1]}\nreturn y";
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text("x: float[2,3,4]; cond: bool[]\ny = If(cond)\nreturn y", body, body, &then_g, &else_g);
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "m = Mul(x, _:const)\ny = Add(m, _:const)");
    PC_GRAPH_IS(else_g, "m = Mul(x, _:const)\ny = Add(m, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fold_transpose_bn_transpose");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, folds_to_mul_add, 0, (int)(sizeof folds / sizeof *folds));
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
