/* tests/test_pass_type_cast_narrow.c - type_cast_narrow: int64 subgraphs
 * computed in int32 and float64 ones in float32, Casts at their borders;
 * constants that do not fit, graph outputs, unknown dtypes, the profile's
 * dtypes, bodies; and the program: --check-target npu reports the int64
 * values, the adapt stage with --target npu removes them. */
#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "clirun.h"
#include "passcase.h"
#include "testkit.h"
#include "tmpdir.h"

PASS_FIXTURE("type_cast_narrow")

/* int64 arithmetic on an int64 input: the input through Cast(int32), the
 * constant narrowed, the final Cast to float reads int32 */
START_TEST(int64_arithmetic)
{
    PC_CASE("x: int64[2,3]; c: int64[] = [3]\na = Add(x, c)\nm = Mul(a, a)\ny = Cast(m) {to=1}\nreturn y", 3,
            "xn = Cast(x) {to=6}\na = Add(xn, _:const:int32)\nm = Mul(a, a)\ny = Cast(m) {to=1}");
}
END_TEST

/* Shape's output is int64 by the spec: a Cast after it; Gather, Unsqueeze,
 * Mul and Concat compute in int32; Reshape's shape and Unsqueeze's axes
 * must be int64: a Cast before Reshape, the axes constant stays */
START_TEST(shape_computation)
{
    PC_CASE("x: float[2,3,4]; i: int64[] = [1]; ax: int64[1] = [0]; k: int64[1] = [2]; z: int64[1] = [-1]\n"
            "s = Shape(x)\ng = Gather(s, i) {axis=0}\nu = Unsqueeze(g, ax)\nm = Mul(u, k)\n"
            "c = Concat(m, z) {axis=0}\ny = Reshape(x, c)\nreturn y",
            4,
            "s = Shape(x)\nsn = Cast(s) {to=6}\ng = Gather(sn, i)\nu = Unsqueeze(g, ax:int64)\n"
            "m = Mul(u, _:const:int32)\nc = Concat(m, _:const:int32)\ncw = Cast(c) {to=7}\ny = Reshape(x, cw)");
}
END_TEST

/* ArgMax's output is int64 by the spec: a Cast after it */
START_TEST(argmax_indices)
{
    PC_CASE("x: float[4,5]; c: int64[] = [2]\ni = ArgMax(x) {axis=1}\nm = Mul(i, c)\ny = Cast(m) {to=1}\n"
            "return y",
            2, "i = ArgMax(x)\nin = Cast(i) {to=6}\nm = Mul(in, _:const:int32)\ny = Cast(m) {to=1}");
}
END_TEST

/* float64: the Cast to double of a float is gone (its reader takes the
 * float), the Cast back to float too (the output keeps its name) */
START_TEST(float64_subgraph)
{
    PC_CASE("x: float[2,3]; c: double[] = [0.5]\nd = Cast(x) {to=11}\nm = Mul(d, c)\ne = Exp(m)\n"
            "y = Cast(e) {to=1}\nreturn y",
            3, "m = Mul(x, _:const:float32)\ny = Exp(m)");
}
END_TEST

static char warnings[1024];

static void keep_warning(void *user, ph_log_level level, const char *p, const char *message)
{
    (void)user;
    (void)p;
    if (level == PH_LOG_WARN)
        snprintf(warnings, sizeof warnings, "%s", message);
}

/* an int64 constant outside int32's range: the subgraph stays, a warning
 * names it; another subgraph beside it is narrowed */
START_TEST(constant_out_of_range_stays)
{
    warnings[0] = '\0';
    ph_test_options o = pc_defaults;
    o.log = keep_warning;
    PC_CASE_OPTS(&o, "x: int64[2,3]; big: int64[] = [10000000000]\na = Add(x, big)\nm = Mul(a, a)\nreturn m", 0,
                 NULL);
    ck_assert_msg(strstr(warnings, "constant big does not fit int32"), "%s", warnings);
    /* float64 beyond float32's range */
    PC_CASE_OPTS(&o, "x: float[2,3]; big: double[] = [1e300]\nd = Cast(x) {to=11}\nm = Mul(d, big)\n"
                     "y = Cast(m) {to=1}\nreturn y",
                 0, NULL);
    ck_assert_msg(strstr(warnings, "constant big does not fit float"), "%s", warnings);
    PC_CASE_OPTS(&o,
                 "x: int64[2,3]; big: int64[] = [10000000000]; c: int64[] = [7]\na = Add(x, big)\n"
                 "b = Sub(x, c)\ny = Cast(b) {to=1}\nreturn a, y",
                 2, "a = Add(x, big)\n--\nxn = Cast(x) {to=6}\nb = Sub(xn, _:const:int32)\ny = Cast(b) {to=1}");
}
END_TEST

/* a value of the subgraph that is a graph output keeps its name and int64
 * through a Cast back */
START_TEST(graph_output_in_the_middle)
{
    PC_CASE("x: int64[2,3]; c: int64[] = [3]\na = Add(x, c)\nm = Mul(a, a)\ny = Cast(m) {to=1}\nreturn a, y", 3,
            "xn = Cast(x) {to=6}\nn:shared = Add(xn, _:const:int32)\nm = Mul(n, n)\ny = Cast(m) {to=1}\n--\n"
            "a = Cast(_) {to=7}");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(
        "x: int64[2,3]; c: int64[] = [3]\na = Add(x, c)\nm = Mul(a, a)\ny = Cast(m) {to=1}\nreturn a, y", &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 3);
    ph_value *out = ph_graph_output(ph_model_graph(m), 0);
    ck_assert_int_eq(ph_value_dtype(out), PH_DT_INT64);
    ck_assert_int_eq(ph_value_dtype(ph_graph_input(ph_model_graph(m), 0)), PH_DT_INT64);
    ph_model_free(m);
}
END_TEST

/* an operand whose dtype is not known (a custom op's output): its Add is
 * left alone */
START_TEST(unknown_dtype_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("x: int64[2,3]; c: int64[] = [3]\nu = Foo@custom(x)\na = Add(u, c)\nreturn a");
}
END_TEST

/* int32 arithmetic, and int64 that is only read by inputs that must be
 * int64 (Reshape's shape from a graph input): nothing to narrow */
START_TEST(nothing_wide_left_alone)
{
    PC_UNTOUCHED("x: int32[2,3]; c: int32[] = [3]\na = Add(x, c)\nreturn a");
    PC_UNTOUCHED("x: float[2,3]; s: int64[2] = [3, 2]\ny = Reshape(x, s)\nreturn y");
}
END_TEST

/* A profile: dtypes that allow int64 leave it; an operator's dtypes
 * (Mul's) narrow that operator only */
START_TEST(profile_dtypes)
{
    const char *graph = "x: int64[2,3]; c: int64[] = [3]\na = Add(x, c)\nm = Mul(a, a)\ny = Cast(m) {to=1}\n"
                        "return y";
    ph_error err = {0};
    ph_target *t = ph_target_new();
    ck_assert_int_eq(ph_target_set(t, "", "dtypes", "float32, int32, int64", &err), 0);
    ph_test_options o = pc_defaults;
    o.profile = t;
    PC_CASE_OPTS(&o, graph, 0, NULL);
    ck_assert_int_eq(ph_target_set(t, "Mul", "dtypes", "float32, int32", &err), 0);
    PC_CASE_OPTS(&o, graph, 1,
                 "a = Add(x, c)\nan = Cast(a) {to=6}\nm = Mul(an, an)\nmw = Cast(m) {to=7}\ny = Cast(mw) {to=1}");
    ph_target_free(t);
    /* without a profile, the parameter int64=false leaves int64 */
    const char *no64[] = {"int64=false", NULL};
    ph_test_options p = pc_defaults;
    p.params = no64;
    PC_CASE_OPTS(&p, graph, 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If is built with the IR calls.  The outer
 * int64 input is cast once, in the main graph; each branch computes in
 * int32 and gives back int64. */
START_TEST(inside_if_branches)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: int64[2,3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    int64_t three = 3;
    ph_value *a = tk_op2(then_g, "Add", x, ph_graph_add_initializer(then_g, "c", ph_tensor_new(PH_DT_INT64, 0, NULL, &three)));
    tk_output(then_g, tk_op2(then_g, "Mul", a, a));
    tk_output(else_g, tk_op1(else_g, "Neg", x));
    ck_assert_int_eq(ph_graph_infer_shapes(g, NULL), 0);
    pc_run_structure(m, 3);
    PC_GRAPH_IS(g, "xn = Cast(x) {to=6}\n--\ny = If(cond)");
    PC_GRAPH_IS(then_g, "a = Add(xn, _:const:int32)\nm = Mul(a, a)\nw = Cast(m) {to=7}");
    PC_GRAPH_IS(else_g, "n = Neg(xn)\nw = Cast(n) {to=7}");
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(then_g, 0)), PH_DT_INT64);
    ph_error err = {0};
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_model_free(m);
}
END_TEST

/* A Loop body: its inputs (the iteration number, the carried int64 value)
 * and outputs keep their dtypes; its sum is computed in int32 between
 * Casts.  The Loop's own inputs are the spec's int64 (M) or the body's. */
START_TEST(inside_a_loop_body)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text("M: int64[]; cond: bool[]; v0: int64[3]\nv = Loop(M, cond, v0)\nreturn v", &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ph_node *loop = ph_value_producer(ph_graph_output(g, 0));
    ph_graph *body = ph_node_add_subgraph(loop, "body");
    ph_value *it = ph_graph_add_input(body, "it", PH_DT_INT64, 0, NULL);
    ph_value *c = ph_graph_add_input(body, "c", PH_DT_BOOL, 0, NULL);
    ph_value *v = ph_graph_add_input(body, "v", PH_DT_INT64, 1, (int64_t[]){3});
    tk_output(body, tk_op1(body, "Identity", c));
    tk_output(body, tk_op2(body, "Add", v, it));
    ck_assert_int_eq(ph_graph_infer_shapes(g, NULL), 0);
    pc_run_structure(m, 1);
    PC_GRAPH_IS(g, "v = Loop(M, cond, v0)");
    PC_GRAPH_IS(body, "co = Identity(c)\n--\nvn = Cast(v) {to=6}\nin = Cast(it) {to=6}\ns = Add(vn, in)\n"
                      "w = Cast(s) {to=7}");
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(body, 1)), PH_DT_INT64);
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_model_free(m);
}
END_TEST

/* A Scan over the rows of int64 x [4,3]: the state s (int64 [3]) becomes
 * s + row, and each step also gives (s + row) * c, c an int64 constant of
 * the body (three: fits; 10^10: does not).  Built with the IR calls (the
 * text has no bodies). */
static ph_model *scan_model(int64_t c, ph_graph **body_out)
{
    ph_model *m = pc_model("opset 16; s0: int64[3]; x: int64[4,3]\ny, z = Scan(s0, x) {num_scan_inputs=1}\n"
                           "return y, z");
    ph_graph *g = ph_model_graph(m);
    ph_node *scan = ph_value_producer(ph_graph_output(g, 0));
    ph_graph *body = ph_node_add_subgraph(scan, "body");
    ph_value *s = ph_graph_add_input(body, "s", PH_DT_INT64, 1, (int64_t[]){3});
    ph_value *row = ph_graph_add_input(body, "row", PH_DT_INT64, 1, (int64_t[]){3});
    ph_value *k = ph_graph_add_initializer(body, "c", ph_tensor_new(PH_DT_INT64, 0, NULL, &c));
    ph_value *sum = tk_op2(body, "Add", s, row);
    tk_output(body, sum);
    tk_output(body, tk_op2(body, "Mul", sum, k));
    ck_assert_int_eq(ph_graph_infer_shapes(g, NULL), 0);
    *body_out = body;
    return m;
}

/* A Scan body: its inputs (the state, the scanned row) and outputs keep
 * int64, as the Scan's own inputs and outputs do; its Add and Mul compute
 * in int32 between Casts, the constant narrowed.  The numeric check runs
 * the Scan before and after on random inputs.  A constant that does not
 * fit int32 leaves the body as it is. */
START_TEST(inside_a_scan_body)
{
    ph_graph *body;
    ph_model *m = scan_model(3, &body);
    ph_graph *g = ph_model_graph(m);
    pc_run_checked(m, 2);
    PC_GRAPH_IS(g, "y, z = Scan(s0, x)");
    PC_GRAPH_IS(body, "sn = Cast(s) {to=6}\nrn = Cast(row) {to=6}\na:shared = Add(sn, rn)\nw = Cast(a) {to=7}\n--\n"
                      "p = Mul(a, _:const:int32)\npw = Cast(p) {to=7}");
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(ph_value_dtype(ph_graph_input(body, i)), PH_DT_INT64);
        ck_assert_int_eq(ph_value_dtype(ph_graph_output(body, i)), PH_DT_INT64);
        ck_assert_int_eq(ph_value_dtype(ph_graph_output(g, i)), PH_DT_INT64);
    }
    ph_error err = {0};
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_model_free(m);

    warnings[0] = '\0';
    ph_test_options o = pc_defaults;
    o.log = keep_warning;
    m = scan_model(10000000000, &body);
    ck_assert_int_eq(ph_test_run_checked(pass, m, &o, NULL, &err), 0);
    ck_assert_msg(strstr(warnings, "constant c does not fit int32"), "%s", warnings);
    PC_GRAPH_IS(body, "a:shared = Add(s, row)\n--\np = Mul(a, c)");
    ph_model_free(m);
}
END_TEST

/* The program: --check-target npu lists the int64 values of a model with
 * int64 arithmetic (a dynamic batch: the shape computation stays); the
 * adapt stage with --target npu leaves them at the default level (the
 * pass is approx), none at level approx, and --verify finds the outputs
 * the same.  (scripts/test_ort.sh runs such a model in ONNX Runtime.) */
START_TEST(cli_check_and_adapt)
{
    tk_tmpdir_make("type_cast_narrow");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(
        "x: float[N,3,4]; i: int64[] = [0]; ax: int64[1] = [0]; k: int64[1] = [2]; z: int64[1] = [-1]\n"
        "k2: int64[1,1] = [2]\ns = Shape(x)\ng = Gather(s, i) {axis=0}\nu = Unsqueeze(g, ax)\nm = Mul(u, k)\n"
        "c = Concat(m, z) {axis=0}\nr = Reshape(x, c)\nj = ArgMax(r) {axis=1}\nq = Add(j, k2)\n"
        "y = Cast(q) {to=1}\nreturn r, y",
        &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    const char *in = tk_tpath("int64.onnx"), *out = tk_tpath("out.onnx");
    ck_assert_int_eq(ph_model_save(m, in, &err), 0);
    ph_model_free(m);
    tk_cli_result r = TK_CLI("--check-target", "npu", in);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "target npu: 5 violations") && strstr(r.out, "type_cast_narrow") &&
                      strstr(r.out, "Concat") && strstr(r.out, "Add"),
                  "%s", r.out);
    tk_cli_free(&r);
    /* at the default level the approx pass is left out: the values remain */
    r = TK_CLI("-i", in, "-o", out, "--target", "npu");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "target npu: 5 violations"), "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("-i", in, "-o", out, "--target", "npu", "--set", "adapt.level=approx", "--verify");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "target npu: no violations") && strstr(r.out, "type_cast_narrow 6"), "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("--check-target", "npu", out);
    ck_assert_msg(r.status == 0 && strstr(r.out, "target npu: no violations"), "%s%s", r.out, r.err);
    tk_cli_free(&r);
    tk_tmpdir_remove();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("type_cast_narrow");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, int64_arithmetic);
    tcase_add_test(tc, shape_computation);
    tcase_add_test(tc, argmax_indices);
    tcase_add_test(tc, float64_subgraph);
    tcase_add_test(tc, constant_out_of_range_stays);
    tcase_add_test(tc, graph_output_in_the_middle);
    tcase_add_test(tc, unknown_dtype_left_alone);
    tcase_add_test(tc, nothing_wide_left_alone);
    tcase_add_test(tc, profile_dtypes);
    tcase_add_test(tc, inside_if_branches);
    tcase_add_test(tc, inside_a_loop_body);
    tcase_add_test(tc, inside_a_scan_body);
    tcase_add_test(tc, cli_check_and_adapt);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
