/* tests/test_pass_resize_to_nearest.c - resize_to_nearest: linear, cubic and
 * area Resize become nearest (round_prefer_floor), an approximation: the
 * cases run unchecked (the values change on purpose) and the result must
 * equal a Resize written as nearest from the start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("resize_to_nearest")

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

static ph_model *text_model(const char *text)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(text, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    return m;
}

/* x [1, 2, 3, 4] -> Resize(scales 1, 1, 2, 1.5) {attrs} -> Neg, at opset
 * `opset` (below 13 roi is required, empty) */
#define MODEL(opset, roi, attrs)                                                                   \
    "opset " opset "\nx: float[1,2,3,4]; roi: float[0] = []; scales: float[4] = [1, 1, 2, 1.5]\n"    \
    "r = Resize(x, " roi ", scales) {" attrs "}; y = Neg(r)\nreturn y"
#define CUBIC ", cubic_coeff_a=-0.5, exclude_outside=1"
#define NEAREST(ctm)                                                                               \
    "r = Resize(x, _?, scales) {mode=\"nearest\", nearest_mode=\"round_prefer_floor\", "              \
    "coordinate_transformation_mode(\"half_pixel\")=\"" ctm "\", !cubic_coeff_a, !exclude_outside}\ny = Neg(r)"

static const struct {
    const char *graph, *expect, *ref;
} cases[] = {
    {MODEL("17", "_", "mode=\"linear\""), NEAREST("half_pixel"),
     MODEL("17", "_", "mode=\"nearest\", nearest_mode=\"round_prefer_floor\"")},
    {MODEL("17", "_", "mode=\"cubic\", coordinate_transformation_mode=\"align_corners\", nearest_mode=\"ceil\"" CUBIC),
     NEAREST("align_corners"),
     MODEL("17", "_", "mode=\"nearest\", coordinate_transformation_mode=\"align_corners\", nearest_mode=\"round_prefer_floor\"")},
    {MODEL("11", "roi", "mode=\"linear\", coordinate_transformation_mode=\"asymmetric\""), NEAREST("asymmetric"),
     MODEL("11", "roi", "mode=\"nearest\", coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"round_prefer_floor\"")},
    {MODEL("13", "_", "mode=\"cubic\", coordinate_transformation_mode=\"pytorch_half_pixel\"" CUBIC), NEAREST("pytorch_half_pixel"),
     MODEL("13", "_", "mode=\"nearest\", coordinate_transformation_mode=\"pytorch_half_pixel\", nearest_mode=\"round_prefer_floor\"")},
};

START_TEST(becomes_nearest_round_prefer_floor)
{
    PC_CASE_OPTS(&pc_unchecked, cases[_i].graph, 1, cases[_i].expect);
    ph_model *m = text_model(cases[_i].graph), *ref = text_model(cases[_i].ref);
    ph_tensor *before = eval1(m, 5);
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ph_tensor *after = eval1(m, 5), *want = eval1(ref, 5);
    ck_assert(ph_tensor_equal(after, want));    /* exactly the nearest Resize */
    ck_assert(!ph_tensor_equal(after, before)); /* and not what it was */
    ck_assert_int_eq(ph_tensor_rank(after), ph_tensor_rank(before));
    for (size_t i = 0; i < ph_tensor_rank(after); i++)
        ck_assert_int_eq(ph_tensor_dim(after, i), ph_tensor_dim(before, i));
    ph_tensor_free(before);
    ph_tensor_free(after);
    ph_tensor_free(want);
    ph_model_free(m);
    ph_model_free(ref);
}
END_TEST

/* area: the output keeps its name, and the model runs now */
START_TEST(area_and_graph_output)
{
    const char *graph = "x: float[1,1,4,4]; scales: float[4] = [1, 1, 0.5, 0.5]\ny = Resize(x, _, scales) {mode=\"area\"}\nreturn y";
    PC_CASE_OPTS(&pc_unchecked, graph, 1, "y = Resize(x, _?, scales) {mode=\"nearest\"}");
    ph_model *m = text_model(graph);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_tensor *out = eval1(m, 1);
    ck_assert_int_eq(ph_tensor_dim(out, 3), 2);
    ph_tensor_free(out);
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph;
} alone[] = {
    {MODEL("17", "_", "mode=\"nearest\", nearest_mode=\"floor\"")},
    {MODEL("17", "_", "mode=\"bilinear\"")},
    /* another domain's Resize (a domain the model imports) */
    {"x: float[1,2,3,4]; scales: float[4] = [1, 1, 2, 1.5]\nr = Resize@com.example(x, _, scales) {mode=\"linear\"}; y = Neg(r)\n"
     "return y"},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_UNCHECKED(alone[_i].graph);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,2,3,3]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    float s[4] = {1, 1, 2, 2};
    for (int i = 0; i < 2; i++) { /* linear, nearest */
        ph_value *in[3] = {x, NULL, ph_graph_add_initializer(body[i], "scales", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(4), s))};
        ph_node *r = tk_node(body[i], "Resize", 3, in);
        ph_node_set_attr_string(r, "mode", i ? "nearest" : "linear");
        tk_output(body[i], ph_node_output(r, 0));
    }
    pc_run_structure(m, 1); /* the pass changes values by design: structure only */
    PC_GRAPH_IS(body[0], "y = Resize(x, _?, scales) {mode=\"nearest\", nearest_mode=\"round_prefer_floor\"}");
    PC_GRAPH_IS(body[1], "y = Resize(x, _?, scales) {mode=\"nearest\", !nearest_mode}");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("resize_to_nearest");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, becomes_nearest_round_prefer_floor, 0, (int)(sizeof cases / sizeof *cases));
    tcase_add_test(tc, area_and_graph_output);
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
