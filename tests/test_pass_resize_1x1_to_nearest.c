/* tests/test_pass_resize_1x1_to_nearest.c - resize_1x1_to_nearest: linear and
 * cubic Resize of an input whose resized axes have one element become
 * nearest, bit for bit. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("resize_1x1_to_nearest");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Resize of x by constant scales (sizes NULL) or sizes, in the opset's form. */
static ph_node *resize(ph_graph *g, ph_value *x, int64_t opset, const char *mode, const char *ctm, size_t n,
                       const float *scales, const int64_t *sizes)
{
    ph_value *in[4] = {x, NULL, NULL, NULL};
    if (opset < 13) /* roi and scales are required, maybe empty */
        in[1] = ph_graph_add_initializer(g, "roi", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(0), NULL));
    if (scales)
        in[2] = ph_graph_add_initializer(g, "scales", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64((int64_t)n), scales));
    else if (opset < 13)
        in[2] = ph_graph_add_initializer(g, "scales", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(0), NULL));
    if (sizes)
        in[3] = tk_ints(g, "sizes", n, sizes);
    ph_node *r = tk_node(g, "Resize", sizes ? 4 : 3, in);
    ph_node_set_attr_string(r, "mode", mode);
    if (ctm)
        ph_node_set_attr_string(r, "coordinate_transformation_mode", ctm);
    return r;
}

START_TEST(single_pixel_axes_become_nearest)
{
    static const struct {
        int64_t opset;
        const char *mode, *ctm;
        int64_t dims[4];
        int use_sizes, excl;
    } cases[] = {
        {17, "linear", NULL, {1, 3, 1, 1}, 0, 0},
        {17, "cubic", "align_corners", {2, 3, 1, 1}, 1, 0},
        {17, "cubic", "pytorch_half_pixel", {1, 2, 1, 1}, 0, 1},
        {11, "linear", "asymmetric", {1, 3, 1, 1}, 0, 0},
        {13, "cubic", "half_pixel", {1, 3, 1, 4}, 1, 0},      /* W kept by its size */
        {17, "linear", "tf_half_pixel_for_nn", {1, 1, 1, 1}, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ph_model *m = ph_model_new(cases[c].opset);
        ph_graph *g = ph_model_graph(m);
        const int64_t *d = cases[c].dims;
        ph_value *x = tk_input(g, "x", 4, d);
        float scales[4] = {1, 1, 3, 2.5f};
        int64_t sizes[4] = {d[0], d[1], 5, d[3] == 1 ? 6 : d[3]};
        ph_node *r = resize(g, x, cases[c].opset, cases[c].mode, cases[c].ctm, 4,
                            cases[c].use_sizes ? NULL : scales, cases[c].use_sizes ? sizes : NULL);
        if (cases[c].excl)
            ph_node_set_attr_int(r, "exclude_outside", 1);
        ph_node_set_attr_float(r, "cubic_coeff_a", -0.5f);
        tk_neg_output(g, ph_node_output(r, 0));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 20 + c, 0, NULL), 1);
        ph_node *n = tk_find_op(g, PH_OP_Resize);
        ck_assert_str_eq(ph_node_attr_string(n, "mode", ""), "nearest");
        ck_assert_str_eq(ph_node_attr_string(n, "coordinate_transformation_mode", "half_pixel"),
                         cases[c].ctm ? cases[c].ctm : "half_pixel");
        ck_assert_int_eq(ph_node_attr_type(n, "cubic_coeff_a"), PH_ATTR_NONE);
        ck_assert_int_eq(ph_node_attr_type(n, "exclude_outside"), PH_ATTR_NONE);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(axes_attribute_and_graph_output)
{
    ph_model *m = ph_model_new(18);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 1, 1));
    ph_node *r = resize(g, x, 18, "linear", NULL, 2, (const float[]){4, 2}, NULL);
    ph_node_set_attr_ints(r, "axes", 2, TK_I64(-2, 3));
    tk_output(g, ph_node_output(r, 0));
    char *name = strdup(ph_value_name(ph_node_output(r, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_str_eq(ph_node_attr_string(tk_find_op(g, PH_OP_Resize), "mode", ""), "nearest");
    free(name);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 10; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        int64_t dims[4] = {1, 3, 1, 1};
        float scales[4] = {1, 1, 2, 2};
        const char *ctm = NULL, *mode = "linear";
        switch (variant) {
        case 0: /* 2x2 input */
            dims[2] = dims[3] = 2;
            break;
        case 1: /* tf_crop_and_resize */
            ctm = "tf_crop_and_resize";
            break;
        case 2: /* the channel axis (3) is resized too */
            scales[1] = 2;
            break;
        case 3: /* tf_half_pixel_for_nn samples between channels in linear mode */
            ctm = "tf_half_pixel_for_nn";
            break;
        case 4: /* spatial dims unknown */
            dims[2] = dims[3] = -1;
            break;
        case 5: /* nothing resized */
            scales[2] = scales[3] = 1;
            break;
        case 6: /* already nearest */
            mode = "nearest";
            break;
        default:
            break;
        }
        ph_value *x = variant == 9 ? tk_input(g, "x", -1, NULL) : tk_input(g, "x", 4, dims);
        ph_node *r = resize(g, x, 17, mode, ctm, 4, scales, NULL);
        if (variant == 7) /* scales not constant */
            ph_node_set_input(r, 2, ph_graph_add_input(g, "s", PH_DT_FLOAT, 1, TK_I64(4)));
        if (variant == 8) { /* sizes with keep_aspect_ratio_policy */
            ph_node_set_input(r, 2, NULL);
            ph_node_set_input(r, 3, tk_ints(g, "sizes", 4, TK_I64(1, 3, 4, 4)));
            ph_node_set_attr_string(r, "keep_aspect_ratio_policy", "not_larger");
        }
        tk_neg_output(g, ph_node_output(r, 0));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 1, 1));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    float s[4] = {1, 1, 2, 2};
    tk_output(then_g, ph_node_output(resize(then_g, x, 17, "linear", NULL, 4, s, NULL), 0));
    tk_output(else_g, ph_node_output(resize(else_g, x, 17, "cubic", NULL, 4, s, NULL), 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_str_eq(ph_node_attr_string(tk_find_op(then_g, PH_OP_Resize), "mode", ""), "nearest");
    ck_assert_str_eq(ph_node_attr_string(tk_find_op(else_g, PH_OP_Resize), "mode", ""), "nearest");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("resize_1x1_to_nearest");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, single_pixel_axes_become_nearest);
    tcase_add_test(tc, axes_attribute_and_graph_output);
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
