/* tests/test_pass_split_large_resize.c - the split_large_resize pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
static const char *const limit4[] = {"max_scale", "4", NULL};

static void setup(void)
{
    pass = tk_pass_load("split_large_resize");
    pass->shapes = 1;
    pass->params = limit4;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A float scales initializer. */
static ph_value *scales(ph_graph *g, float h, float w)
{
    float v[4] = {1, 1, h, w};
    ph_value *s = ph_graph_add_initializer(g, ph_graph_unique_name(g, "scales"),
                                           ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(4), v));
    ck_assert_ptr_nonnull(s);
    return s;
}

/* x [1,2,3,4] -> Relu -> Resize(scales h, w) -> y; the Resize. */
static ph_node *resize(ph_graph *g, ph_value *x, float h, float w, const char *ctm, const char *nm)
{
    ph_node *r = tk_node(g, "Resize", 3, (ph_value *[]){x, NULL, scales(g, h, w)});
    ck_assert_int_eq(ph_node_set_attr_string(r, "mode", "nearest"), 0);
    if (ctm)
        ck_assert_int_eq(ph_node_set_attr_string(r, "coordinate_transformation_mode", ctm), 0);
    if (nm)
        ck_assert_int_eq(ph_node_set_attr_string(r, "nearest_mode", nm), 0);
    tk_output(g, ph_node_output(r, 0));
    return r;
}

START_TEST(cascade)
{
    char ops[128];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 4, TK_I64(1, 2, 3, 4), NULL);
    resize(g, x, 8, 2, NULL, NULL);                  /* half_pixel, round_prefer_floor: 8 = 4 * 2 */
    resize(g, x, 12, 12, "asymmetric", "floor");     /* 12 = 4 * 3 */
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Resize,Resize,Resize,Resize");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 4, TK_I64(1, 2, 3, 4), NULL);
    resize(g, x, 4, 4, NULL, NULL);                     /* within the limit */
    resize(g, x, 7, 7, NULL, NULL);                     /* 7 has no factor <= 4 */
    resize(g, x, 8.5f, 8, NULL, NULL);                  /* not a whole scale */
    resize(g, x, 8, 8, "asymmetric", "round_prefer_floor"); /* reads other pixels */
    ph_node *lin = resize(g, x, 8, 8, NULL, NULL);
    ck_assert_int_eq(ph_node_set_attr_string(lin, "mode", "linear"), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_if_branches)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_node *r = tk_node(then_g, "Resize", 3, (ph_value *[]){x, NULL, scales(g, 16, 16)});
    tk_output(then_g, ph_node_output(r, 0));
    tk_output(else_g, tk_op1(else_g, "Neg", x));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Resize,Resize");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_large_resize");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, cascade);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
