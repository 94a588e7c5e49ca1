/* tests/test_pass_resize_to_nearest.c - resize_to_nearest: linear, cubic and
 * area Resize become nearest (round_prefer_floor), an approximation: the
 * result must equal a Resize built as nearest from the start. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/testing.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("resize_to_nearest"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Resize of x by constant scales, in the opset's form. */
static ph_node *resize(ph_graph *g, ph_value *x, int64_t opset, const char *mode, const char *ctm,
                       const float *scales)
{
    ph_value *in[3] = {x, NULL, ph_graph_add_initializer(g, "scales", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(4), scales))};
    if (opset < 13)
        in[1] = ph_graph_add_initializer(g, "roi", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(0), NULL));
    ph_node *r = tk_node(g, "Resize", 3, in);
    ph_node_set_attr_string(r, "mode", mode);
    if (ctm)
        ph_node_set_attr_string(r, "coordinate_transformation_mode", ctm);
    return r;
}

/* The one output of m's graph on random inputs from seed (caller frees). */
static ph_tensor *eval1(ph_model *m, uint64_t seed)
{
    ph_error err = {0};
    ph_graph *g = ph_model_graph(m);
    ph_tensor *in[1] = {NULL}, *out = NULL;
    ck_assert_int_eq(ph_graph_input_count(g), 1);
    ck_assert_int_eq(ph_test_random_inputs(g, seed, 1, in, &err), 0);
    ph_eval *e = NULL;
    ck_assert_msg(ph_eval_new(g, &e, &err) == 0, "%s", err.message);
    ck_assert_msg(ph_eval_run(e, (const ph_tensor *const *)in, 1, &out, 1, &err) == 0, "%s", err.message);
    ph_eval_free(e);
    ph_tensor_free(in[0]);
    return out;
}

/* x [1, 2, 3, 4] -> Resize(mode, ctm, scales 1, 1, 2, 1.5) -> Neg */
static ph_model *model(int64_t opset, const char *mode, const char *ctm, const char *nearest_mode)
{
    ph_model *m = ph_model_new(opset);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 4));
    ph_node *r = resize(g, x, opset, mode, ctm, (const float[]){1, 1, 2, 1.5f});
    if (nearest_mode)
        ph_node_set_attr_string(r, "nearest_mode", nearest_mode);
    if (!strcmp(mode, "cubic")) {
        ph_node_set_attr_float(r, "cubic_coeff_a", -0.5f);
        ph_node_set_attr_int(r, "exclude_outside", 1);
    }
    tk_neg_output(g, ph_node_output(r, 0));
    return m;
}

START_TEST(becomes_nearest_round_prefer_floor)
{
    static const struct {
        int64_t opset;
        const char *mode, *ctm, *nearest_mode;
    } cases[] = {
        {17, "linear", NULL, NULL},
        {17, "cubic", "align_corners", "ceil"},
        {11, "linear", "asymmetric", NULL},
        {13, "cubic", "pytorch_half_pixel", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ph_model *m = model(cases[c].opset, cases[c].mode, cases[c].ctm, cases[c].nearest_mode);
        ph_model *ref = model(cases[c].opset, "nearest", cases[c].ctm, "round_prefer_floor");
        ph_tensor *before = eval1(m, 5);
        ck_assert_int_eq(tk_pass_run(pass, m), 1);
        ph_node *n = tk_find_op(ph_model_graph(m), PH_OP_Resize);
        ck_assert_str_eq(ph_node_attr_string(n, "mode", ""), "nearest");
        ck_assert_str_eq(ph_node_attr_string(n, "nearest_mode", ""), "round_prefer_floor");
        ck_assert_str_eq(ph_node_attr_string(n, "coordinate_transformation_mode", "half_pixel"),
                         cases[c].ctm ? cases[c].ctm : "half_pixel");
        ck_assert_int_eq(ph_node_attr_type(n, "cubic_coeff_a"), PH_ATTR_NONE);
        ck_assert_int_eq(ph_node_attr_type(n, "exclude_outside"), PH_ATTR_NONE);
        ph_tensor *after = eval1(m, 5), *want = eval1(ref, 5);
        ck_assert(ph_tensor_equal(after, want));       /* exactly the nearest Resize */
        ck_assert(!ph_tensor_equal(after, before));    /* and not what it was */
        ck_assert_int_eq(ph_tensor_rank(after), ph_tensor_rank(before));
        for (size_t i = 0; i < ph_tensor_rank(after); i++)
            ck_assert_int_eq(ph_tensor_dim(after, i), ph_tensor_dim(before, i));
        ph_tensor_free(before);
        ph_tensor_free(after);
        ph_tensor_free(want);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
        ph_model_free(ref);
    }
}
END_TEST

START_TEST(area_and_graph_output)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 1, 4, 4));
    ph_node *r = resize(g, x, 17, "area", NULL, (const float[]){1, 1, 0.5f, 0.5f});
    tk_output(g, ph_node_output(r, 0));
    char *name = strdup(ph_value_name(ph_node_output(r, 0)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_str_eq(ph_node_attr_string(tk_find_op(g, PH_OP_Resize), "mode", ""), "nearest");
    free(name);
    ph_tensor *out = eval1(m, 1); /* runs now */
    ck_assert_int_eq(ph_tensor_dim(out, 3), 2);
    ph_tensor_free(out);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 3; variant++) {
        ph_model *m = variant == 0 ? model(17, "nearest", NULL, "floor") : model(17, variant == 1 ? "bilinear" : "linear", NULL, NULL);
        if (variant == 2) { /* another domain's Resize (a domain the model imports) */
            ph_node_set_domain(tk_find_op(ph_model_graph(m), PH_OP_Resize), "com.example");
            ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    const float s[4] = {1, 1, 2, 2};
    tk_output(then_g, ph_node_output(resize(then_g, x, 17, "linear", NULL, s), 0));
    tk_output(else_g, ph_node_output(resize(else_g, x, 17, "nearest", NULL, s), 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(ph_node_attr_string(tk_find_op(then_g, PH_OP_Resize), "mode", ""), "nearest");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("resize_to_nearest");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, becomes_nearest_round_prefer_floor);
    tcase_add_test(tc, area_and_graph_output);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
