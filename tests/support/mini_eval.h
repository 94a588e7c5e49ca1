/* tests/support/mini_eval.h - a small reference evaluator for pass tests.
 *
 * Used only by tests, to prove that a pass keeps a graph's results: evaluate
 * the graph before and after the pass on the same inputs and compare.  It is
 * deliberately small and strict: float32 only; ops Identity, Neg, Relu, Add
 * (numpy broadcasting), Transpose, MatMul (N-D, batch broadcasting, 1-D
 * operands as numpy), Gemm (transA/transB/alpha/beta, C broadcast),
 * MaxPool/AveragePool 2-D (kernel, strides, pads, dilations, ceil_mode,
 * count_include_pad, auto_pad NOTSET/VALID).  Anything else (another op, a
 * non-default domain, another dtype, an attribute value it does not handle,
 * a shape mismatch) is an error with a message, never a guessed answer.
 *
 * Arithmetic is done in float, in a fixed order (one dot-product routine for
 * MatMul and Gemm, k ascending), so two graphs computing the same maths the
 * same way give bit-identical results.
 *
 * Ownership: an me_tensor owns its data (malloc); free with me_tensor_free.
 * Graphs are borrowed and never changed.
 */
#ifndef PASSHOST_TESTS_MINI_EVAL_H
#define PASSHOST_TESTS_MINI_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

#define ME_MAX_RANK 8

typedef struct me_tensor {
    int rank;
    int64_t dims[ME_MAX_RANK];
    float *data; /* owned; numel floats, row major; NULL only when numel == 0 */
} me_tensor;

/* Elements of t (1 for rank 0). */
int64_t me_numel(const me_tensor *t);

/* Allocate t as a zero-filled tensor of the given shape.  0, or -1 when the
 * rank is too large, a dim is negative, or out of memory (t is then empty). */
int me_tensor_alloc(me_tensor *t, int rank, const int64_t *dims);

/* Free t's data and reset it to an empty rank-0 tensor without data. */
void me_tensor_free(me_tensor *t);

/* Deep copy src into dst (dst is overwritten, not freed first). 0 or -1. */
int me_tensor_copy(me_tensor *dst, const me_tensor *src);

/* Evaluate graph g in node order.  inputs[i] is the value of graph input i
 * (n_inputs must equal ph_graph_input_count(g)); initializers come from the
 * graph.  On success returns 0 and fills outputs[0 .. ph_graph_output_count)
 * with new tensors the caller frees.  On failure returns -1, leaves outputs
 * empty, and writes one line naming the node and the problem into err. */
int me_eval(const ph_graph *g, const me_tensor *inputs, size_t n_inputs,
            me_tensor *outputs, char *err, size_t err_size);

#endif
