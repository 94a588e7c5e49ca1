/* tests/test_pass_resize_1x1_to_nearest.c - resize_1x1_to_nearest: linear and
 * cubic Resize of an input whose resized axes have one element become
 * nearest, bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("resize_1x1_to_nearest")

#define SCALES "scales: float[4] = [1, 1, 3, 2.5]\n"
/* the result: a nearest Resize, the ctm kept, the cubic attributes gone */
#define NEAREST(ctm)                                                                               \
    "r = Resize(x, _?, _?, _?) {mode=\"nearest\", coordinate_transformation_mode(\"half_pixel\")=\"" ctm "\", " \
    "!cubic_coeff_a, !exclude_outside}\ny = Neg(r)"

static const struct {
    const char *graph, *expect;
} nearest[] = {
    {"x: float[1,3,1,1]\n" SCALES "r = Resize(x, _, scales) {mode=\"linear\", cubic_coeff_a=-0.5}; y = Neg(r)\nreturn y",
     NEAREST("half_pixel")},
    {"x: float[2,3,1,1]; sizes: int64[4] = [2, 3, 5, 6]\n"
     "r = Resize(x, _, _, sizes) {mode=\"cubic\", coordinate_transformation_mode=\"align_corners\", cubic_coeff_a=-0.5}\n"
     "y = Neg(r)\nreturn y",
     NEAREST("align_corners")},
    {"x: float[1,2,1,1]\n" SCALES
     "r = Resize(x, _, scales) {mode=\"cubic\", coordinate_transformation_mode=\"pytorch_half_pixel\", cubic_coeff_a=-0.5,"
     " exclude_outside=1}\ny = Neg(r)\nreturn y",
     NEAREST("pytorch_half_pixel")},
    /* opset 11: roi and scales are required, maybe empty */
    {"opset 11\nx: float[1,3,1,1]; roi: float[0] = []\n" SCALES
     "r = Resize(x, roi, scales) {mode=\"linear\", coordinate_transformation_mode=\"asymmetric\", cubic_coeff_a=-0.5}\n"
     "y = Neg(r)\nreturn y",
     NEAREST("asymmetric")},
    /* W kept by its size */
    {"opset 13\nx: float[1,3,1,4]; sizes: int64[4] = [1, 3, 5, 4]\n"
     "r = Resize(x, _, _, sizes) {mode=\"cubic\", coordinate_transformation_mode=\"half_pixel\", cubic_coeff_a=-0.5}\n"
     "y = Neg(r)\nreturn y",
     NEAREST("half_pixel")},
    {"x: float[1,1,1,1]\n" SCALES
     "r = Resize(x, _, scales) {mode=\"linear\", coordinate_transformation_mode=\"tf_half_pixel_for_nn\", cubic_coeff_a=-0.5}\n"
     "y = Neg(r)\nreturn y",
     NEAREST("tf_half_pixel_for_nn")},
};

START_TEST(single_pixel_axes_become_nearest)
{
    PC_CASE(nearest[_i].graph, 1, nearest[_i].expect);
}
END_TEST

/* opset 18's axes attribute; the output keeps its name */
START_TEST(axes_attribute_and_graph_output)
{
    const char *graph = "opset 18\nx: float[2,3,1,1]; scales: float[2] = [4, 2]\n"
                        "y = Resize(x, _, scales) {mode=\"linear\", axes=[-2,3]}\nreturn y";
    PC_CASE(graph, 1, "y = Resize(x, _?, _?) {mode=\"nearest\"}");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

#define RES(x, scales, attrs) "x: " x "; scales: float[4] = " scales "\nr = Resize(x, _, scales) {" attrs "}; y = Neg(r)\nreturn y"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* 2x2 input */
    {RES("float[1,3,2,2]", "[1, 1, 2, 2]", "mode=\"linear\""), 0},
    /* tf_crop_and_resize */
    {RES("float[1,3,1,1]", "[1, 1, 2, 2]", "mode=\"linear\", coordinate_transformation_mode=\"tf_crop_and_resize\""), 1},
    /* the channel axis (3) is resized too */
    {RES("float[1,3,1,1]", "[1, 2, 2, 2]", "mode=\"linear\""), 0},
    /* tf_half_pixel_for_nn samples between channels in linear mode */
    {RES("float[1,3,1,1]", "[1, 1, 2, 2]", "mode=\"linear\", coordinate_transformation_mode=\"tf_half_pixel_for_nn\""), 0},
    /* spatial dims unknown */
    {RES("float[1,3,H,W]", "[1, 1, 2, 2]", "mode=\"linear\""), 0},
    /* nothing resized */
    {RES("float[1,3,1,1]", "[1, 1, 1, 1]", "mode=\"linear\""), 0},
    /* already nearest */
    {RES("float[1,3,1,1]", "[1, 1, 2, 2]", "mode=\"nearest\""), 0},
    /* scales not constant */
    {"x: float[1,3,1,1]; s: float[4]\nr = Resize(x, _, s) {mode=\"linear\"}; y = Neg(r)\nreturn y", 1},
    /* sizes with keep_aspect_ratio_policy */
    {"x: float[1,3,1,1]; sizes: int64[4] = [1, 3, 4, 4]\n"
     "r = Resize(x, _, _, sizes) {mode=\"linear\", keep_aspect_ratio_policy=\"not_larger\"}; y = Neg(r)\nreturn y", 0},
    /* unknown rank */
    {RES("float[*]", "[1, 1, 2, 2]", "mode=\"linear\""), 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,2,1,1]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    float s[4] = {1, 1, 2, 2};
    for (int i = 0; i < 2; i++) { /* linear, cubic */
        ph_value *in[3] = {x, NULL, ph_graph_add_initializer(body[i], "scales", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(4), s))};
        ph_node *r = tk_node(body[i], "Resize", 3, in);
        ph_node_set_attr_string(r, "mode", i ? "cubic" : "linear");
        tk_output(body[i], ph_node_output(r, 0));
    }
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "y = Resize(x, _?, scales) {mode=\"nearest\"}");
    PC_GRAPH_IS(body[1], "y = Resize(x, _?, scales) {mode=\"nearest\"}");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("resize_1x1_to_nearest");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, single_pixel_axes_become_nearest, 0, (int)(sizeof nearest / sizeof *nearest));
    tcase_add_test(tc, axes_attribute_and_graph_output);
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
