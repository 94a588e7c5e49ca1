/* tests/test_pass_fold_constant_inputs.c - fold_constant_inputs (off by
 * default, loaded explicitly): graph inputs get constant values from .npy or
 * raw files written into a scratch folder, and become initializers.  The
 * cases are about files and messages: models in the text form, the pass
 * run on the public harness with the `inputs` parameter, the results
 * checked in C (the model with an input default is written as protobuf
 * wire bytes: the text has no such input). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "pbwire.h"
#include "testkit.h"
#include "tmpdir.h"

static void setup(void)
{
    pc_load("fold_constant_inputs");
    tk_tmpdir_make("fold_constant_inputs");
}
static void teardown(void)
{
    pc_unload();
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

/* Run the pass on m with inputs=spec and the options o (NULL: one run) on
 * the public harness; returns its result, the error message in err. */
static int run_spec_opts(ph_model *m, const char *spec, ph_test_options o, ph_error *err)
{
    static char param[1024];
    snprintf(param, sizeof param, "inputs=%s", spec);
    const char *const params[] = {param, NULL};
    o.params = params;
    o.no_shapes = 1; /* shapes are inferred where a case needs them */
    return ph_test_run(pass, m, &o, NULL, err);
}

static int run_spec(ph_model *m, const char *spec, ph_error *err)
{
    return run_spec_opts(m, spec, (ph_test_options){0}, err);
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

/* x [2,3] + w [3] -> a; w * w -> m.  Inputs x, w. */
#define ADD_MODEL "x: float[2,3]; w: float[3]\na = Add(x, w); m = Mul(w, w)\n"

/* --------------------------------------------------------------- tests */

START_TEST(npy_input_becomes_an_initializer)
{
    ph_error err = {0};
    ph_model *m = pc_model(ADD_MODEL "return a, m");
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_update_shapes(g, NULL), 0);
    float xs[6] = {1, 2, 3, 4, 5, 6};
    ph_tensor *x = ph_tensor_new(PH_DT_FLOAT, 2, TK_I64(2, 3), xs);
    ph_tensor *w = ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(3), W);
    ph_tensor *before[2], *after[2];
    eval(m, (const ph_tensor *const[]){x, w}, before);

    const char *p = npy("w.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", W, sizeof W, 0);
    char spec[700];
    snprintf(spec, sizeof spec, " w = %s ; ", p);
    ck_assert_msg(run_spec(m, spec, &err) == 1, "%s", err.message);
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
    ck_assert_int_eq(run_spec(m, spec, &err), 0);
    ph_tensor_free(x);
    ph_tensor_free(w);
    ph_model_free(m);
}
END_TEST

/* constant_folding then folds what depends only on the input: w * w */
START_TEST(then_constant_folding_folds)
{
    ph_error err = {0};
    char spec[700];
    ph_model *m = pc_model("x: float[2,3]; w: float[3]\nq = Mul(w, w); y = Add(x, q)\nreturn y");
    snprintf(spec, sizeof spec, "w=%s", raw("w.bin", W, sizeof W));
    ck_assert_int_eq(run_spec(m, spec, &err), 1);
    ph_test_pass *cf = NULL;
    ck_assert_int_eq(ph_test_load_pass(PH_BUILD_DIR "/plugins/constant_folding.so", "constant_folding", &cf, &err), 0);
    ck_assert_int_ge(ph_test_run(ph_test_pass_desc(cf), m, NULL, NULL, &err), 1);
    ph_test_pass_free(cf);
    PC_GRAPH_IS(ph_model_graph(m), "y = Add(x, _:const)");
    ph_model_free(m);
}
END_TEST

/* .npy variants: version 2, big-endian double, bool, int64 by raw file,
 * Python 2 shape, a symbolic dim taking the file's size */
START_TEST(npy_variants_and_raw)
{
    ph_error err = {0};
    char spec[2000];
    ph_model *m = pc_model("a: double[1,2]; b: bool[n]; c: int64[3]; d: float[2,2]\n"
                           "ia = Identity(a); ib = Identity(b); ic = Identity(c); id = Identity(d)\nreturn ia, ib, ic, id");
    ph_graph *g = ph_model_graph(m);
    ph_value *a = ph_graph_find_value(g, "a"), *b = ph_graph_find_value(g, "b"), *c = ph_graph_find_value(g, "c");
    const unsigned char abe[16] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0}; /* 1.0, -2.0 */
    const unsigned char bv[4] = {1, 0, 1, 1};
    const int64_t cv[3] = {7, -1, 1LL << 40};
    const float dv[4] = {1, 2, 3, 4};
    snprintf(spec, sizeof spec, "a=%s;b=%s;c=%s;d=%s",
             npy("a.npy", 2, "{'descr': '>f8', 'fortran_order': False, 'shape': (1, 2), }", abe, 16, 0),
             npy("b.npy", 1, "{\"descr\": \"|b1\", \"fortran_order\": False, \"shape\": (4L,)}", bv, 4, 0),
             raw("c.raw", cv, sizeof cv),
             npy("d.npy", 3, "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}", dv, sizeof dv, 0));
    ck_assert_msg(run_spec(m, spec, &err) == 4, "%s", err.message);
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
        ph_model *m = pc_model(ADD_MODEL "s: float[?,3]; n = Neg(s)\nreturn a, m, n");
        ph_graph *g = ph_model_graph(m);
        ck_assert_int_eq(ph_graph_update_shapes(g, NULL), 0);
        char spec[800];
        snprintf(spec, sizeof spec, cases[i].spec_fmt, path);
        ph_error perr = {0};
        int rc = run_spec(m, spec, &perr);
        const char *err = perr.message;
        ck_assert_msg(rc < 0, "%s: the pass did not fail", cases[i].what);
        ck_assert_msg(strstr(err, cases[i].expect) != NULL, "%s: message '%s' lacks '%s'", cases[i].what, err,
                      cases[i].expect);
        if (i < 10 || i == 12 || i == 13) /* names the input and the file */
            ck_assert_msg(strstr(err, path) && strstr(err, i == 9 ? "'nope'" : i == 12 ? "'s'" : "'w'"),
                          "%s: message '%s' does not name the input and file", cases[i].what, err);
        PC_GRAPH_IS(g, "a = Add(x, w)\n--\nm = Mul(w, w)\n--\nn = Neg(s)"); /* nothing changed */
        ck_assert_uint_eq(ph_graph_input_count(g), 3);
        ph_model_free(m);
    }
}
END_TEST

/* Within one run the pass acts once: the second iteration of a run (the
 * same context), which finds the folded input an initializer, returns 0;
 * once that initializer is gone (nothing read it), a new run reports the
 * input missing. */
START_TEST(once_per_run)
{
    ph_error err = {0};
    char spec[700];
    ph_model *m = pc_model("unused: float[3]; x: float[3]\ny = Neg(x)\nreturn y");
    ph_graph *g = ph_model_graph(m);
    snprintf(spec, sizeof spec, "unused=%s", raw("u.raw", W, sizeof W));
    ph_test_result res;
    static char param[800];
    snprintf(param, sizeof param, "inputs=%s", spec);
    const ph_test_options o = {.params = (const char *const[]){param, NULL}, .max_iterations = 2};
    ck_assert_msg(ph_test_run(pass, m, &o, &res, &err) == 1, "%s", err.message);
    ck_assert_int_eq(res.iterations, 2);
    ck_assert_int_eq(ph_graph_remove_dead(g), 1);
    ck_assert_ptr_null(ph_graph_find_value(g, "unused"));
    ck_assert_int_lt(run_spec(m, spec, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, "no graph input"));
    ph_model_free(m);
}
END_TEST

/* An input read inside an If branch (an outer-scope use) becomes an
 * initializer the branch reads; no inputs named: nothing happens. */
START_TEST(input_read_in_an_if_branch)
{
    ph_error err = {0};
    char spec[700];
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text("w: float[3]; cond: bool[]\ny = If(cond)\nreturn y", "w: float[3]\ny = Neg(w)\nreturn y",
                             "w: float[3]\ny = Abs(w)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *w = ph_graph_find_value(g, "w");
    ck_assert_int_eq(run_spec(m, "", &err), 0);
    ck_assert_uint_eq(ph_graph_input_count(g), 2);
    snprintf(spec, sizeof spec, "w=%s", npy("w.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                                            W, sizeof W, 0));
    ck_assert_msg(run_spec(m, spec, &err) == 1, "%s", err.message);
    ck_assert_uint_eq(ph_graph_input_count(g), 1);
    PC_GRAPH_IS(then_g, "y = Neg(w)");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), w);
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
    ph_error err = {0};
    char spec[700];
    ph_model *m = default_model(8);
    ph_graph *g = ph_model_graph(m);
    ph_value *w = ph_graph_find_value(g, "w");
    ck_assert_ptr_null(ph_value_const(w)); /* only a default */
    snprintf(spec, sizeof spec, "w=%s", raw("w.raw", W, sizeof W));
    ck_assert_msg(run_spec(m, spec, &err) == 1, "%s", err.message);
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
    ph_error err = {0};
    char spec[700];
    ph_model *m = default_model(3);
    snprintf(spec, sizeof spec, "w=%s", raw("w.raw", W, sizeof W));
    ck_assert_int_lt(run_spec(m, spec, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, "ir_version"));
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
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
