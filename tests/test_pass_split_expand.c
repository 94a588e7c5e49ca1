/* tests/test_pass_split_expand.c - split_expand: an Expand that broadcasts
 * more dims than max_broadcast_dims becomes a chain of Expands. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("split_expand")

/* dims 0, 1 and 3 broadcast */
#define THREE "x: float[1,3,1]; shape: int64[4] = [2, 4, 3, 5]\nr = Relu(x); y = Expand(r, shape)\nreturn y"

/* one dim at a time: three Expands, each changing one dim */
START_TEST(one_dim_at_a_time)
{
    PC_CASE(THREE, 1, "r = Relu(x)\na = Expand(r, _:const)\nb = Expand(a, _:const)\ny = Expand(b, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(THREE, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    for (const ph_node *n = ph_graph_first_node(ph_model_graph(m)); n; n = ph_node_next(n)) {
        if (ph_node_is_removed(n) || ph_node_op(n) != PH_OP_Expand)
            continue;
        const ph_value *in = ph_node_input(n, 0), *out = ph_node_output(n, 0);
        int changed = 0;
        for (int i = 0; i < ph_value_rank(out); i++) {
            int j = i - (ph_value_rank(out) - ph_value_rank(in));
            changed += (j >= 0 ? ph_value_dim(in, j) : 1) != ph_value_dim(out, i);
        }
        ck_assert_int_eq(changed, 1);
    }
    ph_model_free(m);
}
END_TEST

/* two at a time: three dims in two steps */
START_TEST(two_dims_at_a_time)
{
    ph_test_options o = {.max_iterations = 4, .params = (const char *const[]){"max_broadcast_dims=2", NULL}};
    PC_CASE_OPTS(&o, THREE, 1, "r = Relu(x)\na = Expand(r, _:const)\ny = Expand(a, shape)");
}
END_TEST

/* one dim; an unknown dim */
START_TEST(left_alone)
{
    PC_UNTOUCHED("x: float[3,1]; shape: int64[2] = [3, 4]\nr = Relu(x); y = Expand(r, shape)\nreturn y");
    PC_UNTOUCHED("x: float[?,1]; shape: int64[3] = [2, 1, 4]\ny = Expand(x, shape)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_if_branches)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,1]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    for (int i = 0; i < 2; i++)
        tk_output(body[i], tk_op2(body[i], "Expand", x, tk_ints(body[i], "shape", 2, TK_I64(3, 4))));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "a = Expand(x, _:const)\ny = Expand(a, _:const)");
    PC_GRAPH_IS(body[1], "a = Expand(x, _:const)\ny = Expand(a, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_expand");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, one_dim_at_a_time);
    tcase_add_test(tc, two_dims_at_a_time);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
