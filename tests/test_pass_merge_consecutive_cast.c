/* tests/test_pass_merge_consecutive_cast.c - merge_consecutive_cast. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("merge_consecutive_cast");
    pass->shapes = 1; /* the chain rule reads the source dtype */
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static ph_value *cast(ph_graph *g, ph_value *x, int to)
{
    ph_node *n = tk_node(g, "Cast", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(n, "to", to), 0);
    return ph_node_output(n, 0);
}

/* A float input [2,8] in [-1000, 1000): varied values for integer casts. */
static ph_value *wide(ph_graph *g)
{
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 8));
    float k = 1000.0f;
    ph_value *c = ph_graph_add_initializer(g, "k", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &k));
    return tk_op2(g, "Mul", x, c);
}

/* The `to` of every Cast of g in order, as "to,to,...". */
static const char *tos(ph_graph *g, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (ph_node_op(n) == PH_OP_Cast)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                    ph_dtype_name((int)ph_node_attr_int(n, "to", 0)));
    return buf;
}

/* int32 -> int64 -> float = int32 -> float (int64 holds every int32). */
START_TEST(int32_int64_float)
{
    char buf[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *i = cast(g, wide(g), PH_DT_INT32);
    tk_output(g, cast(g, cast(g, i, PH_DT_INT64), PH_DT_FLOAT));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tos(g, buf, sizeof buf), "int32,float");
    ck_assert_ptr_eq(ph_node_input(ph_value_producer(ph_graph_output(g, 0)), 0), i);
    tk_assert_untouched(pass, m); /* idempotent: float -> int32 -> float stays */
    ph_model_free(m);
}
END_TEST

START_TEST(float_double_float16)
{
    char buf[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 5));
    tk_output(g, cast(g, cast(g, x, PH_DT_DOUBLE), PH_DT_FLOAT16));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(tos(g, buf, sizeof buf), "float16");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* int16 -> int32 -> int8: integers wrap alike either way (values beyond
 * int8 included). */
START_TEST(int16_int32_int8_wraps_alike)
{
    char buf[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *i = cast(g, wide(g), PH_DT_INT16);
    tk_output(g, cast(g, cast(g, i, PH_DT_INT32), PH_DT_INT8));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_str_eq(tos(g, buf, sizeof buf), "int16,int8");
    ph_model_free(m);
}
END_TEST

/* bool -> int8 -> float = bool -> float; bool -> float -> int64 too (0 and
 * 1 fit every integer). */
START_TEST(from_bool)
{
    char buf[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *b = ph_graph_add_input(g, "b", PH_DT_BOOL, 2, TK_I64(4, 4));
    tk_output(g, cast(g, cast(g, b, PH_DT_INT8), PH_DT_FLOAT));
    tk_output(g, cast(g, cast(g, b, PH_DT_FLOAT), PH_DT_INT64));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 2);
    ck_assert_str_eq(tos(g, buf, sizeof buf), "float,int64");
    ph_model_free(m);
}
END_TEST

/* float -> int32 -> int32: the second Cast changes nothing, whatever the
 * first lost. */
START_TEST(second_to_the_same_type)
{
    char buf[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, cast(g, cast(g, wide(g), PH_DT_INT32), PH_DT_INT32));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_str_eq(tos(g, buf, sizeof buf), "int32");
    ph_model_free(m);
}
END_TEST

/* int32 -> int64 -> int32 is the int32 value itself: no Cast left. */
START_TEST(back_to_the_source_type)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *i = cast(g, wide(g), PH_DT_INT32);
    tk_output(g, tk_op1(g, "Neg", cast(g, cast(g, i, PH_DT_INT64), PH_DT_INT32)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Mul,Cast,Neg");
    ph_model_free(m);
}
END_TEST

/* Seed method 1: two Casts of one value to int32 are one; the Cast to
 * int64 stays. */
START_TEST(siblings)
{
    char buf[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = wide(g);
    ph_value *a = cast(g, x, PH_DT_INT32), *b = cast(g, x, PH_DT_INT64), *c = cast(g, x, PH_DT_INT32);
    tk_output(g, tk_op1(g, "Neg", a));
    tk_output(g, tk_op1(g, "Neg", b));
    tk_output(g, tk_op1(g, "Abs", c));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 1);
    ck_assert_str_eq(tos(g, buf, sizeof buf), "int32,int64");
    ck_assert_uint_eq(ph_value_use_count(a), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The removed sibling's output was a graph output: the kept one takes its
 * name.  Both graph outputs: both stay. */
START_TEST(siblings_and_graph_outputs)
{
    char buf[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *a = cast(g, x, PH_DT_INT32), *b = cast(g, x, PH_DT_INT32);
    tk_output(g, tk_op1(g, "Neg", a));
    tk_output(g, b);
    char *name = strdup(ph_value_name(b));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 8, 0, NULL), 1);
    ck_assert_str_eq(tos(g, buf, sizeof buf), "int32");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), name);
    free(name);
    ph_model_free(m);

    m = tk_model();
    g = ph_model_graph(m);
    x = tk_input(g, "x", 1, TK_I64(4));
    tk_output(g, cast(g, x, PH_DT_INT32));
    tk_output(g, cast(g, x, PH_DT_INT32));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
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

/* Lossy middle types: float16 rounds, int32 truncates, int8 wraps uint8. */
START_TEST(lossy_middle_kept)
{
    static const int chains[][3] = {
        {PH_DT_FLOAT, PH_DT_FLOAT16, PH_DT_FLOAT},  {PH_DT_FLOAT, PH_DT_INT32, PH_DT_FLOAT},
        {PH_DT_FLOAT, PH_DT_BFLOAT16, PH_DT_DOUBLE}, {PH_DT_UINT8, PH_DT_INT8, PH_DT_INT32},
        {PH_DT_INT32, PH_DT_FLOAT, PH_DT_INT64},    {PH_DT_INT64, PH_DT_DOUBLE, PH_DT_INT64},
        {PH_DT_FLOAT16, PH_DT_BFLOAT16, PH_DT_FLOAT}, {PH_DT_INT16, PH_DT_FLOAT16, PH_DT_INT32},
        {PH_DT_INT32, PH_DT_BOOL, PH_DT_INT32},     {PH_DT_UINT16, PH_DT_INT16, PH_DT_INT64},
    };
    for (size_t k = 0; k < sizeof chains / sizeof *chains; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = ph_graph_add_input(g, "x", chains[k][0], 1, TK_I64(4));
        tk_output(g, cast(g, cast(g, x, chains[k][1]), chains[k][2]));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* int16 -> float -> int8: float holds int16, but a float out of int8's
 * range converts as the runtime pleases, while int16 -> int8 wraps. */
START_TEST(float_middle_to_narrower_int_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *i = cast(g, wide(g), PH_DT_INT16);
    tk_output(g, cast(g, cast(g, i, PH_DT_FLOAT), PH_DT_INT8));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(to_string_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT32, 1, TK_I64(4));
    tk_output(g, cast(g, cast(g, x, PH_DT_DOUBLE), PH_DT_STRING));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(middle_with_other_consumer_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT32, 1, TK_I64(4));
    ph_value *t = cast(g, x, PH_DT_INT64);
    tk_output(g, cast(g, t, PH_DT_FLOAT));
    tk_output(g, tk_op1(g, "Neg", t));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(middle_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT32, 1, TK_I64(4));
    ph_value *t = cast(g, x, PH_DT_INT64);
    tk_output(g, cast(g, t, PH_DT_FLOAT));
    tk_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The source dtype is unknown (an operator inference does not know). */
START_TEST(unknown_source_dtype_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *x = tk_op1(g, "Custom", tk_input(g, "x", 1, TK_I64(4)));
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(x), "com.example"), 0);
    tk_output(g, cast(g, cast(g, x, PH_DT_DOUBLE), PH_DT_FLOAT));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Cast-1 (opset 5) names the type by a string. */
START_TEST(opset5_string_to_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 5), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT32, 1, TK_I64(4));
    ph_node *a = tk_node(g, "Cast", 1, &x);
    ph_node_set_attr_string(a, "to", "INT64");
    ph_value *ao = ph_node_output(a, 0);
    ph_node *b = tk_node(g, "Cast", 1, &ao);
    ph_node_set_attr_string(b, "to", "FLOAT");
    ph_node *c = tk_node(g, "Cast", 1, &x);
    ph_node_set_attr_string(c, "to", "INT64");
    tk_output(g, ph_node_output(b, 0));
    tk_output(g, tk_op1(g, "Neg", ph_node_output(c, 0)));
    pass->shapes = 0; /* Cast-1 is not inferred */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Siblings that differ in saturate, or live in another graph, stay. */
START_TEST(siblings_not_alike_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_value *a = cast(g, x, PH_DT_INT32), *b = cast(g, x, PH_DT_INT32);
    ph_node_set_attr_int(ph_value_producer(b), "saturate", 0);
    tk_output(g, tk_op1(g, "Neg", a));
    tk_output(g, tk_op1(g, "Neg", b));
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    tk_output(tg, tk_op1(tg, "Neg", cast(tg, x, PH_DT_INT32)));
    tk_output(eg, tk_op1(eg, "Abs", cast(eg, x, PH_DT_INT32)));
    tk_output(g, ph_node_output(iff, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A chain in one branch, siblings in the other. */
START_TEST(inside_an_if_branch)
{
    char buf[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT32, 1, TK_I64(4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    tk_output(tg, tk_op1(tg, "Neg", cast(tg, cast(tg, x, PH_DT_INT64), PH_DT_DOUBLE)));
    ph_value *a = cast(eg, x, PH_DT_DOUBLE), *b = cast(eg, x, PH_DT_DOUBLE);
    tk_output(eg, tk_op2(eg, "Add", a, b));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_str_eq(tos(tg, buf, sizeof buf), "double");
    ck_assert_str_eq(tos(eg, buf, sizeof buf), "double");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_cast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, int32_int64_float);
    tcase_add_test(tc, float_double_float16);
    tcase_add_test(tc, int16_int32_int8_wraps_alike);
    tcase_add_test(tc, from_bool);
    tcase_add_test(tc, second_to_the_same_type);
    tcase_add_test(tc, back_to_the_source_type);
    tcase_add_test(tc, siblings);
    tcase_add_test(tc, siblings_and_graph_outputs);
    tcase_add_test(tc, dtype_holds_table);
    tcase_add_test(tc, lossy_middle_kept);
    tcase_add_test(tc, float_middle_to_narrower_int_kept);
    tcase_add_test(tc, to_string_kept);
    tcase_add_test(tc, middle_with_other_consumer_kept);
    tcase_add_test(tc, middle_graph_output_kept);
    tcase_add_test(tc, unknown_source_dtype_kept);
    tcase_add_test(tc, opset5_string_to_kept);
    tcase_add_test(tc, siblings_not_alike_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
