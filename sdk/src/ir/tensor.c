/* sdk/src/ir/tensor.c - constant tensors: initializers and tensor attributes.
 *
 * A tensor's bytes live where the file put them when possible (a mapping of
 * the model or of its external-data file), in the proto's raw_data, or in a
 * buffer of its own.  Typed-field storage (float_data, int64_data, ...) is
 * converted to raw bytes on first access only; the typed fields are what is
 * saved, so an untouched tensor is written back exactly as it was read.
 * A tensor made in memory (a folded constant) has no message: its dtype
 * and dims are in its own block, and a message is made only for what needs
 * one (an attribute, a body's initializer or external data at a save). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The bytes n_dims dims of dtype take; *ok = 0 (and 0) for an unknown
 * dtype, a negative dim or an overflow. */
static size_t bytes_of(int dtype, size_t n_dims, const int64_t *dims, int *ok)
{
    size_t es = ph_dtype_size(dtype), n = 1;
    *ok = es != 0;
    for (size_t i = 0; i < n_dims; i++) {
        if (dims[i] < 0) {
            *ok = 0;
            return 0;
        }
        size_t d = (size_t)dims[i];
        if (d && n > SIZE_MAX / d) {
            *ok = 0;
            return 0;
        }
        n *= d;
    }
    if (es && n > SIZE_MAX / es) {
        *ok = 0;
        return 0;
    }
    return n * es;
}

size_t ir_tensor_expected_bytes(const Onnx__TensorProto *p, int *ok)
{
    return bytes_of(p->data_type, p->n_dims, p->dims, ok);
}

/* From the tensor's own fields: a zeroed TensorProto on the stack cost more than the count. */
size_t ir_tensor_bytes(const ph_tensor *t, int *ok) { return bytes_of(t->dtype, t->rank, t->dims, ok); }

int64_t ir_dims_numel(const int64_t *dims, size_t n)
{
    int64_t p = 1;
    int zero = 0;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 0)
            return -1;
        if (dims[i] == 0)
            zero = 1;
        else if (ir_mul_ovf(p, dims[i], &p))
            return -1;
    }
    return zero ? 0 : p;
}

/* The typed field that holds dtype's values, and how many values an
 * element takes (0: no count is checked). */
enum { F_NONE, F_FLOAT, F_INT32, F_STRING, F_INT64, F_DOUBLE, F_UINT64, F_RAW, F_COUNT };
static const char *const field_names[F_COUNT] = {"", "float_data", "int32_data", "string_data",
                                                 "int64_data", "double_data", "uint64_data", "raw_data"};

static int typed_field(int dtype, int *per_elem)
{
    *per_elem = 1;
    switch (dtype) {
    case PH_DT_FLOAT: return F_FLOAT;
    case PH_DT_COMPLEX64: *per_elem = 2; return F_FLOAT;
    case PH_DT_UINT8: case PH_DT_INT8: case PH_DT_UINT16: case PH_DT_INT16: case PH_DT_INT32:
    case PH_DT_BOOL: case PH_DT_FLOAT16: case PH_DT_BFLOAT16:
    case 17: case 18: case 19: case 20: /* FLOAT8 E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ */
        return F_INT32;
    case 21: case 22: /* UINT4, INT4: two elements an entry */
        *per_elem = 0;
        return F_INT32;
    case PH_DT_STRING: return F_STRING;
    case PH_DT_INT64: return F_INT64;
    case PH_DT_DOUBLE: return F_DOUBLE;
    case PH_DT_COMPLEX128: *per_elem = 2; return F_DOUBLE;
    case PH_DT_UINT32: case PH_DT_UINT64: return F_UINT64;
    default: return F_NONE;
    }
}

static const char *shape_text(const Onnx__TensorProto *p, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < p->n_dims && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)p->dims[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
    return buf;
}

int ir_tensor_check(const Onnx__TensorProto *p, int raw_elsewhere, size_t raw_len, const char *what,
                     ph_error *err)
{
    char shape[160]; /* for the messages: made only for one */
    int per_elem, want_field = typed_field(p->data_type, &per_elem);
    if (want_field == F_NONE)
        return ph_error_set(err, PH_EPARSE, "%s: data_type %d is %s", what, (int)p->data_type,
                            p->data_type ? "not an ONNX tensor type" : "missing (UNDEFINED)");
    for (size_t i = 0; i < p->n_dims; i++)
        if (p->dims[i] < 0)
            return ph_error_set(err, PH_EPARSE, "%s: negative dim %lld in shape %s", what,
                                (long long)p->dims[i], shape_text(p, shape, sizeof shape));
    int64_t numel = ir_dims_numel(p->dims, p->n_dims);
    size_t es = ph_dtype_size(p->data_type);
    int64_t bytes;
    if (numel < 0 || (es && ir_mul_ovf(numel, (int64_t)es, &bytes)) || (uint64_t)numel > SIZE_MAX / (es ? es : 1))
        return ph_error_set(err, PH_EPARSE, "%s: the element count of shape %s overflows", what,
                                shape_text(p, shape, sizeof shape));
    size_t counts[F_COUNT] = {0};
    counts[F_FLOAT] = p->n_float_data;
    counts[F_INT32] = p->n_int32_data;
    counts[F_STRING] = p->n_string_data;
    counts[F_INT64] = p->n_int64_data;
    counts[F_DOUBLE] = p->n_double_data;
    counts[F_UINT64] = p->n_uint64_data;
    int has_raw = raw_elsewhere || p->has_raw_data;
    int external = p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    int field = F_NONE, fields = 0;
    for (int f = F_FLOAT; f < F_RAW; f++)
        if (counts[f]) {
            if (fields++)
                return ph_error_set(err, PH_EPARSE, "%s: holds both %s and %s", what, field_names[field],
                                    field_names[f]);
            field = f;
        }
    if (field && (has_raw || external))
        return ph_error_set(err, PH_EPARSE, "%s: holds %s as well as %s data", what, field_names[field],
                            external ? "external" : "raw");
    if (external && p->has_raw_data && !raw_elsewhere)
        return ph_error_set(err, PH_EPARSE, "%s: holds raw_data as well as external data", what);
    if (external)
        return 0; /* the data file is checked when it is attached */
    if (has_raw) {
        size_t len = raw_elsewhere ? raw_len : p->raw_data.len;
        if (p->data_type == PH_DT_STRING)
            return ph_error_set(err, PH_EPARSE, "%s: a STRING tensor cannot use raw_data", what);
        if (es && len != (size_t)numel * es)
            return ph_error_set(err, PH_EPARSE, "%s: raw_data has %zu bytes, its dtype and shape %s need %zu", what,
                                len, shape_text(p, shape, sizeof shape), (size_t)numel * es);
        return 0;
    }
    if (field && field != want_field)
        return ph_error_set(err, PH_EPARSE, "%s: data_type %d keeps its values in %s, not in %s", what,
                            (int)p->data_type, field_names[want_field], field_names[field]);
    if (per_elem && counts[want_field] != (uint64_t)numel * (uint64_t)per_elem)
        return ph_error_set(err, PH_EPARSE, "%s: %s has %zu values, its shape %s needs %llu", what,
                            field_names[want_field], counts[want_field], shape_text(p, shape, sizeof shape),
                            (unsigned long long)numel * (unsigned long long)per_elem);
    return 0;
}

ph_tensor *ir_tensor_wrap(Onnx__TensorProto *p, int borrowed)
{
    ph_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->proto = p;
    t->dims = p->dims;
    t->dtype = p->data_type;
    t->rank = (uint32_t)p->n_dims;
    t->borrowed = (unsigned char)borrowed;
    t->external = p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (p->has_raw_data) {
        t->storage = IR_DATA_PROTO_RAW;
        t->data = p->raw_data.data;
        t->nbytes = p->raw_data.len;
    }
    return t;
}

int ir_tensor_attach(ph_tensor *t, const uint8_t *data, size_t nbytes, ph_error *err,
                      const char *what)
{
    int ok;
    size_t want = ir_tensor_bytes(t, &ok);
    if (ok && want != nbytes)
        return ph_error_set(err, PH_EPARSE, "%s: tensor data has %zu bytes, its dtype and shape need %zu",
                            what, nbytes, want);
    t->storage = IR_DATA_MAPPED;
    t->data = data;
    t->nbytes = nbytes;
    return 0;
}

/* Convert typed fields to little-endian raw bytes (x86/ARM hosts). */
static int convert_typed(ph_tensor *t)
{
    const Onnx__TensorProto *p = t->proto;
    int ok;
    size_t nbytes = p ? ir_tensor_expected_bytes(p, &ok) : 0;
    if (!p || !ok) /* (no message: a sequence or an optional) */
        return PH_EUNSUPPORTED;
    size_t es = ph_dtype_size(p->data_type), n = es ? nbytes / es : 0;
    uint8_t *buf = malloc(nbytes ? nbytes : 1);
    if (!buf)
        return PH_ENOMEM;
    int bad = 0;
    switch (p->data_type) {
    case PH_DT_FLOAT:
        bad = p->n_float_data != n;
        if (!bad && nbytes) memcpy(buf, p->float_data, nbytes);
        break;
    case PH_DT_COMPLEX64:
        bad = p->n_float_data != 2 * n;
        if (!bad && nbytes) memcpy(buf, p->float_data, nbytes);
        break;
    case PH_DT_DOUBLE:
        bad = p->n_double_data != n;
        if (!bad && nbytes) memcpy(buf, p->double_data, nbytes);
        break;
    case PH_DT_COMPLEX128:
        bad = p->n_double_data != 2 * n;
        if (!bad && nbytes) memcpy(buf, p->double_data, nbytes);
        break;
    case PH_DT_INT64:
        bad = p->n_int64_data != n;
        if (!bad && nbytes) memcpy(buf, p->int64_data, nbytes);
        break;
    case PH_DT_UINT64:
        bad = p->n_uint64_data != n;
        if (!bad && nbytes) memcpy(buf, p->uint64_data, nbytes);
        break;
    case PH_DT_UINT32:
        bad = p->n_uint64_data != n;
        for (size_t i = 0; !bad && i < n; i++) {
            uint32_t v = (uint32_t)p->uint64_data[i];
            memcpy(buf + 4 * i, &v, 4);
        }
        break;
    case PH_DT_INT32:
        bad = p->n_int32_data != n;
        if (!bad && nbytes) memcpy(buf, p->int32_data, nbytes);
        break;
    case PH_DT_INT16: case PH_DT_UINT16: case PH_DT_FLOAT16: case PH_DT_BFLOAT16:
        bad = p->n_int32_data != n;
        for (size_t i = 0; !bad && i < n; i++) {
            uint16_t v = (uint16_t)p->int32_data[i];
            memcpy(buf + 2 * i, &v, 2);
        }
        break;
    case PH_DT_INT8: case PH_DT_UINT8: case PH_DT_BOOL:
        bad = p->n_int32_data != n;
        for (size_t i = 0; !bad && i < n; i++)
            buf[i] = (uint8_t)p->int32_data[i];
        break;
    default:
        bad = 1;
    }
    if (bad) {
        free(buf);
        return PH_EPARSE;
    }
    t->owned_data = buf;
    t->data = buf;
    t->nbytes = nbytes;
    t->storage = IR_DATA_TYPED;
    return 0;
}

static ph_tensor *tensor_make(int dtype, size_t rank, const int64_t *dims, const void *data, int zero);

PH_API ph_tensor *ph_tensor_new(int dtype, size_t rank, const int64_t *dims, const void *data)
{
    return tensor_make(dtype, rank, dims, data, 1);
}

ph_tensor *ir_tensor_alloc(int dtype, size_t rank, const int64_t *dims)
{
    return tensor_make(dtype, rank, dims, NULL, 0);
}

PH_API ph_tensor *ph_tensor_new_uninit(int dtype, size_t rank, const int64_t *dims, void **data)
{
    ph_tensor *t = data && (!rank || dims) ? tensor_make(dtype, rank, dims, NULL, 0) : NULL;
    if (data)
        *data = t ? t->owned_data : NULL;
    return t;
}

void *ir_tensor_mut(ph_tensor *t)
{
    return t->storage == IR_DATA_OWNED ? t->owned_data : NULL;
}

/* A tensor without a message: the dims follow it in its block. */
static ph_tensor *tensor_make(int dtype, size_t rank, const int64_t *dims, const void *data, int zero)
{
    if (rank > UINT32_MAX || ir_dims_numel(dims, rank) < 0) /* every stride of the shape fits in int64 */
        return NULL;
    ph_tensor *t = calloc(1, sizeof *t + rank * sizeof *dims);
    if (!t)
        return NULL;
    if (rank)
        memcpy(t + 1, dims, rank * sizeof *dims);
    t->dims = rank ? (const int64_t *)(t + 1) : NULL;
    t->rank = (uint32_t)rank;
    t->dtype = dtype;
    int ok;
    size_t nbytes = ir_tensor_bytes(t, &ok);
    void *buf = ok ? malloc(nbytes ? nbytes : 1) : NULL;
    if (!buf) {
        free(t);
        return NULL;
    }
    /* a tensor of several MiB (a folded weight) is written whole right
     * away: the page faults, with the kernel zeroing each page, were most
     * of the time of folding a ResNet's BatchNormalizations */
    ir_prefer_huge_pages(buf, nbytes);
    if (data)
        memcpy(buf, data, nbytes);
    else if (zero)
        memset(buf, 0, nbytes);
    t->owned_data = buf;
    t->data = buf;
    t->nbytes = nbytes;
    t->storage = IR_DATA_OWNED;
    return t;
}

Onnx__TensorProto *ir_tensor_proto(ph_tensor *t)
{
    if (t->proto)
        return t->proto;
    Onnx__TensorProto *p = malloc(sizeof *p);
    if (!p)
        return NULL;
    onnx__tensor_proto__init(p);
    if (t->kind == PH_KIND_TENSOR) { /* (a container's has no dtype) */
        p->has_data_type = 1;
        p->data_type = t->dtype;
    }
    if (t->rank) {
        if (!(p->dims = malloc(t->rank * sizeof *p->dims))) {
            free(p);
            return NULL;
        }
        memcpy(p->dims, t->dims, t->rank * sizeof *p->dims);
        p->n_dims = t->rank;
    }
    t->proto = p;
    return p;
}

PH_API ph_tensor *ph_tensor_clone(const ph_tensor *t)
{
    if (t->kind != PH_KIND_TENSOR)
        return ir_container_clone(t);
    const void *d = ph_tensor_data(t);
    if (!d)
        return NULL;
    return ph_tensor_new(ph_tensor_dtype(t), ph_tensor_rank(t), ph_tensor_dims(t), d);
}

PH_API void ph_tensor_free(ph_tensor *t)
{
    if (!t)
        return;
    if (t->proto && !t->borrowed) {
        if (t->storage == IR_DATA_MAPPED || t->storage == IR_DATA_OWNED) {
            /* never let the proto free bytes it does not own */
            t->proto->has_raw_data = 0;
            t->proto->raw_data.data = NULL;
            t->proto->raw_data.len = 0;
        }
        protobuf_c_message_free_unpacked(&t->proto->base, NULL);
    }
    for (size_t i = 0; i < t->n_items; i++)
        ph_tensor_free(t->items[i]);
    free(t->items);
    free(t->owned_data);
    free(t);
}

PH_API int ph_tensor_dtype(const ph_tensor *t) { return t->dtype; }
PH_API size_t ph_tensor_rank(const ph_tensor *t) { return t->rank; }
PH_API const int64_t *ph_tensor_dims(const ph_tensor *t) { return t->dims; }

PH_API int64_t ph_tensor_dim(const ph_tensor *t, size_t i)
{
    return i < t->rank ? t->dims[i] : -1;
}

PH_API int64_t ph_tensor_numel(const ph_tensor *t)
{
    return ir_dims_numel(t->dims, t->rank);
}

PH_API size_t ph_tensor_nbytes(const ph_tensor *t)
{
    int ok;
    return ir_tensor_bytes(t, &ok);
}

PH_API const void *ph_tensor_data(const ph_tensor *t)
{
    ph_tensor *m = (ph_tensor *)t; /* lazy conversion is not a visible change */
    if (m->storage == IR_DATA_NONE && !m->external && convert_typed(m) != 0)
        return NULL;
    if (m->storage == IR_DATA_NONE)
        return NULL;
    int ok;
    size_t want = ir_tensor_bytes(m, &ok);
    if (!ok || want != m->nbytes)
        return NULL;
    return m->data ? m->data : (const void *)"";
}

PH_API int ph_tensor_equal(const ph_tensor *a, const ph_tensor *b)
{
    if (a->kind != PH_KIND_TENSOR || b->kind != PH_KIND_TENSOR) {
        if (a->kind != b->kind || a->n_items != b->n_items)
            return 0;
        for (size_t i = 0; i < a->n_items; i++)
            if (!ph_tensor_equal(a->items[i], b->items[i]))
                return 0;
        return 1;
    }
    if (ph_tensor_dtype(a) != ph_tensor_dtype(b) || ph_tensor_rank(a) != ph_tensor_rank(b))
        return 0;
    for (size_t i = 0; i < ph_tensor_rank(a); i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    const void *da = ph_tensor_data(a), *db = ph_tensor_data(b);
    if (!da || !db)
        return 0;
    return memcmp(da, db, ph_tensor_nbytes(a)) == 0;
}

/* ------------------------------------------------- sequences and optionals */

/* A container of kind with n items (taken over, also on failure). */
static ph_tensor *container_new(int kind, int elem_dtype, size_t n, ph_tensor *const *items)
{
    ph_tensor *t = calloc(1, sizeof *t);
    ph_tensor **v = malloc((n ? n : 1) * sizeof *v);
    if (!t || !v) {
        for (size_t i = 0; i < n; i++)
            ph_tensor_free(items[i]);
        free(v);
        free(t);
        return NULL;
    }
    if (n)
        memcpy(v, items, n * sizeof *v);
    t->kind = kind;
    t->elem_dtype = elem_dtype;
    t->items = v;
    t->n_items = n;
    return t;
}

PH_API ph_tensor *ph_sequence_new(int elem_dtype, size_t n, ph_tensor *const *items)
{
    for (size_t i = 0; i < n; i++)
        if (!items[i]) {
            for (size_t k = 0; k < n; k++)
                ph_tensor_free(items[k]);
            return NULL;
        }
    return container_new(PH_KIND_SEQUENCE, elem_dtype, n, items);
}

PH_API ph_tensor *ph_optional_new(int elem_dtype, ph_tensor *value)
{
    return container_new(PH_KIND_OPTIONAL, elem_dtype, value ? 1 : 0, &value);
}

PH_API int ph_tensor_kind(const ph_tensor *t) { return t->kind; }
PH_API int ph_container_elem_dtype(const ph_tensor *t) { return t->elem_dtype; }
PH_API size_t ph_container_length(const ph_tensor *t) { return t->n_items; }

PH_API const ph_tensor *ph_container_item(const ph_tensor *t, size_t i)
{
    return i < t->n_items ? t->items[i] : NULL;
}

ph_tensor *ir_container_clone(const ph_tensor *t)
{
    ph_tensor *buf[8], **v = t->n_items <= 8 ? buf : malloc(t->n_items * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (; k < t->n_items; k++)
        if (!(v[k] = ph_tensor_clone(t->items[k])))
            break;
    ph_tensor *r = NULL;
    if (k == t->n_items)
        r = container_new(t->kind, t->elem_dtype, k, v);
    else
        while (k-- > 0)
            ph_tensor_free(v[k]);
    if (v != buf)
        free(v);
    return r;
}

/* ------------------------------------------------------ half precision */

float ir_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            exp = 127 - 15 + 1;
            while (!(man & 0x400)) {
                man <<= 1;
                exp--;
            }
            man &= 0x3ff;
            bits = sign | (exp << 23) | (man << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ir_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    if (exp >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
        half++; /* may carry into the exponent: still correct, up to inf */
    return (uint16_t)half;
}

float ir_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ir_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffff))
        return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}
