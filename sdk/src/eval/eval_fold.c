/* sdk/src/eval/eval_fold.c - one node folded by the evaluator, with the
 * size cap and the error handling of a folding pass written once (see
 * ph_eval_fold in eval.h). */
#include <stdint.h>

#include "passhost/constant.h"
#include "passhost/eval.h"
#include "passhost/ir.h"
#include "passhost/shape.h"
#include "eval_kernels.h"

#define PREDICT_MAX 64 /* entries of a shape or repeats operand read for the estimate */

static uint64_t sat_mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

/* The entries of a 0-D or 1-D INT64 tensor of at most PREDICT_MAX entries,
 * read through ph_tensor_read_i64 (mapped raw_data may sit at any
 * address): the count, or -1. */
static int64_t int64_entries(const ph_tensor *t, int64_t *v)
{
    if (!t || ph_tensor_dtype(t) != PH_DT_INT64 || ph_tensor_rank(t) > 1)
        return -1;
    int64_t k = ph_tensor_numel(t);
    if (k < 0 || k > PREDICT_MAX || ph_tensor_read_i64(t, ph_tensor_rank(t), ph_tensor_dims(t), v))
        return -1;
    return k;
}

/* Bytes the output of a node that can blow a small constant up
 * (ConstantOfShape, Expand, Tile) will take, from its constant inputs; 0
 * when not predicted.  Saturates instead of overflowing. */
static uint64_t predicted_bytes(const ph_node *n, const ph_tensor *const *in)
{
    int64_t v[PREDICT_MAX], k;
    uint64_t elems = 1;
    size_t n_in = ph_node_input_count(n);
    switch (ph_node_op(n)) {
    case PH_OP_ConstantOfShape: {
        if (n_in < 1 || (k = int64_entries(in[0], v)) < 0)
            return 0;
        const ph_tensor *val = ph_node_attr_tensor(n, "value");
        size_t es = val ? ph_dtype_size(ph_tensor_dtype(val)) : sizeof(float);
        for (int64_t i = 0; i < k; i++)
            elems = sat_mul(elems, v[i] > 0 ? (uint64_t)v[i] : 0);
        return sat_mul(elems, es ? es : 1);
    }
    case PH_OP_Expand: {
        if (n_in < 2 || !in[0] || (k = int64_entries(in[1], v)) < 0)
            return 0;
        size_t r = ph_tensor_rank(in[0]), rank = r > (size_t)k ? r : (size_t)k;
        for (size_t i = 0; i < rank; i++) {
            int64_t a = i + r >= rank ? ph_tensor_dim(in[0], i + r - rank) : 1;
            int64_t b = i + (size_t)k >= rank ? v[i + (size_t)k - rank] : 1;
            elems = sat_mul(elems, (uint64_t)(a == 1 ? (b > 0 ? b : 0) : a));
        }
        return sat_mul(elems, ph_dtype_size(ph_tensor_dtype(in[0])));
    }
    case PH_OP_Tile: {
        if (n_in < 2 || !in[0] || (k = int64_entries(in[1], v)) < 0)
            return 0;
        elems = (uint64_t)ph_tensor_numel(in[0]);
        for (int64_t i = 0; i < k; i++)
            elems = sat_mul(elems, v[i] > 0 ? (uint64_t)v[i] : 0);
        return sat_mul(elems, ph_dtype_size(ph_tensor_dtype(in[0])));
    }
    default:
        return 0;
    }
}

/* Bytes of v by its known type, 0 when not known. */
static uint64_t known_bytes(const ph_value *v)
{
    int64_t numel = v ? ph_value_numel(v) : -1;
    size_t es = v ? ph_dtype_size(ph_value_dtype(v)) : 0;
    return numel >= 0 && es ? (uint64_t)numel * es : 0;
}

static void free_outputs(ph_tensor **out, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        ph_tensor_free(out[j]);
        out[j] = NULL;
    }
}

PH_API int ph_eval_fold(const ph_node *n, int64_t opset, const ph_tensor *const *inputs, uint64_t max_bytes,
                        ph_tensor **outputs, ph_error *why)
{
    const char *name = ph_node_name(n), *op = ph_node_op_type(n);
    size_t n_out = ph_node_output_count(n);
    for (size_t j = 0; j < n_out; j++)
        outputs[j] = NULL;
    for (size_t j = 0; j < n_out && max_bytes; j++) {
        uint64_t b = known_bytes(ph_node_output(n, j));
        if (b > max_bytes)
            return ph_error_set(why, PH_ERANGE, "node '%s' (%s) not folded: output %zu would take %llu bytes "
                                "(max_output_bytes %llu)", name, op, j, (unsigned long long)b,
                                (unsigned long long)max_bytes), 0;
    }
    const eval_kernel_entry *k = eval_find_kernel(n); /* once for the question and the run */
    if (!k)
        return ph_error_set(why, PH_EUNSUPPORTED, "node '%s' (%s) not folded: the evaluator does not support %s",
                            name, op, op), 0;
    uint64_t est = predicted_bytes(n, inputs);
    if (max_bytes && est > max_bytes)
        return ph_error_set(why, PH_ERANGE, "node '%s' (%s) not folded: its output would take %llu bytes "
                            "(max_output_bytes %llu)", name, op, (unsigned long long)est,
                            (unsigned long long)max_bytes), 0;
    ph_error err = {0, ""};
    int rc = eval_node_kernel(k, n, opset, inputs, outputs, &err);
    if (rc == PH_ENOMEM) {
        free_outputs(outputs, n_out);
        return ph_error_set(why, PH_ENOMEM, "out of memory evaluating '%s'", name);
    }
    if (rc < 0) {
        free_outputs(outputs, n_out);
        return ph_error_set(why, PH_EUNSUPPORTED, "node '%s' (%s) not folded: %s", name, op,
                            err.message[0] ? err.message : ph_strerror(rc)), 0;
    }
    for (size_t j = 0; j < n_out; j++) {
        if (outputs[j] && ph_tensor_kind(outputs[j]) != PH_KIND_TENSOR) {
            free_outputs(outputs, n_out);
            return ph_error_set(why, PH_EINVAL, "node '%s' (%s) not folded: output %zu is a sequence or an "
                                "optional", name, op, j), 0;
        }
        if (outputs[j] && max_bytes && ph_tensor_nbytes(outputs[j]) > max_bytes) {
            size_t b = ph_tensor_nbytes(outputs[j]);
            free_outputs(outputs, n_out);
            return ph_error_set(why, PH_ERANGE, "node '%s' (%s) not folded: output %zu takes %zu bytes "
                                "(max_output_bytes %llu)", name, op, j, b, (unsigned long long)max_bytes), 0;
        }
    }
    return 1;
}
