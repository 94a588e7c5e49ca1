/* host/check/verify.c - numeric verification of a run (verify.h). */
#include "verify.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/util.h"
#include "check/verify_inputs.h"
#include "log/trace.h"

struct host_verify {
    host_verify_config cfg;
    host_input_sets in;
    size_t n_inputs, n_outputs, n_sets;
    ph_tensor **wanted;  /* n_sets x n_outputs: the original's outputs */
    ph_tensor **ref;     /* n_sets x n_outputs: the float64 reference (all NULL without one) */
    ph_tensor **last;    /* n_sets x n_outputs: outputs kept for exactness (NULL: wanted) */
    int last_stale;      /* the model changed since `last` was taken */
    char **names;        /* output names */
    int *dtypes;         /* the original's output dtypes */
    double *orig_err;    /* per output: the original's error against the reference */
    double *scale;       /* per output: max |reference| */
    int has_ref;
    char ref_why[400];   /* why there is no reference */
    int budget_mode;     /* judged by the budget (else fixed tolerances) */
    int exact_broken;
    int precision;       /* 0, or the less precise float dtype a pass made the model compute in */
    host_verify_result *results;
    host_verify_expected *expected;
    size_t n_expected;
};

/* ------------------------------------------------------------ elements */

static int is_float(int dtype)
{
    return dtype == PH_DT_FLOAT || dtype == PH_DT_DOUBLE || dtype == PH_DT_FLOAT16 || dtype == PH_DT_BFLOAT16;
}

/* The dtype's machine epsilon and smallest normal. */
static double element(const void *d, int dtype, int64_t i)
{
    switch (dtype) {
    case PH_DT_FLOAT: return ((const float *)d)[i];
    case PH_DT_DOUBLE: return ((const double *)d)[i];
    case PH_DT_FLOAT16: return ph_f16_bits_to_f64(((const uint16_t *)d)[i]);
    case PH_DT_BFLOAT16: return ph_bf16_bits_to_f64(((const uint16_t *)d)[i]);
    case PH_DT_BOOL: case PH_DT_UINT8: return ((const uint8_t *)d)[i];
    case PH_DT_INT8: return ((const int8_t *)d)[i];
    case PH_DT_INT16: return ((const int16_t *)d)[i];
    case PH_DT_UINT16: return ((const uint16_t *)d)[i];
    case PH_DT_INT32: return ((const int32_t *)d)[i];
    case PH_DT_UINT32: return ((const uint32_t *)d)[i];
    case PH_DT_INT64: return (double)((const int64_t *)d)[i];
    case PH_DT_UINT64: return (double)((const uint64_t *)d)[i];
    default: return NAN;
    }
}

/* NaN, +inf, -inf or finite: 0..3 */
static int fp_class(double x) { return isnan(x) ? 0 : isinf(x) ? (x > 0 ? 1 : 2) : 3; }

/* What comparing x with base (the original) and ref (the reference, or
 * NULL) over one or more tensors found. */
typedef struct acc {
    double max_abs, max_rel; /* x against base */
    double err;              /* floats: max |x - ref|; else elements where x != ref */
    size_t tol_bad;          /* outside atol + rtol * |base| (or != for integers) */
    size_t budget_bad;       /* floats: |x - ref| > budget */
    size_t nonfinite_bad;    /* NaN/inf where base has another value */
    size_t int_bad;          /* integers: x != base where base == ref */
} acc;

/* x, base: the same dtype and shape (readable data); ref: double (or the
 * dtype of base for integer outputs) and the same shape, or NULL. */
static void accumulate(acc *a, const ph_tensor *x, const ph_tensor *base, const ph_tensor *ref,
                       double budget, double atol, double rtol)
{
    int dtype = ph_tensor_dtype(base), rdt = ref ? ph_tensor_dtype(ref) : dtype;
    const void *xd = ph_tensor_data(x), *bd = ph_tensor_data(base), *rd = ref ? ph_tensor_data(ref) : NULL;
    int64_t n = ph_tensor_numel(base);
    for (int64_t i = 0; i < n; i++) {
        double xv = element(xd, dtype, i), bv = element(bd, dtype, i);
        double rv = rd ? element(rd, rdt, i) : bv;
        if (!is_float(dtype)) {
            if (xv != bv) {
                a->tol_bad++;
                a->max_abs = fmax(a->max_abs, fabs(xv - bv));
                a->max_rel = fmax(a->max_rel, fabs(xv - bv) / fmax(fabs(bv), 1e-12));
                a->int_bad += bv == rv;
            }
            a->err += xv != rv;
            continue;
        }
        if (!isfinite(bv) || !isfinite(xv)) {
            if (fp_class(xv) != fp_class(bv)) {
                a->nonfinite_bad++;
                a->tol_bad++;
                a->max_abs = INFINITY;
            }
            continue;
        }
        double d = fabs(xv - bv), rel = d / fmax(fabs(bv), 1e-12);
        a->max_abs = fmax(a->max_abs, d);
        if (d > 0)
            a->max_rel = fmax(a->max_rel, rel);
        if (d > atol + rtol * fabs(bv))
            a->tol_bad++;
        if (!isfinite(rv))
            rv = bv; /* the reference overflowed where the original did not: judge against it */
        double e = fabs(xv - rv);
        a->err = fmax(a->err, e);
        a->budget_bad += e > budget;
    }
}

/* The original's own error against the reference and the reference's
 * largest magnitude (floats), or the elements where they differ. */
static void original_error(const ph_tensor *orig, const ph_tensor *ref, double *err, double *scale)
{
    int dtype = ph_tensor_dtype(orig), rdt = ph_tensor_dtype(ref);
    const void *od = ph_tensor_data(orig), *rd = ph_tensor_data(ref);
    int64_t n = ph_tensor_numel(orig);
    for (int64_t i = 0; od && rd && i < n; i++) {
        double ov = element(od, dtype, i), rv = element(rd, rdt, i);
        if (!is_float(dtype)) {
            *err += ov != rv;
        } else if (isfinite(ov) && isfinite(rv)) {
            *err = fmax(*err, fabs(ov - rv));
            *scale = fmax(*scale, fabs(rv));
        }
    }
}

static double budget_of(const host_verify *v, size_t o)
{
    int dt = v->dtypes[o];
    return ph_error_budget(v->cfg.budget_factor, v->cfg.budget_ulps, v->orig_err[o], v->scale[o], dt, v->precision);
}

/* The same dtype and dims; 0 or a message. */
static int same_shape(const char *name, const ph_tensor *got, const ph_tensor *want, ph_error *err)
{
    if (ph_tensor_dtype(got) != ph_tensor_dtype(want) || ph_tensor_rank(got) != ph_tensor_rank(want))
        return ph_error_set(err, HOST_EXIT_MISMATCH, "output '%s': dtype or rank changed (%s rank %zu, was %s rank %zu)",
                            name, ph_dtype_name(ph_tensor_dtype(got)), ph_tensor_rank(got),
                            ph_dtype_name(ph_tensor_dtype(want)), ph_tensor_rank(want));
    for (size_t i = 0; i < ph_tensor_rank(got); i++)
        if (ph_tensor_dim(got, i) != ph_tensor_dim(want, i))
            return ph_error_set(err, HOST_EXIT_MISMATCH, "output '%s': dim %zu changed from %lld to %lld",
                                name, i, (long long)ph_tensor_dim(want, i), (long long)ph_tensor_dim(got, i));
    return 0;
}

/* ----------------------------------------------------------- evaluation */

static void free_tensors(ph_tensor **t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) {
        ph_tensor_free(t[i]);
        t[i] = NULL;
    }
}

/* Evaluate m on every input set into got (n_sets x n_outputs). */
static int evaluate(host_verify *v, ph_model *m, int float64, ph_tensor **got, ph_error *err)
{
    ph_eval *e = NULL;
    ph_error ee = {0};
    ph_eval_options opts = {.size = sizeof opts, .float64 = float64};
    int rc = ph_eval_new_with(ph_model_graph(m), &opts, &e, &ee);
    for (size_t s = 0; !rc && s < v->n_sets; s++) {
        host_trace_phase_step((int)s + 1, (int)v->n_sets); /* the progress line's "run k of n" */
        rc = ph_eval_run(e, (const ph_tensor *const *)v->in.sets[s].inputs, v->n_inputs,
                         got + s * v->n_outputs, v->n_outputs, &ee);
    }
    ph_eval_free(e);
    if (rc) {
        free_tensors(got, v->n_sets * v->n_outputs);
        return ph_error_set(err, HOST_EXIT_NOVERIFY, "cannot evaluate the model: %.400s",
                            ee.message[0] ? ee.message : ph_strerror(rc));
    }
    return 0;
}

/* ----------------------------------------------------- symbolic dims hint */

/* The evaluation failed with symbolic dims at HOST_VERIFY_SYMBOLIC_DIM: try
 * larger sizes once; say what comes from the default and name
 * --input-shape.  Appends to err's message. */
static void symbolic_hint(host_verify *v, ph_model *m, ph_error *err)
{
    static const int64_t sizes[] = {16, 224};
    char why[sizeof err->message];
    snprintf(why, sizeof why, "%s", err->message);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        host_verify_config one = v->cfg;
        one.runs = 1;
        host_input_sets in;
        ph_error ie = {0};
        int ok = host_input_sets_make(m, &one, sizes[k], 64ull << 20, &in, &ie) == 0; /* a try: small inputs only */
        ph_eval *e = NULL;
        ph_tensor **outs = host_xcalloc(v->n_outputs + 1, sizeof *outs);
        if (ok)
            ok = ph_eval_new(ph_model_graph(m), &e, &ie) == 0 &&
                 ph_eval_run(e, (const ph_tensor *const *)in.sets[0].inputs, v->n_inputs, outs, v->n_outputs,
                             &ie) == 0;
        ph_eval_free(e);
        free_tensors(outs, v->n_outputs);
        free(outs);
        host_input_sets_free(&in);
        if (ok) {
            ph_error_set(err, HOST_EXIT_NOVERIFY,
                         "%.300s; this comes from the symbolic dims, which verification sets to %d "
                         "(%.200s): the model evaluates with them at %lld; give real sizes with "
                         "--input-shape %s:DIMS",
                         why, HOST_VERIFY_SYMBOLIC_DIM, v->in.defaulted, (long long)sizes[k],
                         v->in.first_defaulted);
            return;
        }
    }
    ph_error_set(err, HOST_EXIT_NOVERIFY,
                 "%.300s (verification set the symbolic dims to %d: %.200s; if the model needs other "
                 "sizes, give them with --input-shape %s:DIMS)",
                 why, HOST_VERIFY_SYMBOLIC_DIM, v->in.defaulted, v->in.first_defaulted);
}

/* ----------------------------------------------------------- expected data */

/* Judge the original against the expected outputs of the data folders. */
static int check_expected(host_verify *v, ph_error *err)
{
    size_t total = 0;
    for (size_t s = 0; s < v->n_sets; s++)
        total += v->in.sets[s].n_expected;
    v->expected = host_xcalloc(total + 1, sizeof *v->expected);
    int rc = 0;
    double atol = host_verify_atol(&v->cfg), rtol = host_verify_rtol(&v->cfg);
    for (size_t s = 0; s < v->n_sets; s++) {
        host_input_set *set = &v->in.sets[s];
        for (size_t o = 0; o < v->n_outputs; o++) {
            const ph_tensor *want = set->expected[o], *orig = v->wanted[s * v->n_outputs + o];
            if (!want)
                continue;
            host_verify_expected *x = &v->expected[v->n_expected++];
            x->set = set->label;
            x->file = set->expected_file[o];
            x->name = v->names[o];
            x->is_float = is_float(ph_tensor_dtype(orig));
            ph_error serr = {0};
            if (same_shape(v->names[o], want, orig, &serr)) {
                x->mismatches = 1;
                if (!rc)
                    rc = ph_error_set(err, HOST_EXIT_MISMATCH, "%s: %s", x->file, serr.message);
                continue;
            }
            const ph_tensor *ref = v->has_ref ? v->ref[s * v->n_outputs + o] : NULL;
            double oe = 0, scale = 0;
            if (ref)
                original_error(orig, ref, &oe, &scale);
            int dt = ph_tensor_dtype(orig);
            x->original_error = oe;
            x->budget = x->is_float ? ph_error_budget(v->cfg.budget_factor, v->cfg.budget_ulps, oe, scale, dt, 0) : oe;
            acc a = {0};
            accumulate(&a, want, orig, ref, x->budget, atol, rtol);
            x->max_abs = a.max_abs;
            x->expected_error = a.err;
            x->mismatches = v->budget_mode && ref ? (x->is_float ? a.budget_bad + a.nonfinite_bad : a.int_bad)
                                                  : a.tol_bad;
            x->ok = x->mismatches == 0;
            if (!x->ok && !rc)
                rc = ph_error_set(err, HOST_EXIT_MISMATCH,
                                  "the original model does not compute %s (output '%s'): %zu elements "
                                  "differ, max abs %.3g%s",
                                  x->file, x->name, x->mismatches, x->max_abs,
                                  ref && x->is_float ? "; beyond the original's own error budget" : "");
        }
    }
    return rc;
}

/* ----------------------------------------------------------- making */

int host_verify_new(ph_model *m, const host_verify_config *cfg, host_verify **out, ph_error *err)
{
    ph_graph *g = ph_model_graph(m);
    host_verify *v = host_xcalloc(1, sizeof *v);
    *out = v;
    v->cfg = *cfg;
    v->n_inputs = ph_graph_input_count(g);
    v->n_outputs = ph_graph_output_count(g);
    v->budget_mode = !host_verify_fixed(cfg);
    v->names = host_xcalloc(v->n_outputs + 1, sizeof *v->names);
    v->dtypes = host_xcalloc(v->n_outputs + 1, sizeof *v->dtypes);
    v->orig_err = host_xcalloc(v->n_outputs + 1, sizeof *v->orig_err);
    v->scale = host_xcalloc(v->n_outputs + 1, sizeof *v->scale);
    v->results = host_xcalloc(v->n_outputs + 1, sizeof *v->results);
    for (size_t o = 0; o < v->n_outputs; o++)
        v->names[o] = host_xstrdup(ph_value_name(ph_graph_output(g, o)));
    int rc = host_input_sets_make(m, cfg, HOST_VERIFY_SYMBOLIC_DIM, HOST_VERIFY_MAX_INPUT_BYTES, &v->in, err);
    v->n_sets = v->in.count;
    size_t n = v->n_sets * v->n_outputs + 1;
    v->wanted = host_xcalloc(n, sizeof *v->wanted);
    v->ref = host_xcalloc(n, sizeof *v->ref);
    v->last = host_xcalloc(n, sizeof *v->last);
    if (rc)
        return rc;
    if ((rc = evaluate(v, m, 0, v->wanted, err))) {
        if (v->in.first_defaulted)
            symbolic_hint(v, m, err);
        return rc;
    }
    ph_error rerr = {0};
    v->has_ref = evaluate(v, m, 1, v->ref, &rerr) == 0;
    if (!v->has_ref)
        snprintf(v->ref_why, sizeof v->ref_why, "%.390s", rerr.message);
    for (size_t o = 0; o < v->n_outputs; o++) {
        const ph_tensor *w = v->wanted[o];
        v->dtypes[o] = w ? ph_tensor_dtype(w) : PH_DT_UNDEFINED;
        for (size_t s = 0; v->has_ref && s < v->n_sets; s++) {
            const ph_tensor *ws = v->wanted[s * v->n_outputs + o], *r = v->ref[s * v->n_outputs + o];
            if (ph_tensor_data(ws) && ph_tensor_data(r))
                original_error(ws, r, &v->orig_err[o], &v->scale[o]);
        }
        v->results[o].name = v->names[o];
        v->results[o].is_float = is_float(v->dtypes[o]);
        v->results[o].original_error = v->orig_err[o];
        v->results[o].scale = v->scale[o];
        v->results[o].budget = v->results[o].is_float ? budget_of(v, o) : v->orig_err[o];
        v->results[o].ok = 1;
    }
    return check_expected(v, err);
}

void host_verify_free(host_verify *v)
{
    if (!v)
        return;
    size_t n = v->n_sets * v->n_outputs;
    free_tensors(v->wanted, n);
    free_tensors(v->ref, n);
    free_tensors(v->last, n);
    for (size_t o = 0; o < v->n_outputs; o++)
        free(v->names[o]);
    host_input_sets_free(&v->in);
    free(v->wanted);
    free(v->ref);
    free(v->last);
    free(v->names);
    free(v->dtypes);
    free(v->orig_err);
    free(v->scale);
    free(v->results);
    free(v->expected);
    free(v);
}

/* ----------------------------------------------------------- checking */

/* Judge got (n_sets x n_outputs) against the original; fills results. */
static int judge(host_verify *v, ph_tensor **got, ph_error *err)
{
    double atol = host_verify_atol(&v->cfg), rtol = host_verify_rtol(&v->cfg);
    int use_budget = v->budget_mode && v->has_ref, rc = 0;
    for (size_t o = 0; o < v->n_outputs; o++) {
        host_verify_result *res = &v->results[o];
        acc a = {0};
        for (size_t s = 0; s < v->n_sets && !rc; s++) {
            const ph_tensor *x = got[s * v->n_outputs + o], *w = v->wanted[s * v->n_outputs + o];
            if ((rc = same_shape(v->names[o], x, w, err)))
                break;
            if (!ph_tensor_data(x) || !ph_tensor_data(w))
                continue; /* strings: not compared */
            accumulate(&a, x, w, v->has_ref ? v->ref[s * v->n_outputs + o] : NULL, res->budget, atol, rtol);
        }
        res->max_abs = a.max_abs;
        res->max_rel = a.max_rel;
        res->optimized_error = a.err;
        res->mismatches = use_budget ? (res->is_float ? a.budget_bad + a.nonfinite_bad : a.int_bad) : a.tol_bad;
        res->ok = res->mismatches == 0;
    }
    for (size_t o = 0; o < v->n_outputs && !rc; o++) {
        const host_verify_result *res = &v->results[o];
        if (res->ok)
            continue;
        if (!use_budget)
            rc = ph_error_set(err, HOST_EXIT_MISMATCH,
                              "output '%s' differs: %zu elements outside atol %g + rtol %g (max abs %.3g, "
                              "max rel %.3g)",
                              res->name, res->mismatches, atol, rtol, res->max_abs, res->max_rel);
        else if (!res->is_float)
            rc = ph_error_set(err, HOST_EXIT_MISMATCH,
                              "output '%s' differs: %zu elements differ from the float64 reference where "
                              "the original equals it (max abs %.3g from the original)",
                              res->name, res->mismatches, res->max_abs);
        else if (isinf(res->max_abs) && res->optimized_error <= res->budget)
            rc = ph_error_set(err, HOST_EXIT_MISMATCH,
                              "output '%s' differs: %zu elements differ from the original in NaN or "
                              "infinity (one side NaN or infinite, the other not)", res->name, res->mismatches);
        else
            rc = ph_error_set(err, HOST_EXIT_MISMATCH,
                              "output '%s' differs: optimized error %.3g beyond its budget %.3g (%g x the "
                              "original's error %.3g%s + %g ulp%s of %.3g, against the float64 reference); "
                              "%zu elements beyond it, max abs %.3g from the original",
                              res->name, res->optimized_error, res->budget, v->cfg.budget_factor,
                              res->original_error, v->precision ? " x the ratio of the rounding units" : "",
                              v->cfg.budget_ulps, v->precision ? (v->precision == PH_DT_FLOAT16 ? " (float16)" : " (bfloat16)") : "", res->scale, res->mismatches,
                              res->max_abs);
    }
    return rc;
}

/* Compare got with the kept outputs bit for bit (a NaN matches a NaN). */
static int bits_differ(host_verify *v, ph_tensor **got, const char *pass, ph_error *err)
{
    for (size_t o = 0; o < v->n_outputs; o++) {
        size_t differ = 0;
        double max_abs = 0;
        for (size_t s = 0; s < v->n_sets; s++) {
            const ph_tensor *x = got[s * v->n_outputs + o];
            const ph_tensor *k = v->last[s * v->n_outputs + o] ? v->last[s * v->n_outputs + o]
                                                               : v->wanted[s * v->n_outputs + o];
            ph_error serr = {0};
            if (same_shape(v->names[o], x, k, &serr)) {
                differ = SIZE_MAX;
                break;
            }
            const unsigned char *a = ph_tensor_data(x), *b = ph_tensor_data(k);
            int dt = ph_tensor_dtype(x);
            size_t es = ph_dtype_size(dt);
            int64_t n = ph_tensor_numel(x);
            for (int64_t i = 0; a && b && i < n; i++) {
                if (memcmp(a + (size_t)i * es, b + (size_t)i * es, es) == 0)
                    continue;
                double xv = element(a, dt, i), kv = element(b, dt, i);
                if (is_float(dt) && isnan(xv) && isnan(kv))
                    continue;
                differ++;
                max_abs = fmax(max_abs, isnan(xv) || isnan(kv) ? INFINITY : fabs(xv - kv));
            }
        }
        if (differ) {
            v->exact_broken = 1;
            if (differ == SIZE_MAX)
                return ph_error_set(err, HOST_EXIT_MISMATCH,
                                    "%s%s is declared exact but changed the dtype or shape of output '%s'",
                                    pass ? "pass " : "", pass ? pass : "the model", v->names[o]);
            return ph_error_set(err, HOST_EXIT_MISMATCH,
                                "%s%s is declared exact but changed the bits of output '%s': %zu elements "
                                "differ, max abs %.3g",
                                pass ? "pass " : "", pass ? pass : "the model", v->names[o], differ, max_abs);
        }
    }
    return 0;
}

/* got becomes the kept outputs. */
static void keep(host_verify *v, ph_tensor **got)
{
    size_t n = v->n_sets * v->n_outputs;
    free_tensors(v->last, n);
    memcpy(v->last, got, n * sizeof *got);
    memset(got, 0, n * sizeof *got);
    v->last_stale = 0;
}

static int counts_match(const host_verify *v, ph_model *m, ph_error *err)
{
    ph_graph *g = ph_model_graph(m);
    /* a written model of ir_version < 4 lists initializers that passes added
     * as inputs after the original's (the evaluator feeds them their data) */
    size_t ni = ph_graph_input_count(g);
    int inputs_ok = ni >= v->n_inputs;
    for (size_t i = v->n_inputs; inputs_ok && i < ni; i++)
        inputs_ok = ph_value_is_initializer(ph_graph_input(g, i));
    if (!inputs_ok || ph_graph_output_count(g) != v->n_outputs)
        return ph_error_set(err, HOST_EXIT_MISMATCH, "the model's inputs or outputs changed in number");
    return 0;
}

/* Evaluate m; judge it (budget) and/or compare bits (exact), keep it (keep_it). */
static int run_check(host_verify *v, ph_model *m, int budget, int exact, const char *pass, int keep_it,
                     ph_error *err)
{
    int rc = counts_match(v, m, err);
    if (rc)
        return rc;
    size_t n = v->n_sets * v->n_outputs;
    ph_tensor **got = host_xcalloc(n + 1, sizeof *got);
    v->exact_broken = 0;
    rc = evaluate(v, m, 0, got, err);
    /* beyond the budget is the graver finding: it is the one reported */
    if (!rc && budget)
        rc = judge(v, got, err);
    if (!rc && exact)
        rc = bits_differ(v, got, pass, err);
    if (rc != HOST_EXIT_NOVERIFY && keep_it)
        keep(v, got);
    free_tensors(got, n);
    free(got);
    return rc;
}

int host_verify_check(host_verify *v, ph_model *m, ph_error *err)
{
    return run_check(v, m, 1, 0, NULL, 0, err);
}

int host_verify_check_pass(host_verify *v, ph_model *m, const char *pass, int exact, ph_error *err)
{
    return run_check(v, m, 1, exact, pass, 1, err);
}

void host_verify_changed(host_verify *v) { v->last_stale = 1; }

int host_verify_refresh(host_verify *v, ph_model *m, ph_error *err)
{
    return v->last_stale ? host_verify_snapshot(v, m, err) : 0;
}

int host_verify_exact(host_verify *v, ph_model *m, const char *pass, ph_error *err)
{
    return run_check(v, m, 0, 1, pass, 1, err);
}

int host_verify_snapshot(host_verify *v, ph_model *m, ph_error *err)
{
    return run_check(v, m, 0, 0, NULL, 1, err);
}

int host_verify_same_bits(host_verify *v, ph_model *m, ph_error *err)
{
    return run_check(v, m, 0, 1, NULL, 0, err);
}

int host_verify_exact_broken(const host_verify *v) { return v->exact_broken; }

void host_verify_lower_precision(host_verify *v, int dtype)
{
    if (!v || !dtype || (v->precision && ph_dtype_epsilon(dtype) <= ph_dtype_epsilon(v->precision)))
        return;
    v->precision = dtype;
    for (size_t o = 0; o < v->n_outputs; o++)
        if (v->results[o].is_float)
            v->results[o].budget = budget_of(v, o);
}

int host_verify_precision(const host_verify *v) { return v ? v->precision : 0; }

/* ----------------------------------------------------------- reading */

const host_verify_result *host_verify_results(const host_verify *v, size_t *count)
{
    *count = v->n_outputs;
    return v->results;
}

const host_verify_expected *host_verify_expected_results(const host_verify *v, size_t *count)
{
    *count = v->n_expected;
    return v->expected;
}

int host_verify_reference(const host_verify *v, const char **why)
{
    if (why)
        *why = v->has_ref ? NULL : v->ref_why;
    return v->has_ref;
}

int host_verify_uses_budget(const host_verify *v) { return v->budget_mode && v->has_ref; }

size_t host_verify_set_count(const host_verify *v) { return v->n_sets; }

int host_verify_from_data(const host_verify *v) { return v->in.from_data; }

const char *const *host_verify_input_notes(const host_verify *v, size_t *count)
{
    *count = v->in.n_notes;
    return (const char *const *)v->in.notes;
}

/* "3.1e-05" for floats, "2 elements" for integers */
static const char *figure(char *buf, size_t size, int is_float_out, double x)
{
    if (is_float_out)
        snprintf(buf, size, "%.3g", x);
    else
        snprintf(buf, size, "%.0f element%s", x, x == 1 ? "" : "s");
    return buf;
}

static void print_lines(FILE *out, const host_verify *v, int checked, int per_output)
{
    int budget = host_verify_uses_budget(v);
    for (size_t i = 0; checked && i < v->in.n_notes; i++)
        fprintf(out, "  input %s\n", v->in.notes[i]);
    for (size_t o = 0; checked && per_output && o < v->n_outputs; o++) {
        const host_verify_result *r = &v->results[o];
        char a[48], b[48], c[48];
        if (budget)
            fprintf(out, "  output %-24s original error %s  optimized error %s  budget %s%s\n", r->name,
                    figure(a, sizeof a, r->is_float, r->original_error),
                    figure(b, sizeof b, r->is_float, r->optimized_error),
                    r->is_float ? figure(c, sizeof c, 1, r->budget) : "= where the original is",
                    r->ok ? "" : "  MISMATCH");
        else
            fprintf(out, "  output %-24s max abs %.3g  max rel %.3g%s\n", r->name, r->max_abs, r->max_rel,
                    r->ok ? "" : "  MISMATCH");
    }
    for (size_t k = 0; k < v->n_expected; k++) {
        const host_verify_expected *x = &v->expected[k];
        char a[48], b[48], c[48];
        size_t sl = strlen(x->set);
        const char *file = strncmp(x->file, x->set, sl) == 0 && x->file[sl] == '/' ? x->file + sl + 1 : x->file;
        if (budget)
            fprintf(out, "  data %s: output %s against %s: original error %s  file error %s  budget %s%s\n",
                    x->set, x->name, file, figure(a, sizeof a, x->is_float, x->original_error),
                    figure(b, sizeof b, x->is_float, x->expected_error),
                    x->is_float ? figure(c, sizeof c, 1, x->budget) : "= where the original is",
                    x->ok ? "" : "  MISMATCH");
        else
            fprintf(out, "  data %s: output %s against %s: max abs %.3g%s\n", x->set, x->name, file,
                    x->max_abs, x->ok ? "" : "  MISMATCH");
    }
}

void host_verify_print(FILE *out, const host_verify *v, int checked)
{
    print_lines(out, v, checked, 1);
}

void host_verify_print_notes(FILE *out, const host_verify *v, int checked)
{
    print_lines(out, v, checked, 0);
}
