/* tests/conformance/run_conformance.c - the ONNX backend conformance suite
 * (Debian's libonnx-testdata) as a test of passhost.
 *
 *   run_conformance [-j N] [-v] [--list FILE] [--only SUBSTR] [--disputed FILE] DATA_DIR
 *
 * DATA_DIR holds the suite's folders (node, pytorch-converted,
 * pytorch-operator, simple); each model folder has model.onnx and
 * test_data_set_N/{input,output}_K.pb.  On every model it checks:
 *
 *   rt   the no-pass round trip (default stages switched off): the output is
 *        byte-identical to model.onnx;
 *   ev   the evaluator on each test set's inputs against its expected
 *        outputs: same dtype and shape, values within atol 1e-7 + rtol 1e-3
 *        (NaN equals NaN), integers and bools equal;
 *   opt  the default stages, then the evaluator on the result again: a
 *        result that no longer matches where the original did is a
 *        miscompile;
 *   shp  shape inference: the inputs fixed to the test data's shapes, every
 *        declared type of the graph's outputs and node outputs cleared, then
 *        the inferred type of each graph output against the expected
 *        output's dtype and dims (an unknown dim is "partial", another one
 *        "wrong");
 *   ver  `--verify` (random inputs): whether it runs (exit 8 means the
 *        evaluator cannot run the model) and passes;
 *   f64  the evaluator in its float64 reference mode (what --verify
 *        measures errors against) on the test inputs, against the expected
 *        outputs (float outputs come back as double), where the evaluator
 *        is right in the model's own types.
 *
 * It prints one table of counts and exits 1 when some model fails a check
 * (a round trip that differs or is refused, an evaluator mismatch or error,
 * a miscompile, a pipeline that refuses a model, a wrong or refused shape,
 * a crash or a timeout) and the failure is not on the list of disputed test
 * data (tests/conformance/disputed.txt: "MODEL CHECK  reason" lines).
 *
 * Each model runs in a forked child (a crash or a hang is that model's
 * result, never the runner's), -j of them at a time (default 2).  The
 * pipeline is the program's own (libpasshost-pipeline), run in memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx/onnx.pb-c.h"
#include "passhost/constant.h"
#include "passhost/eval.h"
#include "passhost/host.h"
#include "passhost/passhost.h"
#include "passhost/pipeline.h"
#include "passhost/shape.h"

#define ATOL 1e-7
#define RTOL 1e-3
#define MODEL_TIMEOUT_S 120
#define MAX_SETS 16
#define MAX_IO 64
#define MSG 320

/* ------------------------------------------------------------ small helpers */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "run_conformance: out of memory\n");
        exit(2);
    }
    return p;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *d = xmalloc(cap);
    size_t r;
    while ((r = fread(d + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nd = realloc(d, cap *= 2);
            if (!nd) {
                free(d);
                fclose(f);
                return NULL;
            }
            d = nd;
        }
    }
    fclose(f);
    *len = n;
    return d;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A message for the result line: one line, no tabs, at most MSG-1 bytes. */
static void set_msg(char *dst, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, MSG, fmt, ap);
    va_end(ap);
    for (char *c = dst; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r')
            *c = ' ';
}

/* ------------------------------------------------------------ the model's interface */

enum { K_TENSOR = 0, K_SEQUENCE = 1, K_OPTIONAL = 2, K_OTHER = 3 };

typedef struct io_decl {
    char name[256];
    int kind;  /* K_* of the declared type */
    int inner; /* optional: kind of the element (tensor or sequence) */
    int elem;  /* element dtype of the tensors (0: unknown) */
} io_decl;

typedef struct model_decl {
    size_t n_in, n_out; /* inputs: those without an initializer */
    io_decl in[MAX_IO], out[MAX_IO];
    int64_t ir_version;
} model_decl;

static void decl_type(io_decl *d, const Onnx__TypeProto *tp)
{
    d->kind = K_OTHER;
    if (!tp)
        return;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        d->kind = K_TENSOR;
        d->elem = tp->tensor_type && tp->tensor_type->has_elem_type ? tp->tensor_type->elem_type : 0;
        break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
        d->kind = K_SEQUENCE;
        const Onnx__TypeProto *e = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
        if (e && e->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && e->tensor_type)
            d->elem = e->tensor_type->elem_type;
        break;
    }
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
        d->kind = K_OPTIONAL;
        io_decl inner = {{0}, 0, 0, 0};
        decl_type(&inner, tp->optional_type ? tp->optional_type->elem_type : NULL);
        d->inner = inner.kind;
        d->elem = inner.elem;
        break;
    }
    default:
        break;
    }
}

static int read_decl(const void *bytes, size_t len, model_decl *md, char *msg)
{
    memset(md, 0, sizeof *md);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, bytes);
    if (!m || !m->graph) {
        set_msg(msg, "model.onnx does not parse");
        if (m)
            onnx__model_proto__free_unpacked(m, NULL);
        return -1;
    }
    const Onnx__GraphProto *g = m->graph;
    md->ir_version = m->ir_version;
    for (size_t i = 0; i < g->n_input; i++) {
        int init = 0;
        for (size_t k = 0; k < g->n_initializer && !init; k++)
            init = g->initializer[k]->name && !strcmp(g->initializer[k]->name, g->input[i]->name);
        if (init || md->n_in == MAX_IO)
            continue;
        io_decl *d = &md->in[md->n_in++];
        snprintf(d->name, sizeof d->name, "%s", g->input[i]->name);
        decl_type(d, g->input[i]->type);
    }
    for (size_t i = 0; i < g->n_output && md->n_out < MAX_IO; i++) {
        io_decl *d = &md->out[md->n_out++];
        snprintf(d->name, sizeof d->name, "%s", g->output[i]->name);
        decl_type(d, g->output[i]->type);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return 0;
}

/* ------------------------------------------------------------ test data */

/* A value of the test data: a tensor, a sequence of values, or an optional
 * (absent, or one value). */
typedef struct tval {
    int kind;
    ph_tensor *t;         /* K_TENSOR */
    struct tval *items;   /* K_SEQUENCE: n items; K_OPTIONAL: 0 or 1 */
    size_t n;
    int elem;             /* sequences and optionals: declared element dtype */
    char name[256];
} tval;

static void tval_free(tval *v)
{
    ph_tensor_free(v->t);
    for (size_t i = 0; i < v->n; i++)
        tval_free(&v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

/* A TensorProto as a tensor.  1 for a string tensor (not evaluated), 0, or
 * -1 with msg. */
static int tensor_of(const Onnx__TensorProto *p, ph_tensor **out, char *msg)
{
    *out = NULL;
    int dt = p->data_type;
    if (dt == PH_DT_STRING)
        return 1;
    size_t es = ph_dtype_size(dt);
    if (!es) {
        set_msg(msg, "test data: dtype %d not supported", dt);
        return -1;
    }
    int64_t n = 1;
    for (size_t i = 0; i < p->n_dims; i++)
        n *= p->dims[i];
    if (n < 0 || p->n_dims > 16) {
        set_msg(msg, "test data: bad shape");
        return -1;
    }
    unsigned char *buf = xmalloc((size_t)n * es);
    size_t have;
    if (p->has_raw_data) {
        have = p->raw_data.len / es;
        if (have == (size_t)n)
            memcpy(buf, p->raw_data.data, (size_t)n * es);
    } else {
        switch (dt) {
        case PH_DT_FLOAT:
            have = p->n_float_data;
            if (have == (size_t)n)
                memcpy(buf, p->float_data, (size_t)n * 4);
            break;
        case PH_DT_DOUBLE:
            have = p->n_double_data;
            if (have == (size_t)n)
                memcpy(buf, p->double_data, (size_t)n * 8);
            break;
        case PH_DT_INT64:
            have = p->n_int64_data;
            if (have == (size_t)n)
                memcpy(buf, p->int64_data, (size_t)n * 8);
            break;
        case PH_DT_UINT32:
        case PH_DT_UINT64:
            have = p->n_uint64_data;
            for (size_t i = 0; have == (size_t)n && i < have; i++) {
                if (dt == PH_DT_UINT32) {
                    uint32_t v = (uint32_t)p->uint64_data[i];
                    memcpy(buf + 4 * i, &v, 4);
                } else
                    memcpy(buf + 8 * i, &p->uint64_data[i], 8);
            }
            break;
        default: /* int32, int16, int8, uint16, uint8, bool, float16, bfloat16 */
            have = p->n_int32_data;
            for (size_t i = 0; have == (size_t)n && i < have; i++) {
                int32_t v = p->int32_data[i];
                if (es == 4)
                    memcpy(buf + 4 * i, &v, 4);
                else if (es == 2) {
                    uint16_t h = (uint16_t)v;
                    memcpy(buf + 2 * i, &h, 2);
                } else
                    buf[i] = (unsigned char)v;
            }
            break;
        }
    }
    if (have != (size_t)n) {
        free(buf);
        set_msg(msg, "test data: %zu elements for a shape of %lld", have, (long long)n);
        return -1;
    }
    *out = ph_tensor_new(dt, p->n_dims, p->dims, buf);
    free(buf);
    if (!*out) {
        set_msg(msg, "test data: cannot make a tensor");
        return -1;
    }
    return 0;
}

/* Protobuf wire reading for SequenceProto and OptionalProto (onnx-data.proto,
 * not part of the installed onnx.proto): field numbers name 1, elem_type 2,
 * tensor(s) 3, sequence(s) 5, optional 7. */
typedef struct wire {
    const unsigned char *p, *end;
} wire;

static int wire_varint(wire *w, uint64_t *v)
{
    *v = 0;
    for (int s = 0; s < 64 && w->p < w->end; s += 7) {
        unsigned char c = *w->p++;
        *v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

/* Next field: its number and wire type; length-delimited data in *d and *dl. */
static int wire_field(wire *w, unsigned *field, unsigned *wt, uint64_t *iv, const unsigned char **d,
                      size_t *dl)
{
    uint64_t key;
    if (wire_varint(w, &key))
        return -1;
    *field = (unsigned)(key >> 3);
    *wt = (unsigned)(key & 7);
    switch (*wt) {
    case 0:
        return wire_varint(w, iv);
    case 1:
        if (w->end - w->p < 8)
            return -1;
        w->p += 8;
        return 0;
    case 5:
        if (w->end - w->p < 4)
            return -1;
        w->p += 4;
        return 0;
    case 2: {
        uint64_t len;
        if (wire_varint(w, &len) || len > (uint64_t)(w->end - w->p))
            return -1;
        *d = w->p;
        *dl = (size_t)len;
        w->p += len;
        return 0;
    }
    default:
        return -1;
    }
}

static int parse_value(const unsigned char *data, size_t len, int kind, int inner, tval *v, char *msg);

static int parse_tensor_bytes(const unsigned char *data, size_t len, tval *v, char *msg)
{
    Onnx__TensorProto *p = onnx__tensor_proto__unpack(NULL, len, data);
    if (!p) {
        set_msg(msg, "test data: a TensorProto does not parse");
        return -1;
    }
    v->kind = K_TENSOR;
    if (p->name)
        snprintf(v->name, sizeof v->name, "%s", p->name);
    int rc = tensor_of(p, &v->t, msg);
    onnx__tensor_proto__free_unpacked(p, NULL);
    return rc;
}

/* Parse one more item into v->items; the worst of rc and its result. */
static int push_item(tval *v, const unsigned char *d, size_t dl, int kind, int rc, char *msg)
{
    tval *ni = realloc(v->items, (v->n + 1) * sizeof *ni);
    if (!ni) {
        set_msg(msg, "out of memory");
        return -1;
    }
    v->items = ni;
    memset(&v->items[v->n], 0, sizeof *ni);
    int r = parse_value(d, dl, kind, K_TENSOR, &v->items[v->n++], msg);
    return r < 0 || rc < 0 ? -1 : (r > rc ? r : rc);
}

/* A SequenceProto or OptionalProto: -1, 0, or 1 when it holds strings. */
static int parse_container(const unsigned char *data, size_t len, int kind, tval *v, char *msg)
{
    v->kind = kind;
    wire w = {data, data + len};
    int rc = 0;
    while (rc >= 0 && w.p < w.end) {
        unsigned f, wt;
        uint64_t iv = 0;
        const unsigned char *d = NULL;
        size_t dl = 0;
        if (wire_field(&w, &f, &wt, &iv, &d, &dl)) {
            set_msg(msg, "test data: a %s does not parse",
                    kind == K_SEQUENCE ? "SequenceProto" : "OptionalProto");
            return -1;
        }
        if (f == 1 && wt == 2)
            snprintf(v->name, sizeof v->name, "%.*s", (int)(dl < 255 ? dl : 255), (const char *)d);
        else if (f == 3 && wt == 2)
            rc = push_item(v, d, dl, K_TENSOR, rc, msg);
        else if (f == 5 && wt == 2)
            rc = push_item(v, d, dl, K_SEQUENCE, rc, msg);
        else if (f == 7 && wt == 2)
            rc = push_item(v, d, dl, K_OPTIONAL, rc, msg);
        else if (wt == 2 && (f == 4 || f == 6)) {
            set_msg(msg, "test data: sparse tensors and maps are not supported");
            return -1;
        }
    }
    return rc;
}

static int parse_value(const unsigned char *data, size_t len, int kind, int inner, tval *v, char *msg)
{
    (void)inner;
    if (kind == K_TENSOR)
        return parse_tensor_bytes(data, len, v, msg);
    if (kind == K_SEQUENCE || kind == K_OPTIONAL)
        return parse_container(data, len, kind, v, msg);
    set_msg(msg, "test data: a map or sparse tensor");
    return -1;
}

/* File dir/PREFIX_K.pb as a value of the declared kind. */
/* onnx 1.12 writes bfloat16 test data as uint16 (numpy has no bfloat16):
 * read it as the bfloat16 the model declares. */
static void bf16_convention(tval *v, int elem)
{
    if (v->kind == K_TENSOR && v->t && elem == PH_DT_BFLOAT16 && ph_tensor_dtype(v->t) == PH_DT_UINT16) {
        ph_tensor *b = ph_tensor_new(PH_DT_BFLOAT16, ph_tensor_rank(v->t), ph_tensor_dims(v->t), ph_tensor_data(v->t));
        if (b) {
            ph_tensor_free(v->t);
            v->t = b;
        }
    }
    for (size_t i = 0; i < v->n; i++)
        bf16_convention(&v->items[i], elem);
}

static int read_value(const char *dir, const char *prefix, size_t k, const io_decl *d, tval *v, char *msg)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s_%zu.pb", dir, prefix, k);
    size_t len;
    char *bytes = slurp(path, &len);
    if (!bytes) {
        set_msg(msg, "test data: cannot read %s_%zu.pb", prefix, k);
        return -1;
    }
    memset(v, 0, sizeof *v);
    int rc = parse_value((const unsigned char *)bytes, len, d->kind, d->inner, v, msg);
    v->elem = d->elem;
    if (rc == 0)
        bf16_convention(v, d->elem);
    free(bytes);
    return rc;
}

/* One test set: the model's inputs and expected outputs. */
typedef struct test_set {
    size_t n_in, n_out;
    tval in[MAX_IO], out[MAX_IO];
} test_set;

static void set_free(test_set *s)
{
    for (size_t i = 0; i < s->n_in; i++)
        tval_free(&s->in[i]);
    for (size_t i = 0; i < s->n_out; i++)
        tval_free(&s->out[i]);
    s->n_in = s->n_out = 0;
}

/* -1 (msg), 0, or 1 when the set holds strings. */
static int read_set(const char *dir, const model_decl *md, test_set *s, char *msg)
{
    memset(s, 0, sizeof *s);
    int worst = 0;
    for (size_t k = 0; k < md->n_in; k++) {
        int rc = read_value(dir, "input", k, &md->in[k], &s->in[k], msg);
        s->n_in = k + 1;
        if (rc < 0)
            return -1;
        worst = rc > worst ? rc : worst;
    }
    for (size_t k = 0; k < md->n_out; k++) {
        int rc = read_value(dir, "output", k, &md->out[k], &s->out[k], msg);
        s->n_out = k + 1;
        if (rc < 0)
            return -1;
        worst = rc > worst ? rc : worst;
    }
    return worst;
}

/* ------------------------------------------------------------ comparing */

static double elem_f64(const void *p, int dt, size_t i)
{
    const unsigned char *b = p;
    switch (dt) {
    case PH_DT_FLOAT: { float v; memcpy(&v, b + 4 * i, 4); return v; }
    case PH_DT_DOUBLE: { double v; memcpy(&v, b + 8 * i, 8); return v; }
    case PH_DT_FLOAT16: { uint16_t h; memcpy(&h, b + 2 * i, 2); return ph_f16_bits_to_f64(h); }
    case PH_DT_BFLOAT16: { uint16_t h; memcpy(&h, b + 2 * i, 2); return ph_bf16_bits_to_f64(h); }
    default: return 0;
    }
}

static int is_float_dt(int dt)
{
    return dt == PH_DT_FLOAT || dt == PH_DT_DOUBLE || dt == PH_DT_FLOAT16 || dt == PH_DT_BFLOAT16;
}

static void dims_str(const ph_tensor *t, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < ph_tensor_rank(t) && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)ph_tensor_dim(t, i));
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* 0 when got matches want (a tensor), else 1 with msg.  f64: got comes
 * from the float64 mode, where a float output is double. */
static int compare_tensor(const char *what, const ph_tensor *got, const ph_tensor *want, int f64, char *msg)
{
    int dg = ph_tensor_dtype(got), dw = ph_tensor_dtype(want);
    if (f64 && dg == PH_DT_DOUBLE && is_float_dt(dw))
        dg = dw; /* compared as values below */
    char sg[160], sw[160];
    dims_str(got, sg, sizeof sg);
    dims_str(want, sw, sizeof sw);
    if (dg != dw) {
        set_msg(msg, "%s: dtype %s, expected %s", what, ph_dtype_name(dg), ph_dtype_name(dw));
        return 1;
    }
    if (strcmp(sg, sw)) {
        set_msg(msg, "%s: shape %s, expected %s", what, sg, sw);
        return 1;
    }
    const unsigned char *a = ph_tensor_data(got), *b = ph_tensor_data(want);
    size_t n = (size_t)ph_tensor_numel(want), es = ph_dtype_size(dw);
    if (n && (!a || !b)) {
        set_msg(msg, "%s: no data", what);
        return 1;
    }
    size_t bad = 0, first = 0;
    double worst = 0, fa = 0, fb = 0;
    for (size_t i = 0; i < n; i++) {
        int ok;
        if (is_float_dt(dw)) {
            double x = elem_f64(a, ph_tensor_dtype(got), i), y = elem_f64(b, dw, i);
            if (isnan(x) || isnan(y))
                ok = isnan(x) && isnan(y);
            else if (isinf(x) || isinf(y))
                ok = x == y;
            else
                ok = fabs(x - y) <= ATOL + RTOL * fabs(y);
            if (!ok && (bad == 0 || fabs(x - y) > worst)) {
                worst = isnan(x - y) ? INFINITY : fabs(x - y);
                fa = x;
                fb = y;
                first = i;
            }
        } else {
            ok = !memcmp(a + i * es, b + i * es, es);
            if (!ok && bad == 0) {
                first = i;
                int64_t x = 0, y = 0;
                memcpy(&x, a + i * es, es < 8 ? es : 8);
                memcpy(&y, b + i * es, es < 8 ? es : 8);
                fa = (double)x;
                fb = (double)y;
            }
        }
        bad += !ok;
    }
    if (bad) {
        set_msg(msg, "%s: %zu of %zu elements differ (element %zu: %.9g, expected %.9g)", what, bad, n, first,
                fa, fb);
        return 1;
    }
    return 0;
}

static const char *kind_name(int k)
{
    return k == PH_KIND_SEQUENCE ? "a sequence" : k == PH_KIND_OPTIONAL ? "an optional" : "a tensor";
}

/* 0 when got matches want (tensor, sequence or optional), else 1 with msg. */
static int compare_value(const char *what, const ph_tensor *got, const tval *want, int f64, char *msg)
{
    int wk = want->kind == K_SEQUENCE ? PH_KIND_SEQUENCE : want->kind == K_OPTIONAL ? PH_KIND_OPTIONAL
                                                                                     : PH_KIND_TENSOR;
    if (ph_tensor_kind(got) != wk) {
        set_msg(msg, "%s: %s, expected %s", what, kind_name(ph_tensor_kind(got)), kind_name(wk));
        return 1;
    }
    if (wk == PH_KIND_TENSOR)
        return compare_tensor(what, got, want->t, f64, msg);
    if (ph_container_length(got) != want->n) {
        set_msg(msg, "%s: %zu items, expected %zu", what, ph_container_length(got), want->n);
        return 1;
    }
    for (size_t i = 0; i < want->n; i++) {
        char w[400];
        snprintf(w, sizeof w, "%s item %zu", what, i);
        if (compare_value(w, ph_container_item(got, i), &want->items[i], f64, msg))
            return 1;
    }
    return 0;
}

/* The evaluator's value of a test value (new; NULL when out of memory). */
static ph_tensor *to_value(const tval *v)
{
    if (v->kind == K_TENSOR)
        return ph_tensor_clone(v->t);
    ph_tensor *items[1024];
    if (v->n > 1024)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        items[i] = to_value(&v->items[i]);
    if (v->kind == K_OPTIONAL)
        return ph_optional_new(v->elem, v->n ? items[0] : NULL);
    return ph_sequence_new(v->elem, v->n, items);
}

/* ------------------------------------------------------------ the evaluator */

enum ev_code { EV_OK, EV_MISMATCH, EV_ERROR, EV_UNSUPPORTED, EV_RANDOM };

/* Evaluate the model in bytes on every test set (f64: in the float64
 * reference mode); EV_* with msg. */
static int eval_sets(const void *bytes, size_t len, const model_decl *md, test_set *sets, size_t n_sets,
                     int f64, char *msg)
{
    ph_model *m = NULL;
    ph_eval *e = NULL;
    ph_error err = {0, ""};
    int code = EV_OK;
    if (ph_model_load_memory(bytes, len, "model.onnx", &m, &err)) {
        set_msg(msg, "load: %s", err.message);
        return EV_ERROR;
    }
    ph_graph *g = ph_model_graph(m);
    size_t ni = ph_graph_input_count(g), no = ph_graph_output_count(g);
    const ph_tensor **in = calloc(ni ? ni : 1, sizeof *in);
    ph_tensor **out = calloc(no ? no : 1, sizeof *out);
    ph_eval_options opts = {sizeof opts, f64};
    int rc = ph_eval_new_with(g, &opts, &e, &err);
    if (rc) {
        set_msg(msg, "%s", err.message);
        code = rc == PH_EUNSUPPORTED ? EV_UNSUPPORTED : EV_ERROR;
        goto done;
    }
    size_t comparable = 0;
    for (size_t j = 0; j < no; j++)
        comparable += !ph_eval_output_is_random(e, j);
    if (!comparable) {
        set_msg(msg, "every output depends on a random op");
        code = EV_RANDOM;
    }
    for (size_t s = 0; s < n_sets && code == EV_OK; s++) {
        test_set *ts = &sets[s];
        for (size_t i = 0; i < ni; i++) {
            in[i] = NULL;
            const char *name = ph_value_name(ph_graph_input(g, i));
            for (size_t k = 0; k < ts->n_in; k++)
                if (!strcmp(md->in[k].name, name) && !in[i])
                    in[i] = to_value(&ts->in[k]);
        }
        rc = ph_eval_run(e, in, ni, out, no, &err);
        for (size_t i = 0; i < ni; i++) {
            ph_tensor_free((ph_tensor *)in[i]);
            in[i] = NULL;
        }
        if (rc) {
            set_msg(msg, "%s", err.message);
            code = rc == PH_EUNSUPPORTED ? EV_UNSUPPORTED : EV_ERROR;
            break;
        }
        for (size_t j = 0; j < no && code == EV_OK; j++) {
            const char *name = ph_value_name(ph_graph_output(g, j));
            if (ph_eval_output_is_random(e, j))
                continue;
            for (size_t k = 0; k < ts->n_out; k++)
                if (!strcmp(md->out[k].name, name)) {
                    char what[300];
                    snprintf(what, sizeof what, "set %zu output '%s'", s, name);
                    if (compare_value(what, out[j], &ts->out[k], f64, msg))
                        code = EV_MISMATCH;
                }
        }
        for (size_t j = 0; j < no; j++) {
            ph_tensor_free(out[j]);
            out[j] = NULL;
        }
    }
done:
    ph_eval_free(e);
    free(in);
    free(out);
    ph_model_free(m);
    return code;
}

/* ------------------------------------------------------------ shape inference */

enum shp_code { SHP_EXACT, SHP_PARTIAL, SHP_WRONG, SHP_REFUSED, SHP_UNCHECKED };

static int check_shapes(const void *bytes, size_t len, const model_decl *md, const test_set *ts, char *msg)
{
    ph_model *m = NULL;
    ph_error err = {0, ""};
    if (ph_model_load_memory(bytes, len, "model.onnx", &m, &err)) {
        set_msg(msg, "load: %s", err.message);
        return SHP_REFUSED;
    }
    ph_graph *g = ph_model_graph(m);
    int code = SHP_EXACT;
    for (size_t k = 0; k < ts->n_in; k++) {
        const ph_tensor *t = ts->in[k].t;
        if (ts->in[k].kind != K_TENSOR || !t)
            continue;
        if (ph_graph_set_input_shape(g, md->in[k].name, (int)ph_tensor_rank(t), ph_tensor_dims(t), &err)) {
            set_msg(msg, "input shape of '%s': %s", md->in[k].name, err.message);
            code = SHP_REFUSED;
            goto done;
        }
    }
    for (size_t j = 0; j < ph_graph_output_count(g); j++)
        ph_value_set_type(ph_graph_output(g, j), PH_DT_UNDEFINED, -1, NULL);
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        for (size_t j = 0; j < ph_node_output_count(n); j++)
            if (ph_node_output(n, j))
                ph_value_set_type(ph_node_output(n, j), PH_DT_UNDEFINED, -1, NULL);
    if (ph_graph_infer_shapes(g, &err)) {
        set_msg(msg, "%s", err.message);
        code = SHP_REFUSED;
        goto done;
    }
    int checked = 0;
    for (size_t j = 0; j < ph_graph_output_count(g); j++) {
        const ph_value *v = ph_graph_output(g, j);
        for (size_t k = 0; k < ts->n_out; k++) {
            const ph_tensor *t = ts->out[k].t;
            if (strcmp(md->out[k].name, ph_value_name(v)) || ts->out[k].kind != K_TENSOR || !t)
                continue;
            checked = 1;
            int dt = ph_value_dtype(v), r = ph_value_rank(v);
            if (dt != PH_DT_UNDEFINED && dt != ph_tensor_dtype(t)) {
                set_msg(msg, "output '%s': dtype %s, expected %s", ph_value_name(v), ph_dtype_name(dt),
                        ph_dtype_name(ph_tensor_dtype(t)));
                code = SHP_WRONG;
                goto done;
            }
            if (r >= 0 && (size_t)r != ph_tensor_rank(t)) {
                set_msg(msg, "output '%s': rank %d, expected %zu", ph_value_name(v), r, ph_tensor_rank(t));
                code = SHP_WRONG;
                goto done;
            }
            if (dt == PH_DT_UNDEFINED || r < 0) {
                if (code == SHP_EXACT)
                    set_msg(msg, "output '%s': %s unknown", ph_value_name(v), dt ? "rank" : "dtype");
                code = SHP_PARTIAL;
                continue;
            }
            for (int d = 0; d < r; d++) {
                int64_t x = ph_value_dim(v, d);
                if (x >= 0 && x != ph_tensor_dim(t, (size_t)d)) {
                    set_msg(msg, "output '%s': dim %d is %lld, expected %lld", ph_value_name(v), d, (long long)x,
                            (long long)ph_tensor_dim(t, (size_t)d));
                    code = SHP_WRONG;
                    goto done;
                }
                if (x < 0 && code == SHP_EXACT) {
                    set_msg(msg, "output '%s': dim %d unknown", ph_value_name(v), d);
                    code = SHP_PARTIAL;
                }
            }
        }
    }
    if (!checked && code == SHP_EXACT) {
        set_msg(msg, "no tensor output to check");
        code = SHP_UNCHECKED;
    }
done:
    ph_model_free(m);
    return code;
}

/* ------------------------------------------------------------ validity */

/* 0 when the written model keeps ONNX's rule for ir_version <= 3 that every
 * initializer of the main graph is listed as a graph input; 1 with msg. */
static int ir3_rule_broken(const void *bytes, size_t len, char *msg)
{
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, bytes);
    int bad = 0;
    if (!m || !m->graph) {
        set_msg(msg, "the written model does not parse");
        bad = 1;
    } else if (m->ir_version >= 1 && m->ir_version <= 3) {
        const Onnx__GraphProto *g = m->graph;
        for (size_t k = 0; k < g->n_initializer && !bad; k++) {
            int listed = 0;
            for (size_t i = 0; i < g->n_input && !listed; i++)
                listed = !strcmp(g->input[i]->name, g->initializer[k]->name);
            if (!listed) {
                set_msg(msg, "ir_version %lld: initializer '%s' is not a graph input", (long long)m->ir_version,
                        g->initializer[k]->name);
                bad = 1;
            }
        }
    }
    if (m)
        onnx__model_proto__free_unpacked(m, NULL);
    return bad;
}

/* ------------------------------------------------------------ one model */

enum { C_RT, C_EV, C_OPT, C_SHP, C_VER, C_F64, N_CHECKS };
static const char *const check_name[N_CHECKS] = {"rt", "ev", "opt", "shp", "ver", "f64"};

typedef struct result {
    char code[N_CHECKS][16];
    char msg[N_CHECKS][MSG];
} result;

static void put(result *r, int c, const char *code)
{
    snprintf(r->code[c], sizeof r->code[c], "%s", code);
}

static int pipeline_run(const void *bytes, size_t len, int round_trip, int verify, void **out, size_t *out_len,
                        char *msg)
{
    ph_pipeline *p = ph_pipeline_new();
    if (!p)
        return PH_PIPELINE_USAGE;
    if (round_trip) {
        ph_pipeline_set(p, "optimize.no_integral=true");
        ph_pipeline_set(p, "adapt.no_integral=true");
    }
    if (verify)
        ph_pipeline_verify(p, 0);
    *out = NULL;
    *out_len = 0;
    int rc = ph_pipeline_run(p, NULL, bytes, len, NULL, out, out_len);
    if (rc)
        set_msg(msg, "exit %d: %s", rc, ph_pipeline_error(p));
    ph_pipeline_free(p);
    return rc;
}

static void run_model(const char *dir, result *r)
{
    char path[1400];
    memset(r, 0, sizeof *r);
    for (int c = 0; c < N_CHECKS; c++)
        put(r, c, "unchecked");
    snprintf(path, sizeof path, "%.1300s/model.onnx", dir);
    size_t len;
    char *bytes = slurp(path, &len);
    if (!bytes) {
        for (int c = 0; c < N_CHECKS; c++) {
            put(r, c, "baddata");
            set_msg(r->msg[c], "cannot read model.onnx");
        }
        return;
    }

    /* the no-pass round trip */
    void *out;
    size_t out_len;
    int rc = pipeline_run(bytes, len, 1, 0, &out, &out_len, r->msg[C_RT]);
    if (rc)
        put(r, C_RT, "refused");
    else if (out_len == len && !memcmp(out, bytes, len))
        put(r, C_RT, "same");
    else {
        put(r, C_RT, "differs");
        size_t i = 0;
        while (i < len && i < out_len && ((char *)out)[i] == bytes[i])
            i++;
        set_msg(r->msg[C_RT], "%zu bytes in, %zu out, first difference at byte %zu", len, out_len, i);
    }
    ph_pipeline_free_buffer(out);

    /* the default stages, with --verify */
    void *opt = NULL;
    size_t opt_len = 0;
    rc = pipeline_run(bytes, len, 0, 1, &opt, &opt_len, r->msg[C_VER]);
    if (rc == 0)
        put(r, C_VER, "ok");
    else if (rc == PH_PIPELINE_MISMATCH)
        put(r, C_VER, "mismatch");
    else if (rc == PH_PIPELINE_NOVERIFY)
        put(r, C_VER, "cannot");
    else
        put(r, C_VER, "refused");
    if (rc == PH_PIPELINE_MISMATCH || rc == PH_PIPELINE_NOVERIFY)
        rc = pipeline_run(bytes, len, 0, 0, &opt, &opt_len, r->msg[C_OPT]);
    else if (rc)
        set_msg(r->msg[C_OPT], "%s", r->msg[C_VER]);
    if (rc)
        put(r, C_OPT, "refused");
    else if (ir3_rule_broken(opt, opt_len, r->msg[C_OPT])) {
        put(r, C_OPT, "invalid");
        rc = -1; /* not evaluated again */
    }

    /* the test data */
    model_decl md;
    test_set *sets = xmalloc(MAX_SETS * sizeof *sets);
    size_t n_sets = 0;
    int strings = 0, bad = read_decl(bytes, len, &md, r->msg[C_EV]);
    for (size_t s = 0; !bad && s < MAX_SETS; s++) {
        snprintf(path, sizeof path, "%.1300s/test_data_set_%zu", dir, s);
        if (!is_dir(path))
            break;
        int k = read_set(path, &md, &sets[n_sets++], r->msg[C_EV]);
        if (k < 0)
            bad = 1;
        strings |= k == 1;
    }
    if (bad) {
        put(r, C_EV, "baddata");
    } else if (strings) {
        put(r, C_EV, "strings");
        set_msg(r->msg[C_EV], "string tensors in the test data");
    } else if (n_sets) {
        static const char *const ev_names[] = {"ok", "mismatch", "error", "unsupported", "random"};
        int ev = eval_sets(bytes, len, &md, sets, n_sets, 0, r->msg[C_EV]);
        put(r, C_EV, ev_names[ev]);
        if (ev == EV_OK)
            put(r, C_F64, ev_names[eval_sets(bytes, len, &md, sets, n_sets, 1, r->msg[C_F64])]);
        if (!rc && ev == EV_OK) {
            int ev2 = eval_sets(opt, opt_len, &md, sets, n_sets, 0, r->msg[C_OPT]);
            put(r, C_OPT, ev2 == EV_OK ? "ok" : "miscompile");
        } else if (!rc)
            set_msg(r->msg[C_OPT], "the evaluator is not right on the original");
    }
    if (!bad && n_sets && !strings)
        put(r, C_SHP, (const char *[]){"exact", "partial", "wrong", "refused", "unchecked"}
                          [check_shapes(bytes, len, &md, &sets[0], r->msg[C_SHP])]);
    for (size_t s = 0; s < n_sets; s++)
        set_free(&sets[s]);
    free(sets);
    ph_pipeline_free_buffer(opt);
    free(bytes);
}

/* ------------------------------------------------------------ the suite */

typedef struct entry {
    char *model;  /* "node/test_abs" */
    result r;
    int done;
} entry;

static const char *const suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple", NULL};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t list_models(const char *root, const char *only, char ***out)
{
    size_t n = 0, cap = 0;
    char **v = NULL;
    for (size_t s = 0; suites[s]; s++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", root, suites[s]);
        DIR *d = opendir(path);
        if (!d)
            continue;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.')
                continue;
            char name[600], full[1800];
            snprintf(name, sizeof name, "%s/%s", suites[s], de->d_name);
            snprintf(full, sizeof full, "%s/%s/model.onnx", root, name);
            if (access(full, R_OK) || (only && !strstr(name, only)))
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                char **nv = realloc(v, cap * sizeof *nv);
                if (!nv)
                    exit(2);
                v = nv;
            }
            v[n++] = strdup(name);
        }
        closedir(d);
    }
    qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

/* The line a child writes: model, then code and message of each check. */
static size_t format_result(const char *model, const result *r, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "%s", model);
    for (int c = 0; c < N_CHECKS && n < cap; c++)
        n += (size_t)snprintf(buf + n, cap - n, "\t%s\t%s", r->code[c], r->msg[c]);
    if (n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "\n");
    return n < cap ? n : cap - 1;
}

/* Split the next tab- or newline-ended field off *p (NULL at the end). */
static char *next_field(char **p)
{
    char *f = *p;
    if (!f || !*f)
        return NULL;
    size_t k = strcspn(f, "\t\n");
    *p = f[k] ? f + k + 1 : f + k;
    f[k] = 0;
    return f;
}

static void parse_result(char *line, result *r)
{
    memset(r, 0, sizeof *r);
    char *p = line;
    next_field(&p); /* the model */
    for (int c = 0; c < N_CHECKS; c++) {
        char *code = next_field(&p), *msg = code ? next_field(&p) : NULL;
        snprintf(r->code[c], sizeof r->code[c], "%.15s", code ? code : "crash");
        snprintf(r->msg[c], MSG, "%s", msg ? msg : "");
    }
}

/* Run every model, jobs at a time, each in a child. */
static void run_all(const char *root, entry *ents, size_t n, int jobs)
{
    typedef struct slot { pid_t pid; int fd; size_t idx; char buf[4096]; size_t len; } slot;
    slot *sl = calloc((size_t)jobs, sizeof *sl);
    size_t next = 0, running = 0;
    for (int j = 0; j < jobs; j++)
        sl[j].pid = 0;
    while (next < n || running) {
        for (int j = 0; j < jobs && next < n; j++) {
            if (sl[j].pid)
                continue;
            int fds[2];
            if (pipe(fds))
                exit(2);
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0)
                exit(2);
            if (pid == 0) {
                close(fds[0]);
                alarm(MODEL_TIMEOUT_S);
                char dir[1400], line[4096];
                snprintf(dir, sizeof dir, "%s/%s", root, ents[next].model);
                result r;
                run_model(dir, &r);
                size_t len = format_result(ents[next].model, &r, line, sizeof line);
                ssize_t w = write(fds[1], line, len);
                _exit(w == (ssize_t)len ? 0 : 3);
            }
            close(fds[1]);
            sl[j].pid = pid;
            sl[j].fd = fds[0];
            sl[j].idx = next++;
            sl[j].len = 0;
            running++;
        }
        struct pollfd pf[64];
        int np = 0, map[64];
        for (int j = 0; j < jobs; j++)
            if (sl[j].pid) {
                pf[np].fd = sl[j].fd;
                pf[np].events = POLLIN;
                map[np++] = j;
            }
        if (poll(pf, (nfds_t)np, -1) < 0 && errno != EINTR)
            exit(2);
        for (int k = 0; k < np; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            slot *s = &sl[map[k]];
            ssize_t got = read(s->fd, s->buf + s->len, sizeof s->buf - 1 - s->len);
            if (got > 0) {
                s->len += (size_t)got;
                continue;
            }
            close(s->fd);
            int status = 0;
            waitpid(s->pid, &status, 0);
            entry *e = &ents[s->idx];
            s->buf[s->len] = 0;
            if (s->len && WIFEXITED(status) && WEXITSTATUS(status) == 0)
                parse_result(s->buf, &e->r);
            else {
                const char *why = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "timeout" : "crash";
                for (int c = 0; c < N_CHECKS; c++) {
                    put(&e->r, c, why);
                    set_msg(e->r.msg[c], "%s (status %d)", why, status);
                }
            }
            e->done = 1;
            s->pid = 0;
            running--;
        }
    }
    free(sl);
}

/* ------------------------------------------------------------ the table */

typedef struct disputed {
    char model[300];
    char check[16];
} disputed;

static size_t read_disputed(const char *path, disputed *d, size_t cap)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return 0;
    char line[1024];
    size_t n = 0;
    while (n < cap && fgets(line, sizeof line, f)) {
        char m[300], c[16];
        if (line[0] == '#' || sscanf(line, "%299s %15s", m, c) != 2)
            continue;
        snprintf(d[n].model, sizeof d[n].model, "%s", m);
        snprintf(d[n].check, sizeof d[n].check, "%s", c);
        n++;
    }
    fclose(f);
    return n;
}

static int is_disputed(const disputed *d, size_t nd, const char *model, int c)
{
    for (size_t i = 0; i < nd; i++)
        if (!strcmp(d[i].model, model) && !strcmp(d[i].check, check_name[c]))
            return 1;
    return 0;
}

/* ok, fail, or not run ("skip") for each code of each check. */
enum { RATE_OK, RATE_FAIL, RATE_SKIP };
static int rating(int c, const char *code)
{
    static const char *const ok[N_CHECKS] = {"same", "ok", "ok", "exact partial", "ok", "ok"};
    static const char *const skip[N_CHECKS] = {"", "unsupported random strings", "unchecked",
                                               "unchecked", "cannot", "unchecked"};
    char pad[24];
    snprintf(pad, sizeof pad, " %s ", code);
    char okl[80], skl[80];
    snprintf(okl, sizeof okl, " %s ", ok[c]);
    snprintf(skl, sizeof skl, " %s ", skip[c]);
    if (strstr(okl, pad))
        return RATE_OK;
    if (strstr(skl, pad))
        return RATE_SKIP;
    return RATE_FAIL;
}

int main(int argc, char **argv)
{
    int jobs = 2, verbose = 0;
    const char *list = NULL, *only = NULL, *disp = NULL, *root = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-j") && i + 1 < argc)
            jobs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--list") && i + 1 < argc)
            list = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--disputed") && i + 1 < argc)
            disp = argv[++i];
        else if (argv[i][0] != '-' && !root)
            root = argv[i];
        else {
            fprintf(stderr, "usage: run_conformance [-j N] [-v] [--list FILE] [--only SUBSTR] "
                            "[--disputed FILE] DATA_DIR\n");
            return 2;
        }
    }
    if (!root || jobs < 1 || jobs > 64) {
        fprintf(stderr, "run_conformance: give the suite's data folder (and -j between 1 and 64)\n");
        return 2;
    }
    char **names;
    size_t n = list_models(root, only, &names);
    if (!n) {
        fprintf(stderr, "run_conformance: no model under %s\n", root);
        return 2;
    }
    entry *ents = calloc(n, sizeof *ents);
    for (size_t i = 0; i < n; i++)
        ents[i].model = names[i];
    run_all(root, ents, n, jobs);

    static disputed dl[256];
    size_t nd = read_disputed(disp, dl, 256);
    FILE *lf = list ? fopen(list, "w") : NULL;
    size_t count[N_CHECKS][4] = {{0}}, failures = 0;
    size_t ev_right = 0, ver_runs = 0;
    for (size_t i = 0; i < n; i++) {
        const entry *e = &ents[i];
        char line[4096];
        format_result(e->model, &e->r, line, sizeof line);
        if (lf)
            fputs(line, lf);
        int failed = 0;
        for (int c = 0; c < N_CHECKS; c++) {
            int rt = rating(c, e->r.code[c]);
            if (rt == RATE_FAIL && is_disputed(dl, nd, e->model, c))
                count[c][3]++;
            else
                count[c][rt]++;
            if (rt == RATE_FAIL && !is_disputed(dl, nd, e->model, c)) {
                failed = 1;
                printf("FAIL %s %s %s: %s\n", e->model, check_name[c], e->r.code[c], e->r.msg[c]);
            } else if (verbose && rt != RATE_OK)
                printf("%-4s %s %s %s: %s\n", rt == RATE_SKIP ? "skip" : "disp", e->model, check_name[c],
                       e->r.code[c], e->r.msg[c]);
        }
        failures += (size_t)failed;
        ev_right += !strcmp(e->r.code[C_EV], "ok");
        ver_runs += !strcmp(e->r.code[C_VER], "ok") || !strcmp(e->r.code[C_VER], "mismatch");
    }
    if (lf)
        fclose(lf);
    static const char *const rows[N_CHECKS] = {
        "no-pass round trip, byte-identical", "evaluator vs expected outputs",
        "default stages, evaluator again", "shape inference vs expected", "--verify (random inputs) runs",
        "evaluator in float64 vs expected"};
    printf("\nONNX conformance suite: %zu models (%s)\n", n, root);
    printf("%-38s %6s %6s %9s %8s\n", "check", "ok", "fail", "disputed", "not run");
    for (int c = 0; c < N_CHECKS; c++)
        printf("%-38s %6zu %6zu %9zu %8zu\n", rows[c], count[c][RATE_OK], count[c][RATE_FAIL], count[c][3],
               count[c][RATE_SKIP]);
    /* why checks did not run or failed (and how many shapes are partial) */
    for (int c = 0; c < N_CHECKS; c++) {
        char codes[16][16];
        size_t cnt[16] = {0}, nc = 0;
        for (size_t i = 0; i < n; i++) {
            const char *code = ents[i].r.code[c];
            if (rating(c, code) == RATE_OK && strcmp(code, "partial")) /* partial shapes are shown */
                continue;
            size_t k = 0;
            while (k < nc && strcmp(codes[k], code))
                k++;
            if (k == nc && nc < 16)
                snprintf(codes[nc++], 16, "%s", code);
            if (k < 16)
                cnt[k]++;
        }
        if (!nc)
            continue;
        printf("  %-4s", check_name[c]);
        for (size_t k = 0; k < nc; k++)
            printf(" %s %zu%s", codes[k], cnt[k], k + 1 < nc ? "," : "\n");
    }
    printf("evaluator right on %zu of %zu models; --verify runs on %zu of %zu\n", ev_right, n, ver_runs, n);
    printf("%zu model%s failed\n", failures, failures == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(ents);
    return failures ? 1 : 0;
}
