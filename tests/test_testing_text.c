/* tests/test_testing_text.c - graphs as text and the one-call test case of
 * the pass harness (testing.h): the reader, the pattern check of a result,
 * and ph_test_case catching every way a pass or an expectation can be
 * wrong. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})

static ph_model *text(const char *t)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(t, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    return m;
}

START_TEST(text_builds_inputs_initializers_nodes_and_outputs)
{
    ph_model *m = text("opset 13\n"
                       "x: float[batch, 3]   # a symbolic dim\n"
                       "u: int64[?]\n"
                       "w: const float[3, 4]\n"
                       "s: int64[2] = [2, 6]; h: float[] = [0.5]\n"
                       "z: float[4] = [0]\n"
                       "a = MatMul(x, w)\n"
                       "b = Reshape(a, s) {allowzero=0}\n"
                       "p, q = Split(b) {axis=1, tag=\"t\", f=0.25, fs=[0.5, 1.5]}\n"
                       "c = Custom@com.example(p, _, h)\n"
                       "return c, q");
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_opset(m, ""), 13);
    ck_assert_int_eq(ph_model_opset(m, "com.example"), 1);
    ck_assert_uint_eq(ph_graph_input_count(g), 2); /* x, u: initializers are no inputs here */
    ph_value *x = ph_graph_find_value(g, "x");
    ck_assert_int_eq(ph_value_rank(x), 2);
    ck_assert_int_eq(ph_value_dim(x, 1), 3);
    ck_assert_int_lt(ph_value_dim(x, 0), 0);
    ph_value *s = ph_graph_find_value(g, "s");
    ck_assert(ph_value_is_initializer(s));
    const ph_tensor *st = ph_value_const(s);
    ck_assert_int_eq(ph_tensor_dtype(st), PH_DT_INT64);
    ck_assert_int_eq(((const int64_t *)ph_tensor_data(st))[1], 6);
    const float *w = ph_tensor_data(ph_value_const(ph_graph_find_value(g, "w")));
    ck_assert(w[0] >= -1 && w[0] < 1 && w[0] != w[1]);
    ck_assert_int_eq(ph_tensor_rank(ph_value_const(ph_graph_find_value(g, "h"))), 0);
    ck_assert_uint_eq(ph_graph_node_count(g), 4);
    ph_node *split = ph_value_producer(ph_graph_output(g, 1));
    ck_assert_str_eq(ph_node_op_type(split), "Split");
    ck_assert_int_eq(ph_node_attr_int(split, "axis", 0), 1);
    ck_assert_str_eq(ph_node_attr_string(split, "tag", ""), "t");
    ck_assert_float_eq(ph_node_attr_float(split, "f", 0), 0.25f);
    const float *fs;
    ck_assert_int_eq(ph_node_attr_floats(split, "fs", &fs), 2);
    ck_assert_float_eq(fs[1], 1.5f);
    ph_node *c = ph_value_producer(ph_graph_output(g, 0));
    ck_assert_str_eq(ph_node_domain(c), "com.example");
    ck_assert_ptr_null(ph_node_input(c, 1));
    ph_model_free(m);
}
END_TEST

/* int64 values and int attributes are read exactly, beyond 2^53 too. */
START_TEST(text_int64_extremes_exact)
{
    ph_model *m = text("x: float[2]; e: int64[3] = [9223372036854775807, -9223372036854775808, 9007199254740993]\n"
                       "y = Relu(x) {big=9223372036854775807, l=[-9223372036854775808, 3]}\nreturn y");
    ph_graph *g = ph_model_graph(m);
    const int64_t *e = ph_tensor_data(ph_value_const(ph_graph_find_value(g, "e")));
    ck_assert(e[0] == INT64_MAX && e[1] == INT64_MIN && e[2] == 9007199254740993);
    ph_node *relu = ph_value_producer(ph_graph_output(g, 0));
    ck_assert(ph_node_attr_int(relu, "big", 0) == INT64_MAX);
    const int64_t *l;
    ck_assert_int_eq(ph_node_attr_ints(relu, "l", &l), 2);
    ck_assert(l[0] == INT64_MIN && l[1] == 3);
    ph_model_free(m);
}
END_TEST

/* If bodies from text (passcase.h): outer names read the main graph's
 * values, the body's initializers, nodes, attributes, domains and outputs
 * are its own. */
START_TEST(if_bodies_from_text)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text("x: float[2,3]; w: float[3] = [2]; cond: bool[]\ny = If(cond)\nreturn y",
                             "x: float[2,3]; w: float[3]; k: float[] = [0.5]\na = Mul(x, w); b = Add(a, k)\nreturn b",
                             "x: float[2,3]\nc = Cast(x) {to=1}; d = Custom@com.example(c)\nreturn d", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    PC_GRAPH_IS(then_g, "a = Mul(x, w)\nb = Add(a, k:scalar=0.5)");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), ph_graph_find_value(g, "x"));
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 1), ph_graph_find_value(g, "w"));
    ck_assert_uint_eq(ph_graph_initializer_count(then_g), 1);
    PC_GRAPH_IS(else_g, "c = Cast(x) {to=1}\nd = Custom@com.example(c)");
    ck_assert_int_eq(ph_model_opset(m, "com.example"), 1);
    ck_assert_uint_eq(ph_graph_output_count(else_g), 1);
    ph_error err = {0};
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_model_free(m);
}
END_TEST

START_TEST(text_errors_name_the_line)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"x: float[2]\ny = Relu(q)\nreturn y", "line 2"},
        {"x: float[2]\ny = Relu(x)\nreturn z", "'z' is not defined"},
        {"x: flot[2]\nreturn x", "unknown dtype"},
        {"x: float[2]\ny = Relu(x)", "no 'return'"},
        {"x: float[2]\ny = Relu(x) {axis=}\nreturn y", "a number"},
        {"s: int64[3] = [1, 2]\nreturn s", "do not fill"},
        {"x: float[2]\nx = Relu(x)\nreturn x", "bound twice"},
        {"x: float[2]\ny = Relu(x) junk\nreturn y", "end of the line"},
        {"s: int64[1] = [9223372036854775808]\nreturn s", "out of the int64 range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ph_error err = {0};
        ph_model *m = ph_test_model_text(bad[i].text, &err);
        ck_assert_msg(m == NULL, "accepted: %s", bad[i].text);
        ck_assert_int_eq(err.code, PH_EINVAL);
        ck_assert_msg(strstr(err.message, bad[i].says), "'%s' says '%s'", bad[i].text, err.message);
    }
}
END_TEST

START_TEST(graph_is_matches_the_whole_graph)
{
    ph_model *m = text("x: float[2,3]; w: const float[2,3]\n"
                       "a = Add(x, w)\nr = Relu(a)\nn = Neg(a)\nreturn r, n");
    ph_graph *g = ph_model_graph(m);
    ph_error err = {0};
    /* both outputs, commutative Add, leaves named like the graph's values;
     * a value read twice is the root of its own pattern, its name ties the
     * patterns together */
    ck_assert_msg(ph_test_graph_is(g, "a = Add(w, x)\n--\nr = Relu(a)\n--\nn = Neg(a)", &err) == 0, "%s",
                  err.message);
    /* a name bound by an earlier pattern must be the same value */
    ph_model *m2 = text("x: float[2,3]; w: const float[2,3]\n"
                        "a = Add(x, w)\nb = Add(x, w)\nr = Relu(a)\nn = Neg(b)\nreturn r, n");
    ck_assert_int_eq(ph_test_graph_is(ph_model_graph(m2), "a = Add(w, x)\n--\nr = Relu(a)\n--\nn = Neg(a)",
                                      &err), PH_EVERIFY);
    ck_assert_msg(ph_test_graph_is(ph_model_graph(m2), "a = Add(w, x)\nr = Relu(a)\n--\nb = Add(w, x)\n"
                                   "n = Neg(b)", &err) == 0, "%s", err.message);
    ph_model_free(m2);
    /* a leaf named like a graph input must be that input */
    ck_assert_int_eq(ph_test_graph_is(g, "a = Add(x, x)\n--\nr = Relu(a)\n--\nn = Neg(a)", &err),
                     PH_EVERIFY);
    /* a pattern that covers part of the graph is not the graph */
    ck_assert_int_eq(ph_test_graph_is(g, "r = Relu(a)", &err), PH_EVERIFY);
    ck_assert_ptr_nonnull(strstr(err.message, "Add, Relu, Neg"));
    /* an op that is not there */
    ck_assert_int_eq(ph_test_graph_is(g, "r = Sigmoid(a)\n--\nn = Neg(a)", &err), PH_EVERIFY);
    /* attributes are checked as in any pattern */
    ph_model *t = text("x: float[2,3]; y = Transpose(x) {perm=[1,0]}; return y");
    ck_assert_int_eq(ph_test_graph_is(ph_model_graph(t), "y = Transpose(x) {perm=[1,0]}", &err), 0);
    ck_assert_int_eq(ph_test_graph_is(ph_model_graph(t), "y = Transpose(x) {perm=[0,1]}", &err), PH_EVERIFY);
    /* a pattern that does not parse */
    ck_assert_int_eq(ph_test_graph_is(g, "r = Relu(", &err), PH_EINVAL);
    ph_model_free(t);
    ph_model_free(m);
}
END_TEST

PASS_FIXTURE("eliminate_identity")

START_TEST(case_passes_and_fails_as_it_should)
{
    PC_CASE("x: float[2,3]\ni = Identity(x)\ny = Relu(i)\nreturn y", 1, "y = Relu(x)");
    PC_UNTOUCHED("x: float[2,3]\ny = Identity(x)\nreturn y");
    ph_error err = {0};
    const char *g = "x: float[2,3]\ni = Identity(x)\ny = Relu(i)\nreturn y";
    /* another count of rewrites */
    ck_assert_int_eq(ph_test_case(pass, g, NULL, 2, "y = Relu(x)", &err), PH_EVERIFY);
    ck_assert_ptr_nonnull(strstr(err.message, "1 rewrites, expected 2"));
    /* another result */
    ck_assert_int_eq(ph_test_case(pass, g, NULL, 1, "i = Identity(x)\ny = Relu(i)", &err), PH_EVERIFY);
    /* expected untouched, but it changed */
    ck_assert_int_eq(ph_test_case(pass, g, NULL, -1, NULL, &err), PH_EVERIFY);
    ck_assert_ptr_nonnull(strstr(err.message, "untouched"));
    /* a graph that does not read */
    ck_assert_int_eq(ph_test_case(pass, "x: float[2]\nreturn q", NULL, 0, NULL, &err), PH_EINVAL);
}
END_TEST

/* A pass that changes the results is caught by the numeric check, exact
 * (bit for bit) or not (the error budget of --verify). */
START_TEST(case_catches_a_wrong_pass)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/test-plugins/tp_wrong_math.so", PH_BUILD_DIR);
    ph_test_pass *tp = NULL;
    ph_error err = {0};
    ck_assert_int_eq(ph_test_load_pass(path, "tp_wrong_math", &tp, &err), 0);
    ph_pass_desc d = *ph_test_pass_desc(tp);
    const char *g = "x: float[4,5]\ny = Relu(x)\nreturn y";
    ck_assert_int_eq(ph_test_case(&d, g, NULL, 1, "y = Sigmoid(x)", &err), PH_EVERIFY);
    ck_assert_ptr_nonnull(strstr(err.message, "bit-exact"));
    d.exactness = PH_FP;
    ck_assert_int_eq(ph_test_case(&d, g, NULL, 1, "y = Sigmoid(x)", &err), PH_EVERIFY);
    ck_assert_msg(strstr(err.message, "budget"), "%s", err.message);
    /* without the numeric check, only the structure is judged */
    ph_test_options o = {.unchecked = 1};
    ck_assert_int_eq(ph_test_case(&d, g, &o, 1, "y = Sigmoid(x)", &err), 0);
    ph_test_pass_free(tp);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("testing_text");
    TCase *tc = tcase_create("text");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, text_builds_inputs_initializers_nodes_and_outputs);
    tcase_add_test(tc, text_int64_extremes_exact);
    tcase_add_test(tc, if_bodies_from_text);
    tcase_add_test(tc, text_errors_name_the_line);
    tcase_add_test(tc, graph_is_matches_the_whole_graph);
    tcase_add_test(tc, case_catches_a_wrong_pass);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("case");
    tcase_set_timeout(tp, 60);
    tcase_add_checked_fixture(tp, setup, teardown);
    tcase_add_test(tp, case_passes_and_fails_as_it_should);
    suite_add_tcase(s, tp);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
