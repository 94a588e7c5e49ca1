/* sdk/src/ir/tensor.c - constant tensors: initializers and tensor attributes.
 *
 * A tensor's bytes live where the file put them when possible (a mapping of
 * the model or of its external-data file), in the proto's raw_data, or in a
 * buffer of its own.  Typed-field storage (float_data, int64_data, ...) is
 * converted to raw bytes on first access only; the typed fields are what is
 * saved, so an untouched tensor is written back exactly as it was read. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

size_t phi_tensor_expected_bytes(const Onnx__TensorProto *p, int *ok)
{
    size_t es = ph_dtype_size(p->data_type), n = 1;
    *ok = es != 0;
    for (size_t i = 0; i < p->n_dims; i++) {
        if (p->dims[i] < 0) {
            *ok = 0;
            return 0;
        }
        size_t d = (size_t)p->dims[i];
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

ph_tensor *phi_tensor_wrap(Onnx__TensorProto *p, int borrowed)
{
    ph_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->proto = p;
    t->borrowed = borrowed;
    t->external = p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (p->has_raw_data) {
        t->storage = PHI_DATA_PROTO_RAW;
        t->data = p->raw_data.data;
        t->nbytes = p->raw_data.len;
    }
    return t;
}

int phi_tensor_attach(ph_tensor *t, const uint8_t *data, size_t nbytes, ph_error *err,
                      const char *what)
{
    int ok;
    size_t want = phi_tensor_expected_bytes(t->proto, &ok);
    if (ok && want != nbytes)
        return ph_error_set(err, PH_EPARSE, "%s: tensor data has %zu bytes, its dtype and shape need %zu",
                            what, nbytes, want);
    t->storage = PHI_DATA_MAPPED;
    t->data = data;
    t->nbytes = nbytes;
    return 0;
}

/* Convert typed fields to little-endian raw bytes (x86/ARM hosts). */
static int convert_typed(ph_tensor *t)
{
    const Onnx__TensorProto *p = t->proto;
    int ok;
    size_t nbytes = phi_tensor_expected_bytes(p, &ok);
    if (!ok)
        return PH_EUNSUPPORTED;
    size_t es = ph_dtype_size(p->data_type), n = es ? nbytes / es : 0;
    uint8_t *buf = malloc(nbytes ? nbytes : 1);
    if (!buf)
        return PH_ENOMEM;
    int bad = 0;
    switch (p->data_type) {
    case PH_DT_FLOAT:
        bad = p->n_float_data != n;
        if (!bad) memcpy(buf, p->float_data, nbytes);
        break;
    case PH_DT_COMPLEX64:
        bad = p->n_float_data != 2 * n;
        if (!bad) memcpy(buf, p->float_data, nbytes);
        break;
    case PH_DT_DOUBLE:
        bad = p->n_double_data != n;
        if (!bad) memcpy(buf, p->double_data, nbytes);
        break;
    case PH_DT_COMPLEX128:
        bad = p->n_double_data != 2 * n;
        if (!bad) memcpy(buf, p->double_data, nbytes);
        break;
    case PH_DT_INT64:
        bad = p->n_int64_data != n;
        if (!bad) memcpy(buf, p->int64_data, nbytes);
        break;
    case PH_DT_UINT64:
        bad = p->n_uint64_data != n;
        if (!bad) memcpy(buf, p->uint64_data, nbytes);
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
        if (!bad) memcpy(buf, p->int32_data, nbytes);
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
    t->storage = PHI_DATA_TYPED;
    return 0;
}

static ph_tensor *tensor_make(int dtype, size_t rank, const int64_t *dims, const void *data, int zero);

PH_API ph_tensor *ph_tensor_new(int dtype, size_t rank, const int64_t *dims, const void *data)
{
    return tensor_make(dtype, rank, dims, data, 1);
}

ph_tensor *phi_tensor_alloc(int dtype, size_t rank, const int64_t *dims)
{
    return tensor_make(dtype, rank, dims, NULL, 0);
}

void *phi_tensor_mut(ph_tensor *t)
{
    return t->storage == PHI_DATA_OWNED ? t->owned_data : NULL;
}

static ph_tensor *tensor_make(int dtype, size_t rank, const int64_t *dims, const void *data, int zero)
{
    Onnx__TensorProto *p = malloc(sizeof *p);
    if (!p)
        return NULL;
    onnx__tensor_proto__init(p);
    p->has_data_type = 1;
    p->data_type = dtype;
    if (rank) {
        p->dims = malloc(rank * sizeof *p->dims);
        if (!p->dims) {
            free(p);
            return NULL;
        }
        memcpy(p->dims, dims, rank * sizeof *p->dims);
        p->n_dims = rank;
    }
    int ok;
    size_t nbytes = phi_tensor_expected_bytes(p, &ok);
    ph_tensor *t = ok ? phi_tensor_wrap(p, 0) : NULL;
    void *buf = t ? malloc(nbytes ? nbytes : 1) : NULL;
    if (!buf) {
        free(t);
        protobuf_c_message_free_unpacked(&p->base, NULL);
        return NULL;
    }
    if (data)
        memcpy(buf, data, nbytes);
    else if (zero)
        memset(buf, 0, nbytes);
    t->owned_data = buf;
    t->data = buf;
    t->nbytes = nbytes;
    t->storage = PHI_DATA_OWNED;
    return t;
}

PH_API ph_tensor *ph_tensor_clone(const ph_tensor *t)
{
    const void *d = ph_tensor_data(t);
    if (!d)
        return NULL;
    return ph_tensor_new(ph_tensor_dtype(t), ph_tensor_rank(t), ph_tensor_dims(t), d);
}

PH_API void ph_tensor_free(ph_tensor *t)
{
    if (!t)
        return;
    if (!t->borrowed) {
        if (t->storage == PHI_DATA_MAPPED || t->storage == PHI_DATA_OWNED) {
            /* never let the proto free bytes it does not own */
            t->proto->has_raw_data = 0;
            t->proto->raw_data.data = NULL;
            t->proto->raw_data.len = 0;
        }
        protobuf_c_message_free_unpacked(&t->proto->base, NULL);
    }
    free(t->owned_data);
    free(t);
}

PH_API int ph_tensor_dtype(const ph_tensor *t) { return t->proto->data_type; }
PH_API size_t ph_tensor_rank(const ph_tensor *t) { return t->proto->n_dims; }
PH_API const int64_t *ph_tensor_dims(const ph_tensor *t) { return t->proto->dims; }

PH_API int64_t ph_tensor_dim(const ph_tensor *t, size_t i)
{
    return i < t->proto->n_dims ? t->proto->dims[i] : -1;
}

PH_API int64_t ph_tensor_numel(const ph_tensor *t)
{
    int64_t n = 1;
    for (size_t i = 0; i < t->proto->n_dims; i++)
        n *= t->proto->dims[i];
    return n;
}

PH_API size_t ph_tensor_nbytes(const ph_tensor *t)
{
    int ok;
    return phi_tensor_expected_bytes(t->proto, &ok);
}

PH_API const void *ph_tensor_data(const ph_tensor *t)
{
    ph_tensor *m = (ph_tensor *)t; /* lazy conversion is not a visible change */
    if (m->storage == PHI_DATA_NONE && !m->external && convert_typed(m) != 0)
        return NULL;
    if (m->storage == PHI_DATA_NONE)
        return NULL;
    int ok;
    size_t want = phi_tensor_expected_bytes(m->proto, &ok);
    if (!ok || want != m->nbytes)
        return NULL;
    return m->data ? m->data : (const void *)"";
}

PH_API int ph_tensor_equal(const ph_tensor *a, const ph_tensor *b)
{
    if (ph_tensor_dtype(a) != ph_tensor_dtype(b) || ph_tensor_rank(a) != ph_tensor_rank(b))
        return 0;
    for (size_t i = 0; i < ph_tensor_rank(a); i++)
        if (a->proto->dims[i] != b->proto->dims[i])
            return 0;
    const void *da = ph_tensor_data(a), *db = ph_tensor_data(b);
    if (!da || !db)
        return 0;
    return memcmp(da, db, ph_tensor_nbytes(a)) == 0;
}

/* ------------------------------------------------------ half precision */

float phi_half_to_float(uint16_t h)
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

uint16_t phi_float_to_half(float f)
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

float phi_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t phi_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffff))
        return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}
