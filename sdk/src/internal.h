/* sdk/src/internal.h - the structures behind the public handles of libpasshost.
 *
 * Storage model: the protobuf-c tree unpacked from the file is the store for
 * everything the IR does not model (doc strings, metadata, functions, unknown
 * fields, attributes).  At load the IR takes ownership of the node,
 * initializer and value-info messages out of each GraphProto (the graph's
 * arrays are emptied); at save the arrays are filled again for the duration
 * of one pack and emptied after.  Everything in the tree is malloc'd, so the
 * IR may add and free messages with the system allocator.
 *
 * Internal symbols are hidden (-fvisibility=hidden) and prefixed with the
 * folder that defines them: schema_ (schema/), ir_ (this header and
 * sdk/src/ir/), onnx_, infer_, eval_ and pat_ (pattern/); const/, pass/,
 * ops/ and testing/ define none.  Public functions are ph_ (the headers of passhost/).
 */
#ifndef PASSHOST_SDK_INTERNAL_H
#define PASSHOST_SDK_INTERNAL_H

#include <stdint.h>
#include <stddef.h>

#include "onnx/onnx.pb-c.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

/* ----------------------------------------------------------- string map */

/* A map from NUL-terminated keys (borrowed: the caller keeps each key
 * alive while it is in the map) to pointers, for the SDK's small maps: the
 * public hash map (passhost/hashmap.h) with string keys.  Zeroed: empty. */
typedef struct ir_map {
    struct ph_hmap *h; /* owned, NULL until the first put */
} ir_map;

void ir_map_free(ir_map *m);
void *ir_map_get(const ir_map *m, const char *key);
/* Insert or overwrite; PH_ENOMEM on failure. */
int ir_map_put(ir_map *m, const char *key, void *val);

/* The model's name maps (ir/names.c): the values by name (unique), or the
 * nodes by name (ONNX allows two nodes of one name).  The key is the
 * object's own name (ph_value.name, or the node's proto->name), read
 * through the object; the caller takes an object out (ir_names_del) before
 * its name changes or it is freed. */
typedef struct ir_names {
    uint64_t *slots; /* 0: empty; else the object's pointer, 16 bits of its hash on top */
    size_t cap;      /* power of two, or 0 */
    size_t count;    /* live entries */
    size_t used;     /* live + removed */
    uint8_t nodes;   /* holds ph_node, else ph_value */
    uint8_t wide;    /* a pointer did not fit in 48 bits: slots hold plain pointers */
} ir_names;

void ir_names_init(ir_names *m, int nodes);
void ir_names_free(ir_names *m);
/* The (first) object named key, or key[0, len) (no NUL inside), or NULL. */
void *ir_names_get(const ir_names *m, const char *key);
void *ir_names_get_mem(const ir_names *m, const char *key, size_t len);
/* The hash the maps use for the name key[0, len). */
uint32_t ir_name_hash(const void *key, size_t len);
/* ir_names_get_mem with h = ir_name_hash(key, len). */
void *ir_names_get_hashed(const ir_names *m, const char *key, size_t len, uint32_t h);
/* Bring the slot where a probe for a name of hash h starts into the cache
 * (a hint: a reader that knows the names it will look up or add a little
 * ahead hides the map's cache miss behind other work). */
static inline void ir_names_prefetch(const ir_names *m, uint32_t h)
{
    if (m->cap)
        __builtin_prefetch(&m->slots[h & (m->cap - 1)]);
}
/* How many objects are named key. */
size_t ir_names_count(const ir_names *m, const char *key);
/* Add o (its name non-NULL); unique: PH_EEXIST when an object of its name
 * is there.  0 or PH_ENOMEM. */
int ir_names_add(ir_names *m, void *o, int unique);
/* Take o out (nothing when absent). */
void ir_names_del(ir_names *m, const void *o);
/* Room for n entries without growing.  0 or PH_ENOMEM. */
int ir_names_reserve(ir_names *m, size_t n);
/* Room for n entries at the size adding them one by one would reach (no
 * larger), made at once: no growth step reads every entry again.  0 or
 * PH_ENOMEM. */
int ir_names_presize(ir_names *m, size_t n);
/* 1 when value v's name hashes to the hash it was entered under
 * (ph_value.name_hash): a name changed behind the map's back almost never
 * does.  A lookup of v's name finds v only when this holds (names.c). */
int ir_names_value_hash_agrees(const ph_value *v);

/* --------------------------------------------------------------- arrays */

/* Grow *arr (of elem bytes each) so it can hold need elements. */
int ir_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* ------------------------------------------------------- checked products */

/* *out = a * b; 1 when the product overflows int64 (*out is then
 * unspecified), else 0.  Every product of dims in the SDK (tensors, shape
 * inference, the evaluator) goes through this or ir_dims_numel, so a shape
 * such as [2^62, 2^62] is an error, never undefined behaviour. */
static inline int ir_mul_ovf(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* The element count of n dims: -1 when a dim is negative or the product of
 * the non-zero dims does not fit in int64 (so every stride of such a shape
 * fits too, even when a zero dim makes the count 0). */
int64_t ir_dims_numel(const int64_t *dims, size_t n);

/* ---------------------------------------------------------------- dims */

/* The distinct dims arrays of a model's values (ir/dims.c). */
typedef struct ir_dims_table {
    int64_t **slots; /* owned array; entries in the model's arena */
    size_t cap, count;
    const int64_t *last; /* the last answer, compared before hashing (a value's
                          * dims are mostly its producer's input's or neighbour's) */
} ir_dims_table;

struct ph_model;
/* The interned copy of dims d[0, r) of model m (valid until ph_model_free;
 * never to be written), or NULL when out of memory. */
const int64_t *ir_dims_intern(struct ph_model *m, const int64_t *d, size_t r);
/* ph_value_set_type with dims already interned in v's model (ir_dims_intern,
 * or another value's: every unknown dim -1); cannot fail. */
void ir_value_set_type_interned(ph_value *v, int dtype, int rank, const int64_t *dims);
/* Free m's table (the arrays go with the arena). */
void ir_dims_free(struct ph_model *m);

/* ---------------------------------------------------------------- arena */

/* A model's arena (ir/arena.c): bump allocation in large blocks, freed
 * only with the model.  The loader reads the main graph's nodes into it. */
typedef struct ir_arena ir_arena;

/* size bytes (8-byte aligned) from *ap, made on first use; NULL on OOM. */
void *ir_arena_alloc(ir_arena **ap, size_t size);
/* A NUL-terminated copy of s[0, len) in *ap, or NULL. */
char *ir_arena_strndup(ir_arena **ap, const char *s, size_t len);
/* 1 when p points into a (a may be NULL). */
int ir_arena_owns(const ir_arena *a, const void *p);
/* Bytes handed out (for tests and benchmarks). */
size_t ir_arena_bytes(const ir_arena *a);
void ir_arena_free(ir_arena *a);
/* protobuf-c's allocator hook over *ap: messages unpacked with it live in
 * the arena (its free does nothing). */
ProtobufCAllocator ir_arena_allocator(ir_arena **ap);

/* ------------------------------------------------------------- mappings */

typedef struct ir_mapping {
    struct ir_mapping *next;
    char *path; /* owned */
    const uint8_t *data;
    size_t size;
    uint64_t dev, ino; /* of the file mapped (a save never replaces it) */
} ir_mapping;

/* Map a whole file read-only.  NULL with err set on failure; never blocks
 * (a FIFO, a device or a folder is refused, naming what it is). */
ir_mapping *ir_map_file(const char *path, ph_error *err);
/* What a file of this st_mode is, for messages ("a FIFO"); static text. */
const char *ir_file_kind(unsigned mode);
/* Copy size bytes into an in-memory file and map it; name is used in
 * messages.  NULL with err set on failure. */
ir_mapping *ir_map_memory(const void *data, size_t size, const char *name, ph_error *err);
void ir_unmap_file(ir_mapping *m);
/* Let the process drop the pages of the mapping it has read (the model
 * file, once loaded): the mapping stays valid, a page touched again is read
 * again from the page cache.  A file mapped private and never written loses
 * nothing (memory-loaded models are in-memory files, ir_map_memory). */
void ir_mapping_release(const ir_mapping *m);
/* The same for the pages of m wholly inside [lo, hi) (a page that [lo, hi)
 * covers only in part is kept).  Returns where the next range may start:
 * the end of the pages dropped (page-aligned), or lo rounded up to a page
 * when none was. */
const uint8_t *ir_mapping_release_range(const ir_mapping *m, const void *lo, const void *hi);
/* Ask for transparent huge pages on the 2 MiB-aligned part of buf[0, nbytes)
 * (nothing when no whole 2 MiB page lies inside; only advice: the block
 * stays what it was).  Called before the block is touched, so that first
 * touch costs one fault per 2 MiB instead of one per 4 KiB, and random
 * reads of it miss the TLB far less. */
void ir_prefer_huge_pages(void *buf, size_t nbytes);

/* ---------------------------------------------------------------- tensor */

typedef enum ir_storage {
    IR_DATA_NONE = 0,     /* no data read yet (typed fields not converted) */
    IR_DATA_MAPPED = 1,   /* data points into a file mapping; saved as raw_data */
    IR_DATA_OWNED = 2,    /* data is owned_data; saved as raw_data */
    IR_DATA_PROTO_RAW = 3,/* data is proto->raw_data itself */
    IR_DATA_TYPED = 4     /* data converted from typed fields into owned_data;
                              the proto's typed fields are what gets saved */
} ir_storage;

struct ph_tensor {
    /* The message the tensor was read from (owned unless borrowed), or NULL
     * for a tensor made in memory (ph_tensor_new, the evaluator's results:
     * a folded constant), which gets one only when an attribute or a save
     * needs it (ir_tensor_proto). */
    Onnx__TensorProto *proto;
    const int64_t *dims; /* the proto's, or in the tensor's own block */
    const uint8_t *data;
    size_t nbytes;
    void *owned_data;
    ph_tensor **items;   /* owned: a sequence's elements, an optional's value */
    size_t n_items;
    int dtype;           /* as the proto's data_type */
    uint32_t rank;
    /* The evaluator's values of sequence and optional types (eval.h): kind
     * PH_KIND_SEQUENCE or PH_KIND_OPTIONAL, with no dtype, no dims and no
     * data; 0 (PH_KIND_TENSOR) for every tensor. */
    int kind;
    int elem_dtype;          /* the declared element dtype (0: unknown) */
    unsigned char storage;   /* ir_storage */
    unsigned char borrowed;  /* proto belongs to an attribute */
    unsigned char external;  /* proto says data_location EXTERNAL */
};

/* Wrap a proto (taking ownership unless borrowed) and read its data: typed
 * fields are converted lazily, raw_data is used in place. */
ph_tensor *ir_tensor_wrap(Onnx__TensorProto *p, int borrowed);
/* A deep copy of a sequence or optional (ph_tensor_clone's), or NULL. */
ph_tensor *ir_container_clone(const ph_tensor *t);
/* t's message: the one it was read from, or one made now (its dtype and
 * dims; the data is the caller's to place) and kept.  NULL when out of
 * memory. */
Onnx__TensorProto *ir_tensor_proto(ph_tensor *t);
/* Bytes t's dtype and dims call for (0 for strings/unknown). */
size_t ir_tensor_bytes(const ph_tensor *t, int *ok);
/* Point the tensor's data at bytes held elsewhere (a mapping). */
int ir_tensor_attach(ph_tensor *t, const uint8_t *data, size_t nbytes, ph_error *err,
                      const char *what);
/* A new tensor of dtype and shape whose bytes are uninitialized (for
 * kernels that write every element).  NULL on OOM or a bad shape. */
ph_tensor *ir_tensor_alloc(int dtype, size_t rank, const int64_t *dims);
/* Writable bytes of a tensor made by ph_tensor_new or ir_tensor_alloc
 * (NULL for any other tensor). */
void *ir_tensor_mut(ph_tensor *t);
/* IEEE half and bfloat16 conversions (round to nearest even). */
float ir_half_to_float(uint16_t h);
uint16_t ir_float_to_half(float f);
float ir_bf16_to_float(uint16_t h);
uint16_t ir_float_to_bf16(float f);
/* Bytes the tensor's dtype and dims call for (0 for strings/unknown). */
size_t ir_tensor_expected_bytes(const Onnx__TensorProto *p, int *ok);
/* Check a TensorProto as the loader reads it: a known data_type, no
 * negative dim, an element count that fits, exactly one place for the data
 * (raw_data, the typed field the dtype calls for, or external data) holding
 * exactly the elements the shape needs.  raw_elsewhere: the raw bytes were
 * taken out of the proto (held in a mapping) and number raw_len.  0, or
 * PH_EPARSE with "WHAT: reason" in err. */
int ir_tensor_check(const Onnx__TensorProto *p, int raw_elsewhere, size_t raw_len, const char *what,
                     ph_error *err);

/* ------------------------------------------------------------ observers */

/* Whoever follows the IR's changes (shape inference, the rewrite driver's
 * worklist) registers a table of callbacks on the model; the IR calls them
 * and knows nothing of who listens.  Every callback may be NULL, and each
 * must cost O(1): they run inside every mutation. */
typedef struct ir_observer_ops {
    /* n was created, or one of its inputs, attributes or its op changed */
    void (*node_changed)(void *self, ph_node *n);
    /* an input of n that read `old` now reads `repl` (ph_value_replace);
     * an observer without it is told node_changed instead */
    void (*input_replaced)(void *self, ph_node *n, const ph_value *old, const ph_value *repl);
    /* v lost or gained a use or a graph-output slot */
    void (*uses_changed)(void *self, ph_value *v);
    void (*node_freed)(void *self, ph_node *n);
    void (*value_freed)(void *self, ph_value *v);
    void (*graph_freed)(void *self, ph_graph *g);
    /* v's known type changed */
    void (*type_changed)(void *self, ph_value *v);
    void (*model_freed)(void *self, ph_model *m);
    /* n was removed from its graph (ph_node_remove): n->removed is set, its
     * inputs and outputs' uses are dropped; it is freed (node_freed) later */
    void (*node_removed)(void *self, ph_node *n);
} ir_observer_ops;

#define IR_MAX_OBSERVERS 4

/* The events every rewrite sends: per event, the slots of the observers
 * that listen (ph_model.listen), so a notification calls only them. */
enum { IR_EV_NODE_CHANGED, IR_EV_INPUT_REPLACED, IR_EV_USES_CHANGED, IR_EV_NODE_REMOVED, IR_EV__COUNT };

typedef struct ir_observer {
    const ir_observer_ops *ops;
    void *self;
} ir_observer;

/* ----------------------------------------------------------------- graph */

/* Intrusive doubly-linked list link (shape inference's dirty-node list). */
typedef struct ir_dlink {
    struct ir_dlink *prev, *next; /* both NULL when not linked */
} ir_dlink;

typedef struct ir_use {
    ph_node *node;
    uint32_t index; /* input slot */
} ir_use;

/* What shape inference keeps on a value (ph_value.infer).  The types are
 * interned (infer_shape_intern): a graph has few distinct types, so a
 * million values share a few hundred of them. */
struct infer_value {
    const struct infer_shape *shape; /* the type, valid while ph_value.infer_fresh (never NULL then) */
    const struct infer_shape *decl;  /* the type last set outside inference (model, pass, user), or NULL */
    struct infer_partial *pc;        /* owned: the partial constant, NULL when none */
};

struct ph_value {
    /* pointers first, then the 32-bit fields: 112 bytes with what shape
     * inference keeps, in one allocation (a million-node graph has over a
     * million values) */
    char *name; /* owned, or in the model's arena */
    ph_graph *graph;
    ph_node *producer;
    union {
        ir_use *uses;         /* n_uses entries (room for cap_uses) */
        ph_value *grave_next; /* once dead (buried with no uses, its array freed): the
                                 model's list of values to free */
    };
    ph_tensor *tensor; /* initializer data, owned */
    const int64_t *dims; /* rank entries, interned in the model (ir_dims_intern): never written */
    char **dim_params; /* owned, rank entries (NULL each when none), or NULL when no dim is symbolic */
    /* shape inference (infer_core.c), in the value itself: a separate
     * block would cost an allocation of 48 bytes a value */
    struct infer_value infer;
    union {                 /* a value has a producer or is an initializer, never both */
        uint32_t out_index; /* with a producer: its index among the producer's outputs */
        uint32_t init_pos;  /* index in graph->inits while an initializer */
    };
    uint32_t n_uses, cap_uses;
    uint32_t n_output_refs;
    /* known type */
    int dtype;
    int rank;
    uint32_t name_hash;  /* of name, set by the name map (ir/names.c) */
    uint8_t is_input : 1;
    uint8_t dead : 1;
    uint8_t type_dirty : 1;  /* type changed through the API: refresh its value_info at save */
    uint8_t infer_fresh : 1; /* infer's cached type matches; cleared by the type setters */
    uint8_t by_infer : 1;    /* the type was written by inference (infer.shape) */
};
_Static_assert(sizeof(struct ph_value) <= 112, "a value in a 112-byte block");

typedef struct ir_subgraph {
    Onnx__AttributeProto *attr; /* the attribute holding it (owned by node proto) */
    size_t graphs_index;        /* for GRAPHS attributes; 0 for GRAPH */
    ph_graph *graph;            /* owned */
} ir_subgraph;

typedef struct ir_attr_tensor {
    Onnx__AttributeProto *attr;
    ph_tensor *tensor; /* borrowed-proto wrapper, owned */
} ir_attr_tensor;

/* The fields of a node that most nodes leave empty (ph_node.rare).  The
 * block is always malloc'd (owned by the node); its strings are owned
 * like the node's other fields (ph_node.fields_owned), the arrays always. */
typedef struct ir_node_rare {
    char *domain;     /* NULL: the default domain */
    char *doc_string;
    char *op_type;    /* only when the op is not a known one (ph_node.op ==
                         PH_OP_UNKNOWN): a known op's name is the op table's
                         (ir_node_op_type); NULL: absent */
    Onnx__NodeProto *unknown; /* always owned: the message protobuf-c unpacked, kept until
                                 ir_node_settle, then only for its unknown fields (its other
                                 fields empty) */
    ir_subgraph *subgraphs;   /* owned, n_subgraphs */
    ir_attr_tensor *attr_tensors; /* owned, n_attr_tensors */
    uint32_t n_subgraphs;
    uint32_t n_attr_tensors;
} ir_node_rare;

struct ph_node {
    /* first cache line: what the rewrite driver and the matcher read of
     * every candidate (a scan of a large graph misses the cache on each
     * node, so one line per node instead of four matters) */
    ph_op op;
    uint32_t n_inputs;
    ph_value **inputs;    /* in the node's own block until they grow (graph.c) */
    ph_node *op_next;     /* in the graph's op-type index; kept when removed, like next */
    uint32_t visit_mark;  /* scratch of the rewrite driver: candidates (ir_visit_epoch) */
    uint32_t walk_mark;   /* scratch of the rewrite driver: walks (ir_walk_epoch) */
    ph_graph *graph;
    ph_value **outputs;   /* owned values; the array is in the node's own block */
    uint32_t n_outputs;
    uint8_t removed;
    uint8_t op_linked;    /* in the graph's op-type index */
    uint8_t in_names;     /* in the model's node-name map */
    uint8_t fields_owned; /* name, attrs and the rare block's strings are malloc'd, not in the arena */
    /* the rest: counts, positions and scratch in 32 bits, the fields only
     * some nodes need in the rare block, the inputs' capacity implied
     * (node_inputs_cap): a node is 168 bytes, with one input and one
     * output in a 192-byte block */
    uint32_t held_pos;    /* 1 + index of its entry in the change log's held table, or 0 */
    uint32_t n_attrs;
    ph_node *prev, *next;
    /* NodeProto's fields besides inputs and outputs (the save builds each
     * node's message from them, onnx/save.c; op_type is the op's, or in
     * the rare block).  With fields_owned, the strings, the attribute
     * array and every attribute message are owned (malloc'd); else all lie
     * in the model's arena, attribute messages shared between nodes:
     * ir_node_fields_own copies them before a change. */
    char *name;           /* NULL: absent */
    Onnx__AttributeProto **attrs;
    ir_node_rare *rare;   /* NULL when none of its fields is set */
    uint32_t *use_pos; /* use_pos[i]: index of this slot's entry in inputs[i]->uses */
    double order;         /* increasing along the graph's node list */
    union {
        ph_node *op_prev;    /* in the graph's op-type index (NULL once removed) */
        ph_node *grave_next; /* once removed: the model's list of nodes to free */
    };
    uint32_t op_seq;      /* when it was linked into its op's index (the model's count then,
                             see ir_op_seq_start) */
    uint32_t log_pos;     /* 1 + index of its entry in the change log, or 0 (a stale value
                             is told by the entry not holding the node) */
    uint32_t file_pos;    /* 1 + its index in its graph's node list in the file; 0: made by a pass */
    uint32_t mark;        /* scratch for toposort/verify */
    ir_dlink infer_link; /* in the model's list of nodes to re-infer */
    double infer_pos;     /* topological position for incremental inference (0: not yet known) */
};
_Static_assert(sizeof(struct ph_node) <= 168, "a node with one input and one output fits a 192-byte block");

/* n's subgraphs and cached attribute tensors (in the rare block). */
static inline uint32_t ir_node_n_subgraphs(const ph_node *n) { return n->rare ? n->rare->n_subgraphs : 0; }
static inline ir_subgraph *ir_node_subgraphs(const ph_node *n) { return n->rare ? n->rare->subgraphs : NULL; }
static inline uint32_t ir_node_n_attr_tensors(const ph_node *n) { return n->rare ? n->rare->n_attr_tensors : 0; }
static inline ir_attr_tensor *ir_node_attr_tensors(const ph_node *n) { return n->rare ? n->rare->attr_tensors : NULL; }

typedef struct ir_output {
    ph_value *value;
    Onnx__ValueInfoProto *vi; /* owned */
} ir_output;

/* The op-type index's lists as arrays (ir_op_nodes). */
struct ir_op_snap {
    ph_node **nodes[PH_OP__COUNT]; /* owned */
    size_t n[PH_OP__COUNT], cap[PH_OP__COUNT];
    unsigned char fresh[PH_OP__COUNT]; /* nodes[op] is the list as it is */
};

struct ph_graph {
    ph_model *model;
    ph_node *parent;
    Onnx__GraphProto *proto; /* main graph: in the model tree; subgraph: in the attribute */
    ph_node *first, *last;
    size_t n_nodes;
    ph_value **inputs;
    Onnx__ValueInfoProto **input_vi; /* owned, parallel to inputs */
    size_t n_inputs, cap_inputs;
    ir_output *outputs;
    size_t n_outputs, cap_outputs;
    ph_value **inits; /* may hold NULL holes until compacted */
    size_t n_inits, cap_inits;
    int inits_holes;
    Onnx__ValueInfoProto **value_info; /* owned, file order */
    size_t n_value_info, cap_value_info;
    ph_node **op_first, **op_last; /* owned, PH_OP__COUNT each: the op-type
                                      index, NULL until the first node */
    struct ir_op_snap *op_snap;   /* owned: the index's lists as arrays
                                      (ir_op_nodes), NULL until asked */
    uint32_t wl_rank;              /* scratch of the rewrite driver: 0 for the
                                      main graph, bodies in visiting order */
};

struct ph_model {
    Onnx__ModelProto *proto; /* owned tree; graph arrays emptied */
    ph_graph *graph;
    ir_names value_names; /* every value of every graph, by name */
    ir_names node_names;  /* every node of every graph, by name.  Built on
                              the first request for a new unique name */
    int node_names_ready;
    ir_mapping *mappings;
    ph_node *grave_nodes;
    size_t n_grave_nodes;
    ph_value *grave_values;
    char **strings; /* strings handed out by ph_graph_unique_name */
    size_t n_strings, cap_strings;
    uint64_t name_counter;
    char *source_path; /* owned: file the model was loaded from, or NULL */
    uint64_t source_dev, source_ino;
    struct infer_state *infer; /* owned: shape inference state, NULL until first inference */
    struct pat_changelog *changes; /* owned: the rewrite driver's change log, or NULL */
    uint32_t visit_epoch;          /* for ph_node.visit_mark (ir_visit_epoch) */
    uint32_t walk_epoch;           /* for ph_node.walk_mark (ir_walk_epoch) */
    int order_dirty;               /* a node may read a value defined after it */
    int bodies_made;               /* a subgraph was ever made (ir_graph_new with a parent:
                                      the loader's bodies too): while 0, no node of the
                                      model holds a body */
    size_t load_reordered;         /* see ph_model_load_reordered */
    size_t op_count[PH_OP__COUNT]; /* nodes of each op in the op-type indexes */
    uint32_t op_seq;               /* nodes linked into an op-type index (ph_node.op_seq), up
                                      to UINT32_MAX, renumbered by ir_op_seq_start */
    uint64_t init_version;         /* see ph_model_initializers_version */
    uint64_t alloc_failures;       /* see ph_model_alloc_failures */
    size_t n_nodes_total;          /* nodes of every graph reachable from the main one */
    ir_observer observers[IR_MAX_OBSERVERS];
    int n_observers;
    /* listen[e][0]: how many observers listen to event e (IR_EV_*), then
     * their slots in observers[], in its order (ir/observe.c keeps it) */
    unsigned char listen[IR_EV__COUNT][IR_MAX_OBSERVERS + 1];
    ir_arena *arena;              /* owned: nodes the loader read, value names (ir/arena.c) */
    ir_dims_table dims;            /* the values' dims, interned in the arena (ir/dims.c) */
    int *trap;                     /* see ir_note; NULL when none is set */
};

/* Sticky errors: while a trap is set (a rewrite in progress, or a pass run
 * through ph_ctx_run), the first failure of a setter of a node, an
 * attribute, a value's type or the opset imports is recorded there, so the
 * code that made the calls checks once, at the end.  Returns rc. */
static inline int ir_note(ph_model *m, int rc)
{
    if (rc < 0 && m && m->trap && !*m->trap)
        *m->trap = rc;
    return rc;
}

/* Record an allocation failure that the caller absorbs (a cache dropped,
 * a type or a shape left unknown): ph_model_alloc_failures counts them so
 * that the run fails instead of depending on memory.  m may be NULL. */
void ir_alloc_failed(ph_model *m);

/* Move live node n (with its outputs and bodies) from its graph into g,
 * before `before` (a node of g; NULL: at the end).  The caller keeps the
 * order topological and n's inputs in scope (ir/inline.c). */
void ir_node_move(ph_node *n, ph_graph *g, ph_node *before);
/* Take a value that nothing owns any more (no producer, not an input or
 * initializer, no use) out of the name maps; freed at collection. */
void ir_value_bury(ph_value *v);
/* The producers in g that n depends on: its inputs, and the outer-scope
 * values its bodies read (n is a node of g or of a body under it).  Calls
 * fn(producer, ctx) for each (toposort, the loader's order check). */
void ir_node_deps(const ph_node *n, const ph_graph *g, void (*fn)(ph_node *, void *), void *ctx);
/* How many nodes of the model are named `name` (0 for none or ""). */
size_t ir_node_name_count(ph_model *m, const char *name);

/* ph_graph_verify, with the check that every name resolves to its value
 * (the map's consistency, which the loader builds itself) only when names. */
int ir_graph_verify(const ph_graph *g, int names, ph_error *err);
/* What the file decides of a main-graph node the loader built in place (its
 * op type, attributes and schema), checked as each node is built while it
 * is in the cache: 1 when they pass (verify.c). */
typedef struct ir_file_check ir_file_check;
ir_file_check *ir_file_check_new(const ph_model *m); /* NULL when out of memory */
int ir_file_check_node(ir_file_check *fc, const ph_node *n);
void ir_file_check_free(ir_file_check *fc);
/* ir_graph_verify(m->graph, 0, err) of a model whose main graph the loader
 * built in order, every node read in place (no bodies), and checked with
 * ir_file_check_node up to `from`, the first node that failed (NULL: none):
 * the same result and message, since the build makes the rest hold. */
int ir_graph_verify_loaded(const ph_model *m, const ph_node *from, ph_error *err);

/* Nodes of g and of the bodies of its nodes, by walking them. */
size_t ir_graph_count_nodes(const ph_graph *g);

/* Record that n now reads v: marks the model's node order dirty when v is
 * not defined before n (see ph_graph_toposort). */
void ir_order_check(const ph_value *v, const ph_node *n);

/* The op-type index: the first node of op in g (in order of insertion),
 * then n->op_next.  Nodes of other domains are all under PH_OP_UNKNOWN. */
ph_node *ir_op_first(const ph_graph *g, ph_op op);
/* n's attribute called name, or NULL (borrowed from the node's proto). */
const Onnx__AttributeProto *ir_node_find_attr(const ph_node *n, const char *name);
/* The live nodes of op in g's index, in index order, as an array (*n of
 * them; borrowed: valid until a node of op is added to or removed from g).
 * Built from the list on the first request after such a change, so the
 * rule sets of a round scan an op's nodes from one array, which the
 * processor can fetch ahead, instead of chasing the list once per pass.
 * NULL without an index or when out of memory (counted). */
ph_node *const *ir_op_nodes(ph_graph *g, ph_op op, size_t *n);

/* The ph_op of an op type in a domain (NULL or "" or "ai.onnx": default). */
ph_op ir_op_lookup(const char *domain, const char *op_type);

/* The value of this graph named name (not of an enclosing one), or NULL.
 * Names are unique in the whole model: one map serves every graph. */
ph_value *ir_graph_value(const ph_graph *g, const char *name);

/* Give n malloc'd copies of its fields (name ... attrs) when they lie in
 * the model's arena; every function that changes a node's fields calls it
 * first.  0 or PH_ENOMEM (n unchanged). */
int ir_node_fields_own(ph_node *n);
/* Free n's fields (those it owns) and its kept message; all empty after. */
void ir_node_fields_free(ph_node *n);
/* n's rare fields (NULL when unset). */
static inline char *ir_node_domain(const ph_node *n) { return n->rare ? n->rare->domain : NULL; }
static inline char *ir_node_doc_string(const ph_node *n) { return n->rare ? n->rare->doc_string : NULL; }
static inline Onnx__NodeProto *ir_node_unknown(const ph_node *n) { return n->rare ? n->rare->unknown : NULL; }
/* n's rare block, made when it has none (n's fields owned first).  NULL
 * when out of memory. */
ir_node_rare *ir_node_rare_make(ph_node *n);
/* n's rare block, made empty when it has none (its fields not owned
 * first).  NULL when out of memory. */
ir_node_rare *ir_node_rare_get(ph_node *n);
/* The op table's names, by ph_op ("" for PH_OP_UNKNOWN; ir/graph.c). */
extern const char *const ir_op_names[PH_OP__COUNT];
/* n's op_type as in the file: the op table's name of a known op, else the
 * rare block's string; NULL when absent. */
/* The ops whose nodes can hold bodies (graph attributes): the standard
 * ops with a graph attribute, and ops the op table does not know.  A walk
 * that reaches bodies through the op-type index visits the nodes of these
 * ops only, in this order; *n gets the count. */
static inline const ph_op *ir_body_ops(size_t *n)
{
    static const ph_op ops[] = {PH_OP_If, PH_OP_Loop, PH_OP_Scan, PH_OP_SequenceMap, PH_OP_UNKNOWN};
    *n = sizeof ops / sizeof ops[0];
    return ops;
}

/* 1 when no output of n has a reader or is a graph output (n may be removed). */
static inline int ir_node_outputs_dead(const ph_node *n)
{
    for (size_t i = 0; i < n->n_outputs; i++) {
        const ph_value *v = n->outputs[i];
        if (v && (v->n_uses || v->n_output_refs))
            return 0;
    }
    return 1;
}

static inline const char *ir_node_op_type(const ph_node *n)
{
    return n->op != PH_OP_UNKNOWN ? ir_op_names[n->op] : n->rare ? n->rare->op_type : NULL;
}
/* The rewrite driver's epochs for ph_node.visit_mark and walk_mark: the
 * next one, `span` values on (the last of them returned).  When the count
 * would wrap, every node's mark is cleared first (a mark of 0 is never an
 * epoch), so a mark equals an epoch only if set in it. */
uint32_t ir_visit_epoch(ph_model *m);
uint32_t ir_walk_epoch(ph_model *m, uint32_t span);
/* The op-type indexes' count (ph_node.op_seq) at the start of a run that
 * compares with it: past half the 32-bit range, the linked nodes are
 * numbered again from 1 in each index's order first (a run then has 2^31
 * links before the count stops at UINT32_MAX). */
uint32_t ir_op_seq_start(ph_model *m);
/* Once the loader has resolved the inputs of a node made from a message
 * protobuf-c unpacked: drop the message's input and output names, and the
 * message unless it has unknown fields (kept in n->unknown for the save). */
void ir_node_settle(ph_node *n);
/* A malloc'd deep copy of msg (packed, then unpacked by protobuf-c; the
 * caller frees it with protobuf_c_message_free_unpacked), or NULL when out
 * of memory (ir/arena.c). */
void *ir_message_copy(const ProtobufCMessage *msg);

/* Construction used by the loader and the builders.  ir_model_alloc: a
 * zeroed model (no proto, no graph) for the loader to fill; NULL on OOM. */
ph_model *ir_model_alloc(void);
ph_graph *ir_graph_new(ph_model *m, ph_node *parent, Onnx__GraphProto *gp);
void ir_graph_free(ph_graph *g);
ph_value *ir_value_new(ph_graph *g, const char *name);
/* The same with a name already in the model's arena (not copied). */
ph_value *ir_value_new_in_arena(ph_graph *g, char *name);
/* Used by the loaders: a node with np's fields (but inputs and outputs),
 * with room for n_in inputs and n_out outputs (all NULL), appended to g;
 * op is its ph_op when the caller knows it, else -1.  With in_arena, np
 * is the caller's and its fields lie in the model's arena; else np came
 * from protobuf-c and is taken over (kept until ir_node_settle).  NULL when
 * out of memory (np then freed unless in_arena). */
ph_node *ir_node_load(ph_graph *g, Onnx__NodeProto *np, int in_arena, size_t n_in, size_t n_out, int op);
/* The outputs of a node ir_node_load made from a message protobuf-c
 * unpacked, named as the message (n->unknown) says.  0 or an error. */
int ir_node_load_proto_outputs(ph_node *n, ph_error *err);
/* Make output i of a loaded node, named name (name in the model's arena
 * when in_arena, else copied).  0, or PH_EPARSE for a name already
 * defined, PH_ENOMEM; err says which. */
int ir_node_load_output(ph_node *n, size_t i, char *name, int in_arena, ph_error *err);
/* Build the IR of gp (its arrays are taken over).  0 or an error. */
int onnx_graph_build(ph_graph *g, ph_error *err);
void ir_value_parse_type(ph_value *v, const Onnx__TypeProto *tp);
Onnx__ValueInfoProto *ir_value_info_new(const ph_value *v);
/* Replace vi's type by v's known type (when v's type changed). */
int ir_value_info_refresh(Onnx__ValueInfoProto *vi, const ph_value *v);
int ir_add_use(ph_value *v, ph_node *n, uint32_t index);
void ir_drop_use(ph_node *n, size_t index);
int ir_in_scope(const ph_value *v, const ph_graph *g);
char *ir_strdup(const char *s);
/* Normalize attribute strings so attr->s.data is NUL-terminated. */
int ir_attr_normalize(Onnx__AttributeProto *a);
/* Free the nodes and values removed since the last collection. */
void ir_model_collect(ph_model *m);
/* ir_model_collect once removed nodes outnumber twice the live ones (and
 * a few thousand): freeing is batched, and dead nodes never hold more than
 * twice the memory of the live graph. */
void ir_model_collect_some(ph_model *m);
/* Compact NULL holes out of g->inits. */
void ir_graph_compact_inits(ph_graph *g);

/* Observers: see ir_observer_ops above.
 * Register (ops, self) on m; PH_ENOMEM when IR_MAX_OBSERVERS are taken.
 * Registering the same pair twice is a no-op. */
int ir_observer_add(ph_model *m, const ir_observer_ops *ops, void *self);
void ir_observer_remove(ph_model *m, const ir_observer_ops *ops, void *self);

/* Called by the IR (the files of ir/) on each change. */
void ir_notify_node_changed(ph_node *n);
void ir_notify_input_replaced(ph_node *n, const ph_value *old, const ph_value *repl);
void ir_notify_uses_changed(ph_value *v);
/* the model is given: a freed node's or value's graph may be gone */
void ir_notify_node_freed(ph_model *m, ph_node *n);
void ir_notify_node_removed(ph_model *m, ph_node *n);
void ir_notify_value_freed(ph_model *m, ph_value *v);
void ir_notify_graph_freed(ph_graph *g);
void ir_notify_type_changed(ph_value *v);
void ir_notify_model_freed(ph_model *m);

#endif
