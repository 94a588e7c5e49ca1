/* passhost/eval.h - the reference evaluator: runs an ONNX graph on the CPU.
 *
 * Used to fold constants and to check that a rewritten model still computes
 * what the original did.  ONNX semantics for opsets 7-17 (docs/verify.md
 * lists the operators), If/Loop/Scan bodies, sequences and optionals (ir.h)
 * included; an operator or dtype it does not support is an error naming
 * it, never a wrong answer.
 *
 * Ownership: the graph is borrowed and must not change while an evaluator
 * prepared for it is alive; input tensors are borrowed for the call; output
 * tensors are new and owned by the caller (ph_tensor_free).
 */
#ifndef PASSHOST_EVAL_H
#define PASSHOST_EVAL_H

#include <stddef.h>

#include "passhost/error.h"
#include "passhost/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ph_eval ph_eval;

/* Prepare to run graph g (normally a model's main graph).  Fails, naming the
 * node, if some operator or attribute is not supported.  Caller frees with
 * ph_eval_free. */
PH_API int ph_eval_new(const ph_graph *g, ph_eval **out, ph_error *err);
PH_API void ph_eval_free(ph_eval *e);

/* How an evaluator computes; a zero field takes its default.  The caller
 * owns the struct and sets size = sizeof(ph_eval_options), so a later SDK
 * can add fields. */
typedef struct ph_eval_options {
    size_t size;
    /* 1: the float64 reference mode.  Every float32, float16 and bfloat16
     * tensor (graph inputs, initializers, Constant values, kernel outputs)
     * is promoted to float64 and every kernel computes in float64; a Cast or
     * CastLike to a float type yields float64 too, while Casts to integer
     * and bool types convert as usual.  Outputs of a float type come back as
     * float64.  The same model, inputs and weights computed without the
     * per-op rounding of its own float types: the reference that
     * `passhost --verify` measures rounding errors against.  Initializers
     * of float types are copied once (as float64) by ph_eval_new_with. */
    int float64;
} ph_eval_options;

/* ph_eval_new with options (NULL: the defaults, as ph_eval_new). */
PH_API int ph_eval_new_with(const ph_graph *g, const ph_eval_options *opts, ph_eval **out,
                            ph_error *err);

/* Run once.  inputs[i] feeds graph input i (a NULL entry for an input that
 * has an initializer uses the initializer); outputs[i] receives a new tensor
 * for graph output i.  0, or an error naming the node that failed. */
PH_API int ph_eval_run(ph_eval *e, const ph_tensor *const *inputs, size_t n_inputs,
                       ph_tensor **outputs, size_t n_outputs, ph_error *err);

/* 1 when graph output i of e's graph depends on a random operator
 * (RandomNormal, RandomUniform and their Like forms, Bernoulli,
 * Multinomial, Dropout in training mode), also through a body: its values
 * come from the evaluator's generator (seeded by the node's seed attribute,
 * else a fixed seed) and are not comparable with another model's.  0
 * otherwise or when i is out of range. */
PH_API int ph_eval_output_is_random(const ph_eval *e, size_t i);

/* Evaluate one node on the given input tensors (NULL for omitted optional
 * inputs), filling outputs[0..ph_node_output_count(n)) with new tensors
 * (NULL for omitted outputs).  opset is the default-domain opset of the
 * model.  PH_EUNSUPPORTED, naming the op, when it cannot be evaluated. */
PH_API int ph_eval_node(const ph_node *n, int64_t opset, const ph_tensor *const *inputs,
                        ph_tensor **outputs, ph_error *err);

/* Fold node n: ph_eval_node on constant inputs (NULL for omitted optional
 * ones), the outputs into outputs[0..ph_node_output_count(n)) (new tensors
 * the caller owns; NULL for omitted outputs), with the limits of a folding
 * pass in one place.  max_bytes (0: no cap) caps each output: checked
 * before evaluating, from the output's known type and, for the ops that
 * blow a small constant up (ConstantOfShape, Expand, Tile), from the shape
 * their constant inputs ask for; and after.  Returns 1 folded; 0 not
 * folded, every output NULL, with why (may be NULL) saying so:
 *   why->code PH_EUNSUPPORTED  the evaluator cannot run n (its op, or a
 *                              dtype or attribute of this node);
 *   why->code PH_ERANGE        an output would be, or is, over max_bytes;
 *   why->code PH_EINVAL        an output is a sequence or an optional (an
 *                              initializer holds only a tensor);
 * the message reads "node 'NAME' (OP) not folded: ...".  PH_ENOMEM when out
 * of memory (outputs NULL).  n and inputs borrowed.
 * (sdk/src/eval/eval_fold.c; for constant_folding.) */
PH_API int ph_eval_fold(const ph_node *n, int64_t opset, const ph_tensor *const *inputs, uint64_t max_bytes,
                        ph_tensor **outputs, ph_error *why);

/* ------------------------------------------------------------ error budgets
 * The rule of --verify and of the pass test harness (docs/verify.md, "Error
 * budgets"): a rewritten model's float output of dtype `dtype` may be off
 * from the float64 reference by
 *     factor x orig_error x u / eps(dtype) + ulps x u x max(scale, smallest normal)
 * where orig_error is the original's own error against the reference,
 * scale the reference's largest magnitude, and u the rounding unit:
 * eps(dtype), or eps(precision) when precision (0, or the float dtype a
 * pass makes the model compute in: ph_pass_desc.precision) is less
 * precise.  A model's rounding error grows in proportion to its unit, so
 * the original's error is scaled by the ratio.  Pure functions. */
PH_API double ph_error_budget(double factor, double ulps, double orig_error, double scale, int dtype,
                              int precision);
/* The machine epsilon of a float dtype (2^-23 for float and any other
 * dtype, 2^-10 float16, 2^-7 bfloat16, 2^-52 double) and its smallest
 * normal number. */
PH_API double ph_dtype_epsilon(int dtype);
PH_API double ph_dtype_smallest_normal(int dtype);

/* 1 if ph_eval_node can evaluate nodes of this op type at all. */
PH_API int ph_eval_supports(const ph_node *n);

#ifdef __cplusplus
}
#endif
#endif
