/* tests/test_pass_split_group_conv.c - split_group_conv: a grouped Conv
 * becomes Split + Conv per group + Concat. */
#include <stdio.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("split_group_conv")

/* The expected result for `groups` groups of m output channels each:
 * Split(x) (sizes an input from opset 13, an attribute before), one Conv
 * {group=1} per group with its weight slice (and bias slice), Concat. */
static const char *split_result(int groups, int64_t m, int bias, int split_input)
{
    static char buf[1024];
    int len = snprintf(buf, sizeof buf, "s0");
    for (int i = 1; i < groups; i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, ", s%d", i);
    len += snprintf(buf + len, sizeof buf - (size_t)len, " = Split(x%s) {axis=1}\n", split_input ? ", _:const" : "");
    for (int i = 0; i < groups; i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, "c%d = Conv(s%d, w%d:const:shape=[%lld,*,*]%s) {group=1}\n",
                        i, i, i, (long long)m, bias ? ", _:const" : "");
    len += snprintf(buf + len, sizeof buf - (size_t)len, "y = Concat(c0");
    for (int i = 1; i < groups; i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, ", c%d", i);
    snprintf(buf + len, sizeof buf - (size_t)len, ") {axis=1}");
    return buf;
}

/* 2-D spatial weights: the pattern checks their first dim through a
 * shape of rank 4. */
static const char *split_result_2d(int groups, int64_t m, int bias, int split_input)
{
    static char out[1200];
    const char *r = split_result(groups, m, bias, split_input);
    size_t k = 0;
    for (const char *c = r; *c && k + 4 < sizeof out; c++) {
        out[k++] = *c;
        if (c[0] == '*' && c[1] == ',' && c[2] == '*' && c[3] == ']') {
            memcpy(out + k, ",*,*", 4);
            k += 4;
            c += 2;
        }
    }
    out[k] = 0;
    return out;
}

START_TEST(two_groups_with_bias)
{
    PC_CASE("x: float[2,8,7,6]; w: const float[12,4,3,3]; b: const float[12]\n"
            "y = Conv(x, w, b) {group=2, pads=[1,1,1,1]}\nreturn y",
            1, split_result_2d(2, 6, 1, 1));
}
END_TEST

/* opset 11: Split sizes as an attribute */
START_TEST(opset_11_split_attribute)
{
    PC_CASE("opset 11\nx: float[2,8,7,6]; w: const float[12,4,3,3]; b: const float[12]\n"
            "y = Conv(x, w, b) {group=2, pads=[1,1,1,1]}\nreturn y",
            1, split_result_2d(2, 6, 1, 0));
}
END_TEST

START_TEST(one_spatial_dim)
{
    PC_CASE("x: float[2,8,7]; w: const float[12,4,3]; b: const float[12]\n"
            "y = Conv(x, w, b) {group=2, pads=[1,1]}\nreturn y",
            1, split_result(2, 6, 1, 1));
}
END_TEST

START_TEST(four_groups_strides_and_dilations)
{
    PC_CASE("x: float[2,8,7,6]; w: const float[12,2,3,3]; b: const float[12]\n"
            "y = Conv(x, w, b) {group=4, pads=[1,1,1,1], strides=[2,1], dilations=[1,2]}\nreturn y",
            1, split_result_2d(4, 3, 1, 1));
}
END_TEST

START_TEST(without_bias)
{
    PC_CASE("x: float[2,8,7,6]; w: const float[12,4,3,3]\n"
            "y = Conv(x, w) {group=2, pads=[1,1,1,1]}\nreturn y",
            1, split_result_2d(2, 6, 0, 1));
}
END_TEST

START_TEST(depthwise_when_asked)
{
    ph_test_options o = {.max_iterations = 4, .params = (const char *const[]){"depthwise=true", NULL},
                         .sizes = (const int64_t[]){1, 2}, .n_sizes = 2};
    PC_CASE_OPTS(&o,
                 "x: float[N,3,5,5]; w: const float[6,1,3,3]; b: const float[6]\n"
                 "c = Conv(x, w, b) {group=3, pads=[1,1,1,1]}; r = Relu(c)\nreturn r",
                 1, "s0, s1, s2 = Split(x, _:const)\na = Conv(s0, _:const, _:const)\nb = Conv(s1, _:const, _:const)\n"
                    "c = Conv(s2, _:const, _:const)\nd = Concat(a, b, c)\nr = Relu(d)");
}
END_TEST

START_TEST(group_1_left_alone)
{
    PC_UNTOUCHED("x: float[1,8,5,5]; w: const float[8,8,3,3]; b: const float[8]\n"
                 "y = Conv(x, w, b) {group=1, pads=[1,1,1,1]}\nreturn y");
}
END_TEST

START_TEST(weight_not_constant_left_alone)
{
    PC_UNTOUCHED("x: float[1,8,5,5]; w: float[8,4,3,3]; b: const float[8]\n"
                 "y = Conv(x, w, b) {group=2, pads=[1,1,1,1]}\nreturn y");
}
END_TEST

START_TEST(bias_not_constant_left_alone)
{
    PC_UNTOUCHED("x: float[1,8,5,5]; w: const float[8,4,3,3]; b: float[8]\n"
                 "y = Conv(x, w, b) {group=2, pads=[1,1,1,1]}\nreturn y");
}
END_TEST

START_TEST(more_groups_than_max_groups_left_alone)
{
    ph_test_options o = {.max_iterations = 4, .params = (const char *const[]){"max_groups=2", NULL}};
    PC_CASE_OPTS(&o, "x: float[1,8,5,5]; w: const float[8,2,3,3]; b: const float[8]\n"
                     "y = Conv(x, w, b) {group=4, pads=[1,1,1,1]}\nreturn y",
                 0, NULL);
}
END_TEST

START_TEST(bfloat16_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("x: bfloat16[1,8,5,5]; w: bfloat16[8,4,3,3] = [0]\ny = Conv(x, w) {group=2}\nreturn y");
}
END_TEST

START_TEST(depthwise_not_asked_left_alone)
{
    PC_UNTOUCHED("x: float[1,8,5,5]; w: const float[8,1,3,3]; b: const float[8]\n"
                 "y = Conv(x, w, b) {group=8, pads=[1,1,1,1]}\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If is built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,4,5,5]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    for (int i = 0; i < 2; i++) { /* with a bias, without */
        ph_value *in[3] = {x, tk_init(body[i], "w", 4, TK_I64(4, 2, 3, 3), 3), tk_init(body[i], "b", 1, TK_I64(4), 4)};
        ph_node *c = tk_node(body[i], "Conv", i ? 2 : 3, in);
        ck_assert_int_eq(ph_node_set_attr_int(c, "group", 2), 0);
        tk_output(body[i], ph_node_output(c, 0));
    }
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], split_result_2d(2, 2, 1, 1));
    PC_GRAPH_IS(body[1], split_result_2d(2, 2, 0, 1));
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("split_group_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, two_groups_with_bias);
    tcase_add_test(tc, opset_11_split_attribute);
    tcase_add_test(tc, one_spatial_dim);
    tcase_add_test(tc, four_groups_strides_and_dilations);
    tcase_add_test(tc, without_bias);
    tcase_add_test(tc, depthwise_when_asked);
    tcase_add_test(tc, group_1_left_alone);
    tcase_add_test(tc, weight_not_constant_left_alone);
    tcase_add_test(tc, bias_not_constant_left_alone);
    tcase_add_test(tc, more_groups_than_max_groups_left_alone);
    tcase_add_test(tc, bfloat16_left_alone);
    tcase_add_test(tc, depthwise_not_asked_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
