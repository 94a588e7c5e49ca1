/* sdk/src/eval/eval_kernels.h - the interface between the evaluator core and its
 * operator kernels.
 *
 * A kernel computes one node: it reads the node's attributes, checks its
 * inputs, and fills a->out[i] with new tensors (ir_tensor_alloc) for every
 * non-omitted output.  On anything it does not support (a dtype, an
 * attribute value, a mode) it returns PH_EUNSUPPORTED with a message naming
 * the op and what was not supported: never a wrong answer.  Bad inputs (shapes
 * that do not broadcast, out-of-range indices) are PH_EINVAL with a message.
 *
 * float16 and bfloat16: the core converts such inputs to float32, calls the
 * kernel, and converts float32 outputs back to input 0's half type (when
 * input 0 is one), unless the kernel is listed with EVAL_KF_NATIVE_HALF.  Kernels
 * therefore see float32, float64 and integer types; a->half tells them the
 * dtype input 0 had, to refuse a half type the spec does not allow.
 *
 * float64 reference mode (ph_eval_options.float64): the core promotes every
 * float32/float16/bfloat16 tensor to double before kernels see it, and every
 * float output a kernel makes (Constant values, dtype attributes) to double
 * after the call; it answers Cast to a float type itself.  A kernel therefore
 * computes in double by computing in the dtype of its inputs: it must accept
 * double wherever it accepts float32 (also where the spec lists only
 * float32/float16, e.g. a scale), and a kernel that evaluates a subgraph
 * (If, Loop, Scan) evaluates it with a->float64 kept.
 *
 * Kernels are registered in NULL-terminated tables, one per kernel file
 * group; the core looks ops up in all tables.
 */
#ifndef PASSHOST_SDK_EVAL_KERNELS_H
#define PASSHOST_SDK_EVAL_KERNELS_H

#include "internal.h"
#include "passhost/eval.h"

/* The running graph, for kernels that evaluate bodies (If, Loop, Scan,
 * SequenceMap): its evaluator and the current value of each slot. */
typedef struct eval_frame {
    const ph_eval *e;
    const ph_tensor **cur;
} eval_frame;

typedef struct eval_kargs {
    const ph_node *node;          /* attributes come from here */
    int64_t opset;                /* default-domain opset of the model */
    const ph_tensor *const *in;   /* NULL for omitted optional inputs */
    size_t n_in;
    ph_tensor **out;              /* kernel stores new tensors; NULL entries for omitted outputs stay NULL */
    size_t n_out;
    const int *out_wanted;        /* out_wanted[i] == 0: output i is omitted, do not produce it */
    ph_error *err;
    int half;                     /* PH_DT_FLOAT16/BFLOAT16: input 0 had it and was converted to float; else 0 */
    const eval_frame *frame;       /* the graph running the node; NULL from ph_eval_node */
    ph_eval *const *bodies;       /* the node's prepared bodies; NULL from ph_eval_node */
    int float64;                  /* the float64 reference mode: see below */
} eval_kargs;

typedef int (*eval_kernel_fn)(eval_kargs *a);

/* flags of a kernel */
#define EVAL_KF_NATIVE_HALF 1u /* handles float16/bfloat16 itself (no conversion to float) */
#define EVAL_KF_CONTAINERS 2u  /* takes sequences and optionals as inputs (else refused by the core) */
#define EVAL_KF_RANDOM 4u      /* draws random numbers: its outputs are not comparable */

typedef struct eval_kernel_entry {
    ph_op op;          /* PH_OP_UNKNOWN ends a table */
    eval_kernel_fn fn;
    unsigned flags;    /* EVAL_KF_* (1 alone: EVAL_KF_NATIVE_HALF) */
} eval_kernel_entry;

/* The kernel that evaluates n, NULL when none (eval_core.c). */
const eval_kernel_entry *eval_find_kernel(const ph_node *n);
/* ph_eval_node with n's kernel k (eval_find_kernel) already found. */
int eval_node_kernel(const eval_kernel_entry *k, const ph_node *n, int64_t opset, const ph_tensor *const *inputs,
                     ph_tensor **outputs, ph_error *err);

/* Kernels of ops outside ph_op (other domains: com.microsoft; default-domain
 * ops the table lacks), looked up by domain ("" default) and op type. */
typedef struct eval_named_kernel {
    const char *domain;
    const char *op_type; /* NULL ends a table */
    eval_kernel_entry k;
} eval_named_kernel;

/* Elementwise, activation, logic, shape and data-movement ops, reductions,
 * Cast, Constant*, Range, Pad, TopK, NonZero, DepthToSpace, SpaceToDepth
 * (sdk/src/eval_ops_*.c). */
extern const eval_kernel_entry eval_kernels_light[];
/* MatMul, Gemm, Conv, ConvTranspose, pooling, normalizations, Resize, Einsum
 * (sdk/src/eval_nn_*.c). */
extern const eval_kernel_entry eval_kernels_heavy[];
/* Control flow, sequences and optionals, recurrent, quantized, signal,
 * detection, scatter/gather, losses and random ops (sdk/src/eval/eval_more_table.c). */
extern const eval_kernel_entry eval_kernels_more[];
/* com.microsoft ops passhost emits, and default-domain ops outside ph_op. */
extern const eval_named_kernel eval_kernels_named[];

/* ------------------------------------------------------------ bodies
 * For kernels of nodes with subgraphs.  Index b counts the node's subgraphs
 * in ph_node_subgraph order. */
/* The index of the body held by GRAPH attribute attr, or SIZE_MAX. */
size_t eval_body_index(const eval_kargs *a, const char *attr);
size_t eval_body_output_count(const eval_kargs *a, size_t b);
/* Run body b on n_in inputs (borrowed; one per body input), filling
 * out[0..n_out) with new values (the caller frees them).  Values the body
 * reads from enclosing graphs come from a->frame.  0 or a PH_E* code with
 * a->err set (the message names the body's node). */
int eval_body_run(eval_kargs *a, size_t b, const ph_tensor *const *in, size_t n_in, ph_tensor **out, size_t n_out);

#endif
