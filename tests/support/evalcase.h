/* tests/support/evalcase.h - evaluator tests on hand-written values: tensors
 * of any dtype from doubles, one-node models, and checks of a result's
 * dtype, shape and values (used by the test_eval_* programs).
 *
 * A tc is a model with one node whose inputs are graph inputs shaped like
 * the given tensors; run evaluates the node with ph_eval_node.  Failures
 * are Check assertions, so these helpers are only for use inside a Check
 * test.  Ownership: tensors made by T are the caller's until given to mk
 * (which takes them over); done frees a tc with its inputs and outputs. */
#ifndef PASSHOST_TESTS_EVALCASE_H
#define PASSHOST_TESTS_EVALCASE_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/passhost.h"

/* Dims and values inline: T(PH_DT_FLOAT, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)). */
#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})

/* Element i of raw data p of dtype dt as a double, and back (any numeric
 * dtype, bool, float16, bfloat16). */
double ec_get(const void *p, int dt, size_t i);
void ec_put(void *p, int dt, size_t i, double v);

/* A new tensor of dtype dt from double values (NULL vals: zeros). */
ph_tensor *T(int dt, size_t rank, const int64_t *dims, const double *vals);
#define TF(rank, dims, ...) T(PH_DT_FLOAT, rank, dims, V(__VA_ARGS__))
#define TL(rank, dims, ...) T(PH_DT_INT64, rank, dims, V(__VA_ARGS__))

/* Check dtype, shape and values (|got - want| <= tol * (1 + |want|); NaN
 * matches NaN). */
void expect(const ph_tensor *t, int dt, size_t rank, const int64_t *dims, const double *vals, double tol);

typedef struct tc {
    ph_model *m;
    ph_node *n;
    int64_t opset;
    ph_tensor *in[12];
    size_t n_in;
    ph_tensor *out[6];
    ph_error err;
} tc;

/* A model with one node `op` with n_out outputs: its inputs are graph
 * inputs shaped like the given tensors (NULL: omitted), which tc takes
 * over. */
tc *mk(int64_t opset, const char *op, size_t n_out, size_t n_in, ...);
/* ph_eval_node on the node: 0 or the error code (message in c->err). */
int run(tc *c);
/* run, asserting success. */
void run_ok(tc *c);
void done(tc *c);

#endif
