/* tests/test_pass_eliminate_nop_expand.c - eliminate_nop_expand: an Expand
 * to a shape its input already has goes. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"

PASS_FIXTURE("eliminate_nop_expand")

/* the shape constant is pruned */
START_TEST(same_shape_removed)
{
    const char *graph = "x: float[3,4]; s: int64[2] = [3, 4]; r = Relu(x); e = Expand(r, s); y = Neg(e); return y";
    PC_CASE(graph, 1, "r = Relu(x)\ny = Neg(r)");
    PC_INITIALIZERS_AFTER(graph, 1, 0);
}
END_TEST

/* Ones and shorter shapes broadcast to x's own shape. */
START_TEST(ones_and_shorter_shapes_removed)
{
    PC_CASE("x: float[3,4]; s1: int64[2] = [1, 4]; s2: int64[1] = [4]; s3: int64[1] = [1]; s4: const int64[0]\n"
            "r = Relu(x); a = Expand(r, s1); b = Expand(a, s2); c = Expand(b, s3); d = Expand(c, s4); y = Neg(d)\n"
            "return y",
            4, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* Expand(x, Shape(x)) with a symbolic batch: the Shape goes too. */
START_TEST(expand_to_own_shape_symbolic_removed)
{
    PC_CASE("x: float[batch,2,seq]; r = Relu(x); s = Shape(r); e = Expand(r, s); y = Neg(e); return y", 1,
            "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* An unknown dim (no name) is kept by a 1. */
START_TEST(one_over_unknown_dim_removed)
{
    PC_CASE("x: float[?,4]; s: int64[2] = [1, 4]; r = Relu(x); e = Expand(r, s); y = Neg(e); return y", 1,
            "r = Relu(x)\ny = Neg(r)");
}
END_TEST

START_TEST(graph_output_in_middle_redirected)
{
    const char *graph = "x: float[3,4]; s: int64[2] = [3, 4]; r = Relu(x); e = Expand(r, s); y = Neg(e); return e, y";
    PC_CASE(graph, 1, "e = Relu(x)\n--\ny = Neg(e)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* ---- negative cases */

static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} kept[] = {
    /* the rank grows */
    {"x: float[3,4]; s: int64[3] = [1, 3, 4]; r = Relu(x); e = Expand(r, s); y = Neg(e); return y", 0},
    /* the broadcast grows a dim */
    {"x: float[1,4]; s: int64[2] = [3, 4]; r = Relu(x); e = Expand(r, s); y = Neg(e); return y", 0},
    /* x [3,?]: the unknown dim could be 1 and grow to 4 */
    {"x: float[3,?]; s: int64[2] = [3, 4]; r = Relu(x); e = Expand(r, s); y = Neg(e); return y", 1},
    /* an unknown rank */
    {"x: float[*]; s: int64[1] = [1]; r = Relu(x); e = Expand(r, s); y = Neg(e); return y", 1},
    /* a shape known only at run time */
    {"x: float[3,4]; s: int64[2]; r = Relu(x); e = Expand(r, s); y = Neg(e); return y", 1},
    /* x [batch,4] expanded to Shape(z) with z [seq,4]: another name */
    {"x: float[batch,4]; z: float[seq,4]; r = Relu(x); q = Relu(z); s = Shape(q); e = Expand(r, s); y = Neg(e)\n"
     "return y", 1},
    /* a graph input to a graph output */
    {"x: float[3,4]; s: int64[2] = [3, 4]; y = Expand(x, s); return y", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(kept[_i].mode, kept[_i].graph);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_expand");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, same_shape_removed);
    tcase_add_test(tc, ones_and_shorter_shapes_removed);
    tcase_add_test(tc, expand_to_own_shape_symbolic_removed);
    tcase_add_test(tc, one_over_unknown_dim_removed);
    tcase_add_test(tc, graph_output_in_middle_redirected);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof kept / sizeof *kept));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
