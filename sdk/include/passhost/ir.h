/* passhost/ir.h - the graph IR that passes read and rewrite.
 *
 * A ph_model owns one main ph_graph; If/Loop/Scan bodies are ph_graphs owned
 * by the node attribute that holds them.  Values are SSA: at most one
 * producer (a node output), or a graph input, or an initializer (a value with
 * a constant tensor).  Every value keeps the list of node inputs that use it,
 * including uses from nodes inside subgraphs (outer-scope references), and
 * the mutation functions below keep those lists right by construction.
 *
 * Ownership, stated once for the whole header:
 *  - Handles (ph_graph, ph_node, ph_value, ph_tensor in a graph) are owned by
 *    their model; a function returning one returns a borrowed pointer that
 *    stays valid until the object is removed (nodes: until the pass that
 *    removed them returns; values: until their node is freed) or the model
 *    is freed.
 *  - Strings returned by getters are borrowed and stay valid until the object
 *    changes.  Strings passed in are copied.
 *  - A ph_tensor made by ph_tensor_new belongs to the caller until it is given
 *    to a graph (ph_graph_add_initializer, ph_node_set_attr_tensor), which
 *    then owns it.
 *
 * Iteration: nodes are kept in a list in topological order.  To remove nodes
 * while walking, read ph_node_next() before removing; a removed node stays
 * readable (ph_node_is_removed) until the current pass returns.
 */
#ifndef PASSHOST_IR_H
#define PASSHOST_IR_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"
#include "passhost/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ph_model ph_model;
typedef struct ph_graph ph_graph;
typedef struct ph_node ph_node;
typedef struct ph_value ph_value;
typedef struct ph_tensor ph_tensor;

/* Element types: the values of ONNX TensorProto.DataType. */
typedef enum ph_dtype {
    PH_DT_UNDEFINED = 0,
    PH_DT_FLOAT = 1,
    PH_DT_UINT8 = 2,
    PH_DT_INT8 = 3,
    PH_DT_UINT16 = 4,
    PH_DT_INT16 = 5,
    PH_DT_INT32 = 6,
    PH_DT_INT64 = 7,
    PH_DT_STRING = 8,
    PH_DT_BOOL = 9,
    PH_DT_FLOAT16 = 10,
    PH_DT_DOUBLE = 11,
    PH_DT_UINT32 = 12,
    PH_DT_UINT64 = 13,
    PH_DT_COMPLEX64 = 14,
    PH_DT_COMPLEX128 = 15,
    PH_DT_BFLOAT16 = 16
} ph_dtype;

/* Bytes per element of a fixed-size dtype; 0 for STRING and unknown codes. */
PH_API size_t ph_dtype_size(int dtype);
/* ONNX name of a dtype ("float", "int64", ...); static string, never NULL. */
PH_API const char *ph_dtype_name(int dtype);

/* ------------------------------------------------------------------ model */

/* A new empty model (for builders and tests): ir_version 8, default-domain
 * opset `opset`.  Caller frees with ph_model_free; NULL when out of memory. */
PH_API ph_model *ph_model_new(int64_t opset);

/* Free the model and everything it owns.  NULL is allowed. */
PH_API void ph_model_free(ph_model *m);

/* The main graph (borrowed). */
PH_API ph_graph *ph_model_graph(ph_model *m);

/* Opset version imported for a domain ("" or "ai.onnx" is the default
 * domain), or -1 when the domain is not imported. */
PH_API int64_t ph_model_opset(const ph_model *m, const char *domain);
/* Import (or change) an opset; returns 0 or a PH_E* code. */
PH_API int ph_model_set_opset(ph_model *m, const char *domain, int64_t version);
PH_API int64_t ph_model_ir_version(const ph_model *m);
/* Raise the model's ir_version to at least the one the default-domain
 * opset `opset` requires (ONNX's table: opset 11 needs IR 6, 12 to 14 IR 7,
 * 15 to 18 IR 8, 19 and 20 IR 9, 21 IR 10); never lowers it.  For opset
 * conversion (convert_opset).  0, or PH_EINVAL for m NULL. */
PH_API int ph_model_require_ir_version(ph_model *m, int64_t opset);

/* A number that changes whenever an initializer of any graph is added or
 * removed, has its data replaced (ph_value_set_const), or becomes or stops
 * being a graph output: a pass that only looks at initializers compares it
 * with the one it saw last time (ph_ctx_pass_memo) to skip a call with
 * nothing new. */
PH_API uint64_t ph_model_initializers_version(const ph_model *m);

/* Total nodes in the main graph and every subgraph. */
PH_API size_t ph_model_node_count(const ph_model *m);

/* ------------------------------------------------------------------ graph */

PH_API ph_model *ph_graph_model(const ph_graph *g);
/* The node whose attribute holds this subgraph; NULL for the main graph. */
PH_API ph_node *ph_graph_parent(const ph_graph *g);
PH_API const char *ph_graph_name(const ph_graph *g);

/* Nodes in topological order; NULL past the end. */
PH_API ph_node *ph_graph_first_node(const ph_graph *g);
PH_API ph_node *ph_graph_last_node(const ph_graph *g);
/* The next live node; for a node removed during this pass, the first live
 * node that followed it, so a walk can go on after removing its position. */
PH_API ph_node *ph_node_next(const ph_node *n);
PH_API ph_node *ph_node_prev(const ph_node *n);
/* Called for each node by ph_graph_walk: returns the rewrites it made (0
 * for none) or a negative PH_E* code, which stops the walk. */
typedef int (*ph_node_fn)(ph_node *n, void *user);

/* Call fn on every node of g in order, and on the nodes of each node's
 * subgraphs just before that node.  fn may remove the node it is given and
 * any other node; the walk goes on with the first live node after it.
 * Returns the sum of fn's results, or the first negative one. */
PH_API int ph_graph_walk(ph_graph *g, ph_node_fn fn, void *user);

/* ph_graph_walk restricted to nodes whose op is one of ops[0..n_ops), found
 * through each graph's op-type index: the cost is the number of such nodes
 * (and of If/Loop/Scan nodes, for their bodies), not the graph's size.
 * Bodies are walked first, then each op's nodes in the order they were
 * added.  Nodes of other domains are all PH_OP_UNKNOWN.  fn may remove
 * nodes as with ph_graph_walk; nodes it adds may or may not be visited. */
PH_API int ph_graph_walk_ops(ph_graph *g, const ph_op *ops, size_t n_ops, ph_node_fn fn, void *user);
/* 1 when a node of g holds a subgraph (an If branch, a Loop or Scan body,
 * a graph attribute of an unknown op), else 0: found through the op-type
 * index, so the cost is the number of nodes of ops that can hold one, not
 * g's size.  For a pass that handles bodies in a walk of every node and
 * can skip that walk when there are none. */
PH_API int ph_graph_has_bodies(const ph_graph *g);

/* Nodes of this graph only (not subgraphs). */
PH_API size_t ph_graph_node_count(const ph_graph *g);

PH_API size_t ph_graph_input_count(const ph_graph *g);
PH_API ph_value *ph_graph_input(const ph_graph *g, size_t i);
PH_API size_t ph_graph_output_count(const ph_graph *g);
PH_API ph_value *ph_graph_output(const ph_graph *g, size_t i);
/* Initializers in file order. */
PH_API size_t ph_graph_initializer_count(const ph_graph *g);
PH_API ph_value *ph_graph_initializer(const ph_graph *g, size_t i);

/* Look a value up by name in this graph, then in the enclosing graphs. */
PH_API ph_value *ph_graph_find_value(const ph_graph *g, const char *name);

/* Add a graph input of the given type; dims[i] < 0 is an unknown dim, dims
 * may be NULL when rank is 0, rank < 0 is an unknown rank.  NULL if the name
 * is taken or out of memory. */
PH_API ph_value *ph_graph_add_input(ph_graph *g, const char *name, int dtype,
                                    int rank, const int64_t *dims);
/* Append a graph output slot that reads value v. */
PH_API int ph_graph_add_output(ph_graph *g, ph_value *v);
/* Add an initializer named `name` (made unique if taken) holding tensor t;
 * the graph takes ownership of t even on failure.  NULL on failure (also
 * when t is a sequence or an optional, which no initializer can hold). */
PH_API ph_value *ph_graph_add_initializer(ph_graph *g, const char *name, ph_tensor *t);
/* ph_graph_add_initializer(g, ph_value_name(v), t) for a live value v of
 * g's model, whose name is known to be taken: the new initializer gets
 * the numbered name ("name__N") the call would give, without a lookup of
 * the name itself (for a pass that replaces v by its computed value). */
PH_API ph_value *ph_graph_add_initializer_for(ph_graph *g, const ph_value *v, ph_tensor *t);
/* Make graph input v of the main graph an initializer holding t: v keeps
 * its name and every use, leaves the graph's inputs, and its known type
 * becomes t's (an input that had an initializer as its default gets t
 * instead).  Every node reading v is reported as changed.  Takes ownership
 * of t, even on failure; t must be a tensor the caller owns.  0, or
 * PH_EINVAL (NULL argument, v no input of the main graph), PH_ENOMEM.
 * The caller checks t against v's declared type.  (sdk/src/ir/input_init.c;
 * added for fold_constant_inputs.) */
PH_API int ph_graph_input_to_initializer(ph_value *v, ph_tensor *t);

/* Remove nodes none of whose outputs is used or a graph output, and
 * initializers nobody uses, in this graph and its subgraphs.  Returns how
 * many nodes and initializers were removed. */
PH_API int ph_graph_remove_dead(ph_graph *g);
/* ph_graph_remove_dead asking gate(user, node, NULL) before removing a node
 * and gate(user, NULL, initializer) before removing an initializer (both
 * borrowed): 1 to go on, 0 to stop the sweep there (nothing more is
 * removed).  For passes that number their rewrites (ph_ctx_rewrite_begin).
 * Returns how many nodes and initializers were removed. */
typedef int (*ph_dead_gate)(void *user, const ph_node *node, const ph_value *initializer);
PH_API int ph_graph_remove_dead_gated(ph_graph *g, ph_dead_gate gate, void *user);

/* Remove what became dead at v: an initializer nobody uses (and that is no
 * graph input or output), or v's producer when none of its outputs is used
 * any more, then recursively the producers of that node's inputs.  Costs
 * only what it removes.  Returns how many nodes and initializers it removed. */
PH_API int ph_value_prune(ph_value *v);

/* Cut the main graph g to the part between the values named by inputs and
 * outputs, as onnx.utils.extract_model does: the outputs become g's
 * outputs (in that order), the inputs its inputs (in that order; a value a
 * node computed becomes an input of the type it has, its node loses it),
 * and every node, initializer and input the outputs do not need is
 * removed.  Everything an output needs must come from the inputs given or
 * from constants.  n_inputs 0: the graph's own inputs that the outputs
 * need, in their order.  Errors (PH_ENOTFOUND, PH_EINVAL, nothing changed, a
 * message naming the value): a name of no value, a value of a body, a name
 * given twice, an initializer as an input, an input whose type is unknown
 * (the caller runs shape inference first, ph_graph_infer_shapes, when the
 * model does not declare them), a graph input needed but not given, an
 * input no output depends on.  0 on success.  (sdk/src/ir/extract.c.) */
PH_API int ph_graph_extract(ph_graph *g, const char *const *inputs, size_t n_inputs,
                            const char *const *outputs, size_t n_outputs, ph_error *err);

/* Reorder nodes into a topological order, keeping the current order where it
 * already is one.  PH_EVERIFY if the graph has a cycle. */
PH_API int ph_graph_toposort(ph_graph *g);

/* Check the invariants of this graph and its subgraphs: SSA, every input
 * defined in scope before use, use lists exact, outputs produced, names
 * unique, attributes well typed, and every operator of the default domain
 * given the inputs its ONNX schema requires at the model's opset.  0, or
 * PH_EVERIFY with a message in err. */
PH_API int ph_graph_verify(const ph_graph *g, ph_error *err);

/* A new value name or node name, unique in the model, built from hint.  The
 * returned string is owned by the model (valid until the model is freed). */
PH_API const char *ph_graph_unique_name(ph_graph *g, const char *hint);

/* ------------------------------------------------------------------ nodes */

/* Create a node inserted before `before` (at the end when NULL), with n_in
 * inputs (NULL entries are omitted optional inputs) and n_out new output
 * values with unique names.  Op domain "" (set others with
 * ph_node_set_domain); the node gets a unique name built from op_type.
 * NULL when out of memory or an input is out of scope. */
PH_API ph_node *ph_node_create(ph_graph *g, ph_node *before, const char *op_type,
                               size_t n_in, ph_value *const *inputs, size_t n_out);

/* Remove a node.  Its outputs must be unused and not graph outputs
 * (PH_EBUSY otherwise, nothing changed).  Its input uses are dropped now; the
 * node's memory is freed after the current pass. */
PH_API int ph_node_remove(ph_node *n);

/* Bypass a node: every use of output `out_index` (including a graph output
 * slot, see ph_value_replace) now reads `with`; then the node is removed if
 * none of its outputs is still used.  PH_EBUSY with nothing changed if the
 * output cannot be redirected. */
PH_API int ph_node_bypass(ph_node *n, size_t out_index, ph_value *with);

PH_API int ph_node_is_removed(const ph_node *n);
PH_API ph_graph *ph_node_graph(const ph_node *n);
PH_API ph_op ph_node_op(const ph_node *n);
PH_API const char *ph_node_op_type(const ph_node *n);
/* "" for the default domain. */
PH_API const char *ph_node_domain(const ph_node *n);
/* The opset version n's model imports for n's domain (the default domain
 * for "" and "ai.onnx"): what `ph_model_opset(ph_graph_model(ph_node_graph
 * (n)), "")` spells out for a default-domain node.  -1 when not imported. */
PH_API int64_t ph_node_opset(const ph_node *n);
PH_API const char *ph_node_name(const ph_node *n);
/* What to call n in a message: its name, or for a node without one (every
 * node of the ONNX conformance models) its op and its index in its graph's
 * node list in the input file, "Conv#3" ("then_branch/Relu#0" in a body;
 * "Conv#new" for a node a pass made without a name).  Written into buf
 * (size bytes, cut to fit), which it returns. */
PH_API const char *ph_node_label(const ph_node *n, char *buf, size_t size);
PH_API int ph_node_set_op_type(ph_node *n, const char *op_type);
PH_API int ph_node_set_domain(ph_node *n, const char *domain);
PH_API int ph_node_set_name(ph_node *n, const char *name);

PH_API size_t ph_node_input_count(const ph_node *n);
/* NULL for an omitted optional input or an index past the end. */
PH_API ph_value *ph_node_input(const ph_node *n, size_t i);
/* Set input i (i == count appends); v may be NULL (omitted).  Keeps uses. */
PH_API int ph_node_set_input(ph_node *n, size_t i, ph_value *v);
/* Remove input i, shifting the later ones down. */
PH_API int ph_node_remove_input(ph_node *n, size_t i);
PH_API size_t ph_node_output_count(const ph_node *n);
PH_API ph_value *ph_node_output(const ph_node *n, size_t i);

/* ------------------------------------------------------------- attributes */

typedef enum ph_attr_type {
    PH_ATTR_NONE = 0,     /* absent */
    PH_ATTR_FLOAT = 1,
    PH_ATTR_INT = 2,
    PH_ATTR_STRING = 3,
    PH_ATTR_TENSOR = 4,
    PH_ATTR_GRAPH = 5,
    PH_ATTR_FLOATS = 6,
    PH_ATTR_INTS = 7,
    PH_ATTR_STRINGS = 8,
    PH_ATTR_OTHER = 100   /* any other ONNX attribute type, kept as is */
} ph_attr_type;

PH_API size_t ph_node_attr_count(const ph_node *n);
PH_API const char *ph_node_attr_name(const ph_node *n, size_t i);
PH_API ph_attr_type ph_node_attr_type(const ph_node *n, const char *name);

/* Getters return the default when the attribute is absent or of another
 * type. */
PH_API int64_t ph_node_attr_int(const ph_node *n, const char *name, int64_t dflt);
PH_API float ph_node_attr_float(const ph_node *n, const char *name, float dflt);
/* NUL-terminated; borrowed. */
PH_API const char *ph_node_attr_string(const ph_node *n, const char *name, const char *dflt);
/* Element count, or -1 when absent; *vals is borrowed. */
PH_API ptrdiff_t ph_node_attr_ints(const ph_node *n, const char *name, const int64_t **vals);
PH_API ptrdiff_t ph_node_attr_floats(const ph_node *n, const char *name, const float **vals);
/* Borrowed; NULL when absent. */
PH_API const ph_tensor *ph_node_attr_tensor(const ph_node *n, const char *name);
PH_API ph_graph *ph_node_attr_graph(const ph_node *n, const char *name);

/* Setters replace an attribute of the same name or add one. */
PH_API int ph_node_set_attr_int(ph_node *n, const char *name, int64_t v);
PH_API int ph_node_set_attr_float(ph_node *n, const char *name, float v);
PH_API int ph_node_set_attr_string(ph_node *n, const char *name, const char *v);
PH_API int ph_node_set_attr_ints(ph_node *n, const char *name, size_t count, const int64_t *v);
PH_API int ph_node_set_attr_floats(ph_node *n, const char *name, size_t count, const float *v);
/* Takes ownership of t, even on failure. */
PH_API int ph_node_set_attr_tensor(ph_node *n, const char *name, ph_tensor *t);
/* Copy every attribute of src onto dst (not GRAPH attributes). */
PH_API int ph_node_copy_attrs(ph_node *dst, const ph_node *src);
/* Returns 1 if removed, 0 if absent. */
PH_API int ph_node_remove_attr(ph_node *n, const char *name);
/* 1 if a and b have the same attributes in any order: the same names, each
 * of the same type and value, compared exactly (floats by their bits,
 * strings by their bytes, tensors by dtype, shape and bytes).  A node with
 * an attribute that cannot be compared (GRAPH, TENSORS, SPARSE_TENSOR,
 * TYPE_PROTO and their lists, a reference to a function's attribute) equals
 * no node, itself included.  For passes that merge identical nodes
 * (eliminate_common_subexpression). */
PH_API int ph_node_attrs_equal(const ph_node *a, const ph_node *b);
/* A hash of n's attributes, independent of their order: nodes whose
 * attributes are ph_node_attrs_equal hash alike. */
PH_API uint64_t ph_node_attrs_hash(const ph_node *n);

/* For builders: give n a GRAPH attribute `name` holding a new, empty
 * subgraph (an If branch, a Loop or Scan body) and return it; fill it with
 * ph_graph_add_input, ph_node_create and ph_graph_add_output.  Its nodes may
 * read values of n's graph and of the graphs around it.  The subgraph is
 * owned by n.  NULL if n already has an attribute of that name, or OOM. */
PH_API ph_graph *ph_node_add_subgraph(ph_node *n, const char *name);

/* Subgraphs held by this node's GRAPH/GRAPHS attributes. */
PH_API size_t ph_node_subgraph_count(const ph_node *n);
PH_API ph_graph *ph_node_subgraph(const ph_node *n, size_t i);

/* Replace node n by the contents of its subgraph i (ph_node_subgraph), a
 * body without inputs with as many outputs as n (an If branch): the body's
 * nodes, initializers and value_info move into n's graph just before n,
 * keeping their value names (unique in the model; a node name that another
 * node also has is made unique); each output of n is replaced by the body's
 * output of the same position (graph outputs keep their names; an Identity
 * is put in between where that value cannot take an output's place), and n
 * is removed with the bodies it still holds.  Values of the body read by
 * nested bodies stay in scope.  The caller checks that running the body
 * once is what n computes (e.g. an If whose condition is a constant).
 * 0, or PH_EINVAL (n removed, no such subgraph, a body with inputs or
 * another output count; nothing changed), PH_ENOMEM.  (sdk/src/ir/inline.c;
 * added for inline_constant_if.) */
PH_API int ph_node_inline_subgraph(ph_node *n, size_t i);

/* ----------------------------------------------------------------- values */

PH_API const char *ph_value_name(const ph_value *v);
PH_API ph_graph *ph_value_graph(const ph_value *v);
/* The node producing v, and which of its outputs v is; NULL for graph
 * inputs and initializers. */
PH_API ph_node *ph_value_producer(const ph_value *v);
PH_API size_t ph_value_producer_index(const ph_value *v);

/* Node inputs that read v (nodes of subgraphs included). */
PH_API size_t ph_value_use_count(const ph_value *v);
PH_API ph_node *ph_value_use(const ph_value *v, size_t i, size_t *input_index);

PH_API int ph_value_is_graph_input(const ph_value *v);
/* How many graph output slots read v. */
PH_API size_t ph_value_graph_output_count(const ph_value *v);
PH_API int ph_value_is_initializer(const ph_value *v);

/* The constant tensor of v: an initializer that is not also a graph input
 * (an input with an initializer is only a default and can be overridden).
 * NULL otherwise. */
PH_API const ph_tensor *ph_value_const(const ph_value *v);

/* The constant value behind v: ph_value_const's initializer, or the `value`
 * tensor of the default-domain Constant node that produces v.  NULL
 * otherwise (v NULL included).  Borrowed from v or its producer. */
PH_API const ph_tensor *ph_value_const_tensor(const ph_value *v);

/* The one node that reads v, if v has exactly one use and is not a graph
 * output; NULL otherwise.  The usual check before fusing into a consumer. */
PH_API ph_node *ph_value_sole_consumer(const ph_value *v);
/* The node that reads v when every use of v is by that one node, which may
 * read it at several inputs (Add(t, t)), and v is no graph output; NULL
 * otherwise (no use, two readers, a graph output).  For rewrites that take
 * a value over from the one node reading it (merge_consecutive_concat,
 * push_transpose_through_elementwise). */
PH_API ph_node *ph_value_only_reader(const ph_value *v);

/* Redirect every use of `old` to `repl`.  If `old` is a graph output, the
 * output slot must keep its name: `repl` is renamed to old's name (and old
 * gets a fresh one) when repl is a node output of the same graph, or an
 * initializer of the main graph, and not itself a graph input or output;
 * otherwise PH_EBUSY and
 * nothing changes.  repl must be in scope of every user. */
PH_API int ph_value_replace(ph_value *old, ph_value *repl);
/* 1 if ph_value_replace(old, repl) would succeed. */
PH_API int ph_value_can_replace(const ph_value *old, const ph_value *repl);

/* Known type of v (from the model's value_info, inputs and outputs, or set
 * by passes).  dtype PH_DT_UNDEFINED and rank -1 when unknown; a dim is -1
 * when unknown or symbolic (ph_value_dim_param then names it). */
PH_API int ph_value_dtype(const ph_value *v);
PH_API int ph_value_rank(const ph_value *v);
PH_API int64_t ph_value_dim(const ph_value *v, int i);
PH_API const char *ph_value_dim_param(const ph_value *v, int i);
/* Replace the known type; rank < 0 clears the shape. */
PH_API int ph_value_set_type(ph_value *v, int dtype, int rank, const int64_t *dims);
PH_API int ph_value_set_dim_param(ph_value *v, int i, const char *param);
/* Change only v's dtype: its rank, dims and dim names stay as they are (an
 * unknown shape stays unknown).  Allocates nothing, so cannot run out of
 * memory.  0, or PH_EINVAL for v NULL.  For passes that retype a value in
 * place (convert_float16) or give a copy another dtype (type_cast_narrow,
 * with ph_value_copy_type first). */
PH_API int ph_value_set_dtype(ph_value *v, int dtype);

/* ---------------------------------------------------------------- tensors */

/* A new tensor of dtype and shape; data (ph_tensor_nbytes bytes, little
 * endian, row major) is copied, or zero-filled when NULL.  Caller owns it. */
PH_API ph_tensor *ph_tensor_new(int dtype, size_t rank, const int64_t *dims, const void *data);
PH_API ph_tensor *ph_tensor_clone(const ph_tensor *t);
/* A new tensor of dtype and shape whose bytes are NOT initialised: *data
 * gets its writable buffer (ph_tensor_nbytes bytes, aligned for any
 * element type), for a pass that computes the values in place instead of
 * building them elsewhere and copying.  The caller owns the tensor and
 * writes every byte before giving it to a graph (ph_graph_add_initializer,
 * ph_rw_initializer, ph_value_set_const); *data is valid until then, never
 * after.  NULL (and *data NULL) for a dtype without a fixed element size, a
 * negative dim, or out of memory.  ph_tensor_scaled (constant.h) is the
 * common use. */
PH_API ph_tensor *ph_tensor_new_uninit(int dtype, size_t rank, const int64_t *dims, void **data);
/* Free a tensor the caller owns (never one a graph owns).  NULL allowed. */
PH_API void ph_tensor_free(ph_tensor *t);

PH_API int ph_tensor_dtype(const ph_tensor *t);
PH_API size_t ph_tensor_rank(const ph_tensor *t);
PH_API int64_t ph_tensor_dim(const ph_tensor *t, size_t i);
PH_API const int64_t *ph_tensor_dims(const ph_tensor *t);
/* The element count; -1 when it does not fit in int64 (never for a tensor of
 * a loaded model: the loader refuses such shapes). */
PH_API int64_t ph_tensor_numel(const ph_tensor *t);
PH_API size_t ph_tensor_nbytes(const ph_tensor *t);
/* The elements, little endian and row major; NULL for STRING tensors or when
 * the data could not be read.  Borrowed, read-only. */
PH_API const void *ph_tensor_data(const ph_tensor *t);
/* 1 if both have the same dtype, shape and bytes. */
PH_API int ph_tensor_equal(const ph_tensor *a, const ph_tensor *b);

/* ------------------------------------------------- sequences and optionals
 * The evaluator's values of ONNX's sequence and optional types are
 * ph_tensors of another kind: no dtype (ph_tensor_dtype is 0), rank 0, no
 * data (ph_tensor_data is NULL), and items.  ph_tensor_free frees the items,
 * ph_tensor_clone copies them, ph_tensor_equal compares them.  They never
 * go into a graph (initializers and attributes are tensors). */

typedef enum ph_kind {
    PH_KIND_TENSOR = 0,
    PH_KIND_SEQUENCE = 1,
    PH_KIND_OPTIONAL = 2
} ph_kind;

PH_API int ph_tensor_kind(const ph_tensor *t);
/* A new sequence of n items (tensors, or sequences for a sequence of
 * sequences), taken over even on failure; elem_dtype is the element dtype
 * (what an empty sequence has; 0 when unknown).  NULL when an item is NULL
 * or out of memory.  Caller owns the result. */
PH_API ph_tensor *ph_sequence_new(int elem_dtype, size_t n, ph_tensor *const *items);
/* A new optional holding value (taken over, even on failure), or an empty
 * optional when value is NULL.  NULL when out of memory. */
PH_API ph_tensor *ph_optional_new(int elem_dtype, ph_tensor *value);
/* A sequence's or optional's element dtype, length (an optional: 0 or 1)
 * and item i (borrowed; NULL past the end).  0 / NULL for a tensor. */
PH_API int ph_container_elem_dtype(const ph_tensor *t);
PH_API size_t ph_container_length(const ph_tensor *t);
PH_API const ph_tensor *ph_container_item(const ph_tensor *t, size_t i);

/* Tensor files (fold_constant_inputs and --verify-data read them).
 * ph_tensor_load_pb reads a serialized TensorProto (the
 * input_K.pb / output_K.pb files of ONNX's test_data_set folders; data
 * inline, not external); *name (may be NULL) gets a malloc'd copy of the
 * tensor's name, or NULL when it has none.  ph_tensor_load_npy reads a
 * NumPy .npy file: format versions 1 to 3, C order, little- or big-endian
 * numeric dtypes and bool.  Both return a new tensor the caller owns, or
 * NULL with err naming the file and why: PH_EIO (cannot read it), PH_EPARSE
 * (not such a file, or its data does not match its dtype and shape),
 * PH_EUNSUPPORTED (external data), PH_ENOMEM. */
PH_API ph_tensor *ph_tensor_load_pb(const char *path, char **name, ph_error *err);
PH_API ph_tensor *ph_tensor_load_npy(const char *path, ph_error *err);
/* The raw little-endian bytes of the file at path as a tensor of dtype and
 * shape (rank, dims): the file size must be exactly numel x the dtype's
 * size (PH_EPARSE otherwise; PH_EINVAL for a dtype without a fixed size or
 * a negative dim).  Ownership and errors as ph_tensor_load_npy. */
PH_API ph_tensor *ph_tensor_load_raw(const char *path, int dtype, size_t rank, const int64_t *dims,
                                     ph_error *err);

/* ------------------------------------------- emitting operators of other domains
 * (ONNX Runtime contrib operators and the like; used by the adapt passes of
 * target ort.)  Shape inference leaves the outputs of operators it does not
 * know as they are, so a pass that emits one gives its outputs their type. */

/* Give dst the known type of src: dtype, rank, dims and symbolic dim names.
 * 0, PH_EINVAL (NULL argument) or PH_ENOMEM. */
PH_API int ph_value_copy_type(ph_value *dst, const ph_value *src);
/* Import `domain` at `version` unless the model imports it already at that
 * version or later.  0 or a PH_E* code. */
PH_API int ph_model_require_opset(ph_model *m, const char *domain, int64_t version);

#ifdef __cplusplus
}
#endif
#endif
