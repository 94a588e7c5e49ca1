/* tests/test_pass_eliminate_empty_slice.c - eliminate_empty_slice: a
 * Concat stops reading a Slice that is provably empty along the Concat's
 * axis. */
#include <stdlib.h>

#include "passcase.h"

PASS_FIXTURE("eliminate_empty_slice")

#define I64MAX "9223372036854775807"

/* x -> {empty Slice, normal Slice} -> Concat -> Neg: the empty Slice and
 * its 3 constants go, the other's 3 stay. */
START_TEST(empty_slice_input_dropped)
{
    const char *graph = "x: float[3,4]\n"
                        "s1: int64[1] = [4]; e1: int64[1] = [" I64MAX "]; a1: int64[1] = [1]\n"
                        "s2: int64[1] = [0]; e2: int64[1] = [2]; a2: int64[1] = [1]\n"
                        "r = Relu(x); p = Slice(r, s1, e1, a1); q = Slice(r, s2, e2, a2); c = Concat(p, q) {axis=1}\n"
                        "y = Neg(c)\nreturn y";
    PC_CASE(graph, 1, "r = Relu(x)\nq = Slice(r, s2, e2, a2)\nc = Concat(q) {axis=1}\ny = Neg(c)");
    PC_INITIALIZERS_AFTER(graph, 1, 3);
}
END_TEST

/* On a symbolic axis: start 5 >= end 3, and start -1 >= end -2, are empty
 * whatever batch is; negative Concat axis. */
START_TEST(symbolic_axis_same_sign_dropped)
{
    static const int64_t sizes[] = {1, 4, 7};
    const ph_test_options o = {.max_iterations = 4, .sizes = sizes, .n_sizes = 3};
    PC_CASE_OPTS(&o,
                 "x: float[batch,4]; a: int64[1] = [0]\n"
                 "s1: int64[1] = [5]; e1: int64[1] = [3]; s2: int64[1] = [-1]; e2: int64[1] = [-2]\n"
                 "r = Relu(x); p = Slice(r, s1, e1, a); q = Slice(r, s2, e2, a); c = Concat(p, r, q) {axis=-2}\n"
                 "y = Neg(c)\nreturn y",
                 2, "r = Relu(x)\nc = Concat(r) {axis=-2}\ny = Neg(c)");
}
END_TEST

/* The empty Slice has another user and is a graph output: the Concat still
 * stops reading it, the Slice stays for the others. */
START_TEST(slice_with_other_users_kept_input_dropped)
{
    PC_CASE("x: float[3,4]; s: int64[1] = [2]; e: int64[1] = [1]; a: int64[1] = [1]\n"
            "r = Relu(x); p = Slice(r, s, e, a); c = Concat(r, p) {axis=1}; y1 = Neg(c); y2 = Neg(p)\n"
            "return y1, y2, p",
            1, "r = Relu(x)\n--\nc = Concat(r) {axis=1}\ny1 = Neg(c)\n--\np = Slice(r, s, e, a)\n--\ny2 = Neg(p)");
}
END_TEST

/* Every input empty along the axis: one stays, never zero. */
START_TEST(all_empty_keeps_one)
{
    PC_CASE("x: float[3,4]; a: int64[1] = [1]\n"
            "s1: int64[1] = [0]; e1: int64[1] = [0]; s2: int64[1] = [3]; e2: int64[1] = [3]\n"
            "r = Relu(x); p = Slice(r, s1, e1, a); q = Slice(r, s2, e2, a); c = Concat(p, q) {axis=1}; y = Neg(c)\n"
            "return y",
            1, "r = Relu(x)\nq = Slice(r, _, _, a)\nc = Concat(q)\ny = Neg(c)");
}
END_TEST

/* ---- negative cases */

#define X34 "x: float[3,4]; r = Relu(x)\n"
#define XB4 "x: float[batch,4]; r = Relu(x)\n"
static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} kept[] = {
    /* empty along axis 0 but concatenated along axis 1: the output [0,6]
     * counts this input's 2 columns */
    {X34 "z: int64[1] = [0]; o: int64[1] = [1]; t: int64[1] = [3]; two: int64[1] = [2]\n"
     "p = Slice(r, z, z, z); b0 = Slice(r, t, t, z); q = Slice(b0, z, two, o); c = Concat(p, q) {axis=1}\n"
     "y = Neg(c)\nreturn y", 0},
    /* nonempty slices */
    {X34 "a: int64[1] = [1]\n"
     "s1: int64[1] = [3]; e1: int64[1] = [" I64MAX "]; s2: int64[1] = [-1]; e2: int64[1] = [4]\n"
     "s3: int64[1] = [0]; e3: int64[1] = [1]\n"
     "p = Slice(r, s1, e1, a); q = Slice(r, s2, e2, a); u = Slice(r, s3, e3, a); c = Concat(p, q, u) {axis=1}\n"
     "y = Neg(c)\nreturn y", 0},
    /* symbolic axis, start 1 and end -1: empty only when batch <= 2 */
    {XB4 "s: int64[1] = [1]; e: int64[1] = [-1]; a: int64[1] = [0]\n"
     "p = Slice(r, s, e, a); c = Concat(r, p) {axis=0}; y = Neg(c)\nreturn y", 0},
    /* symbolic axis, start 2 and end 5: empty only when batch <= 2 */
    {XB4 "s: int64[1] = [2]; e: int64[1] = [5]; a: int64[1] = [0]\n"
     "p = Slice(r, s, e, a); c = Concat(r, p) {axis=0}; y = Neg(c)\nreturn y", 0},
    /* starts known only at run time */
    {X34 "s: int64[1]; e: int64[1] = [4]; a: int64[1] = [1]\n"
     "p = Slice(r, s, e, a); c = Concat(r, p) {axis=1}; y = Neg(c)\nreturn y", 0},
    /* an unknown rank */
    {"x: float[*]; r = Relu(x); s: int64[1] = [0]; a: int64[1] = [1]\n"
     "p = Slice(r, s, s, a); c = Concat(r, p) {axis=1}; y = Neg(c)\nreturn y", 1},
    /* a single empty input is never removed (no Concat of zero inputs) */
    {X34 "s: int64[1] = [0]; a: int64[1] = [1]\np = Slice(r, s, s, a); c = Concat(p) {axis=1}; y = Neg(c)\nreturn y", 0},
    /* an empty value that is not a Slice is not this pass's business */
    {X34 "z: float[3,0]; q = Relu(z); c = Concat(r, q) {axis=1}; y = Neg(c)\nreturn y", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(kept[_i].mode, kept[_i].graph);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_empty_slice");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, empty_slice_input_dropped);
    tcase_add_test(tc, symbolic_axis_same_sign_dropped);
    tcase_add_test(tc, slice_with_other_users_kept_input_dropped);
    tcase_add_test(tc, all_empty_keeps_one);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof kept / sizeof *kept));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
