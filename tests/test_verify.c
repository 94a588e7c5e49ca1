/* tests/test_verify.c - numeric verification (host/check/verify.h,
 * host/check/verify_inputs.h), by its API and through the built binary:
 *   - the error budget against the float64 reference: a rewrite that only
 *     rounds otherwise passes where fixed tolerances fail, a wrong one fails;
 *     outputs the original computes exactly, integer outputs, NaN and
 *     infinity; the fixed tolerances when asked for;
 *   - exact passes: --verify-each and --bisect name a pass declared exact
 *     (tests/plugins/tp_exact_div.c) that changes bits within the budget,
 *     and the rewrite that did; a pass that keeps the bits passes;
 *   - real data: ONNX test_data_set folders (libonnx-testdata: inputs matched
 *     by position and by name, expected outputs checked, bfloat16 stored as
 *     uint16), .npy folders, bad folders, --verify-each and --bisect on data;
 *   - random inputs that respect the model: ranges from the consumers,
 *     --verify-range, the symbolic dims hint and inputs too large to make. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clirun.h"
#include "config/config.h"
#include "base/exit.h"
#include "passhost/passhost.h"
#include "pbwire.h"
#include "testkit.h"
#include "tmpdir.h"
#include "check/verify.h"
#include "check/verify_inputs.h"

#define TESTDATA "/usr/share/libonnx-testdata/data/node"

static const char *plugdir;

static void setup(void)
{
    static const char *const plugins[] = {"tp_exact_div", "tp_seventh_scales", NULL};
    tk_tmpdir_make("verify");
    plugdir = tk_tmpdir_plugins(plugins);
    unsetenv("PASSHOST_PLUGIN_PATH");
}

static void teardown(void) { tk_tmpdir_remove(); }

/* ------------------------------------------------------------ builders */

static ph_value *scalar(ph_graph *g, const char *name, float v)
{
    ph_value *s = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 0, NULL, &v));
    ck_assert_ptr_nonnull(s);
    return s;
}

static ph_value *named(ph_value *out, const char *name)
{
    ck_assert_int_eq(ph_node_set_name(ph_value_producer(out), name), 0);
    return out;
}

static const char *save(ph_model *m, const char *name)
{
    tk_infer(m);
    const char *path = tk_tpath(name);
    ph_error err = {0};
    ck_assert_msg(ph_model_save(m, path, &err) == 0, "%s", err.message);
    ph_model_free(m);
    return path;
}

/* y = f(x) for x[4,16]: the model kind k. */
enum { M_OFFSET_1024, M_OFFSET_1000, M_SCALED, M_TIMES2, M_PLUS_SELF, M_TIMES2_OFF, M_ARGMAX, M_ARGMIN,
       M_EXP100, M_EXP100_CLAMPED, M_LOG, M_LOG_ABS };

static ph_model *unary_model(int k)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 16)), *y = NULL;
    switch (k) {
    case M_OFFSET_1024: y = tk_op2(g, "Sub", tk_op2(g, "Add", x, scalar(g, "a", 1024)), scalar(g, "b", 1024)); break;
    case M_OFFSET_1000: y = tk_op2(g, "Sub", tk_op2(g, "Add", x, scalar(g, "a", 1000)), scalar(g, "b", 1000)); break;
    case M_SCALED: y = tk_op2(g, "Mul", x, scalar(g, "s", 1.001f)); break;
    case M_TIMES2: y = tk_op2(g, "Mul", x, scalar(g, "s", 2)); break;
    case M_PLUS_SELF: y = tk_op2(g, "Add", x, x); break;
    case M_TIMES2_OFF: y = tk_op2(g, "Mul", x, scalar(g, "s", 2.00001f)); break;
    case M_ARGMAX: case M_ARGMIN: {
        ph_node *n = tk_node(g, k == M_ARGMAX ? "ArgMax" : "ArgMin", 1, &x);
        ck_assert_int_eq(ph_node_set_attr_int(n, "axis", 1), 0);
        y = ph_node_output(n, 0);
        break;
    }
    case M_EXP100: y = tk_op1(g, "Exp", tk_op2(g, "Mul", x, scalar(g, "s", 100))); break;
    case M_EXP100_CLAMPED:
        y = tk_op1(g, "Exp", tk_op2(g, "Min", tk_op2(g, "Mul", x, scalar(g, "s", 100)), scalar(g, "c", 88)));
        break;
    case M_LOG: y = tk_op1(g, "Log", tk_op2(g, "Sub", x, scalar(g, "h", 0.5f))); break;
    case M_LOG_ABS: y = tk_op1(g, "Log", tk_op1(g, "Abs", tk_op2(g, "Sub", x, scalar(g, "h", 0.5f)))); break;
    }
    tk_output(g, y);
    tk_infer(m);
    return m;
}

/* Verify `optimized` against `original` (host API) with vc; the code, and
 * the message in msg. */
static int judge(int original, int optimized, const host_verify_config *vc, char *msg, size_t size,
                 host_verify_result *res)
{
    ph_model *a = unary_model(original), *b = unary_model(optimized);
    host_verify *v = NULL;
    ph_error err = {0};
    ck_assert_msg(host_verify_new(a, vc, &v, &err) == 0, "%s", err.message);
    int rc = host_verify_check(v, b, &err);
    snprintf(msg, size, "%s", err.message);
    size_t n;
    if (res)
        *res = host_verify_results(v, &n)[0];
    host_verify_free(v);
    ph_model_free(a);
    ph_model_free(b);
    return rc;
}

/* ------------------------------------------------------------ the budget */

START_TEST(budget_accepts_other_rounding_and_refuses_a_wrong_rewrite)
{
    host_verify_config vc = host_verify_defaults();
    char msg[600];
    host_verify_result r;
    /* (x + 1024) - 1024 rounds x to a multiple of 2^-13; (x + 1000) - 1000
       rounds differently: beyond atol 1e-5 + rtol 1e-4, within the budget */
    ck_assert_msg(judge(M_OFFSET_1024, M_OFFSET_1000, &vc, msg, sizeof msg, &r) == 0, "%s", msg);
    ck_assert(r.is_float && r.ok && r.original_error > 1e-5 && r.original_error <= 0x1p-14);
    ck_assert(r.optimized_error > 0 && r.optimized_error <= r.budget);
    ck_assert(fabs(r.budget - (4 * r.original_error + 4 * 0x1p-23 * r.scale)) < 1e-12);
    ck_assert(r.max_abs > 1e-5); /* what the fixed tolerances see */
    host_verify_config fixed = vc;
    fixed.atol = 1e-5;
    ck_assert_int_eq(judge(M_OFFSET_1024, M_OFFSET_1000, &fixed, msg, sizeof msg, NULL), HOST_EXIT_MISMATCH);
    ck_assert_msg(strstr(msg, "differs") && strstr(msg, "atol 1e-05 + rtol 0.0001"), "%s", msg);
    /* a wrong rewrite: x * 1.001 */
    ck_assert_int_eq(judge(M_OFFSET_1024, M_SCALED, &vc, msg, sizeof msg, &r), HOST_EXIT_MISMATCH);
    ck_assert_msg(strstr(msg, "differs: optimized error") && strstr(msg, "beyond its budget") &&
                  strstr(msg, "float64 reference"), "%s", msg);
    ck_assert(!r.ok && r.mismatches > 0 && r.optimized_error > r.budget);
    /* budget_factor 0 and no ulps: nothing but the reference itself passes */
    host_verify_config strict = vc;
    strict.budget_factor = 0;
    strict.budget_ulps = 0;
    ck_assert_int_eq(judge(M_OFFSET_1024, M_OFFSET_1000, &strict, msg, sizeof msg, NULL), HOST_EXIT_MISMATCH);
}
END_TEST

START_TEST(budget_of_an_exact_output_is_a_few_ulp)
{
    host_verify_config vc = host_verify_defaults();
    char msg[600];
    host_verify_result r;
    /* x * 2 is exact in float32: original error 0, budget 4 ulp of max |y| */
    ck_assert_msg(judge(M_TIMES2, M_PLUS_SELF, &vc, msg, sizeof msg, &r) == 0, "%s", msg);
    ck_assert(r.original_error == 0 && r.optimized_error == 0);
    ck_assert(r.budget > 0 && r.budget <= 4 * 0x1p-23 * 2);
    /* x * 2.00001: 1e-5 relative, far beyond a few ulp */
    ck_assert_int_eq(judge(M_TIMES2, M_TIMES2_OFF, &vc, msg, sizeof msg, &r), HOST_EXIT_MISMATCH);
    ck_assert(r.optimized_error > r.budget);
}
END_TEST

START_TEST(integer_outputs_equal_the_reference_where_the_original_does)
{
    host_verify_config vc = host_verify_defaults();
    char msg[600];
    host_verify_result r;
    ck_assert_msg(judge(M_ARGMAX, M_ARGMAX, &vc, msg, sizeof msg, &r) == 0, "%s", msg);
    ck_assert(!r.is_float && r.original_error == 0 && r.optimized_error == 0);
    ck_assert_int_eq(judge(M_ARGMAX, M_ARGMIN, &vc, msg, sizeof msg, &r), HOST_EXIT_MISMATCH);
    ck_assert_msg(strstr(msg, "differs") && strstr(msg, "elements differ from the float64 "
                                                                "reference where the original equals it"),
                  "%s", msg);
    ck_assert(r.mismatches > 0);
}
END_TEST

START_TEST(nan_and_infinity_must_stay_where_the_original_has_them)
{
    host_verify_config vc = host_verify_defaults();
    char msg[600];
    host_verify_result r;
    /* exp(100 x) overflows float32 (not double) for x > 0.887: the same
       model keeps its infinities; a clamped one does not */
    ck_assert_msg(judge(M_EXP100, M_EXP100, &vc, msg, sizeof msg, &r) == 0, "%s", msg);
    ck_assert(isfinite(r.original_error) && isfinite(r.budget));
    ck_assert_int_eq(judge(M_EXP100, M_EXP100_CLAMPED, &vc, msg, sizeof msg, &r), HOST_EXIT_MISMATCH);
    ck_assert_msg(strstr(msg, "NaN or infinity"), "%s", msg);
    /* log(x - 0.5) is NaN below 0.5, in the reference too: NaN must stay NaN */
    ck_assert_msg(judge(M_LOG, M_LOG, &vc, msg, sizeof msg, &r) == 0, "%s", msg);
    ck_assert_int_eq(judge(M_LOG, M_LOG_ABS, &vc, msg, sizeof msg, &r), HOST_EXIT_MISMATCH);
    ck_assert_msg(strstr(msg, "NaN or infinity"), "%s", msg);
}
END_TEST

/* ------------------------------------------------------------ exactness */

/* x[4,8] -> Div by each divisor in turn (nodes div_D) -> y. */
static const char *div_chain(const char *name, size_t n, const float *divisors)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = tk_input(g, "x", 2, TK_I64(4, 8));
    for (size_t i = 0; i < n; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "div_%g", (double)divisors[i]);
        y = named(tk_op2(g, "Div", y, scalar(g, nm, divisors[i])), nm);
    }
    tk_output(g, y);
    return save(m, name);
}

START_TEST(exact_pass_that_changes_bits_is_named)
{
    const float divs[] = {2, 4, 8, 3, 16};
    const char *in = div_chain("divs.onnx", 5, divs), *out = tk_tpath("out.onnx");
#define EXACT_DIV "--plugin-dir", plugdir, "--set", "optimize.no_integral=true", "--set", \
                  "adapt.no_integral=true", "--set", "optimize.pass_on=tp_exact_div"
    /* within the budget: --verify passes */
    tk_cli_result r = TK_CLI("-i", in, "-o", out, EXACT_DIV, "--verify", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    /* --verify-each: the promise is checked after the call */
    r = TK_CLI("-i", in, "-o", out, EXACT_DIV, "--verify-each", "-q");
    tk_expect_failure(&r, HOST_EXIT_MISMATCH, "pass tp_exact_div is declared exact but changed the bits of output '",
                      "elements differ");
    /* --bisect: the rewrite within the call */
    r = TK_CLI("-i", in, EXACT_DIV, "--bisect");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(tk_line_count(r.err) == 1 && strstr(r.err, "first rewrite that broke an exact promise") &&
                  strstr(r.err, "rewrite 4 of 5") && strstr(r.err, "pass tp_exact_div") &&
                  strstr(r.err, "matched div_3"), "%s", r.err);
    ck_assert_msg(strstr(r.out, "declared exact and changed the outputs' bits in its call of rewrites 1..5") &&
                  strstr(r.out, "first 3 rewrites: bits as before") &&
                  strstr(r.out, "first 4 rewrites: outputs differ in bits"), "%s", r.out);
    tk_cli_free(&r);
    /* the reproducer says so */
    r = TK_CLI("-i", in, EXACT_DIV, "--bisect-out", tk_tpath("repro"), "-q");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH && strstr(r.err, "rewrite 4 of 5"), "%s", r.err);
    tk_cli_free(&r);
    char *readme = tk_slurp(tk_tpath("repro/README.txt"), NULL);
    ck_assert_msg(readme && strstr(readme, "declared exact") && strstr(readme, "--max-rewrites 4 --verify-each"),
                  "%s", readme);
    free(readme);
    /* powers of two only: bit for bit, nothing to bisect */
    in = div_chain("pow2.onnx", 3, divs);
    r = TK_CLI("-i", in, "-o", out, EXACT_DIV, "--verify-each");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "exact passes bit for bit) OK"), "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("-i", in, EXACT_DIV, "--bisect");
    ck_assert_msg(r.status == 0 && strstr(r.out, "kept the outputs' bits") && strstr(r.out, "nothing to bisect"),
                  "exit %d: %s%s", r.status, r.out, r.err);
    tk_cli_free(&r);
}
END_TEST

/* A wrong rewrite still fails --verify and --bisect with the budget, and the
 * bisect line says the pass is declared exact. */
START_TEST(wrong_rewrite_still_fails)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 16));
    for (int i = 0; i < 9; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "relu_%d", i);
        tk_output(g, named(tk_op1(g, "Relu", x), nm));
    }
    const char *in = save(m, "relus.onnx");
#define SEVENTH "--plugin-dir", plugdir, "--set", "optimize.no_integral=true", "--set", \
                "adapt.no_integral=true", "--set", "optimize.pass_on=tp_seventh_scales"
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), SEVENTH, "--verify");
    ck_assert_msg(strstr(r.out, "original error 0  optimized error") && strstr(r.out, "MISMATCH"), "%s", r.out);
    tk_expect_failure(&r, HOST_EXIT_MISMATCH, "differs: optimized error", "beyond its budget");
    r = TK_CLI("-i", in, SEVENTH, "--bisect", "-q");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH && strstr(r.err, "rewrite 7 of 9") &&
                  strstr(r.err, "(the pass is declared exact)") && strstr(r.err, "then output '"),
                  "%s", r.err);
    tk_cli_free(&r);
    /* fixed tolerances from the command line and from [verify] */
    r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), SEVENTH, "--verify-atol", "0.01", "--verify-rtol", "0");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "verify: 3 runs, 9 outputs") && strstr(r.out, "atol 0.01, rtol 0: OK"), "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), SEVENTH, "--set", "verify.atol=0.0001", "--verify");
    tk_expect_failure(&r, HOST_EXIT_MISMATCH, "outside atol 0.0001 + rtol 0.0001", NULL);
    r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--verify-atol", "x");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--verify-atol 'x'", ">= 0");
    r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--verify-rtol", "-1");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--verify-rtol '-1'", NULL);
}
END_TEST

/* ------------------------------------------------------------ real data */

/* A TensorProto file: float data of dims, named name (may be NULL). */
static void write_pb(const char *path, const char *name, size_t rank, const int64_t *dims, const float *v,
                     size_t n)
{
    pb t = {0};
    for (size_t i = 0; i < rank; i++)
        pb_int(&t, 1, (uint64_t)dims[i]);
    pb_int(&t, 2, PH_DT_FLOAT);
    if (name)
        pb_str(&t, 8, name);
    pb_bytes(&t, 9, v, n * sizeof *v);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(t.data, 1, t.len, f), t.len);
    fclose(f);
}

/* A .npy file (version 1) of float32 dims. */
static void write_npy(const char *path, size_t rank, const int64_t *dims, const float *v, size_t n)
{
    char shape[200] = "";
    size_t k = 0;
    for (size_t i = 0; i < rank; i++)
        k += (size_t)snprintf(shape + k, sizeof shape - k, "%lld,%s", (long long)dims[i], rank > 1 && i + 1 < rank ? " " : "");
    char header[256];
    int len = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
    int pad = 64 - (10 + len + 1) % 64;
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len + pad + 1), 0};
    fwrite(pre, 1, 10, f);
    fwrite(header, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    fwrite(v, sizeof *v, n, f);
    fclose(f);
}

START_TEST(onnx_test_data_sets)
{
    const char *out = tk_tpath("out.onnx");
    /* position and expected outputs */
    tk_cli_result r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", TESTDATA "/test_sub/test_data_set_0");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "data " TESTDATA "/test_sub/test_data_set_0: output z against output_0.pb: "
                                "original error") && strstr(r.out, "verify: 1 data set, 1 output"),
                  "%s", r.out);
    tk_cli_free(&r);
    /* by name: input_0.pb holds y and input_1.pb x (position would give x - y swapped) */
    float xv[60], yv[60], zv[60];
    for (int i = 0; i < 60; i++)
        xv[i] = (float)i * 0.25f, yv[i] = 1.0f - (float)i, zv[i] = xv[i] - yv[i];
    const int64_t dims[3] = {3, 4, 5};
    mkdir(tk_tpath("named"), 0777);
    write_pb(tk_tpath("named/input_0.pb"), "y", 3, dims, yv, 60);
    write_pb(tk_tpath("named/input_1.pb"), "x", 3, dims, xv, 60);
    write_pb(tk_tpath("named/output_0.pb"), "z", 3, dims, zv, 60);
    r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", tk_tpath("named"), "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    /* an expected output the model does not compute */
    zv[7] += 0.5f;
    write_pb(tk_tpath("named/output_0.pb"), "z", 3, dims, zv, 60);
    remove(out);
    r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", tk_tpath("named"));
    ck_assert_msg(strstr(r.out, "file error 0.5") && strstr(r.out, "MISMATCH"), "%s", r.out);
    tk_expect_failure(&r, HOST_EXIT_MISMATCH, "the original model does not compute", "output_0.pb (output 'z')");
    ck_assert(!tk_exists(out));
    /* bfloat16 kept as uint16 (NumPy has no bfloat16) */
    r = TK_CLI(TESTDATA "/test_cast_BFLOAT16_to_FLOAT/model.onnx", out, "--verify-data",
               TESTDATA "/test_cast_BFLOAT16_to_FLOAT/test_data_set_0", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    /* bad folders */
    r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", tk_tpath("absent"));
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--verify-data", "no such folder");
    mkdir(tk_tpath("half"), 0777);
    write_pb(tk_tpath("half/input_0.pb"), "x", 3, dims, xv, 60);
    r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", tk_tpath("half"));
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "no data for graph input 'y'", NULL);
    write_pb(tk_tpath("half/input_1.pb"), "y", 2, dims, xv, 12);
    r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", tk_tpath("half"));
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "input_1.pb: the file holds float [3,4]", "input 'y' is float [3,4,5]");
    FILE *f = fopen(tk_tpath("half/input_1.pb"), "wb");
    fputs("not a tensor", f);
    fclose(f);
    r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", tk_tpath("half"));
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "input_1.pb", NULL);
    /* string and sequence inputs cannot be evaluated */
    r = TK_CLI(TESTDATA "/test_cast_STRING_to_FLOAT/model.onnx", out, "--verify-data",
               TESTDATA "/test_cast_STRING_to_FLOAT/test_data_set_0");
    tk_expect_failure(&r, HOST_EXIT_NOVERIFY, "string values", NULL);
    r = TK_CLI(TESTDATA "/test_cast_STRING_to_FLOAT/model.onnx", out, "--verify");
    tk_expect_failure(&r, HOST_EXIT_NOVERIFY, "graph input 'input' is a string tensor", "numeric inputs only");
    r = TK_CLI(TESTDATA "/test_sequence_insert_at_back/model.onnx", out, "--verify");
    tk_expect_failure(&r, HOST_EXIT_NOVERIFY, "is not a tensor of a known dtype", NULL);
    r = TK_CLI(TESTDATA "/test_sequence_insert_at_back/model.onnx", out, "--verify-data",
               TESTDATA "/test_sequence_insert_at_back/test_data_set_0");
    tk_expect_failure(&r, HOST_EXIT_NOVERIFY, "input_0.pb: graph input", "is not a tensor of a known dtype");
}
END_TEST

START_TEST(npy_folders_and_data_for_each_and_bisect)
{
    const char *out = tk_tpath("out.onnx");
    float xv[60], yv[60], zv[60];
    for (int i = 0; i < 60; i++)
        xv[i] = (float)i * 0.5f, yv[i] = (float)(i % 7), zv[i] = xv[i] - yv[i];
    const int64_t dims[3] = {3, 4, 5};
    mkdir(tk_tpath("npy"), 0777);
    write_npy(tk_tpath("npy/x.npy"), 3, dims, xv, 60);
    write_npy(tk_tpath("npy/y.npy"), 3, dims, yv, 60);
    write_npy(tk_tpath("npy/z.npy"), 3, dims, zv, 60);
    tk_cli_result r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", tk_tpath("npy"),
                             "--verify-data", TESTDATA "/test_sub/test_data_set_0");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "output z against z.npy") && strstr(r.out, "verify: 2 data sets"), "%s", r.out);
    tk_cli_free(&r);
    write_npy(tk_tpath("npy/w.npy"), 3, dims, zv, 60);
    r = TK_CLI(TESTDATA "/test_sub/model.onnx", out, "--verify-data", tk_tpath("npy"));
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "w.npy: names no graph input or output", NULL);
    remove(tk_tpath("npy/w.npy"));
    /* the same data for --verify-each and --bisect: the relus of tp_seventh_scales */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 16));
    for (int i = 0; i < 8; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "relu_%d", i);
        tk_output(g, named(tk_op1(g, "Relu", x), nm));
    }
    const char *in = save(m, "relus.onnx");
    float data[64];
    for (int i = 0; i < 64; i++)
        data[i] = (float)(i - 20) * 0.125f;
    mkdir(tk_tpath("relu_data"), 0777);
    write_npy(tk_tpath("relu_data/x.npy"), 2, TK_I64(4, 16), data, 64);
    r = TK_CLI("-i", in, "-o", out, SEVENTH, "--verify-each", "--verify-data", tk_tpath("relu_data"), "-q");
    tk_expect_failure(&r, HOST_EXIT_MISMATCH, "pass tp_seventh_scales: broke numeric equivalence", NULL);
    r = TK_CLI("-i", in, SEVENTH, "--bisect-out", tk_tpath("repro"), "--verify-data", tk_tpath("relu_data"));
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH && strstr(r.err, "rewrite 7 of 8"), "%s", r.err);
    tk_cli_free(&r);
    char *readme = tk_slurp(tk_tpath("repro/README.txt"), NULL);
    ck_assert_msg(readme && strstr(readme, "1 data folder, errors within budget"), "%s", readme);
    free(readme);
    char *ini = tk_slurp(tk_tpath("repro/config.ini"), NULL);
    ck_assert_msg(ini && strstr(ini, "relu_data\"") && strstr(ini, "budget_factor = 4"), "%s", ini);
    free(ini);
    /* the reproducer's config verifies with the same data */
    r = TK_CLI(tk_tpath("repro/config.ini"), "--max-rewrites", "6", "--verify");
    ck_assert_msg(r.status == 0 && strstr(r.out, "1 data set"), "exit %d: %s%s", r.status, r.out, r.err);
    tk_cli_free(&r);
}
END_TEST

/* [verify] data and range in an INI file: paths relative to the file. */
START_TEST(config_keys)
{
    const float divs[] = {3};
    const char *in = div_chain("div3.onnx", 1, divs);
    float xv[32];
    for (int i = 0; i < 32; i++)
        xv[i] = (float)i;
    mkdir(tk_tpath("d"), 0777);
    write_npy(tk_tpath("d/x.npy"), 2, TK_I64(4, 8), xv, 32);
    char ini[1200];
    snprintf(ini, sizeof ini, "[model]\ninput = %s\noutput = out.onnx\nplugin_dir = %s\n"
                              "[optimize]\nno_integral = true\npass_on = tp_exact_div\n"
                              "[adapt]\nno_integral = true\n[verify]\ndata = d\nbudget_ulps = 8\n",
             in, plugdir);
    FILE *f = fopen(tk_tpath("v.ini"), "w");
    fputs(ini, f);
    fclose(f);
    tk_cli_result r = TK_CLI(tk_tpath("v.ini"), "--verify");
    ck_assert_msg(r.status == 0 && strstr(r.out, "1 data set"), "exit %d: %s%s", r.status, r.out, r.err);
    tk_cli_free(&r);
    /* no budget at all: the reciprocal's rounding fails */
    r = TK_CLI(tk_tpath("v.ini"), "--verify", "--set", "verify.budget_factor=0", "--set", "verify.budget_ulps=0");
    tk_expect_failure(&r, HOST_EXIT_MISMATCH, "beyond its budget", NULL);
    r = TK_CLI(tk_tpath("v.ini"), "--verify", "--set", "verify.budget_factor=-1");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "budget_factor", NULL);
    r = TK_CLI(tk_tpath("v.ini"), "--verify", "--set", "verify.data=", "--set", "verify.range=x=2:3");
    ck_assert_msg(r.status == 0 && strstr(r.out, "input x: values in [2, 3) (--verify-range)"), "exit %d: %s%s",
                  r.status, r.out, r.err);
    tk_cli_free(&r);
    r = TK_CLI(tk_tpath("v.ini"), "--verify", "--set", "verify.data=", "--set", "verify.range=y=2:3");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "'y' is not a graph input", NULL);
    r = TK_CLI(tk_tpath("v.ini"), "--verify", "--set", "verify.data=", "--verify-range", "x=3:2");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "verify range 'x=3:2'", "LO < HI");
    /* --verify-range and --verify-data alone imply --verify */
    r = TK_CLI(tk_tpath("v.ini"), "--set", "verify.data=", "--verify-range", "x=0:1");
    ck_assert_msg(r.status == 0 && strstr(r.out, "verify: 3 runs"), "exit %d: %s%s", r.status, r.out, r.err);
    tk_cli_free(&r);
}
END_TEST

/* ------------------------------------------------------------ random inputs */

/* The first input set of m (host API); s freed by the caller. */
static void sets_of(ph_model *m, const char *range, host_input_sets *s)
{
    host_verify_config vc = host_verify_defaults();
    vc.range = (char *)range;
    ph_error err = {0};
    tk_infer(m);
    ck_assert_msg(host_input_sets_make(m, &vc, HOST_VERIFY_SYMBOLIC_DIM, HOST_VERIFY_MAX_INPUT_BYTES, s, &err) == 0,
                  "%s", err.message);
    ck_assert_uint_eq(s->count, 3);
}

/* Input i of set 0 as int64 (any integer dtype) or double values. */
static double val(const host_input_sets *s, size_t i, size_t k)
{
    const ph_tensor *t = s->sets[0].inputs[i];
    double d[4096];
    ck_assert(ph_tensor_numel(t) <= 4096);
    ck_assert_int_eq(ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), d), 0);
    return d[k];
}

static ph_value *int_input(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    ph_value *v = ph_graph_add_input(g, name, PH_DT_INT64, rank, dims);
    ck_assert_ptr_nonnull(v);
    return v;
}

static int noted(const host_input_sets *s, const char *frag)
{
    for (size_t i = 0; i < s->n_notes; i++)
        if (strstr(s->notes[i], frag))
            return 1;
    return 0;
}

START_TEST(ranges_from_the_consumers)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    /* 0 ids -> Cast -> Gather(emb[5,4]) */
    ph_value *ids = int_input(g, "ids", 2, TK_I64(2, 30));
    ph_node *cast = tk_node(g, "Cast", 1, &ids);
    ck_assert_int_eq(ph_node_set_attr_int(cast, "to", PH_DT_INT32), 0);
    tk_output(g, tk_op2(g, "Gather", tk_init(g, "emb", 2, TK_I64(5, 4), 1), ph_node_output(cast, 0)));
    /* 1 integer divisor of Mod */
    ph_value *d = int_input(g, "d", 1, TK_I64(40));
    tk_output(g, tk_op2(g, "Mod", int_input(g, "n", 1, TK_I64(40)), d));
    /* 3 log input, 4 Pow base with exponent 0.5, 5 Pow base with exponent 2 */
    tk_output(g, tk_op1(g, "Log", tk_input(g, "l", 1, TK_I64(40))));
    tk_output(g, tk_op2(g, "Pow", tk_input(g, "p", 1, TK_I64(40)), scalar(g, "half", 0.5f)));
    tk_output(g, tk_op2(g, "Pow", tk_input(g, "q", 1, TK_I64(40)), scalar(g, "two", 2)));
    /* 6 Reshape shape of length 3, 7 Unsqueeze axes of 2, 8 TopK k of dim 7 */
    ph_value *data = tk_init(g, "data", 2, TK_I64(7, 3), 2);
    tk_output(g, tk_op2(g, "Reshape", data, int_input(g, "shape", 1, TK_I64(3))));
    tk_output(g, tk_op2(g, "Unsqueeze", data, int_input(g, "axes", 1, TK_I64(2))));
    ph_value *topk_in[2] = {tk_init(g, "seven", 1, TK_I64(7), 3), int_input(g, "k", 1, TK_I64(1))};
    ph_node *topk = ph_node_create(g, NULL, "TopK", 2, topk_in, 2);
    ck_assert_ptr_nonnull(topk);
    tk_output(g, ph_node_output(topk, 0));
    /* 9 GatherND indices [2,2] into [3,4,5] */
    tk_output(g, tk_op2(g, "GatherND", tk_init(g, "cube", 3, TK_I64(3, 4, 5), 4),
                        int_input(g, "nd", 2, TK_I64(20, 2))));
    /* 10 Expand shape of 2, 11 Resize scales of 4 */
    tk_output(g, tk_op2(g, "Expand", data, int_input(g, "to", 1, TK_I64(2))));
    ph_value *rs[3] = {tk_init(g, "img", 4, TK_I64(1, 1, 2, 2), 5), NULL, tk_input(g, "scales", 1, TK_I64(4))};
    tk_output(g, ph_node_output(tk_node(g, "Resize", 3, rs), 0));
    /* 12 an input nobody constrains */
    tk_output(g, tk_op1(g, "Neg", tk_input(g, "free", 1, TK_I64(40))));
    /* 13 indices through Unsqueeze and Where into GatherElements over [6, 3, 1] (axis 0: dim 6) */
    ph_value *tgt = tk_op2(g, "Unsqueeze", int_input(g, "target", 2, TK_I64(3, 1)), tk_ints(g, "ax1", 1, TK_I64(1)));
    ph_value *where_in[3] = {tk_op2(g, "Equal", tgt, tk_ints(g, "ignore", 1, TK_I64(-100))),
                             tk_ints(g, "zero", 1, TK_I64(0)), tgt};
    ph_value *picked = ph_node_output(tk_node(g, "Where", 3, where_in), 0);
    tk_output(g, tk_op2(g, "GatherElements", tk_init(g, "table", 3, TK_I64(6, 3, 1), 6), picked));
    host_input_sets s;
    sets_of(m, NULL, &s);
    size_t n_ids = 60;
    for (size_t k = 0; k < n_ids; k++)
        ck_assert(val(&s, 0, k) >= 0 && val(&s, 0, k) < 5);
    ck_assert(noted(&s, "ids: integers in [0, 5) (indices of Gather"));
    for (size_t k = 0; k < 40; k++) {
        ck_assert(val(&s, 1, k) >= 1 && val(&s, 1, k) < 10);
        ck_assert(val(&s, 3, k) >= 0.1 && val(&s, 3, k) < 1);
        ck_assert(val(&s, 4, k) > 0);
    }
    int negative = 0;
    for (size_t k = 0; k < 40; k++)
        negative += val(&s, 5, k) < 0;
    ck_assert_int_gt(negative, 0); /* x^2 takes any sign */
    ck_assert(val(&s, 6, 0) == -1 && val(&s, 6, 1) == 1 && val(&s, 6, 2) == 1);
    ck_assert(val(&s, 7, 0) == 0 && val(&s, 7, 1) == 1);
    ck_assert(val(&s, 8, 0) >= 1 && val(&s, 8, 0) <= 7);
    for (size_t k = 0; k < 40; k += 2) {
        ck_assert(val(&s, 9, k) >= 0 && val(&s, 9, k) < 3);
        ck_assert(val(&s, 9, k + 1) >= 0 && val(&s, 9, k + 1) < 4);
    }
    ck_assert(val(&s, 10, 0) == 1 && val(&s, 10, 1) == 1);
    for (size_t k = 0; k < 4; k++)
        ck_assert(val(&s, 11, k) >= 1 && val(&s, 11, k) < 2);
    negative = 0;
    for (size_t k = 0; k < 40; k++)
        negative += val(&s, 12, k) < 0;
    ck_assert_int_gt(negative, 0);
    ck_assert(!noted(&s, "free:"));
    for (size_t k = 0; k < 3; k++)
        ck_assert(val(&s, 13, k) >= 0 && val(&s, 13, k) < 6);
    ck_assert(noted(&s, "target: integers in [0, 6) (indices of GatherElements"));
    host_input_sets_free(&s);
    /* --verify-range wins */
    sets_of(m, "ids=3:4; free=5:6", &s);
    for (size_t k = 0; k < n_ids; k++)
        ck_assert(val(&s, 0, k) == 3);
    for (size_t k = 0; k < 40; k++)
        ck_assert(val(&s, 12, k) >= 5 && val(&s, 12, k) < 6);
    ck_assert(noted(&s, "free: values in [5, 6) (--verify-range)"));
    host_input_sets_free(&s);
    ph_model_free(m);
}
END_TEST

/* Loss targets, Dropout ratios, sequence lengths, RoiAlign batch indices and
 * Loop trip counts: the values the evaluator refuses otherwise. */
START_TEST(ranges_of_losses_sequences_and_loops)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    /* 0 SoftmaxCrossEntropyLoss labels over 7 classes */
    ph_value *sce[2] = {tk_init(g, "scores", 2, TK_I64(40, 7), 1), int_input(g, "labels", 1, TK_I64(40))};
    tk_output(g, ph_node_output(tk_node(g, "SoftmaxCrossEntropyLoss", 2, sce), 0));
    /* 1 NegativeLogLikelihoodLoss target over 5 classes */
    ph_value *nll[2] = {tk_init(g, "logp", 3, TK_I64(20, 5, 2), 2), int_input(g, "target", 2, TK_I64(20, 2))};
    tk_output(g, ph_node_output(tk_node(g, "NegativeLogLikelihoodLoss", 2, nll), 0));
    /* 2 Dropout ratio */
    ph_value *dr[3] = {tk_init(g, "x", 1, TK_I64(8), 3), tk_input(g, "ratio", 0, NULL), NULL};
    ph_node *drop = ph_node_create(g, NULL, "Dropout", 2, dr, 1);
    ck_assert_ptr_nonnull(drop);
    tk_output(g, ph_node_output(drop, 0));
    /* 3 ReverseSequence lengths, time axis 0 of 6 */
    ph_value *rs[2] = {tk_init(g, "seq", 2, TK_I64(6, 40), 4), int_input(g, "lens", 1, TK_I64(40))};
    ph_node *rev = tk_node(g, "ReverseSequence", 2, rs);
    ck_assert_int_eq(ph_node_set_attr_int(rev, "batch_axis", 1), 0);
    tk_output(g, ph_node_output(rev, 0));
    /* 4 LSTM sequence_lens, 5 steps (layout 0: X is [T, batch, in]) */
    ph_value *lstm_in[5] = {tk_init(g, "X", 3, TK_I64(5, 40, 4), 5), tk_init(g, "W", 3, TK_I64(1, 12, 4), 6),
                            tk_init(g, "R", 3, TK_I64(1, 12, 3), 7), NULL,
                            ph_graph_add_input(g, "slens", PH_DT_INT32, 1, TK_I64(40))};
    ph_node *lstm = ph_node_create(g, NULL, "LSTM", 5, lstm_in, 2);
    ck_assert_ptr_nonnull(lstm);
    ck_assert_int_eq(ph_node_set_attr_int(lstm, "hidden_size", 3), 0);
    tk_output(g, ph_node_output(lstm, 1));
    /* 5 RoiAlign batch indices into a batch of 2 */
    ph_value *ra[3] = {tk_init(g, "feat", 4, TK_I64(2, 3, 4, 4), 8), tk_init(g, "rois", 2, TK_I64(40, 4), 9),
                       int_input(g, "bidx", 1, TK_I64(40))};
    tk_output(g, ph_node_output(tk_node(g, "RoiAlign", 3, ra), 0));
    host_input_sets s;
    sets_of(m, NULL, &s);
    int ratio_ok = val(&s, 2, 0) >= 0 && val(&s, 2, 0) < 0.9;
    ck_assert_msg(ratio_ok, "ratio %g", val(&s, 2, 0));
    for (size_t k = 0; k < 40; k++) {
        ck_assert(val(&s, 0, k) >= 0 && val(&s, 0, k) < 7);
        ck_assert(val(&s, 1, k) >= 0 && val(&s, 1, k) < 5);
        ck_assert(val(&s, 3, k) >= 1 && val(&s, 3, k) <= 6);
        ck_assert(val(&s, 4, k) >= 1 && val(&s, 4, k) <= 5);
        ck_assert(val(&s, 5, k) >= 0 && val(&s, 5, k) < 2);
    }
    ck_assert(noted(&s, "labels: integers in [0, 7) (target of SoftmaxCrossEntropyLoss"));
    ck_assert(noted(&s, "target: integers in [0, 5) (target of NegativeLogLikelihoodLoss"));
    ck_assert(noted(&s, "ratio: values in [0, 0.9) (ratio of Dropout"));
    ck_assert(noted(&s, "lens: integers in [1, 7) (sequence lengths of ReverseSequence"));
    ck_assert(noted(&s, "slens: integers in [1, 6) (sequence lengths of LSTM"));
    ck_assert(noted(&s, "bidx: integers in [0, 2) (indices of RoiAlign"));
    host_input_sets_free(&s);
    ph_model_free(m);
}
END_TEST

/* Through the binary: ONNX's Loop test whose body slices a 5-element
 * constant by the iteration number verifies with trip counts in [1, 4)
 * (a count over 5 makes an empty slice the body's declared [1] refuses),
 * and LSTM, QLinearConv and DynamicQuantizeLinear models run their float64
 * reference (no fixed-tolerance fallback). */
START_TEST(suite_models_verify_against_the_float64_reference)
{
    static const char *const models[] = {"test_loop11", "test_lstm_with_peepholes", "test_qlinearconv",
                                         "test_dynamicquantizelinear", "test_if", "test_scan9_sum",
                                         "test_sce_mean_weight_ii", "test_roialign_aligned_true"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        char in[512];
        snprintf(in, sizeof in, "%s/%s/model.onnx", TESTDATA, models[i]);
        tk_cli_result r = TK_CLI(in, tk_tpath("out.onnx"), "--verify");
        ck_assert_msg(r.status == 0 && strstr(r.out, "error budget (float64 reference): OK") &&
                          !strstr(r.out, "no float64 reference"),
                      "%s: exit %d: %s%s", models[i], r.status, r.out, r.err);
        tk_cli_free(&r);
    }
}
END_TEST

/* Through the binary: a Gather over 5 rows verifies (the old [0, 10) could
 * not), and a range that ignores the model fails in the evaluator. */
START_TEST(gather_indices_verify)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = tk_op2(g, "Gather", tk_init(g, "emb", 2, TK_I64(5, 4), 1), int_input(g, "ids", 2, TK_I64(2, 30)));
    tk_output(g, tk_op1(g, "Relu", tk_op1(g, "Relu", y)));
    const char *in = save(m, "gather.onnx");
    tk_cli_result r = TK_CLI(in, tk_tpath("out.onnx"), "--verify");
    ck_assert_msg(r.status == 0 && strstr(r.out, "input ids: integers in [0, 5)"), "exit %d: %s%s", r.status,
                  r.out, r.err);
    tk_cli_free(&r);
    r = TK_CLI(in, tk_tpath("out.onnx"), "--verify-range", "ids=0:10");
    tk_expect_failure(&r, HOST_EXIT_NOVERIFY, "cannot evaluate the model", "Gather");
}
END_TEST

/* A MaxPool whose kernel needs more than the symbolic dims' default. */
START_TEST(symbolic_dims_hint)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "img", 4, TK_I64(-1, 1, -1, -1));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "n"), 0);
    ck_assert_int_eq(ph_value_set_dim_param(x, 2, "h"), 0);
    ck_assert_int_eq(ph_value_set_dim_param(x, 3, "w"), 0);
    ph_node *pool = tk_node(g, "MaxPool", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_ints(pool, "kernel_shape", 2, TK_I64(3, 3)), 0);
    tk_output(g, ph_node_output(pool, 0));
    const char *in = save(m, "pool.onnx");
    tk_cli_result r = TK_CLI(in, tk_tpath("out.onnx"), "--verify");
    tk_expect_failure(&r, HOST_EXIT_NOVERIFY, "this comes from the symbolic dims, which verification sets to 1",
                      "give real sizes with --input-shape img:DIMS");
    r = TK_CLI(in, tk_tpath("out.onnx"), "--verify", "--input-shape", "img:1,1,8,8", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
}
END_TEST

/* Dims whose product overflows, or inputs of more than 4 GiB: a clear
 * "cannot verify" with the size, no allocation. */
START_TEST(inputs_too_large_to_make)
{
    const int64_t huge[2][2] = {{3037000500, 3037000500}, {100000, 100000}};
    for (int k = 0; k < 2; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        tk_output(g, tk_op1(g, "Neg", tk_input(g, "x", 2, huge[k])));
        const char *in = save(m, "huge.onnx");
        tk_cli_result r = TK_CLI(in, tk_tpath("out.onnx"), "--verify");
        tk_expect_failure(&r, HOST_EXIT_NOVERIFY,
                          k ? "graph input 'x' of shape 100000x100000 (float) has 1e+10 elements, 4e+10 bytes"
                            : "graph input 'x' of shape 3037000500x3037000500 (float) has 9.22e+18 elements",
                          "cannot verify");
        ck_assert(!tk_exists(tk_tpath("out.onnx")));
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("verify");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, budget_accepts_other_rounding_and_refuses_a_wrong_rewrite);
    tcase_add_test(tc, budget_of_an_exact_output_is_a_few_ulp);
    tcase_add_test(tc, integer_outputs_equal_the_reference_where_the_original_does);
    tcase_add_test(tc, nan_and_infinity_must_stay_where_the_original_has_them);
    tcase_add_test(tc, exact_pass_that_changes_bits_is_named);
    tcase_add_test(tc, wrong_rewrite_still_fails);
    tcase_add_test(tc, onnx_test_data_sets);
    tcase_add_test(tc, npy_folders_and_data_for_each_and_bisect);
    tcase_add_test(tc, config_keys);
    tcase_add_test(tc, ranges_from_the_consumers);
    tcase_add_test(tc, ranges_of_losses_sequences_and_loops);
    tcase_add_test(tc, suite_models_verify_against_the_float64_reference);
    tcase_add_test(tc, gather_indices_verify);
    tcase_add_test(tc, symbolic_dims_hint);
    tcase_add_test(tc, inputs_too_large_to_make);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
