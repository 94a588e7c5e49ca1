/* tests/support/testkit.c - see testkit.h. */
#include "testkit.h"

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PH_BUILD_DIR
#define PH_BUILD_DIR "build"
#endif

/* ------------------------------------------------------------ plugins */

tk_pass *tk_pass_load(const char *name)
{
    char path[4096];
    ph_error err = {0};
    snprintf(path, sizeof path, "%s/plugins/%s.so", PH_BUILD_DIR, name);
    tk_pass *p = calloc(1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    p->reg = host_registry_new();
    ck_assert_ptr_nonnull(p->reg);
    int rc = host_registry_load_file(p->reg, path, &err);
    ck_assert_msg(rc == 0, "loading %s: %s", path, err.message);
    const host_plugin *hp = host_registry_find(p->reg, name);
    ck_assert_msg(hp != NULL, "%s does not define a pass named '%s'", path, name);
    p->plugin = hp;
    p->desc = hp->desc;
    return p;
}

void tk_pass_free(tk_pass *p)
{
    if (!p)
        return;
    host_registry_free(p->reg);
    free(p);
}

static const ph_param_def no_params[] = {{NULL, 0, NULL, NULL}};

/* tk_pass_run; without check_after, no toposort, verify or shapes after
 * the pass (for a model the verifier refuses before it already). */
static int pass_run(const tk_pass *p, ph_model *m, int check_after)
{
    ph_error err = {0};
    ph_graph *g = ph_model_graph(m);
    ph_params *params = ph_params_new(p->desc->params ? p->desc->params : no_params, &err);
    ck_assert_msg(params != NULL, "params of %s: %s", p->desc->name, err.message);
    for (size_t i = 0; p->params && p->params[i]; i += 2) {
        int prc = ph_params_set(params, p->params[i], p->params[i + 1], &err);
        ck_assert_msg(prc == 0, "param %s of %s: %s", p->params[i], p->desc->name, err.message);
    }
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_ptr_nonnull(ctx);

    if (p->shapes) {
        int src = ph_graph_update_shapes(g, &err);
        ck_assert_msg(src == 0, "shapes before %s: %s", p->desc->name, err.message);
    }
    ph_ctx_begin_pass(ctx, p->desc->name, "");
    int rc = host_plugin_run(p->plugin, g, params, ctx);
    ck_assert_msg(rc >= 0, "pass %s failed (%d): %s", p->desc->name, rc, ph_ctx_last_error(ctx));
    ph_ctx_end_pass(ctx);
    ph_ctx_free(ctx);
    ph_params_free(params);
    if (!check_after)
        return rc;

    int trc = ph_graph_toposort(g);
    ck_assert_msg(trc == 0, "toposort after %s: %s", p->desc->name, ph_strerror(trc));
    int vrc = ph_graph_verify(g, &err);
    ck_assert_msg(vrc == 0, "verify after %s: %s", p->desc->name, err.message);
    if (p->shapes && rc > 0) {
        int src = ph_graph_update_shapes(g, &err);
        ck_assert_msg(src == 0, "shapes after %s: %s", p->desc->name, err.message);
    }
    return rc;
}

int tk_pass_run(const tk_pass *p, ph_model *m) { return pass_run(p, m, 1); }

/* The pass's parameters as the "name=value" strings of ph_test_options
 * (at most 15). */
static const char *const *param_strings(const tk_pass *p, char buf[16][256], const char *list[16])
{
    size_t n = 0;
    for (size_t i = 0; p->params && p->params[i] && n < 15; i += 2, n++) {
        snprintf(buf[n], 256, "%s=%s", p->params[i], p->params[i + 1]);
        list[n] = buf[n];
    }
    list[n] = NULL;
    return list;
}

int tk_pass_run_eval(const tk_pass *p, ph_model *m, uint64_t seed, size_t n_sizes,
                     const int64_t *sizes)
{
    char buf[16][256];
    const char *list[16];
    ph_test_options o = {.params = param_strings(p, buf, list), .no_shapes = !p->shapes, .seed = seed,
                         .sizes = sizes, .n_sizes = n_sizes};
    ph_test_result res;
    ph_error err = {0};
    int rc = ph_test_run_checked(p->desc, m, &o, &res, &err);
    ck_assert_msg(rc >= 0, "%s: %s", p->desc->name, err.message);
    return rc;
}

int tk_pass_run_checked(const tk_pass *p, ph_model *m, uint64_t seed)
{
    return tk_pass_run_eval(p, m, seed, 0, NULL);
}

void tk_assert_same_outputs(const ph_model *want, const ph_model *got, uint64_t seed)
{
    ph_tensor **out[2];
    size_t n[2];
    const ph_model *ms[2] = {want, got};
    for (int k = 0; k < 2; k++) {
        const ph_graph *g = ph_model_graph((ph_model *)ms[k]);
        size_t ni = ph_graph_input_count(g);
        ph_tensor **in = calloc(ni ? ni : 1, sizeof *in);
        ph_error err = {0};
        ck_assert_ptr_nonnull(in);
        ck_assert_msg(ph_test_random_inputs(g, seed, 0, in, &err) == 0, "inputs: %s", err.message);
        n[k] = ph_graph_output_count(g);
        out[k] = calloc(n[k] ? n[k] : 1, sizeof *out[k]);
        ck_assert_ptr_nonnull(out[k]);
        ph_eval *e = NULL;
        int rc = ph_eval_new(g, &e, &err);
        if (!rc)
            rc = ph_eval_run(e, (const ph_tensor *const *)in, ni, out[k], n[k], &err);
        ck_assert_msg(rc == 0, "evaluating: %s", err.message);
        ph_eval_free(e);
        for (size_t i = 0; i < ni; i++)
            ph_tensor_free(in[i]);
        free(in);
    }
    ph_error err = {0};
    int rc = ph_test_compare(out[0], n[0], out[1], n[1], PH_EXACT, NULL, NULL, &err);
    ck_assert_msg(rc == 0, "the outputs differ: %s", err.message);
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < n[k]; i++)
            ph_tensor_free(out[k][i]);
        free(out[k]);
    }
}

static void untouched(const tk_pass *p, ph_model *m, int check_after)
{
    ph_graph *g = ph_model_graph(m);
    size_t nodes = ph_model_node_count(m);
    char *before = tk_graph_sig(g);
    int rc = pass_run(p, m, check_after);
    char *after = tk_graph_sig(g);
    ck_assert_msg(rc == 0, "%s reported %d rewrites on a graph it must leave alone",
                  p->desc->name, rc);
    ck_assert_msg(strcmp(before, after) == 0, "%s changed the graph:\n--- before\n%s--- after\n%s",
                  p->desc->name, before, after);
    ck_assert_uint_eq(ph_model_node_count(m), nodes);
    free(before);
    free(after);
}

void tk_assert_untouched(const tk_pass *p, ph_model *m) { untouched(p, m, 1); }

void tk_assert_invalid_untouched(const tk_pass *p, ph_model *m, const char *why)
{
    ph_error err = {0};
    ck_assert_msg(ph_graph_verify(ph_model_graph(m), &err) != 0, "the verifier accepts a model it should refuse (%s)",
                  why);
    ck_assert_msg(strstr(err.message, why), "'%s' not in: %s", why, err.message);
    untouched(p, m, 0);
}

/* ------------------------------------------------------------ builders */

void tk_identity_chain_file(const char *path, int n)
{
    static const int64_t dims[] = {2, 3};
    ph_model *m = ph_model_new(13);
    ck_assert_ptr_nonnull(m);
    ph_graph *g = ph_model_graph(m);
    ph_value *v = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, dims);
    ck_assert_ptr_nonnull(v);
    for (int i = 0; i < n; i++) {
        ph_node *node = ph_node_create(g, NULL, "Identity", 1, &v, 1);
        ck_assert_ptr_nonnull(node);
        char buf[32];
        snprintf(buf, sizeof buf, "id%d", i);
        ck_assert_int_eq(ph_node_set_name(node, buf), 0);
        v = ph_node_output(node, 0);
        ck_assert_int_eq(ph_value_set_type(v, PH_DT_FLOAT, 2, dims), 0);
    }
    ck_assert_int_eq(ph_graph_add_output(g, v), 0);
    ck_assert_int_eq(ph_graph_verify(g, NULL), 0);
    ph_error err = {0};
    ck_assert_msg(ph_model_save(m, path, &err) == 0, "%s", err.message);
    ph_model_free(m);
}

ph_model *tk_model(void)
{
    ph_model *m = ph_model_new(17);
    ck_assert_ptr_nonnull(m);
    return m;
}

ph_model *tk_reload(ph_model *m)
{
    char path[] = "/tmp/ph_reload_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path); /* the save makes the file itself */
    ph_error err = {0};
    int rc = ph_model_save(m, path, &err);
    ck_assert_msg(rc == 0, "saving: %s", err.message);
    ph_model *back = NULL;
    rc = ph_model_load(path, &back, &err);
    unlink(path);
    ck_assert_msg(rc == 0, "loading the saved model back: %s", err.message);
    ck_assert_msg(ph_graph_verify(ph_model_graph(back), &err) == 0, "the saved model: %s", err.message);
    return back;
}

void tk_infer(ph_model *m)
{
    ph_error err = {0};
    int rc = ph_graph_infer_shapes(ph_model_graph(m), &err);
    ck_assert_msg(rc == 0, "shape inference: %s", err.message);
}

ph_value *tk_ints(ph_graph *g, const char *name, size_t n, const int64_t *vals)
{
    ph_tensor *t = ph_tensor_new(PH_DT_INT64, 1, TK_I64((int64_t)n), vals);
    ck_assert_ptr_nonnull(t);
    ph_value *v = ph_graph_add_initializer(g, name, t);
    ck_assert_msg(v != NULL, "cannot add initializer %s", name);
    return v;
}

ph_value *tk_input(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    ph_value *v = ph_graph_add_input(g, name, PH_DT_FLOAT, rank, rank > 0 ? dims : NULL);
    ck_assert_msg(v != NULL, "cannot add input %s", name);
    return v;
}

/* splitmix64: small, good enough, identical everywhere. */
static uint64_t tk_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1), exactly representable (24 random bits). */
static float tk_rand_float(uint64_t *state)
{
    return (float)(tk_rand(state) >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

static void fill_random(float *data, int64_t count, uint64_t seed)
{
    uint64_t state = seed;
    for (int64_t i = 0; i < count; i++)
        data[i] = tk_rand_float(&state);
}

ph_value *tk_init(ph_graph *g, const char *name, int rank, const int64_t *dims, uint64_t seed)
{
    int64_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    float *data = malloc((size_t)(count ? count : 1) * sizeof(float));
    ck_assert_ptr_nonnull(data);
    fill_random(data, count, seed);
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, (size_t)rank, dims, data);
    free(data);
    ck_assert_ptr_nonnull(t);
    ph_value *v = ph_graph_add_initializer(g, name, t);
    ck_assert_msg(v != NULL, "cannot add initializer %s", name);
    return v;
}

ph_node *tk_node(ph_graph *g, const char *op, size_t n_in, ph_value *const *inputs)
{
    ph_node *n = ph_node_create(g, NULL, op, n_in, inputs, 1);
    ck_assert_msg(n != NULL, "cannot create %s", op);
    return n;
}

ph_value *tk_op1(ph_graph *g, const char *op, ph_value *x)
{
    return ph_node_output(tk_node(g, op, 1, &x), 0);
}

ph_value *tk_slice(ph_graph *g, ph_value *x, size_t n, const int64_t *starts, const int64_t *ends,
                   const int64_t *axes, const int64_t *steps)
{
    ph_value *in[5] = {x, tk_ints(g, "starts", n, starts), tk_ints(g, "ends", n, ends),
                       axes ? tk_ints(g, "axes", n, axes) : NULL, steps ? tk_ints(g, "steps", n, steps) : NULL};
    size_t n_in = steps ? 5 : axes ? 4 : 3;
    return ph_node_output(tk_node(g, "Slice", n_in, in), 0);
}

ph_value *tk_relu_input(ph_graph *g, int rank, const int64_t *dims, const char *sym0)
{
    ph_value *x = tk_input(g, "x", rank, dims);
    if (sym0)
        ck_assert_int_eq(ph_value_set_dim_param(x, 0, sym0), 0);
    return tk_op1(g, "Relu", x);
}

void tk_neg_output(ph_graph *g, ph_value *v) { tk_output(g, tk_op1(g, "Neg", v)); }

ph_value *tk_op2(ph_graph *g, const char *op, ph_value *a, ph_value *b)
{
    ph_value *in[2] = {a, b};
    return ph_node_output(tk_node(g, op, 2, in), 0);
}

ph_value *tk_transpose(ph_graph *g, ph_value *x, size_t rank, const int64_t *perm)
{
    ph_node *n = tk_node(g, "Transpose", 1, &x);
    if (perm)
        ck_assert_int_eq(ph_node_set_attr_ints(n, "perm", rank, perm), 0);
    return ph_node_output(n, 0);
}

void tk_output(ph_graph *g, ph_value *v)
{
    ck_assert_int_eq(ph_graph_add_output(g, v), 0);
}

void tk_set_shape(ph_value *v, int rank, const int64_t *dims)
{
    ck_assert_int_eq(ph_value_set_type(v, PH_DT_FLOAT, rank, rank > 0 ? dims : NULL), 0);
}

/* --------------------------------------------------------- inspection */

typedef struct tk_buf {
    char *s;
    size_t len, cap;
} tk_buf;

static void buf_printf(tk_buf *b, const char *fmt, ...) PH_PRINTF(2, 3);
static void buf_printf(tk_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    ck_assert_int_ge(need, 0);
    if (b->len + (size_t)need + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 256) + (size_t)need;
        b->s = realloc(b->s, cap);
        ck_assert_ptr_nonnull(b->s);
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)need;
}

static void sig_value(tk_buf *b, const ph_value *v)
{
    buf_printf(b, "%s", v ? ph_value_name(v) : "");
}

static void sig_attrs(tk_buf *b, const ph_node *n)
{
    for (size_t i = 0; i < ph_node_attr_count(n); i++) {
        const char *name = ph_node_attr_name(n, i);
        const int64_t *iv;
        buf_printf(b, " %s", name);
        switch (ph_node_attr_type(n, name)) {
        case PH_ATTR_INT:
            buf_printf(b, "=%lld", (long long)ph_node_attr_int(n, name, 0));
            break;
        case PH_ATTR_FLOAT:
            buf_printf(b, "=%a", (double)ph_node_attr_float(n, name, 0));
            break;
        case PH_ATTR_STRING:
            buf_printf(b, "=%s", ph_node_attr_string(n, name, ""));
            break;
        case PH_ATTR_INTS: {
            ptrdiff_t len = ph_node_attr_ints(n, name, &iv);
            buf_printf(b, "=[");
            for (ptrdiff_t k = 0; k < len; k++)
                buf_printf(b, "%s%lld", k ? "," : "", (long long)iv[k]);
            buf_printf(b, "]");
            break;
        }
        default:
            break;
        }
    }
}

static void sig_graph(tk_buf *b, const ph_graph *g, int depth)
{
    buf_printf(b, "%*sgraph %s\n", depth * 2, "", ph_graph_name(g));
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_is_removed(n))
            continue;
        buf_printf(b, "%*s%s:%s(", depth * 2 + 2, "", ph_node_domain(n), ph_node_op_type(n));
        for (size_t i = 0; i < ph_node_input_count(n); i++) {
            buf_printf(b, i ? "," : "");
            sig_value(b, ph_node_input(n, i));
        }
        buf_printf(b, ")->(");
        for (size_t i = 0; i < ph_node_output_count(n); i++) {
            buf_printf(b, i ? "," : "");
            sig_value(b, ph_node_output(n, i));
        }
        buf_printf(b, ")");
        sig_attrs(b, n);
        buf_printf(b, "\n");
        for (size_t i = 0; i < ph_node_subgraph_count(n); i++)
            sig_graph(b, ph_node_subgraph(n, i), depth + 2);
    }
    buf_printf(b, "%*soutputs:", depth * 2 + 2, "");
    for (size_t i = 0; i < ph_graph_output_count(g); i++) {
        buf_printf(b, " ");
        sig_value(b, ph_graph_output(g, i));
    }
    buf_printf(b, "\n%*sinitializers: %zu\n", depth * 2 + 2, "", ph_graph_initializer_count(g));
}

char *tk_graph_sig(const ph_graph *g)
{
    tk_buf b = {0};
    sig_graph(&b, g, 0);
    return b.s;
}

const char *tk_ops(const ph_graph *g, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (ph_node *n = ph_graph_first_node(g); n && off < size; n = ph_node_next(n)) {
        if (ph_node_is_removed(n))
            continue;
        off += (size_t)snprintf(buf + off, size - off, "%s%s", off ? "," : "", ph_node_op_type(n));
    }
    return buf;
}

size_t tk_count_op(const ph_graph *g, ph_op op)
{
    size_t count = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (!ph_node_is_removed(n) && ph_node_op(n) == op)
            count++;
    return count;
}

ph_node *tk_find_op(const ph_graph *g, ph_op op)
{
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (!ph_node_is_removed(n) && ph_node_op(n) == op)
            return n;
    return NULL;
}
