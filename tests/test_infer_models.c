/* tests/test_infer_models.c - shape inference on every bundled model.
 *
 * For each model in models/ and tests/models/: inference succeeds and
 * every value of the main graph and its bodies gets a dtype and a rank.
 * Then the model is run node by node with the evaluator (ph_eval_node) on
 * concrete inputs (symbolic input dims bound to small numbers) and every
 * node output's actual dtype and shape must match the inferred one: static
 * dims equal, each symbolic name always the same number.  Nodes the
 * evaluator does not support (PH_EUNSUPPORTED) are skipped with their
 * consumers, and reported. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

#ifndef PH_SOURCE_DIR
#define PH_SOURCE_DIR "."
#endif

static char paths[64][1400];
static int n_paths;

static void list_models(const char *dir)
{
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", PH_SOURCE_DIR, dir);
    DIR *d = opendir(full);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && n_paths < 64) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".onnx") == 0)
            snprintf(paths[n_paths++], sizeof paths[0], "%s/%s", full, e->d_name);
    }
    closedir(d);
}

static void check_typed(const ph_value *v, const char *model)
{
    ck_assert_msg(ph_value_dtype(v) != PH_DT_UNDEFINED, "%s: value '%s' has no dtype", model, ph_value_name(v));
    ck_assert_msg(ph_value_rank(v) >= 0, "%s: value '%s' has no rank", model, ph_value_name(v));
}

static size_t check_graph_typed(const ph_graph *g, const char *model)
{
    size_t count = 0;
    for (size_t i = 0; i < ph_graph_input_count(g); i++)
        check_typed(ph_graph_input(g, i), model);
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        for (size_t s = 0; s < ph_node_subgraph_count(n); s++)
            count += check_graph_typed(ph_node_subgraph(n, s), model);
        for (size_t i = 0; i < ph_node_output_count(n); i++)
            if (ph_node_output(n, i)) {
                check_typed(ph_node_output(n, i), model);
                count++;
            }
    }
    return count;
}

START_TEST(test_every_value_typed)
{
    ck_assert_int_gt(n_paths, 0);
    const char *path = paths[_i];
    ph_error err = {0};
    ph_model *m = NULL;
    ck_assert_msg(ph_model_load(path, &m, &err) == 0, "%s: %s", path, err.message);
    int rc = ph_graph_infer_shapes(ph_model_graph(m), &err);
    ck_assert_msg(rc == 0, "%s: %s", path, err.message);
    size_t n = check_graph_typed(ph_model_graph(m), path);
    ck_assert_uint_gt(n, 0);
    /* inference is idempotent: a second run changes nothing */
    ck_assert_int_eq(ph_graph_infer_shapes(ph_model_graph(m), &err), 0);
    ph_infer_stats st;
    ph_model_infer_stats(m, &st);
    ck_assert_uint_eq(st.values_changed, 0);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------ evaluator comparison */

typedef struct env {
    const ph_value *v[4096];
    ph_tensor *t[4096];
    size_t n;
    const char *sym[64];
    int64_t symval[64];
    size_t nsym;
} env;

static ph_tensor *env_get(env *e, const ph_value *v)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->v[i] == v)
            return e->t[i];
    return NULL;
}

static void env_put(env *e, const ph_value *v, ph_tensor *t)
{
    ck_assert_uint_lt(e->n, 4096);
    e->v[e->n] = v;
    e->t[e->n++] = t;
}

/* The number a symbolic dim stands for: bound on first use. */
static int64_t sym_bind(env *e, const char *name, int64_t val)
{
    for (size_t i = 0; i < e->nsym; i++)
        if (strcmp(e->sym[i], name) == 0)
            return e->symval[i];
    ck_assert_uint_lt(e->nsym, 64);
    e->sym[e->nsym] = name;
    e->symval[e->nsym++] = val;
    return val;
}

static ph_tensor *make_input(env *e, const ph_value *v)
{
    int64_t dims[16];
    int r = ph_value_rank(v);
    ck_assert_int_ge(r, 0);
    for (int i = 0; i < r; i++) {
        dims[i] = ph_value_dim(v, i);
        if (dims[i] < 0) {
            const char *p = ph_value_dim_param(v, i);
            dims[i] = p ? sym_bind(e, p, 2 + (int64_t)(e->nsym % 3) * 3) : 3;
        }
    }
    ph_tensor *t = ph_tensor_new(ph_value_dtype(v), (size_t)r, dims, NULL);
    ck_assert_ptr_nonnull(t);
    /* small deterministic data; integers and bools are 1 (trip counts stay small) */
    size_t nb = ph_tensor_nbytes(t);
    uint8_t *raw = malloc(nb ? nb : 1);
    int64_t numel = ph_tensor_numel(t);
    for (int64_t k = 0; k < numel; k++) {
        switch (ph_value_dtype(v)) {
        case PH_DT_FLOAT: ((float *)raw)[k] = (float)((k * 37) % 17) / 17.0f - 0.4f; break;
        case PH_DT_DOUBLE: ((double *)raw)[k] = (double)((k * 37) % 17) / 17.0 - 0.4; break;
        case PH_DT_INT64: ((int64_t *)raw)[k] = 1; break;
        case PH_DT_INT32: ((int32_t *)raw)[k] = 1; break;
        case PH_DT_BOOL: case PH_DT_UINT8: case PH_DT_INT8: raw[k] = 1; break;
        default: memset(raw, 0, nb); k = numel; break;
        }
    }
    ph_tensor *t2 = ph_tensor_new(ph_value_dtype(v), (size_t)r, dims, raw);
    free(raw);
    ph_tensor_free(t);
    return t2;
}

/* Compare the inferred type of v with the tensor it actually got. */
static void compare(env *e, const ph_value *v, const ph_tensor *t, const char *model, size_t *unknown_dims)
{
    ck_assert_msg(ph_value_dtype(v) == ph_tensor_dtype(t), "%s: '%s' inferred %s, evaluated %s", model,
                  ph_value_name(v), ph_dtype_name(ph_value_dtype(v)), ph_dtype_name(ph_tensor_dtype(t)));
    ck_assert_msg(ph_value_rank(v) == (int)ph_tensor_rank(t), "%s: '%s' inferred rank %d, evaluated %zu", model,
                  ph_value_name(v), ph_value_rank(v), ph_tensor_rank(t));
    for (int i = 0; i < ph_value_rank(v); i++) {
        int64_t real = ph_tensor_dim(t, (size_t)i), d = ph_value_dim(v, i);
        const char *p = ph_value_dim_param(v, i);
        if (d >= 0)
            ck_assert_msg(d == real, "%s: '%s' dim %d inferred %lld, evaluated %lld", model, ph_value_name(v), i,
                          (long long)d, (long long)real);
        else if (p)
            ck_assert_msg(sym_bind(e, p, real) == real, "%s: '%s' dim %d is '%s' = %lld elsewhere, evaluated %lld",
                          model, ph_value_name(v), i, p, (long long)sym_bind(e, p, real), (long long)real);
        else
            (*unknown_dims)++;
    }
}

START_TEST(test_matches_evaluator)
{
    const char *path = paths[_i];
    ph_error err = {0};
    ph_model *m = NULL;
    ck_assert_msg(ph_model_load(path, &m, &err) == 0, "%s: %s", path, err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_infer_shapes(g, &err), 0);
    env *e = calloc(1, sizeof *e);
    int64_t opset = ph_model_opset(m, "");
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++) {
        ph_value *v = ph_graph_initializer(g, i);
        if (ph_value_const(v))
            env_put(e, v, ph_tensor_clone(ph_value_const(v)));
    }
    for (size_t i = 0; i < ph_graph_input_count(g); i++)
        if (!env_get(e, ph_graph_input(g, i)))
            env_put(e, ph_graph_input(g, i), make_input(e, ph_graph_input(g, i)));
    size_t checked = 0, skipped = 0, unknown_dims = 0;
    char first_skip[600] = "";
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        const ph_tensor *ins[64];
        ph_tensor *outs[64] = {0};
        size_t nin = ph_node_input_count(n), nout = ph_node_output_count(n);
        ck_assert_uint_le(nin, 64);
        ck_assert_uint_le(nout, 64);
        int missing = 0;
        for (size_t i = 0; i < nin; i++) {
            ph_value *v = ph_node_input(n, i);
            ins[i] = v ? env_get(e, v) : NULL;
            if (v && !ins[i])
                missing = 1;
        }
        if (missing) {
            skipped++;
            continue;
        }
        int rc = ph_eval_node(n, opset, ins, outs, &err);
        if (rc == PH_EUNSUPPORTED) {
            /* feed its consumers tensors of the type inference gives it */
            if (!first_skip[0])
                snprintf(first_skip, sizeof first_skip, "; first: %s", err.message);
            skipped++;
            for (size_t i = 0; i < nout; i++)
                if (ph_node_output(n, i) && ph_value_rank(ph_node_output(n, i)) >= 0)
                    env_put(e, ph_node_output(n, i), make_input(e, ph_node_output(n, i)));
            continue;
        }
        ck_assert_msg(rc == 0, "%s: evaluating node '%s': %s", path, ph_node_name(n), err.message);
        for (size_t i = 0; i < nout; i++) {
            ph_value *v = ph_node_output(n, i);
            if (!v || !outs[i]) {
                ph_tensor_free(outs[i]);
                continue;
            }
            compare(e, v, outs[i], path, &unknown_dims);
            env_put(e, v, outs[i]);
            checked++;
        }
    }
    fprintf(stderr, "%s: %zu values match the evaluator, %zu dims left unknown, %zu nodes not evaluated%s\n",
            strrchr(path, '/') + 1, checked, unknown_dims, skipped, first_skip);
    for (size_t i = 0; i < e->n; i++)
        ph_tensor_free(e->t[i]);
    free(e);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    list_models("models");
    list_models("tests/models");
    Suite *s = suite_create("infer_models");
    TCase *tc = tcase_create("models");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_every_value_typed, 0, n_paths);
    tcase_add_loop_test(tc, test_matches_evaluator, 0, n_paths);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
