/* host/check/verify.c - numeric verification of a run (verify.h). */
#include "verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/util.h"

struct host_verify {
    host_verify_config cfg;
    size_t n_inputs, n_outputs;
    ph_tensor **inputs;  /* runs x n_inputs (NULL: the input's initializer) */
    ph_tensor **wanted;  /* runs x n_outputs */
    char **names;        /* output names */
    host_verify_result *results;
};

/* ------------------------------------------------------- random inputs */

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13; /* xorshift64 */
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double unit(uint64_t *s) { return (double)(next_random(s) >> 11) / 9007199254740992.0; }

static void fill_random(void *d, int dtype, int64_t n, uint64_t *s)
{
    for (int64_t i = 0; i < n; i++) {
        double u = unit(s);
        switch (dtype) {
        case PH_DT_FLOAT: ((float *)d)[i] = (float)(2 * u - 1); break;
        case PH_DT_DOUBLE: ((double *)d)[i] = 2 * u - 1; break;
        case PH_DT_FLOAT16: {
            /* halves in [-1, 1): sign, exponent 0..14, mantissa */
            uint16_t h = (uint16_t)(((u < 0.5) << 15) | ((uint16_t)(next_random(s) % 15) << 10) |
                                    (next_random(s) & 0x3ff));
            ((uint16_t *)d)[i] = h;
            break;
        }
        case PH_DT_BOOL: ((uint8_t *)d)[i] = u < 0.5; break;
        case PH_DT_INT8: ((int8_t *)d)[i] = (int8_t)(u * 10); break;
        case PH_DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)(u * 10); break;
        case PH_DT_INT16: ((int16_t *)d)[i] = (int16_t)(u * 10); break;
        case PH_DT_INT32: ((int32_t *)d)[i] = (int32_t)(u * 10); break;
        case PH_DT_INT64: ((int64_t *)d)[i] = (int64_t)(u * 10); break;
        default: memset((char *)d + (size_t)i * ph_dtype_size(dtype), 0, ph_dtype_size(dtype));
        }
    }
}

/* A random tensor for graph input v, or NULL with err set. */
static ph_tensor *make_input(const ph_value *v, uint64_t *seed, ph_error *err)
{
    int dtype = ph_value_dtype(v), rank = ph_value_rank(v);
    if (!dtype || !ph_dtype_size(dtype) || rank < 0) {
        ph_error_set(err, HOST_EXIT_NOVERIFY,
                     "graph input '%s' has no known %s: give it with [model] input_shape",
                     ph_value_name(v), !dtype || !ph_dtype_size(dtype) ? "numeric dtype" : "rank");
        return NULL;
    }
    int64_t dims[64];
    if (rank > 64) {
        ph_error_set(err, HOST_EXIT_NOVERIFY, "graph input '%s': rank %d too large", ph_value_name(v), rank);
        return NULL;
    }
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = ph_value_dim(v, i) >= 0 ? ph_value_dim(v, i) : 1;
        n *= dims[i];
    }
    void *buf = host_xcalloc((size_t)n + 1, ph_dtype_size(dtype));
    fill_random(buf, dtype, n, seed);
    ph_tensor *t = ph_tensor_new(dtype, (size_t)rank, dims, buf);
    free(buf);
    if (!t)
        ph_error_set(err, HOST_EXIT_NOVERIFY, "out of memory for input '%s'", ph_value_name(v));
    return t;
}

/* ----------------------------------------------------------- evaluation */

static int evaluate(ph_model *m, const ph_tensor *const *inputs, size_t n_in, ph_tensor **outputs,
                    size_t n_out, ph_error *err)
{
    ph_eval *e = NULL;
    ph_error ee = {0};
    int rc = ph_eval_new(ph_model_graph(m), &e, &ee);
    if (!rc)
        rc = ph_eval_run(e, inputs, n_in, outputs, n_out, &ee);
    ph_eval_free(e);
    if (rc)
        return ph_error_set(err, HOST_EXIT_NOVERIFY, "cannot evaluate the model: %.400s",
                            ee.message[0] ? ee.message : ph_strerror(rc));
    return 0;
}

int host_verify_new(ph_model *m, const host_verify_config *cfg, host_verify **out, ph_error *err)
{
    ph_graph *g = ph_model_graph(m);
    host_verify *v = host_xcalloc(1, sizeof *v);
    v->cfg = *cfg;
    v->n_inputs = ph_graph_input_count(g);
    v->n_outputs = ph_graph_output_count(g);
    size_t runs = (size_t)cfg->runs;
    v->inputs = host_xcalloc(runs * v->n_inputs + 1, sizeof *v->inputs);
    v->wanted = host_xcalloc(runs * v->n_outputs + 1, sizeof *v->wanted);
    v->names = host_xcalloc(v->n_outputs + 1, sizeof *v->names);
    v->results = host_xcalloc(v->n_outputs + 1, sizeof *v->results);
    for (size_t o = 0; o < v->n_outputs; o++)
        v->names[o] = host_xstrdup(ph_value_name(ph_graph_output(g, o)));
    *out = v;
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)cfg->seed;
    for (size_t r = 0; r < runs; r++) {
        for (size_t i = 0; i < v->n_inputs; i++) {
            const ph_value *in = ph_graph_input(g, i);
            if (ph_value_is_initializer(in))
                continue; /* keep the model's default */
            if (!(v->inputs[r * v->n_inputs + i] = make_input(in, &seed, err)))
                return HOST_EXIT_NOVERIFY;
        }
        int rc = evaluate(m, (const ph_tensor *const *)v->inputs + r * v->n_inputs, v->n_inputs,
                          v->wanted + r * v->n_outputs, v->n_outputs, err);
        if (rc)
            return rc;
    }
    return 0;
}

void host_verify_free(host_verify *v)
{
    if (!v)
        return;
    size_t runs = (size_t)v->cfg.runs;
    for (size_t i = 0; i < runs * v->n_inputs; i++)
        ph_tensor_free(v->inputs[i]);
    for (size_t i = 0; i < runs * v->n_outputs; i++)
        ph_tensor_free(v->wanted[i]);
    for (size_t o = 0; o < v->n_outputs; o++)
        free(v->names[o]);
    free(v->inputs);
    free(v->wanted);
    free(v->names);
    free(v->results);
    free(v);
}

/* ----------------------------------------------------------- comparison */

static double element(const void *d, int dtype, int64_t i)
{
    switch (dtype) {
    case PH_DT_FLOAT: return ((const float *)d)[i];
    case PH_DT_DOUBLE: return ((const double *)d)[i];
    case PH_DT_FLOAT16: {
        /* decode IEEE half */
        uint16_t h = ((const uint16_t *)d)[i];
        int e = (h >> 10) & 0x1f, mnt = h & 0x3ff;
        double val = e == 0 ? ldexp(mnt, -24) : e == 31 ? (mnt ? NAN : INFINITY) : ldexp(mnt + 1024, e - 25);
        return h & 0x8000 ? -val : val;
    }
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

static int is_float(int dtype)
{
    return dtype == PH_DT_FLOAT || dtype == PH_DT_DOUBLE || dtype == PH_DT_FLOAT16 || dtype == PH_DT_BFLOAT16;
}

/* Compare one output; returns 0 or a message in err. */
static int compare(host_verify *v, size_t o, const ph_tensor *got, const ph_tensor *want, ph_error *err)
{
    host_verify_result *res = &v->results[o];
    if (ph_tensor_dtype(got) != ph_tensor_dtype(want) || ph_tensor_rank(got) != ph_tensor_rank(want))
        return ph_error_set(err, HOST_EXIT_MISMATCH, "output '%s': dtype or rank changed (%s rank %zu, was %s rank %zu)",
                            v->names[o], ph_dtype_name(ph_tensor_dtype(got)), ph_tensor_rank(got),
                            ph_dtype_name(ph_tensor_dtype(want)), ph_tensor_rank(want));
    for (size_t i = 0; i < ph_tensor_rank(got); i++)
        if (ph_tensor_dim(got, i) != ph_tensor_dim(want, i))
            return ph_error_set(err, HOST_EXIT_MISMATCH, "output '%s': dim %zu changed from %lld to %lld",
                                v->names[o], i, (long long)ph_tensor_dim(want, i), (long long)ph_tensor_dim(got, i));
    int dtype = ph_tensor_dtype(got);
    const void *a = ph_tensor_data(got), *b = ph_tensor_data(want);
    if (!a || !b) /* strings: compare bytes of what there is */
        return 0;
    int64_t n = ph_tensor_numel(got);
    for (int64_t i = 0; i < n; i++) {
        double x = element(a, dtype, i), y = element(b, dtype, i);
        if (isnan(x) || isnan(y)) {
            if (!(isnan(x) && isnan(y)))
                res->mismatches++, res->max_abs = INFINITY;
            continue;
        }
        double d = fabs(x - y);
        if (x == y)
            d = 0; /* equal infinities */
        double rel = d / fmax(fabs(y), 1e-12);
        if (d > res->max_abs)
            res->max_abs = d;
        if (d > 0 && rel > res->max_rel)
            res->max_rel = rel;
        double tol = is_float(dtype) ? v->cfg.atol + v->cfg.rtol * fabs(y) : 0;
        if (d > tol)
            res->mismatches++;
    }
    return 0;
}

int host_verify_check(host_verify *v, ph_model *m, ph_error *err)
{
    ph_graph *g = ph_model_graph(m);
    if (ph_graph_input_count(g) != v->n_inputs || ph_graph_output_count(g) != v->n_outputs)
        return ph_error_set(err, HOST_EXIT_MISMATCH, "the model's inputs or outputs changed in number");
    memset(v->results, 0, v->n_outputs * sizeof *v->results);
    for (size_t o = 0; o < v->n_outputs; o++)
        v->results[o].name = v->names[o];
    ph_tensor **got = host_xcalloc(v->n_outputs + 1, sizeof *got);
    int rc = 0;
    for (size_t r = 0; r < (size_t)v->cfg.runs && !rc; r++) {
        rc = evaluate(m, (const ph_tensor *const *)v->inputs + r * v->n_inputs, v->n_inputs, got, v->n_outputs, err);
        for (size_t o = 0; o < v->n_outputs; o++) {
            if (!rc)
                rc = compare(v, o, got[o], v->wanted[r * v->n_outputs + o], err);
            ph_tensor_free(got[o]);
            got[o] = NULL;
        }
    }
    free(got);
    for (size_t o = 0; o < v->n_outputs && !rc; o++)
        if (v->results[o].mismatches)
            rc = ph_error_set(err, HOST_EXIT_MISMATCH,
                              "output '%s' differs: %zu elements outside atol %g + rtol %g (max abs %.3g, max rel %.3g)",
                              v->names[o], v->results[o].mismatches, v->cfg.atol, v->cfg.rtol,
                              v->results[o].max_abs, v->results[o].max_rel);
    return rc;
}

const host_verify_result *host_verify_results(const host_verify *v, size_t *count)
{
    *count = v->n_outputs;
    return v->results;
}

void host_verify_print(FILE *out, const host_verify *v)
{
    fprintf(out, "verify: %d run%s, atol %g, rtol %g\n", v->cfg.runs, v->cfg.runs == 1 ? "" : "s",
            v->cfg.atol, v->cfg.rtol);
    for (size_t o = 0; o < v->n_outputs; o++)
        fprintf(out, "  output %-24s max abs %.3g  max rel %.3g%s\n", v->names[o], v->results[o].max_abs,
                v->results[o].max_rel, v->results[o].mismatches ? "  MISMATCH" : "");
}
