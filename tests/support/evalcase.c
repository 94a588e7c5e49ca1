/* tests/support/evalcase.c - see evalcase.h. */
#include "evalcase.h"

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double ec_get(const void *p, int dt, size_t i)
{
    switch (dt) {
    case PH_DT_FLOAT: return ((const float *)p)[i];
    case PH_DT_DOUBLE: return ((const double *)p)[i];
    case PH_DT_FLOAT16: return ph_f16_bits_to_f64(((const uint16_t *)p)[i]);
    case PH_DT_BFLOAT16: return ph_bf16_bits_to_f64(((const uint16_t *)p)[i]);
    case PH_DT_INT8: return ((const int8_t *)p)[i];
    case PH_DT_INT16: return ((const int16_t *)p)[i];
    case PH_DT_INT32: return ((const int32_t *)p)[i];
    case PH_DT_INT64: return (double)((const int64_t *)p)[i];
    case PH_DT_UINT8: case PH_DT_BOOL: return ((const uint8_t *)p)[i];
    case PH_DT_UINT16: return ((const uint16_t *)p)[i];
    case PH_DT_UINT32: return ((const uint32_t *)p)[i];
    case PH_DT_UINT64: return (double)((const uint64_t *)p)[i];
    default: ck_abort_msg("dtype %d", dt); return 0;
    }
}

void ec_put(void *p, int dt, size_t i, double v)
{
    switch (dt) {
    case PH_DT_FLOAT: ((float *)p)[i] = (float)v; break;
    case PH_DT_DOUBLE: ((double *)p)[i] = v; break;
    case PH_DT_FLOAT16: ((uint16_t *)p)[i] = ph_f64_to_f16_bits(v); break;
    case PH_DT_BFLOAT16: ((uint16_t *)p)[i] = ph_f64_to_bf16_bits(v); break;
    case PH_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case PH_DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case PH_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case PH_DT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case PH_DT_UINT8: case PH_DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case PH_DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case PH_DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case PH_DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: ck_abort_msg("dtype %d", dt);
    }
}

ph_tensor *T(int dt, size_t rank, const int64_t *dims, const double *vals)
{
    ph_tensor *t = ph_tensor_new(dt, rank, dims, NULL);
    ck_assert_ptr_nonnull(t);
    void *p = (void *)ph_tensor_data(t);
    for (int64_t i = 0; vals && i < ph_tensor_numel(t); i++)
        ec_put(p, dt, (size_t)i, vals[i]);
    return t;
}

void expect(const ph_tensor *t, int dt, size_t rank, const int64_t *dims, const double *vals, double tol)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(ph_tensor_dtype(t) == dt, "dtype %s, expected %s", ph_dtype_name(ph_tensor_dtype(t)),
                  ph_dtype_name(dt));
    ck_assert_uint_eq(ph_tensor_rank(t), rank);
    for (size_t i = 0; i < rank; i++)
        ck_assert_msg(ph_tensor_dim(t, i) == dims[i], "dim %zu is %lld, expected %lld", i,
                      (long long)ph_tensor_dim(t, i), (long long)dims[i]);
    const void *p = ph_tensor_data(t);
    for (int64_t i = 0; i < ph_tensor_numel(t); i++) {
        double g = ec_get(p, dt, (size_t)i), w = vals[i];
        int ok = (isnan(w) && isnan(g)) || fabs(g - w) <= tol * (1 + fabs(w));
        ck_assert_msg(ok, "element %lld is %.9g, expected %.9g", (long long)i, g, w);
    }
}

tc *mk(int64_t opset, const char *op, size_t n_out, size_t n_in, ...)
{
    tc *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_le(n_in, 12);
    ck_assert_uint_le(n_out, 6);
    c->m = ph_model_new(opset);
    c->opset = opset;
    ph_graph *g = ph_model_graph(c->m);
    ph_value *vals[12] = {0};
    va_list ap;
    va_start(ap, n_in);
    for (size_t i = 0; i < n_in; i++) {
        ph_tensor *t = va_arg(ap, ph_tensor *);
        c->in[i] = t;
        if (t) {
            char name[32];
            snprintf(name, sizeof name, "in%zu", i);
            vals[i] = ph_graph_add_input(g, name, ph_tensor_dtype(t), (int)ph_tensor_rank(t), ph_tensor_dims(t));
        }
    }
    va_end(ap);
    c->n_in = n_in;
    c->n = ph_node_create(g, NULL, op, n_in, vals, n_out);
    ck_assert_ptr_nonnull(c->n);
    return c;
}

int run(tc *c)
{
    c->err.code = 0;
    c->err.message[0] = 0;
    return ph_eval_node(c->n, c->opset, (const ph_tensor *const *)c->in, c->out, &c->err);
}

void run_ok(tc *c)
{
    int rc = run(c);
    ck_assert_msg(rc == 0, "%s failed: %s", ph_node_op_type(c->n), c->err.message);
}

void done(tc *c)
{
    for (size_t i = 0; i < 12; i++)
        ph_tensor_free(c->in[i]);
    for (size_t i = 0; i < 6; i++)
        ph_tensor_free(c->out[i]);
    ph_model_free(c->m);
    free(c);
}
