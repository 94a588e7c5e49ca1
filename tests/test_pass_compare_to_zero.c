/* tests/test_pass_compare_to_zero.c - compare_to_zero: Less, Greater,
 * LessOrEqual and GreaterOrEqual of two float tensors become a Sub and a
 * comparison with 0. */
#include <stdio.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("compare_to_zero")

/* Each comparison of a with: another input, a broadcast input, a constant,
 * a itself (a - a is 0, and equal compares equal).  The comparison keeps
 * the output's name, dtype and shape (the numeric check compares them). */
static void splits(const char *op)
{
    static const char *const b[] = {"b: float[2,3]", "b: float[3]", "b: const float[1,3]", NULL};
    char graph[256], want[256];
    for (int v = 0; v < 4; v++) {
        snprintf(graph, sizeof graph, "a: float[2,3]; %s\ny = %s(a, %s)\nreturn y", b[v] ? b[v] : "",
                 op, b[v] ? "b" : "a");
        snprintf(want, sizeof want, "d = Sub(a, %s)\ny = %s(d, z:const:scalar:rank=0:float32)", b[v] ? "b" : "a",
                 op);
        PC_CASE(graph, 1, want);
    }
}

START_TEST(less_splits) { splits("Less"); }
END_TEST
START_TEST(greater_splits) { splits("Greater"); }
END_TEST
START_TEST(less_or_equal_splits) { splits("LessOrEqual"); }
END_TEST
START_TEST(greater_or_equal_splits) { splits("GreaterOrEqual"); }
END_TEST

/* integers: a - b may wrap */
START_TEST(integers_left_alone)
{
    PC_UNTOUCHED("a: int32[4]; b: int32[4]\ny = GreaterOrEqual(a, b)\nreturn y");
}
END_TEST

START_TEST(comparison_with_zero_left_alone)
{
    PC_UNTOUCHED("a: float[4]; zero: float[4] = [0]\ny = GreaterOrEqual(a, zero)\nreturn y");
}
END_TEST

START_TEST(dtype_unknown_left_alone)
{
    /* the text gives every input a dtype: these two are added with the IR */
    ph_error err = {0};
    ph_model *m = ph_test_model_text("a: float[4]; y = Relu(a); return y", &err);
    ph_graph *g = ph_model_graph(m);
    ph_value *in[2] = {ph_graph_add_input(g, "p", PH_DT_UNDEFINED, -1, NULL),
                       ph_graph_add_input(g, "q", PH_DT_UNDEFINED, -1, NULL)};
    tk_output(g, ph_node_output(tk_node(g, "GreaterOrEqual", 2, in), 0));
    pc_run_structure(m, 0);
    PC_GRAPH_IS(g, "y = Relu(a)\n--\nz = GreaterOrEqual(p, q)");
    ph_model_free(m);
}
END_TEST

/* opset 6: Sub broadcasts only with an attribute */
START_TEST(opset_6_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("opset 6\na: float[4]; b: float[4]\ny = Less(a, b)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If is built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("a: float[4]; b: float[4]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *a = ph_graph_find_value(g, "a"), *b = ph_graph_find_value(g, "b");
    tk_output(then_g, tk_op2(then_g, "Less", a, b));
    tk_output(else_g, tk_op1(else_g, "Not", tk_op2(else_g, "GreaterOrEqual", a, b)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "d = Sub(a, b)\ny = Less(d, _:const)");
    PC_GRAPH_IS(else_g, "d = Sub(a, b)\nc = GreaterOrEqual(d, _:const)\ny = Not(c)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("compare_to_zero");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, less_splits);
    tcase_add_test(tc, greater_splits);
    tcase_add_test(tc, less_or_equal_splits);
    tcase_add_test(tc, greater_or_equal_splits);
    tcase_add_test(tc, integers_left_alone);
    tcase_add_test(tc, comparison_with_zero_left_alone);
    tcase_add_test(tc, dtype_unknown_left_alone);
    tcase_add_test(tc, opset_6_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
