/* sdk/src/testing/testing.c - the C test API for plugin authors (testing.h):
 * load a plugin, run a pass like the host, and compare the model's outputs
 * before and after it with the SDK evaluator. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/passhost.h"
#include "passhost/testing.h"
#include "testing_internal.h"

/* Every field of ABI 1.0, up to and including run, must be there. */
#define DESC_MIN_SIZE (offsetof(ph_pass_desc, run) + sizeof(((ph_pass_desc *)0)->run))

struct ph_test_pass {
    void *handle;      /* dlopen handle, owned */
    ph_pass_desc desc; /* the plugin's descriptor, struct_size bytes of it */
};

/* ------------------------------------------------------------ descriptors */

static int valid_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
            return 0;
    return 1;
}

/* Copy the first struct_size bytes of *in into a zeroed *out and check the
 * fields a run relies on.  what names the descriptor in messages. */
static int desc_read(const ph_pass_desc *in, ph_pass_desc *out, const char *what, ph_error *err)
{
    if (!in)
        return ph_error_set(err, PH_EINVAL, "%s: no pass descriptor", what);
    if (in->abi_major != PH_ABI_MAJOR)
        return ph_error_set(err, PH_EUNSUPPORTED,
                            "%s: plugin ABI %u.%u, this SDK supports %d.x (rebuild the plugin against it)",
                            what, (unsigned)in->abi_major, (unsigned)in->abi_minor, PH_ABI_MAJOR);
    if (in->struct_size < DESC_MIN_SIZE)
        return ph_error_set(err, PH_EINVAL, "%s: malformed pass descriptor: struct_size %u is smaller than "
                            "the %zu bytes of ABI %d.0", what, (unsigned)in->struct_size,
                            (size_t)DESC_MIN_SIZE, PH_ABI_MAJOR);
    memset(out, 0, sizeof *out);
    memcpy(out, in, in->struct_size < sizeof *out ? in->struct_size : sizeof *out);
    if (!valid_name(out->name))
        return ph_error_set(err, PH_EINVAL, "%s: malformed pass descriptor: name '%.80s' is not [a-z0-9_.]+",
                            what, out->name ? out->name : "(null)");
    if (!out->run == !out->rules)
        return ph_error_set(err, PH_EINVAL, "%s: malformed pass descriptor: pass %s sets %s", what, out->name,
                            out->run ? "both run and rules" : "neither run nor rules");
    unsigned all = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT;
    if (!(out->stages & all) || (out->stages & ~all))
        return ph_error_set(err, PH_EINVAL, "%s: malformed pass descriptor: pass %s: stages 0x%x", what,
                            out->name, out->stages);
    if ((int)out->exactness < PH_EXACT || (int)out->exactness > PH_APPROX)
        return ph_error_set(err, PH_EINVAL, "%s: malformed pass descriptor: pass %s: exactness %d", what,
                            out->name, (int)out->exactness);
    return 0;
}

/* ---------------------------------------------------------------- plugins */

PH_API int ph_test_load_pass(const char *so_path, const char *pass_name, ph_test_pass **out,
                             ph_error *err)
{
    if (!out)
        return ph_error_set(err, PH_EINVAL, "ph_test_load_pass: no place for the handle");
    *out = NULL;
    if (!so_path || !*so_path)
        return ph_error_set(err, PH_EINVAL, "ph_test_load_pass: no plugin path");
    ph_test_pass *p = calloc(1, sizeof *p);
    if (!p)
        return ph_error_set(err, PH_ENOMEM, "%s: out of memory", so_path);
    /* dlopen searches the library path for a name without '/' */
    size_t len = strlen(so_path);
    char *open_path = malloc(len + 3);
    if (!open_path) {
        free(p);
        return ph_error_set(err, PH_ENOMEM, "%s: out of memory", so_path);
    }
    snprintf(open_path, len + 3, "%s%s", strchr(so_path, '/') ? "" : "./", so_path);
    dlerror();
    p->handle = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
    free(open_path);
    int rc = 0;
    if (!p->handle) {
        const char *why = dlerror();
        rc = ph_error_set(err, PH_EIO, "%s: cannot load plugin: %s", so_path, why ? why : "unknown dlopen error");
        goto fail;
    }
    dlerror();
    void *sym = dlsym(p->handle, PH_PASS_ENTRY_SYMBOL);
    if (!sym) {
        rc = ph_error_set(err, PH_ENOTFOUND, "%s: no entry symbol %s (define the pass with PH_PASS_DEFINE)",
                          so_path, PH_PASS_ENTRY_SYMBOL);
        goto fail;
    }
    ph_pass_entry_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* object pointer to function pointer */
    if ((rc = desc_read(fn(), &p->desc, so_path, err)))
        goto fail;
    if (pass_name && strcmp(pass_name, p->desc.name) != 0) {
        rc = ph_error_set(err, PH_ENOTFOUND, "%s defines pass '%s', not '%s'", so_path, p->desc.name, pass_name);
        goto fail;
    }
    if (p->desc.rules) { /* a malformed pattern is a load error, as in the host */
        ph_error perr = {0};
        ph_ruleset *rs = ph_ruleset_new(p->desc.rules, &perr);
        if (!rs) {
            rc = ph_error_set(err, perr.code < 0 ? perr.code : PH_EINVAL, "%s: pass %s: %s", so_path,
                              p->desc.name, perr.message[0] ? perr.message : "cannot compile the rules");
            goto fail;
        }
        ph_ruleset_free(rs);
    }
    *out = p;
    return 0;
fail:
    ph_test_pass_free(p);
    return rc;
}

PH_API void ph_test_pass_free(ph_test_pass *p)
{
    if (!p)
        return;
    if (p->handle)
        dlclose(p->handle);
    free(p);
}

PH_API const ph_pass_desc *ph_test_pass_desc(const ph_test_pass *p) { return p ? &p->desc : NULL; }

/* ------------------------------------------------------------------- runs */

static const ph_test_options no_options;
static const ph_param_def no_params[] = {{NULL, 0, NULL, NULL}};

static void result_init(ph_test_result *res)
{
    memset(res, 0, sizeof *res);
    res->output = -1;
    res->element = -1;
}

/* The start shared by ph_test_run and ph_test_run_checked (named fn in
 * messages): reset *res, read desc into *d and require a model.  0, or a
 * negative PH_E* code with err set. */
static int run_begin(const char *fn, const ph_pass_desc *desc, const ph_model *m, ph_test_result *res,
                     ph_pass_desc *d, ph_error *err)
{
    result_init(res);
    int rc = desc_read(desc, d, fn, err);
    if (rc)
        return rc;
    if (!m)
        return ph_error_set(err, PH_EINVAL, "%s: no model", fn);
    return 0;
}

/* Parameters: the table's defaults, then each "name=value" override. */
static ph_params *make_params(const ph_pass_desc *d, const ph_target *profile, const char *const *overrides,
                              int *rc, ph_error *err)
{
    ph_error perr = {0};
    ph_params *params = ph_params_new(d->params ? d->params : no_params, &perr);
    if (!params) {
        *rc = ph_error_set(err, perr.code < 0 ? perr.code : PH_EINVAL, "pass %s: parameters: %s", d->name,
                           perr.message[0] ? perr.message : "cannot make the defaults");
        return NULL;
    }
    /* as the host: the profile's values of the keys the pass declares */
    for (const ph_profile_key *k = d->profile_keys; profile && k && k->key && !*rc; k++) {
        const char *v = ph_target_value(profile, k->key);
        int src = k->param && v ? ph_params_set(params, k->param, v, &perr) : 0;
        if (src < 0)
            *rc = ph_error_set(err, src, "pass %s: profile key %s: %s", d->name, k->key, perr.message);
    }
    for (size_t i = 0; overrides && overrides[i] && !*rc; i++) {
        const char *eq = strchr(overrides[i], '=');
        if (!eq || eq == overrides[i]) {
            *rc = ph_error_set(err, PH_EINVAL, "pass %s: parameter override '%.200s' is not name=value", d->name,
                               overrides[i]);
            break;
        }
        size_t n = (size_t)(eq - overrides[i]);
        char *name = malloc(n + 1);
        if (!name) {
            *rc = ph_error_set(err, PH_ENOMEM, "out of memory");
            break;
        }
        memcpy(name, overrides[i], n);
        name[n] = 0;
        int src = ph_params_set(params, name, eq + 1, &perr);
        free(name);
        if (src < 0) {
            *rc = ph_error_set(err, src, "pass %s: %s", d->name, perr.message);
            break;
        }
    }
    if (*rc) {
        ph_params_free(params);
        return NULL;
    }
    return params;
}

static int run_desc(const ph_pass_desc *d, ph_model *m, const ph_test_options *o, ph_test_result *res,
                    ph_error *err)
{
    ph_graph *g = ph_model_graph(m);
    ph_error lerr = {0};
    int rc = 0;
    if (!o->no_shapes && (rc = ph_graph_update_shapes(g, &lerr)) < 0)
        return ph_error_set(err, rc, "shapes before pass %s: %s", d->name, lerr.message);
    ph_params *params = make_params(d, o->profile, o->params, &rc, err);
    if (!params)
        return rc;
    ph_ruleset *rs = NULL;
    ph_ctx *ctx = ph_ctx_new(o->log, o->log_user);
    if (!ctx) {
        rc = ph_error_set(err, PH_ENOMEM, "out of memory");
        goto out;
    }
    if (d->rules && !(rs = ph_ruleset_new(d->rules, &lerr))) {
        rc = ph_error_set(err, lerr.code < 0 ? lerr.code : PH_EINVAL, "pass %s: %s", d->name,
                          lerr.message[0] ? lerr.message : "cannot compile the rules");
        goto out;
    }
    int max = o->max_iterations > 1 ? o->max_iterations : 1;
    for (int it = 0; it < max; it++) {
        ph_ctx_begin_pass(ctx, d->name, o->target ? o->target : "");
        ph_ctx_set_profile(ctx, o->profile);
        ph_ctx_set_violation_hook(ctx, o->violation, o->violation_user);
        int n = d->run ? ph_ctx_run(ctx, g, d->run, params) : ph_ruleset_run(rs, g, params, ctx);
        if (n < 0) {
            const char *why = ph_ctx_last_error(ctx);
            rc = ph_error_set(err, n, "pass %s failed (%s)%s%s", d->name, ph_strerror(n), why[0] ? ": " : "", why);
            ph_ctx_end_pass(ctx);
            goto out;
        }
        ph_ctx_end_pass(ctx);
        res->iterations++;
        res->rewrites += n;
        if ((rc = ph_graph_toposort(g)) < 0) {
            rc = ph_error_set(err, PH_EVERIFY, "after pass %s: the graph does not sort (%s)", d->name,
                              ph_strerror(rc));
            goto out;
        }
        if ((rc = ph_graph_verify(g, &lerr)) < 0) {
            rc = ph_error_set(err, PH_EVERIFY, "after pass %s: %s", d->name, lerr.message);
            goto out;
        }
        if (n > 0 && !o->no_shapes && (rc = ph_graph_update_shapes(g, &lerr)) < 0) {
            rc = ph_error_set(err, rc, "shapes after pass %s: %s", d->name, lerr.message);
            goto out;
        }
        rc = 0;
        if (n == 0)
            break;
    }
out:
    ph_ruleset_free(rs);
    ph_ctx_free(ctx);
    ph_params_free(params);
    return rc < 0 ? rc : res->rewrites;
}

PH_API int ph_test_run(const ph_pass_desc *desc, ph_model *m, const ph_test_options *opts,
                       ph_test_result *res, ph_error *err)
{
    ph_test_result local;
    if (!res)
        res = &local;
    ph_pass_desc d;
    int rc = run_begin("ph_test_run", desc, m, res, &d, err);
    if (rc)
        return rc;
    return run_desc(&d, m, opts ? opts : &no_options, res, err);
}

/* ------------------------------------------------------------ random inputs */

/* splitmix64: small, good enough, identical everywhere. */
static uint64_t rnd(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A random value for dtype dt, exactly representable in it. */
double test_random_value(int dt, uint64_t *state)
{
    uint64_t r = rnd(state);
    switch (dt) {
    case PH_DT_FLOAT: return (double)(r >> 40) * (1.0 / 8388608.0) - 1.0;           /* 24 bits */
    case PH_DT_DOUBLE: return (double)(r >> 11) * (1.0 / 4503599627370496.0) - 1.0; /* 53 bits */
    case PH_DT_FLOAT16: return (double)(r >> 53) * (1.0 / 1024.0) - 1.0;            /* 11 bits */
    case PH_DT_BFLOAT16: return (double)(r >> 56) * (1.0 / 128.0) - 1.0;            /* 8 bits */
    case PH_DT_BOOL: return (double)(r & 1);
    default: return (double)(r % 4);
    }
}

/* One random tensor for input v: 0, or an error. */
static int random_input(const ph_value *v, uint64_t state, int64_t size, ph_tensor **out, ph_error *err)
{
    int dt = ph_value_dtype(v), rank = ph_value_rank(v);
    if (rank < 0)
        return ph_error_set(err, PH_EINVAL, "input '%s': rank unknown, cannot make a random input",
                            ph_value_name(v));
    if (!ph_dtype_is_numeric(dt))
        return ph_error_set(err, PH_EUNSUPPORTED, "input '%s': cannot make random %s values", ph_value_name(v),
                            ph_dtype_name(dt));
    int64_t *dims = malloc((rank ? (size_t)rank : 1) * sizeof *dims);
    if (!dims)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    size_t count = 1;
    for (int d = 0; d < rank; d++) {
        dims[d] = ph_value_dim(v, d);
        if (dims[d] < 0) {
            if (size <= 0) {
                free(dims);
                return ph_error_set(err, PH_EINVAL, "input '%s': dim %d is not known and no size was given",
                                    ph_value_name(v), d);
            }
            dims[d] = size;
        }
        if (dims[d] && count > (SIZE_MAX / 16) / (size_t)dims[d]) {
            free(dims);
            return ph_error_set(err, PH_EINVAL, "input '%s': too many elements", ph_value_name(v));
        }
        count *= (size_t)dims[d];
    }
    double *vals = malloc((count ? count : 1) * sizeof *vals);
    if (!vals) {
        free(dims);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < count; k++)
        vals[k] = test_random_value(dt, &state);
    *out = ph_tensor_from_f64(dt, (size_t)rank, dims, vals);
    free(vals);
    free(dims);
    return *out ? 0 : ph_error_set(err, PH_ENOMEM, "out of memory");
}

PH_API int ph_test_random_inputs(const ph_graph *g, uint64_t seed, int64_t size, ph_tensor **inputs,
                                 ph_error *err)
{
    if (!g || !inputs)
        return ph_error_set(err, PH_EINVAL, "ph_test_random_inputs: no graph or no array");
    size_t n = ph_graph_input_count(g);
    for (size_t i = 0; i < n; i++)
        inputs[i] = NULL;
    for (size_t i = 0; i < n; i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (ph_value_is_initializer(v))
            continue;
        int rc = random_input(v, seed * 1000003u + i, size, &inputs[i], err);
        if (rc) {
            for (size_t k = 0; k < i; k++) {
                ph_tensor_free(inputs[k]);
                inputs[k] = NULL;
            }
            return rc;
        }
    }
    return 0;
}

/* ------------------------------------------------------------- comparing */

static void default_tol(int dt, double *atol, double *rtol)
{
    switch (dt) {
    case PH_DT_DOUBLE: *atol = PH_TEST_ATOL_DOUBLE; *rtol = PH_TEST_RTOL_DOUBLE; break;
    case PH_DT_FLOAT16: *atol = PH_TEST_ATOL_FLOAT16; *rtol = PH_TEST_RTOL_FLOAT16; break;
    case PH_DT_BFLOAT16: *atol = PH_TEST_ATOL_BFLOAT16; *rtol = PH_TEST_RTOL_BFLOAT16; break;
    default: *atol = PH_TEST_ATOL_FLOAT; *rtol = PH_TEST_RTOL_FLOAT; break;
    }
}

/* Errors of one element pair: absolute and relative (see testing.h). */
static void elem_err(double a, double b, double *abs_err, double *rel_err)
{
    if (isnan(a) || isnan(b)) {
        *abs_err = *rel_err = isnan(a) && isnan(b) ? 0 : INFINITY;
        return;
    }
    if (isinf(a) || isinf(b)) {
        *abs_err = *rel_err = a == b ? 0 : INFINITY;
        return;
    }
    *abs_err = fabs(b - a);
    *rel_err = a != 0 ? *abs_err / fabs(a) : (b != 0 ? INFINITY : 0);
}

/* "output 'NAME'" when g is known, else "output I". */
static const char *label(const ph_graph *g, size_t i, char *buf, size_t size)
{
    if (g && i < ph_graph_output_count(g))
        snprintf(buf, size, "output '%.200s'", ph_value_name(ph_graph_output(g, i)));
    else
        snprintf(buf, size, "output %zu", i);
    return buf;
}

/* The rule of --verify (docs/verify.md, "Error budgets") for output i of a
 * PH_FP / PH_APPROX pass: ref is the original evaluated in float64.  A
 * float output passes when max |after - ref| <= BUDGET_FACTOR x max
 * |before - ref| + BUDGET_ULPS x eps(dtype) x max(max |ref|, smallest
 * normal), NaN and infinities where the original has them and nowhere else;
 * an integer or bool output must equal ref wherever before does.  Where ref
 * is not finite and before is, before stands in for it.  1 if it fails. */
#define BUDGET_FACTOR 4.0
#define BUDGET_ULPS 4.0
static int budget_one(const ph_tensor *a, const ph_tensor *b, const ph_tensor *ref, size_t i, int precision,
                      const char *what,
                      int failed_before, ph_test_result *res, char *msg, size_t msg_size, char *err_msg,
                      size_t err_size, int *fail_rc)
{
    int dt = ph_tensor_dtype(a);
    size_t rank = ph_tensor_rank(a);
    int64_t numel = ph_tensor_numel(a);
    size_t n = numel > 0 ? (size_t)numel : 0;
    int same = ph_tensor_rank(ref) == rank;
    for (size_t d = 0; same && d < rank; d++)
        same = ph_tensor_dim(ref, d) == ph_tensor_dim(a, d);
    double *va = malloc((n ? n : 1) * sizeof *va), *vb = malloc((n ? n : 1) * sizeof *vb),
           *vr = malloc((n ? n : 1) * sizeof *vr);
    int rc = !va || !vb || !vr ? PH_ENOMEM : !same ? PH_EINVAL : 0;
    if (!rc)
        rc = ph_tensor_read_f64(a, rank, ph_tensor_dims(a), va);
    if (!rc)
        rc = ph_tensor_read_f64(b, rank, ph_tensor_dims(b), vb);
    if (!rc)
        rc = ph_tensor_read_f64(ref, rank, ph_tensor_dims(ref), vr);
    if (rc) {
        free(va);
        free(vb);
        free(vr);
        snprintf(err_msg, err_size, "%s: cannot read the values or the float64 reference (%s)", what,
                 ph_strerror(rc));
        *fail_rc = rc;
        return 0;
    }
    int is_float = ph_dtype_is_float(dt);
    double orig = 0, opt = 0, scale = 0;
    size_t worst = 0, special = (size_t)-1, count = 0;
    for (size_t k = 0; k < n; k++) {
        double ae, re;
        elem_err(va[k], vb[k], &ae, &re);
        if (ae > res->max_abs_err)
            res->max_abs_err = ae;
        if (re > res->max_rel_err)
            res->max_rel_err = re;
        if (!is_float) { /* elements: equal to ref wherever the original is */
            if (va[k] == vr[k] && vb[k] != vr[k]) {
                if (special == (size_t)-1)
                    special = k;
                count++;
            }
            continue;
        }
        if (!isfinite(va[k])) {
            if (!(isnan(va[k]) ? isnan(vb[k]) : va[k] == vb[k]) && special == (size_t)-1)
                special = k;
            continue;
        }
        if (!isfinite(vb[k])) {
            if (special == (size_t)-1)
                special = k;
            continue;
        }
        double r = isfinite(vr[k]) ? vr[k] : va[k];
        if (fabs(va[k] - r) > orig)
            orig = fabs(va[k] - r);
        if (fabs(vb[k] - r) > opt || count++ == 0) {
            opt = fmax(opt, fabs(vb[k] - r));
            worst = k;
        }
        if (fabs(r) > scale)
            scale = fabs(r);
    }
    double budget = ph_error_budget(BUDGET_FACTOR, BUDGET_ULPS, orig, scale, dt, precision);
    int failed = special != (size_t)-1 || (is_float && opt > budget);
    size_t k = special != (size_t)-1 ? special : worst;
    if (!failed_before && n && (failed || !(res->output >= 0))) {
        res->output = (ptrdiff_t)i;
        res->element = (int64_t)k;
        res->before = va[k];
        res->after = vb[k];
    }
    if (failed && !is_float)
        snprintf(msg, msg_size, "%.100s: %zu elements differ from the float64 reference where the original "
                 "equals it; element %zu: %.17g before the pass, %.17g after", what, count, k, va[k], vb[k]);
    else if (failed && special != (size_t)-1)
        snprintf(msg, msg_size, "%.100s element %zu: %.9g before the pass, %.9g after (NaN and infinities must "
                 "stay where the original has them)", what, k, va[k], vb[k]);
    else if (failed)
        snprintf(msg, msg_size, "%.100s: error %.3g against the float64 reference beyond its budget %.3g "
                 "(%g x orig. error %.3g + %g ulp of %.3g); element %zu: %.9g before, "
                 "%.9g after", what, opt, budget, BUDGET_FACTOR, orig, BUDGET_ULPS, scale, k, va[k], vb[k]);
    free(va);
    free(vb);
    free(vr);
    if (failed)
        res->mismatch = 1;
    return failed;
}

/* Compare output i of both sets into res; 1 if it fails (first failure
 * recorded in res and msg), 0 if it passes.  g (may be NULL) names outputs. */
static int compare_one(const ph_tensor *a, const ph_tensor *b, const ph_tensor *ref, size_t i, int exact, int precision,
                       const ph_test_options *o, const ph_graph *g, ph_test_result *res, char *msg,
                       size_t msg_size, int *fail_rc)
{
    int failed_before = res->mismatch;
    char lb[240], scratch[400], *err_msg = msg;
    size_t err_size = msg_size;
    const char *what = label(g, i, lb, sizeof lb);
    if (failed_before) { /* msg keeps the first failure's message */
        msg = scratch;
        msg_size = sizeof scratch;
    }
    if (!a || !b) {
        snprintf(msg, msg_size, "%s: no value %s the pass", what, a ? "after" : "before");
        goto fail_whole;
    }
    if (ph_tensor_dtype(a) != ph_tensor_dtype(b)) {
        snprintf(msg, msg_size, "%s: dtype %s before the pass, %s after", what,
                 ph_dtype_name(ph_tensor_dtype(a)), ph_dtype_name(ph_tensor_dtype(b)));
        goto fail_whole;
    }
    size_t rank = ph_tensor_rank(a);
    int same_shape = rank == ph_tensor_rank(b);
    for (size_t d = 0; same_shape && d < rank; d++)
        same_shape = ph_tensor_dim(a, d) == ph_tensor_dim(b, d);
    if (!same_shape) {
        snprintf(msg, msg_size, "%s: another shape after the pass (rank %zu before, %zu after)", what,
                 rank, ph_tensor_rank(b));
        goto fail_whole;
    }
    int dt = ph_tensor_dtype(a);
    if (!ph_dtype_is_numeric(dt)) { /* strings and the like: bytes or nothing */
        const void *da = ph_tensor_data(a), *db = ph_tensor_data(b);
        size_t nb = ph_tensor_nbytes(a);
        if (da && db && (nb == 0 || memcmp(da, db, nb) == 0))
            return 0;
        snprintf(msg, msg_size, "%s: %s data differs", what, ph_dtype_name(dt));
        goto fail_whole;
    }
    if (ref && !exact && !(o->atol > 0) && !(o->rtol > 0))
        return budget_one(a, b, ref, i, precision, what, failed_before, res, msg, msg_size, err_msg, err_size, fail_rc);
    exact = exact || !ph_dtype_is_float(dt);
    double atol, rtol;
    default_tol(dt, &atol, &rtol);
    if (o->atol > 0)
        atol = o->atol;
    if (o->rtol > 0)
        rtol = o->rtol;
    int64_t numel = ph_tensor_numel(a);
    size_t n = numel > 0 ? (size_t)numel : 0, es = ph_dtype_size(dt);
    double *va = malloc((n ? n : 1) * sizeof *va), *vb = malloc((n ? n : 1) * sizeof *vb);
    const unsigned char *ba = ph_tensor_data(a), *bb = ph_tensor_data(b);
    int rc = !va || !vb ? PH_ENOMEM : (n && (!ba || !bb)) ? PH_EIO : 0;
    if (!rc)
        rc = ph_tensor_read_f64(a, rank, ph_tensor_dims(a), va);
    if (!rc)
        rc = ph_tensor_read_f64(b, rank, ph_tensor_dims(b), vb);
    if (rc) {
        free(va);
        free(vb);
        snprintf(err_msg, err_size, "%s: cannot read the values (%s)", what, ph_strerror(rc));
        *fail_rc = rc;
        return 0;
    }
    int failed = 0;
    for (size_t k = 0; k < n; k++) {
        double ae, re;
        elem_err(va[k], vb[k], &ae, &re);
        int bad = exact ? memcmp(ba + k * es, bb + k * es, es) != 0
                        : (isnan(va[k]) || isnan(vb[k]) ? !(isnan(va[k]) && isnan(vb[k]))
                                                        : !(ae <= atol + rtol * fabs(va[k])));
        /* record the first failing element, else the largest error so far */
        if (!failed_before && !failed && (bad || ae > res->max_abs_err)) {
            res->output = (ptrdiff_t)i;
            res->element = (int64_t)k;
            res->before = va[k];
            res->after = vb[k];
        }
        if (ae > res->max_abs_err)
            res->max_abs_err = ae;
        if (re > res->max_rel_err)
            res->max_rel_err = re;
        if (bad && !failed) {
            failed = 1;
            if (exact)
                snprintf(msg, msg_size, "%s element %zu: %.17g before the pass, %.17g after "
                         "(must be bit-exact)", what, k, va[k], vb[k]);
            else
                snprintf(msg, msg_size, "%s element %zu: %.9g before the pass, %.9g after "
                         "(|diff| %.3g > %.3g + %.3g * |before|)", what, k, va[k], vb[k], ae, atol, rtol);
        }
    }
    free(va);
    free(vb);
    if (failed)
        res->mismatch = 1;
    return failed;
fail_whole:
    if (!failed_before) {
        res->output = (ptrdiff_t)i;
        res->element = -1;
        res->before = res->after = 0;
    }
    res->mismatch = 1;
    return 1;
}

/* Compare two output sets; the message of the first failure goes to msg.
 * 0, PH_EVERIFY on a mismatch, or another code when values cannot be read
 * (msg then says so). */
static int compare_sets(ph_tensor *const *a, size_t na, ph_tensor *const *b, size_t nb, ph_tensor *const *ref,
                        int exact, int precision, const ph_test_options *o, const ph_graph *g, ph_test_result *res, char *msg,
                        size_t msg_size)
{
    if (na != nb) {
        if (!res->mismatch) {
            snprintf(msg, msg_size, "%zu outputs before the pass, %zu after", na, nb);
            res->output = -1;
            res->element = -1;
        }
        res->mismatch = 1;
        return PH_EVERIFY;
    }
    int fail_rc = 0, any = 0;
    for (size_t i = 0; i < na && !fail_rc; i++)
        any |= compare_one(a[i], b[i], ref ? ref[i] : NULL, i, exact, precision, o, g, res, msg, msg_size, &fail_rc);
    if (fail_rc)
        return fail_rc;
    return any ? PH_EVERIFY : 0;
}

PH_API int ph_test_compare(ph_tensor *const *a, size_t na, ph_tensor *const *b, size_t nb,
                           ph_exactness ex, const ph_test_options *opts, ph_test_result *res,
                           ph_error *err)
{
    ph_test_result local;
    if (!res)
        res = &local;
    result_init(res);
    if ((na && !a) || (nb && !b))
        return ph_error_set(err, PH_EINVAL, "ph_test_compare: no outputs");
    const ph_test_options *o = opts ? opts : &no_options;
    char msg[400] = "";
    int rc = compare_sets(a, na, b, nb, NULL, ex == PH_EXACT || o->exact, 0, o, NULL, res, msg, sizeof msg);
    return rc ? ph_error_set(err, rc, "%s", msg) : 0;
}

/* ------------------------------------------------------------ checked runs */

/* One evaluation of g on inputs in; *outs gets n_out new tensors. */
static int evaluate(const ph_graph *g, ph_tensor *const *in, size_t n_in, ph_tensor ***outs, size_t *n_out,
                    const char *when, int float64, ph_error *err)
{
    size_t no = ph_graph_output_count(g);
    ph_tensor **out = calloc(no ? no : 1, sizeof *out);
    if (!out)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    ph_error lerr = {0};
    ph_eval *e = NULL;
    ph_eval_options eo = {.size = sizeof eo, .float64 = float64};
    int rc = ph_eval_new_with(g, &eo, &e, &lerr);
    if (!rc)
        rc = ph_eval_run(e, (const ph_tensor *const *)in, n_in, out, no, &lerr);
    ph_eval_free(e);
    if (rc) {
        for (size_t i = 0; i < no; i++)
            ph_tensor_free(out[i]);
        free(out);
        return ph_error_set(err, rc, "evaluating the model %s the pass: %s", when, lerr.message);
    }
    *outs = out;
    *n_out = no;
    return 0;
}

static void free_set(ph_tensor **t, size_t n)
{
    if (!t)
        return;
    for (size_t i = 0; i < n; i++)
        ph_tensor_free(t[i]);
    free(t);
}

/* 1 if some input of g that is no initializer has a dim that is not known. */
static int has_unknown_dim(const ph_graph *g)
{
    for (size_t i = 0; i < ph_graph_input_count(g); i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (ph_value_is_initializer(v))
            continue;
        for (int d = 0; d < ph_value_rank(v); d++)
            if (ph_value_dim(v, d) < 0)
                return 1;
    }
    return 0;
}

typedef struct eval_run {
    int64_t size;
    ph_tensor **in; /* n_in: random ones owned, given ones borrowed */
    unsigned char *own; /* n_in flags: in[i] is owned */
    ph_tensor **before;
    size_t n_before;
    ph_tensor **ref; /* before, in the evaluator's float64 mode; NULL when it cannot */
    size_t n_ref;
} eval_run;

static void eval_run_free(eval_run *r, size_t n_in)
{
    if (r->in)
        for (size_t i = 0; i < n_in; i++)
            if (r->own[i])
                ph_tensor_free(r->in[i]);
    free(r->in);
    free(r->own);
    free_set(r->before, r->n_before);
    free_set(r->ref, r->n_ref);
}

/* Inputs for one evaluation: given ones, else random ones. */
static int make_inputs(const ph_graph *g, const ph_test_options *o, eval_run *r, size_t n_in, ph_error *err)
{
    r->in = calloc(n_in ? n_in : 1, sizeof *r->in);
    r->own = calloc(n_in ? n_in : 1, 1);
    if (!r->in || !r->own)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_in; i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (o->inputs && o->inputs[i]) {
            r->in[i] = (ph_tensor *)o->inputs[i];
            continue;
        }
        if (ph_value_is_initializer(v))
            continue;
        int rc = random_input(v, o->seed * 1000003u + i, r->size, &r->in[i], err);
        if (rc)
            return rc;
        r->own[i] = 1;
    }
    return 0;
}

PH_API int ph_test_run_checked(const ph_pass_desc *desc, ph_model *m, const ph_test_options *opts,
                               ph_test_result *res, ph_error *err)
{
    ph_test_result local;
    if (!res)
        res = &local;
    ph_pass_desc d;
    int rc = run_begin("ph_test_run_checked", desc, m, res, &d, err);
    if (rc)
        return rc;
    const ph_test_options *o = opts ? opts : &no_options;
    ph_graph *g = ph_model_graph(m);
    size_t n_in = ph_graph_input_count(g);

    static const int64_t default_sizes[] = {1, 3};
    const int64_t *sizes = o->sizes;
    size_t n_runs = o->n_sizes;
    if (!n_runs || !sizes) {
        int unknown = has_unknown_dim(g);
        sizes = unknown ? default_sizes : NULL;
        n_runs = unknown ? 2 : 1;
    }
    eval_run *runs = calloc(n_runs, sizeof *runs);
    if (!runs)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    for (size_t r = 0; r < n_runs && !rc; r++) {
        runs[r].size = sizes ? sizes[r] : 0;
        rc = make_inputs(g, o, &runs[r], n_in, err);
        if (!rc)
            rc = evaluate(g, runs[r].in, n_in, &runs[r].before, &runs[r].n_before, "before", 0, err);
        ph_error ref_err = {0};
        if (!rc && d.exactness != PH_EXACT && !o->exact &&
            evaluate(g, runs[r].in, n_in, &runs[r].ref, &runs[r].n_ref, "before", 1, &ref_err) < 0)
            runs[r].ref = NULL; /* no float64 reference: the fixed tolerances judge */
    }
    if (rc)
        goto out;
    int rewrites = run_desc(&d, m, o, res, err);
    if (rewrites < 0) {
        rc = rewrites;
        goto out;
    }
    if (ph_graph_input_count(g) != n_in) {
        rc = ph_error_set(err, PH_EVERIFY, "pass %s changed the number of graph inputs from %zu to %zu", d.name,
                          n_in, ph_graph_input_count(g));
        res->mismatch = 1;
        goto out;
    }
    char msg[400] = "";
    int64_t fail_size = 0;
    for (size_t r = 0; r < n_runs; r++) {
        ph_tensor **after = NULL;
        size_t n_after = 0;
        if ((rc = evaluate(g, runs[r].in, n_in, &after, &n_after, "after", 0, err)))
            goto out;
        int had = res->mismatch;
        double prev_max = res->max_abs_err;
        int crc = compare_sets(runs[r].before, runs[r].n_before, after, n_after, runs[r].ref,
                               d.exactness == PH_EXACT || o->exact, d.exactness == PH_APPROX ? d.precision : 0, o, g,
                               res, msg, sizeof msg);
        free_set(after, n_after);
        res->evaluations++;
        if (crc < 0 && crc != PH_EVERIFY) {
            rc = ph_error_set(err, crc, "comparing outputs: %s", msg);
            goto out;
        }
        if (res->mismatch && !had)
            fail_size = runs[r].size;
        if (!res->mismatch && (r == 0 || res->max_abs_err > prev_max))
            res->size = runs[r].size; /* the evaluation of the largest error so far */
    }
    if (res->output >= 0 && (size_t)res->output < ph_graph_output_count(g))
        snprintf(res->output_name, sizeof res->output_name, "%s",
                 ph_value_name(ph_graph_output(g, (size_t)res->output)));
    if (res->mismatch) {
        res->size = fail_size;
        char where[128] = "";
        if (fail_size)
            snprintf(where, sizeof where, " (unknown dims = %lld)", (long long)fail_size);
        rc = ph_error_set(err, PH_EVERIFY, "pass %s changed the model's results%s: %s", d.name, where, msg);
        goto out;
    }
    rc = rewrites;
out:
    for (size_t r = 0; r < n_runs; r++)
        eval_run_free(&runs[r], n_in);
    free(runs);
    return rc;
}
