/* sdk/src/eval/eval_core.c - the reference evaluator's core: planning and running
 * a graph, and the float16/bfloat16 wrapper around kernels.
 *
 * ph_eval_new resolves a kernel for every node (both kernel tables, default
 * domain only) and gives every value a slot: graph inputs, initializers and
 * node outputs.  It also plans lifetimes: after step i the core frees the
 * intermediate tensors whose last reader is step i, so peak memory follows
 * the live set rather than the whole graph.  ph_eval_run keeps no state in
 * the evaluator between runs (everything per run is allocated per run).
 *
 * Half types: unless a kernel is registered EVAL_KF_NATIVE_HALF, float16 and
 * bfloat16 inputs are converted to float32 for the call, and float32 outputs
 * are converted back to the half type of input 0 (the T of every such op:
 * Pow's base, Conv's X), except outputs the graph declares as float32; a
 * half exponent or scale beside a float32 input 0 leaves the output float32.
 *
 * float64 reference mode (ph_eval_options.float64): the core promotes every
 * float32/float16/bfloat16 tensor to double where it enters the run (graph
 * inputs, initializers once in ph_eval_new_with, and every kernel output of
 * such a type, which covers Constant, ConstantOfShape and dtype attributes),
 * so kernels, which compute in the dtype of their inputs, compute in double
 * without knowing it.  A Cast to a float type is the one kernel the core
 * answers itself in that mode: the input converted to double.  a->float64
 * tells a kernel that evaluates a subgraph to keep the mode.
 *
 * Alignment: kernels index their inputs as typed arrays, but initializer
 * bytes may sit at any offset of a mapped file.  ph_eval_new keeps aligned
 * copies of misaligned initializers; run_kernel copies any other misaligned
 * input for the call.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eval_kernels.h"
#include "eval_ops_util.h"

#define NO_SLOT SIZE_MAX

/* A value of an enclosing graph that a body reads. */
typedef struct capture_t {
    const ph_value *v;
    size_t slot;  /* its slot in the body's evaluator */
    size_t outer; /* its slot in the enclosing graph's evaluator */
} capture_t;

typedef struct step {
    const ph_node *node;
    const eval_kernel_entry *k;
    size_t n_in, n_out, n_free;
    size_t *in;   /* slot per input, NO_SLOT when omitted */
    size_t *out;  /* slot per output, NO_SLOT when omitted */
    size_t *free; /* slots whose last reader is this step */
    size_t n_bodies;
    ph_eval **bodies; /* owned: one per subgraph of the node, in ph_node_subgraph order */
} step;

struct ph_eval {
    const ph_graph *g;
    int64_t opset;
    ir_map slots; /* value name -> slot + 1 (names borrowed from the graph) */
    size_t n_slots;
    const ph_tensor **konst; /* per slot: initializer data (borrowed or in own), else NULL */
    ph_tensor **own;         /* per slot: aligned copy of a misaligned initializer (owned) */
    size_t n_inputs, n_outputs, n_steps;
    size_t *in_slot, *out_slot;
    step *steps;
    size_t *pool; /* backing store of the steps' index arrays */
    /* A body (an If branch, a Loop/Scan body): the values of enclosing
     * graphs it or a body inside it reads.  Each gets a slot here, filled
     * at the start of a run from its slot in the run of the graph around
     * it. */
    size_t n_cap, cap_cap;
    capture_t *cap;
    int random_op;          /* a step here or in a body is a random op */
    unsigned char *random;  /* per graph output: depends on a random op */
    int float64;  /* the float64 reference mode (ph_eval_options); its bodies inherit it */
};

const eval_kernel_entry *eval_find_kernel(const ph_node *n)
{
    ph_op op = ph_node_op(n);
    if (op != PH_OP_UNKNOWN) {
        for (const eval_kernel_entry *k = eval_kernels_light; k->op != PH_OP_UNKNOWN; k++)
            if (k->op == op && k->fn)
                return k;
        for (const eval_kernel_entry *k = eval_kernels_heavy; k->op != PH_OP_UNKNOWN; k++)
            if (k->op == op && k->fn)
                return k;
        for (const eval_kernel_entry *k = eval_kernels_more; k->op != PH_OP_UNKNOWN; k++)
            if (k->op == op && k->fn)
                return k;
        return NULL;
    }
    const char *dom = ph_node_domain(n), *type = ph_node_op_type(n);
    if (!strcmp(dom, "ai.onnx"))
        dom = "";
    for (const eval_named_kernel *k = eval_kernels_named; k->op_type; k++)
        if (!strcmp(k->domain, dom) && !strcmp(k->op_type, type))
            return &k->k;
    return NULL;
}

PH_API int ph_eval_supports(const ph_node *n)
{
    return n && eval_find_kernel(n) != NULL;
}

/* Dropout draws a mask unless its training_mode input is absent or a
 * constant false. */
static int dropout_trains(const ph_node *n)
{
    const ph_value *tm = ph_node_input(n, 2);
    if (!tm)
        return 0;
    const ph_tensor *t = ph_value_const(tm);
    const unsigned char *d = t && ph_tensor_dtype(t) == PH_DT_BOOL && ph_tensor_numel(t) == 1 ? ph_tensor_data(t) : NULL;
    return !d || d[0] != 0;
}

static int step_is_random(const step *st)
{
    if (st->k->flags & EVAL_KF_RANDOM)
        return 1;
    if (ph_node_op(st->node) == PH_OP_Dropout)
        return dropout_trains(st->node);
    for (size_t b = 0; b < st->n_bodies; b++)
        if (st->bodies[b]->random_op)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ one node */

static int is_half(int dt) { return dt == PH_DT_FLOAT16 || dt == PH_DT_BFLOAT16; }

static int misaligned(const ph_tensor *t)
{
    const void *d = ph_tensor_data(t);
    size_t es = ph_dtype_size(ph_tensor_dtype(t));
    return d && es > 1 && (uintptr_t)d % es != 0;
}

/* An aligned copy of the bytes of tensor t (whose data can be read) under
 * t's own proto (borrowed) and t's dtype and dims: what a kernel reads of a misaligned input,
 * without the new proto and dims a clone makes and frees at each call (a
 * folded node's weights read in place from the file are nearly always
 * misaligned).  Freed with ph_tensor_free; valid while t is.  NULL when
 * out of memory. */
static ph_tensor *aligned_view(const ph_tensor *t)
{
    const void *d = ph_tensor_data(t);
    size_t nb = ph_tensor_nbytes(t);
    ph_tensor *v = calloc(1, sizeof *v);
    void *copy = malloc(nb ? nb : 1);
    if (!d || !v || !copy) {
        free(v);
        free(copy);
        return NULL;
    }
    memcpy(copy, d, nb);
    v->proto = t->proto; /* NULL for a tensor made in memory */
    v->borrowed = 1;
    v->dims = t->dims; /* t's proto's or t's own block: valid while t is */
    v->dtype = t->dtype;
    v->rank = t->rank;
    v->elem_dtype = t->elem_dtype;
    v->storage = IR_DATA_OWNED;
    v->data = copy;
    v->owned_data = copy;
    v->nbytes = nb;
    return v;
}

static ph_tensor *convert_tensor(const ph_tensor *t, int to)
{
    const void *src = ph_tensor_data(t);
    if (!src)
        return NULL;
    ph_tensor *r = ir_tensor_alloc(to, ph_tensor_rank(t), ph_tensor_dims(t));
    if (!r)
        return NULL;
    int from = ph_tensor_dtype(t);
    size_t n = (size_t)ph_tensor_numel(t);
    if (to == PH_DT_FLOAT) { /* the source may be misaligned */
        float *d = ir_tensor_mut(r);
        const unsigned char *s = src;
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            d[i] = from == PH_DT_FLOAT16 ? ir_half_to_float(h) : ir_bf16_to_float(h);
        }
    } else {
        uint16_t *d = ir_tensor_mut(r);
        const float *s = src;
        for (size_t i = 0; i < n; i++)
            d[i] = to == PH_DT_FLOAT16 ? ir_float_to_half(s[i]) : ir_float_to_bf16(s[i]);
    }
    return r;
}

static int is_float_type(int dt) { return dt == PH_DT_FLOAT || is_half(dt); }

/* t as float64 (any numeric or bool dtype; t may be misaligned), or NULL
 * when out of memory. */
static ph_tensor *to_double(const ph_tensor *t)
{
    ph_tensor *aligned = misaligned(t) ? ph_tensor_clone(t) : NULL;
    const ph_tensor *src = aligned ? aligned : t;
    ph_tensor *r = ph_tensor_data(src) ? ir_tensor_alloc(PH_DT_DOUBLE, ph_tensor_rank(src), ph_tensor_dims(src))
                                       : NULL;
    if (r)
        eval_convert(ir_tensor_mut(r), PH_DT_DOUBLE, ph_tensor_data(src), ph_tensor_dtype(src),
                    (size_t)ph_tensor_numel(src));
    ph_tensor_free(aligned);
    return r;
}

/* In float64 mode, a value entering the run: a tensor of a float type as
 * float64, a sequence or optional with such items as one of float64 items
 * (new), else *out = NULL (t stays as it is).  0, or PH_ENOMEM. */
static int promote_value(const ph_tensor *t, ph_tensor **out)
{
    *out = NULL;
    int kind = ph_tensor_kind(t);
    if (kind == PH_KIND_TENSOR) {
        if (is_float_type(ph_tensor_dtype(t)) && ph_tensor_data(t) && !(*out = to_double(t)))
            return PH_ENOMEM;
        return 0;
    }
    size_t n = ph_container_length(t);
    int elem = ph_container_elem_dtype(t);
    const ph_tensor *first = n ? ph_container_item(t, 0) : NULL; /* a sequence's items share a type */
    if (!is_float_type(elem) &&
        !(first && (ph_tensor_kind(first) != PH_KIND_TENSOR || is_float_type(ph_tensor_dtype(first)))))
        return 0;
    ph_tensor **items = calloc(n ? n : 1, sizeof *items);
    if (!items)
        return PH_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if ((rc = promote_value(ph_container_item(t, i), &items[i])) == 0 && !items[i] &&
            !(items[i] = ph_tensor_clone(ph_container_item(t, i))))
            rc = PH_ENOMEM;
    int to = is_float_type(elem) || (first && is_float_type(ph_tensor_dtype(first))) ? PH_DT_DOUBLE : elem;
    if (!rc)
        *out = kind == PH_KIND_OPTIONAL ? ph_optional_new(to, n ? items[0] : NULL) : ph_sequence_new(to, n, items);
    else
        for (size_t i = 0; i < n; i++)
            ph_tensor_free(items[i]);
    free(items);
    return rc ? rc : *out ? 0 : PH_ENOMEM;
}

/* In float64 mode: a Cast to a float type (or CastLike to one, which the
 * promotion has made double already) converts its input to double, so the
 * cast rounds nothing.  1 when n is such a Cast. */
static int cast_keeps_double(const ph_node *n, const ph_tensor *const *in, size_t n_in)
{
    if (ph_node_op(n) != PH_OP_Cast || n_in < 1 || !in[0])
        return 0;
    int to = (int)ph_node_attr_int(n, "to", PH_DT_UNDEFINED), from = ph_tensor_dtype(in[0]);
    return (is_float_type(to) || to == PH_DT_DOUBLE) &&
           (eval_dt_numeric(from) || from == PH_DT_BOOL || is_float_type(from));
}

static void free_outputs(ph_tensor **out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ph_tensor_free(out[i]);
        out[i] = NULL;
    }
}

/* Run kernel k on node n.  On failure every output is NULL and err holds the
 * kernel's message prefixed with the node name and op.  float64: the
 * reference mode (outputs of float types are promoted to double).  frame
 * and bodies: the running graph and the node's prepared bodies (NULL from
 * ph_eval_node). */
static int run_kernel(const eval_kernel_entry *k, const ph_node *n, int64_t opset, int float64,
                      const eval_frame *frame, ph_eval *const *bodies, const ph_tensor *const *in,
                      size_t n_in, ph_tensor **out, size_t n_out, ph_error *err)
{
    ph_error kerr = {0, ""};
    int want_buf[16], *wanted = n_out <= 16 ? want_buf : malloc(n_out * sizeof *wanted);
    const ph_tensor *cin_buf[16], **cin = n_in <= 16 ? cin_buf : malloc((n_in ? n_in : 1) * sizeof *cin);
    ph_tensor *tmp_buf[16], **tmp = n_in <= 16 ? tmp_buf : calloc(n_in ? n_in : 1, sizeof *tmp);
    int rc = 0, half = 0;
    if (!wanted || !cin || !tmp) {
        rc = ph_error_set(&kerr, PH_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_out; i++) {
        wanted[i] = ph_node_output(n, i) != NULL;
        out[i] = NULL;
    }
    for (size_t i = 0; i < n_in; i++)
        tmp[i] = NULL;
    for (size_t i = 0; i < n_in; i++) {
        cin[i] = in[i];
        if (in[i] && ph_tensor_kind(in[i]) != PH_KIND_TENSOR && !(k->flags & EVAL_KF_CONTAINERS)) {
            rc = ph_error_set(&kerr, PH_EUNSUPPORTED, "input %zu is a %s, not a tensor", i,
                              ph_tensor_kind(in[i]) == PH_KIND_SEQUENCE ? "sequence" : "optional");
            goto done;
        }
        if (in[i] && !(k->flags & EVAL_KF_NATIVE_HALF) && is_half(ph_tensor_dtype(in[i]))) {
            if (!half && (i == 0 || !in[0]))
                half = ph_tensor_dtype(in[i]);
            tmp[i] = convert_tensor(in[i], PH_DT_FLOAT);
            if (!tmp[i]) {
                rc = ph_error_set(&kerr, PH_ENOMEM, "cannot convert input %zu to float", i);
                goto done;
            }
            cin[i] = tmp[i];
        } else if (in[i] && misaligned(in[i])) {
            if (!(tmp[i] = aligned_view(in[i]))) {
                rc = ph_error_set(&kerr, PH_ENOMEM, "cannot align input %zu", i);
                goto done;
            }
            cin[i] = tmp[i];
        }
    }
    eval_kargs a = {n, opset, cin, n_in, out, n_out, wanted, &kerr, n_in && in[0] ? half : 0, frame, bodies, float64};
    if (float64 && cast_keeps_double(n, cin, n_in)) {
        if (n_out > 0 && wanted[0] && !(out[0] = to_double(cin[0])))
            rc = ph_error_set(&kerr, PH_ENOMEM, "out of memory");
    } else {
        rc = k->fn(&a);
    }
    for (size_t i = 0; rc == 0 && half && i < n_out; i++) {
        const ph_value *v = ph_node_output(n, i);
        if (!out[i] || !v || ph_tensor_dtype(out[i]) != PH_DT_FLOAT || ph_value_dtype(v) == PH_DT_FLOAT)
            continue;
        ph_tensor *h = convert_tensor(out[i], half);
        if (!h) {
            rc = ph_error_set(&kerr, PH_ENOMEM, "out of memory converting output %zu", i);
            break;
        }
        ph_tensor_free(out[i]);
        out[i] = h;
    }
    for (size_t i = 0; rc == 0 && float64 && i < n_out; i++) {
        ph_tensor *d = NULL;
        if (!out[i])
            continue;
        if (promote_value(out[i], &d)) {
            rc = ph_error_set(&kerr, PH_ENOMEM, "out of memory promoting output %zu to double", i);
            break;
        }
        if (d) {
            ph_tensor_free(out[i]);
            out[i] = d;
        }
    }
    for (size_t i = 0; rc == 0 && i < n_out; i++)
        if (wanted[i] && !out[i])
            rc = ph_error_set(&kerr, PH_EUNSUPPORTED, "output %zu was not produced", i);
done:
    if (tmp)
        for (size_t i = 0; i < n_in; i++)
            ph_tensor_free(tmp[i]);
    if (rc) {
        free_outputs(out, n_out);
        if (rc > 0 || rc < PH_ERANGE)
            rc = PH_EINVAL;
        ph_error_set(err, rc, "node '%s' (%s): %s", ph_node_name(n), ph_node_op_type(n),
                     kerr.message[0] ? kerr.message : ph_strerror(rc));
    }
    if (wanted != want_buf)
        free(wanted);
    if (cin != cin_buf)
        free(cin);
    if (tmp != tmp_buf)
        free(tmp);
    return rc;
}

static int unsupported(const ph_node *n, ph_error *err)
{
    if (ph_node_domain(n)[0])
        return ph_error_set(err, PH_EUNSUPPORTED, "node '%s': operator %s of domain '%s' is not supported",
                            ph_node_name(n), ph_node_op_type(n), ph_node_domain(n));
    return ph_error_set(err, PH_EUNSUPPORTED, "node '%s': operator %s is not supported by the evaluator",
                        ph_node_name(n), ph_node_op_type(n));
}

int eval_node_kernel(const eval_kernel_entry *k, const ph_node *n, int64_t opset, const ph_tensor *const *inputs,
                     ph_tensor **outputs, ph_error *err)
{
    return run_kernel(k, n, opset, 0, NULL, NULL, inputs, ph_node_input_count(n), outputs,
                      ph_node_output_count(n), err);
}

PH_API int ph_eval_node(const ph_node *n, int64_t opset, const ph_tensor *const *inputs,
                        ph_tensor **outputs, ph_error *err)
{
    const eval_kernel_entry *k = eval_find_kernel(n);
    if (!k)
        return unsupported(n, err);
    return run_kernel(k, n, opset, 0, NULL, NULL, inputs, ph_node_input_count(n), outputs,
                      ph_node_output_count(n), err);
}

/* ------------------------------------------------------------ planning */

PH_API void ph_eval_free(ph_eval *e)
{
    if (!e)
        return;
    for (size_t s = 0; e->own && s < e->n_slots; s++)
        ph_tensor_free(e->own[s]);
    for (size_t i = 0; e->steps && i < e->n_steps; i++) {
        for (size_t b = 0; b < e->steps[i].n_bodies; b++)
            ph_eval_free(e->steps[i].bodies[b]);
        free(e->steps[i].bodies);
    }
    ir_map_free(&e->slots);
    free(e->own);
    free(e->konst);
    free(e->in_slot);
    free(e->out_slot);
    free(e->steps);
    free(e->pool);
    free(e->cap);
    free(e->random);
    free(e);
}

static size_t slot_of(const ir_map *m, const ph_value *v)
{
    void *p = ir_map_get(m, ph_value_name(v));
    return p ? (size_t)(uintptr_t)p - 1 : NO_SLOT;
}

static int add_slot(ph_eval *e, const ph_value *v)
{
    if (ir_map_get(&e->slots, ph_value_name(v)))
        return 0;
    e->n_slots++;
    return ir_map_put(&e->slots, ph_value_name(v), (void *)(uintptr_t)e->n_slots);
}

/* The slot of v, a value read by a node of this graph (or of a body inside
 * it): its own slot, or, for a value of an enclosing graph, a slot filled
 * from the enclosing run (a capture).  NO_SLOT with err set when out of
 * memory or when v is not defined in the main graph. */
static size_t capture(ph_eval *e, const ph_node *reader, const ph_value *v, ph_error *err)
{
    size_t s = slot_of(&e->slots, v);
    if (s != NO_SLOT)
        return s;
    if (!ph_graph_parent(e->g)) {
        ph_error_set(err, PH_EINVAL, "node '%s' (%s): input '%s' is not defined in this graph",
                     ph_node_name(reader), ph_node_op_type(reader), ph_value_name(v));
        return NO_SLOT;
    }
    if (ir_grow((void **)&e->cap, &e->cap_cap, e->n_cap + 1, sizeof *e->cap) || add_slot(e, v)) {
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NO_SLOT;
    }
    s = e->n_slots - 1;
    e->cap[e->n_cap++] = (capture_t){v, s, NO_SLOT};
    return s;
}

static int eval_new(const ph_graph *g, int float64, ph_eval **out, ph_error *err);

/* Slots of every value, kernels, bodies and captures (the first pass over
 * the nodes); then the steps' index arrays and last uses. */
static int plan(ph_eval *e, ph_error *err)
{
    const ph_graph *g = e->g;
    size_t pool_need = 0;
    for (size_t i = 0; i < e->n_inputs; i++)
        if (add_slot(e, ph_graph_input(g, i)))
            return ph_error_set(err, PH_ENOMEM, "out of memory");
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        if (add_slot(e, ph_graph_initializer(g, i)))
            return ph_error_set(err, PH_ENOMEM, "out of memory");
    for (const ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        for (size_t j = 0; j < ph_node_output_count(n); j++)
            if (ph_node_output(n, j) && add_slot(e, ph_node_output(n, j)))
                return ph_error_set(err, PH_ENOMEM, "out of memory");
    size_t si = 0;
    for (const ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n), si++) {
        step *st = &e->steps[si];
        st->node = n;
        if (!(st->k = eval_find_kernel(n)))
            return unsupported(n, err);
        for (size_t j = 0; j < ph_node_input_count(n); j++)
            if (ph_node_input(n, j) && capture(e, n, ph_node_input(n, j), err) == NO_SLOT)
                return err->code;
        pool_need += 2 * ph_node_input_count(n) + 2 * ph_node_output_count(n);
        st->n_bodies = ph_node_subgraph_count(n);
        if (!st->n_bodies)
            continue;
        if (!(st->bodies = calloc(st->n_bodies, sizeof *st->bodies)))
            return ph_error_set(err, PH_ENOMEM, "out of memory");
        for (size_t b = 0; b < st->n_bodies; b++) {
            int rc = eval_new(ph_node_subgraph(n, b), e->float64, &st->bodies[b], err);
            if (rc)
                return rc;
            ph_eval *body = st->bodies[b];
            for (size_t k = 0; k < body->n_cap; k++)
                if ((body->cap[k].outer = capture(e, n, body->cap[k].v, err)) == NO_SLOT)
                    return err->code;
        }
    }
    size_t ns = e->n_slots;
    e->konst = calloc(ns ? ns : 1, sizeof *e->konst);
    e->own = calloc(ns ? ns : 1, sizeof *e->own);
    e->pool = malloc((pool_need ? pool_need : 1) * sizeof *e->pool);
    e->random = calloc(e->n_outputs ? e->n_outputs : 1, 1);
    size_t *last = malloc((ns ? ns : 1) * sizeof *last);
    unsigned char *tainted = calloc(ns ? ns : 1, 1);
    int rc = 0;
    if (!e->konst || !e->own || !e->pool || !e->random || !last || !tainted) {
        rc = ph_error_set(err, PH_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++) {
        const ph_value *v = ph_graph_initializer(g, i);
        size_t s = slot_of(&e->slots, v);
        e->konst[s] = v->tensor;
        if (e->float64 && is_float_type(ph_tensor_dtype(v->tensor)) && ph_tensor_data(v->tensor)) {
            if (!(e->own[s] = to_double(v->tensor))) {
                rc = ph_error_set(err, PH_ENOMEM, "out of memory promoting initializer '%s' to double",
                                  ph_value_name(v));
                goto out;
            }
            e->konst[s] = e->own[s];
        } else if (misaligned(v->tensor)) {
            if (!(e->own[s] = ph_tensor_clone(v->tensor))) {
                rc = ph_error_set(err, PH_ENOMEM, "out of memory copying initializer '%s'", ph_value_name(v));
                goto out;
            }
            e->konst[s] = e->own[s];
        }
    }
    for (size_t i = 0; i < e->n_inputs; i++)
        e->in_slot[i] = slot_of(&e->slots, ph_graph_input(g, i));
    for (size_t s = 0; s < ns; s++)
        last[s] = NO_SLOT;
    size_t *p = e->pool;
    for (si = 0; si < e->n_steps; si++) {
        step *st = &e->steps[si];
        const ph_node *n = st->node;
        st->n_in = ph_node_input_count(n);
        st->n_out = ph_node_output_count(n);
        st->in = p;
        p += st->n_in;
        st->out = p;
        p += st->n_out;
        int random = step_is_random(st);
        e->random_op |= random;
        for (size_t j = 0; j < st->n_in; j++) {
            const ph_value *v = ph_node_input(n, j);
            st->in[j] = v ? slot_of(&e->slots, v) : NO_SLOT;
            if (v) {
                last[st->in[j]] = si;
                random |= tainted[st->in[j]];
            }
        }
        for (size_t b = 0; b < st->n_bodies; b++)
            for (size_t k = 0; k < st->bodies[b]->n_cap; k++) {
                size_t s = st->bodies[b]->cap[k].outer;
                last[s] = si; /* a body's read of an outer value is this step's */
                random |= tainted[s];
            }
        for (size_t j = 0; j < st->n_out; j++) {
            const ph_value *v = ph_node_output(n, j);
            st->out[j] = v ? slot_of(&e->slots, v) : NO_SLOT;
            if (v) {
                last[st->out[j]] = si; /* unused outputs die right away */
                tainted[st->out[j]] = (unsigned char)random;
            }
        }
    }
    for (size_t i = 0; i < e->n_outputs; i++) {
        size_t s = slot_of(&e->slots, ph_graph_output(g, i));
        if (s == NO_SLOT) {
            rc = ph_error_set(err, PH_EINVAL, "graph output '%s' is not defined",
                              ph_value_name(ph_graph_output(g, i)));
            goto out;
        }
        e->out_slot[i] = s;
        e->random[i] = tainted[s];
        last[s] = NO_SLOT; /* kept until the end */
    }
    /* after step i, free what step i read or wrote last (node outputs only;
       the run frees only tensors it owns) */
    for (size_t i = 0; i < e->n_steps; i++) {
        step *st = &e->steps[i];
        st->free = p;
        for (size_t j = 0; j < st->n_in + st->n_out; j++) {
            size_t s = j < st->n_in ? st->in[j] : st->out[j - st->n_in];
            if (s == NO_SLOT || last[s] != i)
                continue;
            last[s] = NO_SLOT; /* an input listed twice is freed once */
            st->free[st->n_free++] = s;
        }
        p += st->n_free;
    }
out:
    free(last);
    free(tainted);
    return rc;
}

/* A new evaluator of g; float64: the reference mode (a body inherits the
 * mode of the graph around it). */
static int eval_new(const ph_graph *g, int float64, ph_eval **out, ph_error *err)
{
    ph_eval_options o = {sizeof o, float64};
    return ph_eval_new_with(g, &o, out, err);
}

PH_API int ph_eval_new_with(const ph_graph *g, const ph_eval_options *opts, ph_eval **out,
                            ph_error *err)
{
    *out = NULL;
    if (opts && opts->size < offsetof(ph_eval_options, float64) + sizeof opts->float64)
        return ph_error_set(err, PH_EINVAL, "ph_eval_options.size %zu is too small", opts->size);
    ph_eval *e = calloc(1, sizeof *e);
    if (!e)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    e->float64 = opts && opts->float64;
    e->g = g;
    e->opset = ph_model_opset(ph_graph_model(g), "");
    e->n_inputs = ph_graph_input_count(g);
    e->n_outputs = ph_graph_output_count(g);
    e->n_steps = ph_graph_node_count(g);
    e->in_slot = malloc((e->n_inputs ? e->n_inputs : 1) * sizeof *e->in_slot);
    e->out_slot = malloc((e->n_outputs ? e->n_outputs : 1) * sizeof *e->out_slot);
    e->steps = calloc(e->n_steps ? e->n_steps : 1, sizeof *e->steps);
    int rc = e->in_slot && e->out_slot && e->steps ? plan(e, err)
                                                   : ph_error_set(err, PH_ENOMEM, "out of memory");
    if (rc) {
        ph_eval_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

PH_API int ph_eval_new(const ph_graph *g, ph_eval **out, ph_error *err)
{
    return eval_new(g, 0, out, err);
}

PH_API int ph_eval_output_is_random(const ph_eval *e, size_t i)
{
    return i < e->n_outputs && e->random[i];
}

/* ------------------------------------------------------------ running */

/* float64: the reference mode, where an initializer default of a float
 * type is already double. */
static int check_input(const ph_value *v, size_t i, const ph_tensor *t, int float64, ph_error *err)
{
    if (ph_tensor_kind(t) != PH_KIND_TENSOR)
        return 0; /* the value's type says nothing of sequences and optionals */
    int dt = ph_value_dtype(v), rank = ph_value_rank(v);
    int promoted = float64 && is_float_type(dt) && ph_tensor_dtype(t) == PH_DT_DOUBLE;
    if (dt != PH_DT_UNDEFINED && dt != ph_tensor_dtype(t) && !promoted)
        return ph_error_set(err, PH_EINVAL, "graph input %zu '%s': expected dtype %s, got %s", i,
                            ph_value_name(v), ph_dtype_name(dt), ph_dtype_name(ph_tensor_dtype(t)));
    if (rank < 0)
        return 0;
    if ((size_t)rank != ph_tensor_rank(t))
        return ph_error_set(err, PH_EINVAL, "graph input %zu '%s': expected rank %d, got %zu", i,
                            ph_value_name(v), rank, ph_tensor_rank(t));
    for (int d = 0; d < rank; d++) {
        int64_t want = ph_value_dim(v, d);
        if (want >= 0 && want != ph_tensor_dim(t, (size_t)d))
            return ph_error_set(err, PH_EINVAL, "graph input %zu '%s': dim %d must be %lld, got %lld", i,
                                ph_value_name(v), d, (long long)want, (long long)ph_tensor_dim(t, (size_t)d));
    }
    if (!ph_tensor_data(t))
        return ph_error_set(err, PH_EINVAL, "graph input %zu '%s': tensor data is not readable", i,
                            ph_value_name(v));
    return 0;
}

/* Run e's graph.  outer: the frame of the enclosing graph's run (bodies). */
static int run_graph(const ph_eval *e, const eval_frame *outer, const ph_tensor *const *inputs, size_t n_inputs,
                     ph_tensor **outputs, size_t n_outputs, ph_error *err)
{
    for (size_t i = 0; i < n_outputs; i++)
        outputs[i] = NULL;
    if (n_inputs > e->n_inputs)
        return ph_error_set(err, PH_EINVAL, "%zu inputs given, the graph has %zu", n_inputs, e->n_inputs);
    if (n_outputs > e->n_outputs)
        return ph_error_set(err, PH_EINVAL, "%zu outputs asked for, the graph has %zu", n_outputs,
                            e->n_outputs);
    size_t ns = e->n_slots ? e->n_slots : 1, max_io = 1;
    for (size_t i = 0; i < e->n_steps; i++) {
        if (e->steps[i].n_in > max_io)
            max_io = e->steps[i].n_in;
        if (e->steps[i].n_out > max_io)
            max_io = e->steps[i].n_out;
    }
    const ph_tensor **cur = calloc(ns, sizeof *cur);
    ph_tensor **owned = calloc(ns, sizeof *owned);
    const ph_tensor **in = malloc(max_io * sizeof *in);
    ph_tensor **out = malloc(max_io * sizeof *out);
    int rc = 0;
    if (!cur || !owned || !in || !out) {
        rc = ph_error_set(err, PH_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(cur, e->konst, e->n_slots * sizeof *cur);
    for (size_t k = 0; k < e->n_cap; k++) {
        const ph_tensor *t = outer ? outer->cur[e->cap[k].outer] : NULL;
        if (!t) {
            rc = ph_error_set(err, outer ? PH_EINVAL : PH_EUNSUPPORTED,
                              "the value '%s' of an enclosing graph is %s", ph_value_name(e->cap[k].v),
                              outer ? "not computed" : "not available to a node evaluated alone");
            goto done;
        }
        cur[e->cap[k].slot] = t;
    }
    for (size_t i = 0; i < e->n_inputs; i++) {
        const ph_value *v = ph_graph_input(e->g, i);
        const ph_tensor *t = i < n_inputs && inputs ? inputs[i] : NULL;
        if (!t)
            t = e->konst[e->in_slot[i]]; /* the initializer default, if any */
        if (!t) {
            rc = ph_error_set(err, PH_EINVAL, "graph input %zu '%s' has no tensor and no initializer", i,
                              ph_value_name(v));
            goto done;
        }
        if ((rc = check_input(v, i, t, e->float64, err)) != 0)
            goto done;
        ph_tensor *d = NULL;
        if (e->float64 && promote_value(t, &d)) {
            rc = ph_error_set(err, PH_ENOMEM, "out of memory promoting graph input %zu to double", i);
            goto done;
        }
        if (d) { /* the run owns the promoted copy; it is freed after its last use */
            ph_tensor_free(owned[e->in_slot[i]]);
            owned[e->in_slot[i]] = d;
            t = d;
        }
        cur[e->in_slot[i]] = t;
    }
    eval_frame frame = {e, cur};
    for (size_t i = 0; i < e->n_steps; i++) {
        const step *st = &e->steps[i];
        for (size_t j = 0; j < st->n_in; j++)
            in[j] = st->in[j] == NO_SLOT ? NULL : cur[st->in[j]];
        rc = run_kernel(st->k, st->node, e->opset, e->float64, &frame, st->bodies, in, st->n_in, out,
                        st->n_out, err);
        if (rc)
            goto done;
        for (size_t j = 0; j < st->n_out; j++) {
            if (st->out[j] == NO_SLOT) {
                ph_tensor_free(out[j]);
                continue;
            }
            owned[st->out[j]] = out[j];
            cur[st->out[j]] = out[j];
        }
        for (size_t j = 0; j < st->n_free; j++) {
            size_t s = st->free[j];
            ph_tensor_free(owned[s]);
            owned[s] = NULL;
            cur[s] = NULL;
        }
    }
    for (size_t i = 0; i < n_outputs; i++) {
        size_t s = e->out_slot[i];
        if (owned[s]) { /* hand the tensor over; a second slot reading it gets a copy */
            outputs[i] = owned[s];
            owned[s] = NULL;
        } else {
            outputs[i] = cur[s] ? ph_tensor_clone(cur[s]) : NULL;
            if (!outputs[i]) {
                rc = ph_error_set(err, PH_ENOMEM, "cannot copy graph output %zu", i);
                goto done;
            }
        }
        cur[s] = outputs[i];
    }
done:
    if (owned)
        for (size_t s = 0; s < e->n_slots; s++)
            ph_tensor_free(owned[s]);
    if (rc)
        free_outputs(outputs, n_outputs);
    free(cur);
    free(owned);
    free(in);
    free(out);
    return rc;
}

PH_API int ph_eval_run(ph_eval *e, const ph_tensor *const *inputs, size_t n_inputs,
                       ph_tensor **outputs, size_t n_outputs, ph_error *err)
{
    return run_graph(e, NULL, inputs, n_inputs, outputs, n_outputs, err);
}

/* ------------------------------------------------------------ bodies */

size_t eval_body_index(const eval_kargs *a, const char *attr)
{
    const ph_graph *g = ph_node_attr_graph(a->node, attr);
    for (size_t b = 0; g && b < ph_node_subgraph_count(a->node); b++)
        if (ph_node_subgraph(a->node, b) == g)
            return b;
    return SIZE_MAX;
}

size_t eval_body_output_count(const eval_kargs *a, size_t b)
{
    return ph_graph_output_count(ph_node_subgraph(a->node, b));
}

int eval_body_run(eval_kargs *a, size_t b, const ph_tensor *const *in, size_t n_in, ph_tensor **out, size_t n_out)
{
    ph_eval *body = a->bodies ? a->bodies[b] : NULL, *own = NULL;
    int rc;
    if (!body) { /* a node evaluated alone: prepare the body for this call */
        if ((rc = eval_new(ph_node_subgraph(a->node, b), a->float64, &own, a->err)) != 0)
            return rc;
        body = own;
    }
    rc = run_graph(body, a->frame, in, n_in, out, n_out, a->err);
    ph_eval_free(own);
    return rc;
}
