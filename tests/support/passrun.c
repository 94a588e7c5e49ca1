/* tests/support/passrun.c - run a pass like the host with chosen parameters
 * and a captured log, and compare outputs before and after with the SDK
 * evaluator (see passrun.h). */
#include "passrun.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



static void tk_cap_log(void *user, ph_log_level level, const char *name, const char *msg)
{
    tk_logcap *c = user;
    (void)name;
    if (level <= PH_LOG_WARN) {
        c->warnings++;
        snprintf(c->last, sizeof c->last, "%s", msg);
    }
}

static const ph_param_def tk_no_params[] = {{NULL, 0, NULL, NULL}};

/* Run p on m like the host, with one parameter set (param NULL: defaults)
 * and warnings captured into cap (NULL: stderr); toposort and verify after. */
int tk_run_with(const tk_pass *p, ph_model *m, const char *param, const char *value, tk_logcap *cap)
{
    ph_error err = {0};
    ph_params *params = ph_params_new(p->desc->params ? p->desc->params : tk_no_params, &err);
    ck_assert_msg(params != NULL, "%s", err.message);
    if (param)
        ck_assert_msg(ph_params_set(params, param, value, &err) == 0, "%s", err.message);
    ph_ctx *ctx = ph_ctx_new(cap ? tk_cap_log : NULL, cap);
    ck_assert_ptr_nonnull(ctx);
    ph_ctx_begin_pass(ctx, p->desc->name, "");
    int rc = host_plugin_run(p->plugin, ph_model_graph(m), params, ctx);
    ck_assert_msg(rc >= 0, "pass %s failed (%d): %s", p->desc->name, rc, ph_ctx_last_error(ctx));
    ph_ctx_end_pass(ctx);
    ph_ctx_free(ctx);
    ph_params_free(params);
    ck_assert_int_eq(ph_graph_toposort(ph_model_graph(m)), 0);
    ck_assert_msg(ph_graph_verify(ph_model_graph(m), &err) == 0, "verify after %s: %s", p->desc->name,
                  err.message);
    return rc;
}

static uint64_t tk_rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A random tensor of v's known type (every dim must be known). */
static ph_tensor *tk_random_for(const ph_value *v, uint64_t *state)
{
    int dt = ph_value_dtype(v), rank = ph_value_rank(v);
    ck_assert_msg(rank >= 0, "input %s has no known rank", ph_value_name(v));
    int64_t dims[16], numel = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = ph_value_dim(v, i);
        ck_assert_msg(dims[i] >= 0, "input %s: dim %d unknown", ph_value_name(v), i);
        numel *= dims[i];
    }
    size_t es = ph_dtype_size(dt);
    ck_assert_uint_gt(es, 0);
    unsigned char *buf = calloc((size_t)(numel ? numel : 1), es);
    ck_assert_ptr_nonnull(buf);
    for (int64_t i = 0; i < numel; i++) {
        uint64_t r = tk_rnd(state);
        if (dt == PH_DT_FLOAT)
            ((float *)buf)[i] = (float)(r >> 40) * (1.0f / 8388608.0f) - 1.0f;
        else if (dt == PH_DT_DOUBLE)
            ((double *)buf)[i] = (double)(r >> 11) * (1.0 / 4503599627370496.0) - 1.0;
        else if (dt == PH_DT_INT64)
            ((int64_t *)buf)[i] = (int64_t)(r % 4);
        else if (dt == PH_DT_BOOL)
            buf[i] = (unsigned char)(r & 1);
    }
    ph_tensor *t = ph_tensor_new(dt, (size_t)rank, dims, buf);
    free(buf);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Evaluate m's main graph with the SDK evaluator on inputs from seed;
 * returns the number of outputs, *outs (caller frees with tk_free_outs). */
size_t tk_eval_model(ph_model *m, uint64_t seed, ph_tensor ***outs)
{
    ph_graph *g = ph_model_graph(m);
    ph_error err = {0};
    ph_eval *e = NULL;
    ck_assert_msg(ph_eval_new(g, &e, &err) == 0, "ph_eval_new: %s", err.message);
    size_t ni = ph_graph_input_count(g), no = ph_graph_output_count(g);
    ph_tensor **in = calloc(ni ? ni : 1, sizeof *in), **out = calloc(no ? no : 1, sizeof *out);
    ck_assert(in && out);
    uint64_t state = seed;
    for (size_t i = 0; i < ni; i++)
        if (!ph_value_is_initializer(ph_graph_input(g, i)))
            in[i] = tk_random_for(ph_graph_input(g, i), &state);
    int rc = ph_eval_run(e, (const ph_tensor *const *)in, ni, out, no, &err);
    ck_assert_msg(rc == 0, "ph_eval_run: %s", err.message);
    for (size_t i = 0; i < ni; i++)
        ph_tensor_free(in[i]);
    free(in);
    ph_eval_free(e);
    *outs = out;
    return no;
}

void tk_free_outs(ph_tensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ph_tensor_free(t[i]);
    free(t);
}

void tk_assert_same(ph_tensor **a, size_t na, ph_tensor **b, size_t nb)
{
    ck_assert_uint_eq(na, nb);
    for (size_t i = 0; i < na; i++)
        ck_assert_msg(ph_tensor_equal(a[i], b[i]), "output %zu differs after the pass", i);
}

/* tk_run_with with the numeric check of the harness (ph_test_run_checked:
 * bit for bit for exact passes, the error budget of --verify for the
 * others), one parameter set and the log captured into cap. */
int tk_run_checked(const tk_pass *p, ph_model *m, uint64_t seed, const char *param, const char *value,
                   tk_logcap *cap)
{
    char set[512];
    const char *params[2] = {NULL, NULL};
    if (param) {
        snprintf(set, sizeof set, "%s=%s", param, value);
        params[0] = set;
    }
    ph_test_options o = {.params = params, .no_shapes = 1, .seed = seed, .log = cap ? tk_cap_log : NULL,
                         .log_user = cap};
    ph_test_result res;
    ph_error err = {0};
    int rc = ph_test_run_checked(p->desc, m, &o, &res, &err);
    ck_assert_msg(rc >= 0, "%s: %s", p->desc->name, err.message);
    return rc;
}
