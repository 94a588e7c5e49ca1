/* tests/test_pass_split_large_kernel_conv.c - split_large_kernel_conv: a Conv
 * whose kernel area exceeds max_kernel_area becomes Convs of kernel tiles
 * over slices of the (padded) input, summed. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("split_large_kernel_conv")

static const char *const limit12[] = {"max_kernel_area=12", NULL};
static const ph_test_options opts = {.max_iterations = 4, .params = limit12};

#define TILE(s, c, in, rest) s " = Slice(" in ", _, _, _)\n" c " = Conv(" s ", _:const" rest ")\n"

/* 25 > 12: tiles of 2 rows (10), the bias on the first; pads by a Pad */
START_TEST(tiles_summed)
{
    PC_CASE_OPTS(&opts,
                 "x: float[1,4,12,13]; W: const float[6,4,5,5]; B: const float[6]\n"
                 "r = Relu(x); y = Conv(r, W, B) {pads=[2,1,2,3], strides=[2,1]}\nreturn y",
                 1,
                 "r = Relu(x)\np = Pad(r, _:const)\n" TILE("s0", "c0", "p", ", B") TILE("s1", "c1", "p", "")
                 "a = Add(c0, c1)\n" TILE("s2", "c2", "p", "") "y = Add(a, c2)");
}
END_TEST

/* a row too wide: tiles of one row and columns; dilation and group */
START_TEST(rows_and_columns)
{
    PC_CASE_OPTS(&opts,
                 "x: float[1,4,9,30]; W: const float[6,2,2,7]\nr = Relu(x); y = Conv(r, W) {group=2, dilations=[3,2]}\n"
                 "return y",
                 1,
                 "r = Relu(x)\n" TILE("s0", "c0", "r", "") TILE("s1", "c1", "r", "") "a = Add(c0, c1)\n"
                 TILE("s2", "c2", "r", "") "b = Add(a, c2)\n" TILE("s3", "c3", "r", "") "y = Add(b, c3)");
}
END_TEST

/* 9 fits; auto_pad; an unknown dim (8 when evaluated) */
START_TEST(left_alone)
{
    ph_test_options o = opts;
    o.sizes = (const int64_t[]){8};
    o.n_sizes = 1;
    PC_CASE_OPTS(&o,
                 "x: float[1,4,8,8]; u: float[1,4,?,8]; W3: const float[6,4,3,3]; B: const float[6]; W5: const float[6,4,5,5]\n"
                 "a = Conv(x, W3, B); b = Conv(x, W5) {auto_pad=\"SAME_UPPER\"}; c = Conv(u, W5)\nreturn a, b, c",
                 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_if_branches)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,4,8,8]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_value *in[2] = {x, tk_init(body[0], "W", 4, TK_I64(6, 4, 4, 4), 3)};
    tk_output(body[0], ph_node_output(tk_node(body[0], "Conv", 2, in), 0));
    tk_output(body[1], tk_op1(body[1], "Neg", x));
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, &opts, NULL, &err), 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], TILE("s0", "c0", "x", "") TILE("s1", "c1", "x", "") "y = Add(c0, c1)");
    PC_GRAPH_IS(body[1], "y = Neg(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_large_kernel_conv");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, tiles_summed);
    tcase_add_test(tc, rows_and_columns);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
