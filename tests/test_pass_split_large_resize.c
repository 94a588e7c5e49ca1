/* tests/test_pass_split_large_resize.c - split_large_resize: a nearest
 * Resize by a whole scale above max_scale becomes a cascade of Resizes. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("split_large_resize")

static const char *const limit4[] = {"max_scale=4", NULL};
static const ph_test_options opts = {.max_iterations = 4, .params = limit4};

/* x [1,2,3,4] -> Relu -> Resize(nearest, scales 1, 1, h, w {attrs}) -> y */
#define RES(h, w, attrs)                                                                           \
    "x: float[1,2,3,4]; s: float[4] = [1, 1, " h ", " w "]\nr = Relu(x); y = Resize(r, _, s) {mode=\"nearest\"" attrs "}\n" \
    "return y"
#define CASCADE "r = Relu(x)\na = Resize(r, _?, _:const)\ny = Resize(a, _?, _:const)"

static const struct {
    const char *graph;
} cascades[] = {
    /* half_pixel, round_prefer_floor: 8 = 4 * 2 */
    {RES("8", "2", "")},
    /* 12 = 4 * 3 */
    {RES("12", "12", ", coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"floor\"")},
};

START_TEST(cascade)
{
    PC_CASE_OPTS(&opts, cascades[_i].graph, 1, CASCADE);
}
END_TEST

static const struct {
    const char *graph;
} alone[] = {
    /* within the limit */
    {RES("4", "4", "")},
    /* 7 has no factor <= 4 */
    {RES("7", "7", "")},
    /* not a whole scale */
    {RES("8.5", "8", "")},
    /* reads other pixels */
    {RES("8", "8", ", coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"round_prefer_floor\"")},
    /* linear */
    {"x: float[1,2,3,4]; s: float[4] = [1, 1, 8, 8]\nr = Relu(x); y = Resize(r, _, s) {mode=\"linear\"}\nreturn y"},
};

START_TEST(left_alone)
{
    PC_CASE_OPTS(&opts, alone[_i].graph, 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_if_branches)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,2,3,4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    float v[4] = {1, 1, 16, 16};
    ph_value *s = ph_graph_add_initializer(body[0], "s", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(4), v));
    tk_output(body[0], ph_node_output(tk_node(body[0], "Resize", 3, (ph_value *[]){x, NULL, s}), 0));
    tk_output(body[1], tk_op1(body[1], "Neg", x));
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, &opts, NULL, &err), 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "a = Resize(x, _?, _:const)\ny = Resize(a, _?, _:const)");
    PC_GRAPH_IS(body[1], "y = Neg(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_large_resize");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, cascade, 0, (int)(sizeof cascades / sizeof *cascades));
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
