/* sdk/src/eval/eval_ops_sequence.c - sequences and optionals: SequenceEmpty,
 * SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase,
 * SequenceLength, SplitToSequence, ConcatFromSequence, Optional,
 * OptionalHasElement, OptionalGetElement.
 *
 * Sequences and optionals are ph_tensors of another kind (ir.h); the items
 * are copied into every new sequence (values are immutable, a sequence op
 * never changes its input).  Items move as bytes, so every dtype works,
 * float16 and bfloat16 included (registered native_half, with containers).
 */
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"

/* Input i as a sequence (required). */
static int need_seq(eval_kargs *a, size_t i, const ph_tensor **s)
{
    *s = eval_in(a, i);
    if (!*s || ph_tensor_kind(*s) != PH_KIND_SEQUENCE)
        return eval_kfail(a, PH_EINVAL, "input %zu must be a sequence", i);
    return 0;
}

/* A position input (int32/int64 scalar) checked against [-n, n) (or
 * [-n, n] when end_ok), made non-negative. */
static int position(eval_kargs *a, size_t i, size_t n, int end_ok, size_t *pos)
{
    const ph_tensor *t;
    const void *d;
    int rc = eval_need(a, i, &t, &d);
    if (rc)
        return rc;
    if (!eval_dt_int(ph_tensor_dtype(t)) || ph_tensor_numel(t) != 1)
        return eval_kfail(a, PH_EINVAL, "position must be one integer");
    int64_t p = eval_load_i64(d, ph_tensor_dtype(t), 0), hi = (int64_t)n + (end_ok ? 1 : 0);
    if (p < -(int64_t)n || p >= hi)
        return eval_kfail(a, PH_EINVAL, "position %lld is out of range for a sequence of %zu", (long long)p, n);
    *pos = (size_t)(p < 0 ? p + (int64_t)n : p);
    return 0;
}

/* Output 0: a new sequence of items (copies of src[0..n), with `extra`
 * inserted at position ins (ins == SIZE_MAX: none) and position del
 * skipped (SIZE_MAX: none)). */
static int out_seq(eval_kargs *a, int elem, const ph_tensor *const *src, size_t n, size_t del, const ph_tensor *extra,
                   size_t ins)
{
    size_t total = n - (del != SIZE_MAX) + (extra != NULL);
    ph_tensor **v = calloc(total ? total : 1, sizeof *v);
    if (!v)
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i <= n; i++) {
        if (extra && i == ins)
            v[k++] = ph_tensor_clone(extra);
        if (i < n && i != del)
            v[k++] = ph_tensor_clone(src[i]);
    }
    ph_tensor *s = ph_sequence_new(elem, total, v); /* NULL if a copy failed */
    free(v);
    if (!s)
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    a->out[0] = s;
    return 0;
}

static const ph_tensor *const *items_of(const ph_tensor *s)
{
    return (const ph_tensor *const *)s->items;
}

int eval_k_sequence_empty(eval_kargs *a)
{
    int dt = (int)ph_node_attr_int(a->node, "dtype", PH_DT_FLOAT);
    if (!(a->out[0] = ph_sequence_new(dt, 0, NULL)))
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    return 0;
}

int eval_k_sequence_construct(eval_kargs *a)
{
    if (!a->n_in)
        return eval_kfail(a, PH_EINVAL, "at least one input is required");
    for (size_t i = 0; i < a->n_in; i++) {
        const ph_tensor *t = eval_in(a, i);
        if (!t || ph_tensor_kind(t) != PH_KIND_TENSOR)
            return eval_kfail(a, PH_EINVAL, "input %zu must be a tensor", i);
        if (ph_tensor_dtype(t) != ph_tensor_dtype(eval_in(a, 0)))
            return eval_kfail(a, PH_EINVAL, "inputs of different dtypes");
    }
    return out_seq(a, ph_tensor_dtype(eval_in(a, 0)), a->in, a->n_in, SIZE_MAX, NULL, SIZE_MAX);
}

int eval_k_sequence_at(eval_kargs *a)
{
    const ph_tensor *s;
    size_t p;
    int rc = need_seq(a, 0, &s);
    if (rc || (rc = position(a, 1, ph_container_length(s), 0, &p)) != 0)
        return rc;
    if (!(a->out[0] = ph_tensor_clone(ph_container_item(s, p))))
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    return 0;
}

int eval_k_sequence_insert(eval_kargs *a)
{
    const ph_tensor *s, *t = eval_in(a, 1);
    int rc = need_seq(a, 0, &s);
    if (rc)
        return rc;
    size_t n = ph_container_length(s), p = n;
    if (!t || ph_tensor_kind(t) != PH_KIND_TENSOR)
        return eval_kfail(a, PH_EINVAL, "input 1 must be a tensor");
    if (n && ph_tensor_dtype(t) != ph_tensor_dtype(ph_container_item(s, 0)))
        return eval_kfail(a, PH_EINVAL, "the tensor's dtype %s differs from the sequence's %s", ph_dtype_name(ph_tensor_dtype(t)), ph_dtype_name(ph_tensor_dtype(ph_container_item(s, 0))));
    if (eval_in(a, 2) && (rc = position(a, 2, n, 1, &p)) != 0)
        return rc;
    return out_seq(a, ph_tensor_dtype(t), items_of(s), n, SIZE_MAX, t, p);
}

int eval_k_sequence_erase(eval_kargs *a)
{
    const ph_tensor *s;
    int rc = need_seq(a, 0, &s);
    if (rc)
        return rc;
    size_t n = ph_container_length(s), p = n ? n - 1 : 0;
    if (!n)
        return eval_kfail(a, PH_EINVAL, "cannot erase from an empty sequence");
    if (eval_in(a, 1) && (rc = position(a, 1, n, 0, &p)) != 0)
        return rc;
    return out_seq(a, ph_container_elem_dtype(s), items_of(s), n, p, NULL, SIZE_MAX);
}

int eval_k_sequence_length(eval_kargs *a)
{
    const ph_tensor *s;
    int rc = need_seq(a, 0, &s);
    if (rc)
        return rc;
    int64_t *o;
    if ((rc = eval_out(a, 0, PH_DT_INT64, 0, NULL, (void **)&o)) != 0 || !o)
        return rc;
    *o = (int64_t)ph_container_length(s);
    return 0;
}

int eval_k_split_to_sequence(eval_kargs *a)
{
    const ph_tensor *x, *sp = eval_in(a, 1);
    int rc = eval_need(a, 0, &x, NULL);
    if (rc)
        return rc;
    size_t r = ph_tensor_rank(x), ax;
    if (r == 0)
        return eval_kfail(a, PH_EINVAL, "cannot split a scalar");
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
        return rc;
    int64_t len = ph_tensor_dim(x, ax), lens_buf[256], *lens = lens_buf;
    size_t n = 0;
    int squeeze = 0;
    if (!sp) {
        if (len > 256)
            return eval_kfail(a, PH_EUNSUPPORTED, "more than 256 pieces");
        for (int64_t i = 0; i < len; i++)
            lens[n++] = 1;
        squeeze = ph_node_attr_int(a->node, "keepdims", 1) == 0;
    } else if (ph_tensor_rank(sp) == 0) {
        const void *d;
        if ((rc = eval_need(a, 1, &sp, &d)) != 0)
            return rc;
        int64_t c = eval_load_i64(d, ph_tensor_dtype(sp), 0);
        if (c <= 0)
            return eval_kfail(a, PH_EINVAL, "split must be positive");
        for (int64_t off = 0; off < len; off += c) {
            if (n == 256)
                return eval_kfail(a, PH_EUNSUPPORTED, "more than 256 pieces");
            lens[n++] = off + c <= len ? c : len - off;
        }
    } else {
        if ((rc = eval_small_ints(a, sp, "split", lens, 256, &n)) != 0)
            return rc;
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            if (lens[i] < 0)
                return eval_kfail(a, PH_EINVAL, "split has a negative length");
            sum += lens[i];
        }
        if (sum != len)
            return eval_kfail(a, PH_EINVAL, "split sums to %lld, the axis has %lld", (long long)sum, (long long)len);
    }
    const int64_t *d = ph_tensor_dims(x);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < r; i++) {
        if (i < ax)
            outer *= d[i];
        else if (i > ax)
            inner *= d[i];
    }
    size_t es = ph_dtype_size(ph_tensor_dtype(x));
    const char *src = ph_tensor_data(x);
    ph_tensor **items = calloc(n ? n : 1, sizeof *items);
    if (!items)
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    int64_t off = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t od[EVAL_MAX_RANK];
        size_t orank = 0;
        for (size_t i = 0; i < r; i++)
            if (i != ax || !squeeze)
                od[orank++] = i == ax ? lens[k] : d[i];
        if (!(items[k] = ir_tensor_alloc(ph_tensor_dtype(x), orank, od))) {
            for (size_t j = 0; j < k; j++)
                ph_tensor_free(items[j]);
            free(items);
            return eval_kfail(a, PH_ENOMEM, "out of memory");
        }
        char *dst = ir_tensor_mut(items[k]);
        size_t blk = (size_t)(lens[k] * inner) * es;
        for (int64_t o = 0; o < outer; o++)
            memcpy(dst + (size_t)o * blk, src + ((size_t)(o * len + off) * (size_t)inner) * es, blk);
        off += lens[k];
    }
    a->out[0] = ph_sequence_new(ph_tensor_dtype(x), n, items);
    free(items);
    return a->out[0] ? 0 : eval_kfail(a, PH_ENOMEM, "out of memory");
}

int eval_k_concat_from_sequence(eval_kargs *a)
{
    const ph_tensor *s;
    int rc = need_seq(a, 0, &s);
    if (rc)
        return rc;
    size_t n = ph_container_length(s);
    int new_axis = ph_node_attr_int(a->node, "new_axis", 0) != 0;
    if (!n)
        return eval_kfail(a, PH_EINVAL, "cannot concatenate an empty sequence");
    const ph_tensor *t0 = ph_container_item(s, 0);
    size_t r = ph_tensor_rank(t0), ax;
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r + (size_t)new_axis, &ax)) != 0)
        return rc;
    if (new_axis)
        return eval_stack(a, (ph_tensor *const *)items_of(s), n, ax, 0, ph_tensor_dtype(t0), r, ph_tensor_dims(t0),
                         &a->out[0]);
    if (r == 0)
        return eval_kfail(a, PH_EINVAL, "cannot concatenate scalars");
    int64_t od[EVAL_MAX_RANK], outer = 1, inner = 1;
    memcpy(od, ph_tensor_dims(t0), r * sizeof *od);
    od[ax] = 0;
    for (size_t k = 0; k < n; k++) {
        const ph_tensor *t = ph_container_item(s, k);
        if (ph_tensor_kind(t) != PH_KIND_TENSOR || ph_tensor_rank(t) != r || ph_tensor_dtype(t) != ph_tensor_dtype(t0))
            return eval_kfail(a, PH_EINVAL, "item %zu differs in rank or dtype", k);
        for (size_t i = 0; i < r; i++)
            if (i != ax && ph_tensor_dim(t, i) != od[i])
                return eval_kfail(a, PH_EINVAL, "item %zu differs in dim %zu", k, i);
        od[ax] += ph_tensor_dim(t, ax);
    }
    for (size_t i = 0; i < r; i++) {
        if (i < ax)
            outer *= od[i];
        else if (i > ax)
            inner *= od[i];
    }
    size_t es = ph_dtype_size(ph_tensor_dtype(t0));
    char *dst;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(t0), r, od, (void **)&dst)) != 0 || !dst)
        return rc;
    for (int64_t o = 0; o < outer; o++)
        for (size_t k = 0; k < n; k++) {
            const ph_tensor *t = ph_container_item(s, k);
            size_t blk = (size_t)(ph_tensor_dim(t, ax) * inner) * es;
            memcpy(dst, (const char *)ph_tensor_data(t) + (size_t)o * blk, blk);
            dst += blk;
        }
    return 0;
}

/* ------------------------------------------------------------ optionals */

/* The element dtype an Optional's type attribute names (0 when unknown). */
static int optional_type_dtype(const ph_node *n)
{
    const Onnx__AttributeProto *at = ir_node_find_attr(n, "type");
    const Onnx__TypeProto *tp = at ? at->tp : NULL;
    while (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type)
        tp = tp->sequence_type->elem_type;
    return tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type ? tp->tensor_type->elem_type
                                                                                            : 0;
}

int eval_k_optional(eval_kargs *a)
{
    const ph_tensor *x = eval_in(a, 0);
    ph_tensor *v = NULL;
    if (x && ph_tensor_kind(x) == PH_KIND_OPTIONAL)
        return eval_kfail(a, PH_EINVAL, "the input is already an optional");
    if (x && !(v = ph_tensor_clone(x)))
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    int dt = x ? (ph_tensor_kind(x) == PH_KIND_TENSOR ? ph_tensor_dtype(x) : ph_container_elem_dtype(x))
               : optional_type_dtype(a->node);
    if (!(a->out[0] = ph_optional_new(dt, v)))
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    return 0;
}

int eval_k_optional_has_element(eval_kargs *a)
{
    const ph_tensor *x = eval_in(a, 0);
    uint8_t *o;
    int rc = eval_out(a, 0, PH_DT_BOOL, 0, NULL, (void **)&o);
    if (rc || !o)
        return rc;
    /* an omitted input is an empty optional; a tensor or sequence (opset 18) has an element */
    *o = x && (ph_tensor_kind(x) != PH_KIND_OPTIONAL || ph_container_length(x) > 0);
    return 0;
}

int eval_k_optional_get_element(eval_kargs *a)
{
    const ph_tensor *x = eval_in(a, 0);
    if (!x)
        return eval_kfail(a, PH_EINVAL, "input 0 is required");
    if (ph_tensor_kind(x) == PH_KIND_OPTIONAL) {
        if (!ph_container_length(x))
            return eval_kfail(a, PH_EINVAL, "the optional is empty");
        x = ph_container_item(x, 0);
    }
    if (!(a->out[0] = ph_tensor_clone(x)))
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    return 0;
}
