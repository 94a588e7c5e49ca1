/* tests/test_pass_fold_constant_inputs.c - fold_constant_inputs (off by
 * default, loaded explicitly): graph inputs get constant values from .npy or
 * raw files written into a scratch folder, and become initializers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbwire.h"
#include "testkit.h"
#include "tmpdir.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fold_constant_inputs");
    pass->shapes = 1;
    tk_tmpdir_make("fold_constant_inputs");
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
    tk_tmpdir_remove();
}

/* ------------------------------------------------------------ files */

/* FOLDER/name holding a .npy file of format `version` with header dict
 * `dict`, then nbytes of data minus `cut` bytes.  Returns the path. */
static const char *npy(const char *name, int version, const char *dict, const void *data, size_t nbytes,
                       size_t cut)
{
    const char *path = tk_tpath(name);
    size_t pre = version == 1 ? 10 : 12, len = strlen(dict);
    size_t hlen = ((pre + len + 1 + 63) / 64) * 64 - pre; /* padded, ends in '\n' */
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)version, 0,
                              (unsigned char)hlen, (unsigned char)(hlen >> 8), 0, 0};
    fwrite(head, 1, pre, f);
    fputs(dict, f);
    for (size_t i = len; i + 1 < hlen; i++)
        fputc(' ', f);
    fputc('\n', f);
    if (nbytes > cut)
        fwrite(data, 1, nbytes - cut, f);
    fclose(f);
    return path;
}

static const char *raw(const char *name, const void *data, size_t nbytes)
{
    const char *path = tk_tpath(name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, nbytes, f), nbytes);
    fclose(f);
    return path;
}

/* ------------------------------------------------------------ running */

/* Run the pass with inputs=spec on m with ctx (a fresh one when NULL);
 * returns its result, the error message in err (512 bytes). */
static int run_spec(ph_model *m, const char *spec, ph_ctx *ctx, char *err)
{
    ph_error perr = {0};
    ph_params *params = ph_params_new(pass->desc->params, &perr);
    ck_assert_ptr_nonnull(params);
    ck_assert_int_eq(ph_params_set(params, "inputs", spec, &perr), 0);
    ph_ctx *own = ctx ? NULL : ph_ctx_new(NULL, NULL);
    ph_ctx_begin_pass(ctx ? ctx : own, pass->desc->name, "");
    int rc = host_plugin_run(pass->plugin, ph_model_graph(m), params, ctx ? ctx : own);
    snprintf(err, 512, "%s", ph_ctx_last_error(ctx ? ctx : own));
    ph_ctx_end_pass(ctx ? ctx : own);
    ph_ctx_free(own);
    ph_params_free(params);
    if (rc >= 0) {
        ck_assert_int_eq(ph_graph_toposort(ph_model_graph(m)), 0);
        ck_assert_msg(ph_graph_verify(ph_model_graph(m), &perr) == 0, "%s", perr.message);
    }
    return rc;
}

/* Evaluate m on inputs (one per graph input); outputs into outs. */
static void eval(ph_model *m, const ph_tensor *const *inputs, ph_tensor **outs)
{
    ph_graph *g = ph_model_graph(m);
    ph_eval *e = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_eval_new(g, &e, &err) == 0, "%s", err.message);
    ck_assert_msg(ph_eval_run(e, inputs, ph_graph_input_count(g), outs, ph_graph_output_count(g), &err) == 0,
                  "%s", err.message);
    ph_eval_free(e);
}

static const float W[3] = {0.5f, -2.0f, 3.25f};

/* x [2,3] + w [3] -> y; w * w -> z.  Inputs x, w. */
static ph_model *add_model(ph_value **w_out)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w = tk_input(g, "w", 1, TK_I64(3));
    tk_output(g, tk_op2(g, "Add", x, w));
    tk_output(g, tk_op2(g, "Mul", w, w));
    if (w_out)
        *w_out = w;
    return m;
}

/* --------------------------------------------------------------- tests */

START_TEST(npy_input_becomes_an_initializer)
{
    char err[512];
    ph_model *m = add_model(NULL);
    ph_graph *g = ph_model_graph(m);
    tk_infer(m);
    float xs[6] = {1, 2, 3, 4, 5, 6};
    ph_tensor *x = ph_tensor_new(PH_DT_FLOAT, 2, TK_I64(2, 3), xs);
    ph_tensor *w = ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(3), W);
    ph_tensor *before[2], *after[2];
    eval(m, (const ph_tensor *const[]){x, w}, before);

    const char *p = npy("w.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", W, sizeof W, 0);
    char spec[700];
    snprintf(spec, sizeof spec, " w = %s ; ", p);
    ck_assert_int_eq(run_spec(m, spec, NULL, err), 1);
    ck_assert_uint_eq(ph_graph_input_count(g), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_input(g, 0)), "x");
    ph_value *wv = ph_graph_find_value(g, "w");
    ck_assert_ptr_nonnull(wv);
    ck_assert(ph_value_is_initializer(wv) && !ph_value_is_graph_input(wv));
    ck_assert(ph_tensor_equal(ph_value_const(wv), w));
    ck_assert_int_eq(ph_graph_update_shapes(g, NULL), 0);

    eval(m, (const ph_tensor *const[]){x}, after); /* the same outputs, bit for bit */
    for (int i = 0; i < 2; i++) {
        ck_assert(ph_tensor_equal(before[i], after[i]));
        ph_tensor_free(before[i]);
        ph_tensor_free(after[i]);
    }
    /* idempotent: w is now an initializer, so a new run skips it */
    ck_assert_int_eq(run_spec(m, spec, NULL, err), 0);
    ph_tensor_free(x);
    ph_tensor_free(w);
    ph_model_free(m);
}
END_TEST

/* constant_folding then folds what depends only on the input */
START_TEST(then_constant_folding_folds)
{
    char err[512], spec[700], ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *w = tk_input(g, "w", 1, TK_I64(3));
    tk_output(g, tk_op2(g, "Add", tk_input(g, "x", 2, TK_I64(2, 3)), tk_op2(g, "Mul", w, w)));
    tk_infer(m);
    snprintf(spec, sizeof spec, "w=%s", raw("w.bin", W, sizeof W));
    ck_assert_int_eq(run_spec(m, spec, NULL, err), 1);
    ck_assert_int_eq(ph_graph_update_shapes(g, NULL), 0);
    tk_pass *cf = tk_pass_load("constant_folding");
    cf->shapes = 1;
    ck_assert_int_ge(tk_pass_run(cf, m), 1);
    tk_pass_free(cf);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add"); /* w * w was folded */
    ph_model_free(m);
}
END_TEST

/* .npy variants: version 2, big-endian double, bool, int64 by raw file,
 * Python 2 shape, a symbolic dim taking the file's size */
START_TEST(npy_variants_and_raw)
{
    char err[512], spec[2000];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = ph_graph_add_input(g, "a", PH_DT_DOUBLE, 2, TK_I64(1, 2));
    ph_value *b = ph_graph_add_input(g, "b", PH_DT_BOOL, 1, TK_I64(-1));
    ph_value *c = ph_graph_add_input(g, "c", PH_DT_INT64, 1, TK_I64(3));
    ph_value *d = ph_graph_add_input(g, "d", PH_DT_FLOAT, 2, TK_I64(2, 2));
    ph_value_set_dim_param(b, 0, "n");
    for (ph_value *v = a; v; v = v == a ? b : v == b ? c : v == c ? d : NULL)
        tk_output(g, tk_op1(g, "Identity", v));
    const unsigned char abe[16] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0}; /* 1.0, -2.0 */
    const unsigned char bv[4] = {1, 0, 1, 1};
    const int64_t cv[3] = {7, -1, 1LL << 40};
    const float dv[4] = {1, 2, 3, 4};
    snprintf(spec, sizeof spec, "a=%s;b=%s;c=%s;d=%s",
             npy("a.npy", 2, "{'descr': '>f8', 'fortran_order': False, 'shape': (1, 2), }", abe, 16, 0),
             npy("b.npy", 1, "{\"descr\": \"|b1\", \"fortran_order\": False, \"shape\": (4L,)}", bv, 4, 0),
             raw("c.raw", cv, sizeof cv),
             npy("d.npy", 3, "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}", dv, sizeof dv, 0));
    ck_assert_int_eq(run_spec(m, spec, NULL, err), 4);
    ck_assert_uint_eq(ph_graph_input_count(g), 0);
    double av[2];
    ck_assert_int_eq(ph_tensor_read_f64(ph_value_const(a), 2, TK_I64(1, 2), av), 0);
    ck_assert(av[0] == 1.0 && av[1] == -2.0);
    ck_assert_int_eq(ph_value_dim(b, 0), 4); /* the symbolic dim took the file's size */
    ph_tensor *bb = ph_tensor_new(PH_DT_BOOL, 1, TK_I64(4), bv), *cb = ph_tensor_new(PH_DT_INT64, 1, TK_I64(3), cv);
    ck_assert(ph_tensor_equal(ph_value_const(b), bb));
    ck_assert(ph_tensor_equal(ph_value_const(c), cb));
    ph_tensor_free(bb);
    ph_tensor_free(cb);
    ph_model_free(m);
}
END_TEST

/* Every bad file or parameter fails the pass, names the input and the
 * file, and changes nothing. */
START_TEST(bad_files_fail_cleanly)
{
    static const char *const good = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
    struct {
        const char *what, *spec_fmt, *expect;
    } cases[] = {
        {"missing file", "w=%s", "cannot read"},
        {"truncated data", "w=%s", "truncated"},
        {"truncated header", "w=%s", "truncated"},
        {"wrong dtype", "w=%s", "holds double [3], the input is float [3]"},
        {"wrong shape", "w=%s", "holds float [4], the input is float [3]"},
        {"raw of the wrong size", "w=%s", "bytes"},
        {"Fortran order", "w=%s", "Fortran"},
        {"no magic", "w=%s", "magic"},
        {"complex dtype", "w=%s", "not supported"},
        {"unknown input", "nope=%s", "no graph input"},
        {"not NAME=PATH", "w%s", "NAME=PATH"},
        {"named twice", "w=%s;w=x.npy", "twice"},
        {"raw for a symbolic dim", "s=%s", "static shape"},
        {"a directory", "w=%s", "not a regular file"},
    };
    const float four[4] = {1, 2, 3, 4};
    const double three[3] = {1, 2, 3};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = NULL;
        char name[32];
        snprintf(name, sizeof name, "f%zu.npy", i);
        switch (i) {
        case 0: path = tk_tpath("absent.npy"); break;
        case 1: path = npy(name, 1, good, W, sizeof W, 2); break;
        case 2: {
            path = tk_tpath(name);
            FILE *f = fopen(path, "wb");
            fwrite("\x93NUMPY\x01\x00\x76\x00{'descr'", 1, 17, f);
            fclose(f);
            break;
        }
        case 3: path = npy(name, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", three, sizeof three, 0); break;
        case 4: path = npy(name, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four, 16, 0); break;
        case 5: path = raw("w.raw", four, 16); break;
        case 6: path = npy(name, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", W, sizeof W, 0); break;
        case 7: path = raw(name, four, 16); break;
        case 8: path = npy(name, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", four, 16, 0); break;
        case 9: case 10: case 11: path = npy(name, 1, good, W, sizeof W, 0); break;
        case 12: path = raw("s.raw", four, 12); break;
        case 13: path = tk_tpath(""); break;
        }
        ph_model *m = add_model(NULL);
        ph_graph *g = ph_model_graph(m);
        ph_value *s = tk_input(g, "s", 2, TK_I64(-1, 3));
        tk_output(g, tk_op1(g, "Neg", s));
        tk_infer(m);
        char *sig = tk_graph_sig(g), spec[800], err[512];
        snprintf(spec, sizeof spec, cases[i].spec_fmt, path);
        int rc = run_spec(m, spec, NULL, err);
        ck_assert_msg(rc < 0, "%s: the pass did not fail", cases[i].what);
        ck_assert_msg(strstr(err, cases[i].expect) != NULL, "%s: message '%s' lacks '%s'", cases[i].what, err,
                      cases[i].expect);
        if (i < 10 || i == 12 || i == 13) /* names the input and the file */
            ck_assert_msg(strstr(err, path) && strstr(err, i == 9 ? "'nope'" : i == 12 ? "'s'" : "'w'"),
                          "%s: message '%s' does not name the input and file", cases[i].what, err);
        char *sig2 = tk_graph_sig(g);
        ck_assert_msg(strcmp(sig, sig2) == 0, "%s: the graph changed", cases[i].what);
        ck_assert_uint_eq(ph_graph_input_count(g), 3);
        free(sig);
        free(sig2);
        ph_model_free(m);
    }
}
END_TEST

/* Within one run the pass acts once: after the folded input's initializer
 * is gone (nothing read it), a second call with the same context returns
 * 0, and a new run reports the input missing. */
START_TEST(once_per_run)
{
    char err[512], spec[700];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_input(g, "unused", 1, TK_I64(3));
    tk_output(g, tk_op1(g, "Neg", tk_input(g, "x", 1, TK_I64(3))));
    snprintf(spec, sizeof spec, "unused=%s", raw("u.raw", W, sizeof W));
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_spec(m, spec, ctx, err), 1);
    ck_assert_int_eq(ph_graph_remove_dead(g), 1);
    ck_assert_ptr_null(ph_graph_find_value(g, "unused"));
    ck_assert_int_eq(run_spec(m, spec, ctx, err), 0);
    ph_ctx_free(ctx);
    ck_assert_int_lt(run_spec(m, spec, NULL, err), 0);
    ck_assert_ptr_nonnull(strstr(err, "no graph input"));
    ph_model_free(m);
}
END_TEST

/* An input read inside an If branch (an outer-scope use) becomes an
 * initializer the branch reads; no inputs named: nothing happens. */
START_TEST(input_read_in_an_if_branch)
{
    char err[512], spec[700];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *w = tk_input(g, "w", 1, TK_I64(3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op1(then_g, "Neg", w));
    tk_output(else_g, tk_op1(else_g, "Abs", w));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(run_spec(m, "", NULL, err), 0);
    ck_assert_uint_eq(ph_graph_input_count(g), 2);
    snprintf(spec, sizeof spec, "w=%s", npy("w.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                                            W, sizeof W, 0));
    ck_assert_int_eq(run_spec(m, spec, NULL, err), 1);
    ck_assert_uint_eq(ph_graph_input_count(g), 1);
    ph_node *neg = tk_find_op(then_g, PH_OP_Neg);
    ck_assert_ptr_eq(ph_node_input(neg, 0), w);
    ck_assert_ptr_nonnull(ph_value_const(w));
    ph_model_free(m);
}
END_TEST

/* x float[3] + w float[3], w an input with a default initializer [1,2,3];
 * ir_version ir. */
static ph_model *default_model(int ir)
{
    const int64_t d[1] = {3};
    const float w[3] = {1, 2, 3};
    pb graph = {0}, opset = {0}, model = {0}, i1 = {0};
    pb_int(&i1, 1, 3);
    pb_int(&i1, 2, PH_DT_FLOAT);
    pb_str(&i1, 8, "w");
    pb_bytes(&i1, 9, w, sizeof w);
    pb_node(&graph, "Add", "x", "w", "y", NULL);
    pb_str(&graph, 2, "main");
    pb_msg(&graph, 5, &i1);
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 1, d);
    pb_value_info(&graph, 11, "w", PH_DT_FLOAT, 1, d);
    pb_value_info(&graph, 12, "y", PH_DT_FLOAT, 1, d);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 17);
    pb_int(&model, 1, (uint64_t)ir);
    pb_msg(&model, 7, &graph);
    pb_msg(&model, 8, &opset);
    return pb_load(&model);
}

/* the file replaces an input's default; the result saves and loads back */
START_TEST(input_with_a_default)
{
    char err[512], spec[700];
    ph_model *m = default_model(8);
    ph_graph *g = ph_model_graph(m);
    ph_value *w = ph_graph_find_value(g, "w");
    ck_assert_ptr_null(ph_value_const(w)); /* only a default */
    snprintf(spec, sizeof spec, "w=%s", raw("w.raw", W, sizeof W));
    ck_assert_int_eq(run_spec(m, spec, NULL, err), 1);
    ck_assert_uint_eq(ph_graph_input_count(g), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ph_tensor *want = ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(3), W);
    ck_assert(ph_tensor_equal(ph_value_const(w), want));
    ph_error perr = {0};
    ck_assert_msg(ph_model_save(m, tk_tpath("out.onnx"), &perr) == 0, "%s", perr.message);
    ph_model_free(m);
    ck_assert_msg(ph_model_load(tk_tpath("out.onnx"), &m, &perr) == 0, "%s", perr.message);
    g = ph_model_graph(m);
    ck_assert_uint_eq(ph_graph_input_count(g), 1);
    ck_assert(ph_tensor_equal(ph_value_const(ph_graph_find_value(g, "w")), want));
    ph_tensor_free(want);
    ph_model_free(m);
}
END_TEST

/* before ir_version 4 every initializer must be an input: refused */
START_TEST(old_ir_version_refused)
{
    char err[512], spec[700];
    ph_model *m = default_model(3);
    snprintf(spec, sizeof spec, "w=%s", raw("w.raw", W, sizeof W));
    ck_assert_int_lt(run_spec(m, spec, NULL, err), 0);
    ck_assert_ptr_nonnull(strstr(err, "ir_version"));
    ck_assert_uint_eq(ph_graph_input_count(ph_model_graph(m)), 2);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fold_constant_inputs");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, npy_input_becomes_an_initializer);
    tcase_add_test(tc, then_constant_folding_folds);
    tcase_add_test(tc, npy_variants_and_raw);
    tcase_add_test(tc, bad_files_fail_cleanly);
    tcase_add_test(tc, once_per_run);
    tcase_add_test(tc, input_read_in_an_if_branch);
    tcase_add_test(tc, input_with_a_default);
    tcase_add_test(tc, old_ir_version_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
