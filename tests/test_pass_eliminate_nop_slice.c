/* tests/test_pass_eliminate_nop_slice.c - eliminate_nop_slice: a Slice that
 * provably takes every element of its input goes. */
#include <stdlib.h>

#include "passcase.h"

PASS_FIXTURE("eliminate_nop_slice")

#define I64MAX "9223372036854775807"
#define I64MIN "-9223372036854775808"
#define I32MAX "2147483647"

/* the slice's constants are pruned */
START_TEST(whole_axis_int64max_removed)
{
    const char *graph = "x: float[3,4]; s: int64[1] = [0]; e: int64[1] = [" I64MAX "]; a: int64[1] = [1]\n"
                        "r = Relu(x); q = Slice(r, s, e, a); y = Neg(q)\nreturn y";
    PC_CASE(graph, 1, "r = Relu(x)\ny = Neg(r)");
    PC_INITIALIZERS_AFTER(graph, 1, 0);
}
END_TEST

/* Exact ends, clamped ends, negative starts, explicit unit steps. */
START_TEST(known_dims_exact_and_clamped_removed)
{
    PC_CASE("x: float[3,4,5]; s1: int64[2] = [0, 0]; e1: int64[2] = [3, 4]\n"
            "s2: int64[2] = [-3, -100]; e2: int64[2] = [100, 5]; a2: int64[2] = [0, -1]; p2: int64[2] = [1, 1]\n"
            "r = Relu(x); a = Slice(r, s1, e1); b = Slice(a, s2, e2, a2, p2); y = Neg(b)\nreturn y",
            2, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* An axis of one element: any positive step keeps it. */
START_TEST(one_element_axis_step2_removed)
{
    PC_CASE("x: float[1,4]; s: int64[1] = [0]; e: int64[1] = [" I64MAX "]; a: int64[1] = [0]; p: int64[1] = [2]\n"
            "r = Relu(x); q = Slice(r, s, e, a, p); y = Neg(q)\nreturn y",
            1, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* [batch,4]: start 0 or INT64_MIN, end INT64_MAX or INT32_MAX on the
 * symbolic axis. */
START_TEST(symbolic_axis_sentinels_removed)
{
    static const int64_t sizes[] = {1, 5};
    const ph_test_options o = {.max_iterations = 4, .sizes = sizes, .n_sizes = 2};
    PC_CASE_OPTS(&o,
                 "x: float[batch,4]; s1: int64[1] = [0]; e1: int64[1] = [" I64MAX "]\n"
                 "s2: int64[2] = [" I64MIN ", 0]; e2: int64[2] = [" I32MAX ", 4]\n"
                 "r = Relu(x); a = Slice(r, s1, e1); b = Slice(a, s2, e2); y = Neg(b)\nreturn y",
                 2, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* ends = Shape(x)[0:1], i.e. [batch], on the batch axis: the Shape ->
 * Slice chain that computed the end goes with it. */
START_TEST(symbolic_end_same_dim_removed)
{
    static const int64_t sizes[] = {2, 3};
    const ph_test_options o = {.max_iterations = 4, .sizes = sizes, .n_sizes = 2};
    const char *graph = "x: float[batch,4]; s0: int64[1] = [0]; e1: int64[1] = [1]; st: int64[1] = [0]; ax: int64[1] = [0]\n"
                        "r = Relu(x); sh = Shape(r); e = Slice(sh, s0, e1); q = Slice(r, st, e, ax); y = Neg(q)\nreturn y";
    PC_CASE_OPTS(&o, graph, 1, "r = Relu(x)\ny = Neg(r)");
    PC_INITIALIZERS_AFTER(graph, 1, 0);
}
END_TEST

START_TEST(graph_output_in_middle_redirected)
{
    const char *graph = "x: float[3,4]; s: int64[1] = [0]; e: int64[1] = [4]; a: int64[1] = [1]\n"
                        "r = Relu(x); q = Slice(r, s, e, a); y = Neg(q)\nreturn q, y";
    PC_CASE(graph, 1, "q = Relu(x)\n--\ny = Neg(q)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* Opset 9: starts/ends/axes are attributes (the evaluator has no such
 * Slice: structure only). */
START_TEST(opset9_attributes_removed)
{
    PC_CASE_OPTS(&pc_unchecked,
                 "opset 9; x: float[3,4]\nr = Relu(x); q = Slice(r) {starts=[0], ends=[" I64MAX "], axes=[-1]}; y = Neg(q)\n"
                 "return y",
                 1, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* ---- negative cases */

static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} kept[] = {
    /* a partial slice */
    {"x: float[3,4]; s: int64[1] = [0]; e: int64[1] = [3]; a: int64[1] = [1]\n"
     "r = Relu(x); q = Slice(r, s, e, a); y = Neg(q)\nreturn y", 0},
    /* start 1 */
    {"x: float[batch,4]; s: int64[1] = [1]; e: int64[1] = [" I64MAX "]\n"
     "r = Relu(x); q = Slice(r, s, e); y = Neg(q)\nreturn y", 0},
    /* step 2 */
    {"x: float[3,4]; s: int64[1] = [0]; e: int64[1] = [" I64MAX "]; a: int64[1] = [1]; p: int64[1] = [2]\n"
     "r = Relu(x); q = Slice(r, s, e, a, p); y = Neg(q)\nreturn y", 0},
    /* the whole axis reversed: same shape, other order */
    {"x: float[3,4]; s: int64[1] = [-1]; e: int64[1] = [" I64MIN "]; a: int64[1] = [1]; p: int64[1] = [-1]\n"
     "r = Relu(x); q = Slice(r, s, e, a, p); y = Neg(q)\nreturn y", 0},
    /* an end of 100 on a symbolic axis could cut it */
    {"x: float[batch,4]; s: int64[1] = [0]; e: int64[1] = [100]\n"
     "r = Relu(x); q = Slice(r, s, e); y = Neg(q)\nreturn y", 0},
    /* [batch,seq]: slicing axis 0 up to seq (Shape(x)[1:2]) is not provably the whole axis */
    {"x: float[batch,seq]; s0: int64[1] = [1]; e1: int64[1] = [2]; st: int64[1] = [0]; ax: int64[1] = [0]\n"
     "r = Relu(x); sh = Shape(r); e = Slice(sh, s0, e1); q = Slice(r, st, e, ax); y = Neg(q)\nreturn y", 0},
    /* starts known only at run time */
    {"x: float[3,4]; s: int64[1]; e: int64[1] = [" I64MAX "]\n"
     "r = Relu(x); q = Slice(r, s, e); y = Neg(q)\nreturn y", 0},
    /* an unknown rank */
    {"x: float[*]; s: int64[1] = [0]; e: int64[1] = [" I64MAX "]\n"
     "r = Relu(x); q = Slice(r, s, e); y = Neg(q)\nreturn y", 1},
    /* an unknown (unnamed) dim with an exact-looking end 4: could be longer */
    {"x: float[3,?]; s: int64[1] = [0]; e: int64[1] = [4]; a: int64[1] = [1]\n"
     "r = Relu(x); q = Slice(r, s, e, a); y = Neg(q)\nreturn y", 0},
    /* a graph input to a graph output */
    {"x: float[3,4]; s: int64[1] = [0]; e: int64[1] = [" I64MAX "]; y = Slice(x, s, e); return y", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(kept[_i].mode, kept[_i].graph);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_slice");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, whole_axis_int64max_removed);
    tcase_add_test(tc, known_dims_exact_and_clamped_removed);
    tcase_add_test(tc, one_element_axis_step2_removed);
    tcase_add_test(tc, symbolic_axis_sentinels_removed);
    tcase_add_test(tc, symbolic_end_same_dim_removed);
    tcase_add_test(tc, graph_output_in_middle_redirected);
    tcase_add_test(tc, opset9_attributes_removed);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof kept / sizeof *kept));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
