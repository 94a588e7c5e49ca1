/* tests/test_infer.c - shape and type inference of every operator against
 * hand-written expectations: broadcasting, negative axes, 0/-1 in Reshape,
 * symbolic dims, shape constants (Shape -> Gather -> Concat -> Reshape),
 * contradictions named by node, incremental updates, user-given shapes. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

#ifndef PH_SOURCE_DIR
#define PH_SOURCE_DIR "."
#endif

#define F PH_DT_FLOAT
#define I64 PH_DT_INT64
#define B PH_DT_BOOL
#define END ((ph_value *)1)

static ph_model *M;
static ph_graph *G;
static ph_error E;

static void setup_opset(int64_t opset)
{
    ph_model_free(M);
    M = ph_model_new(opset);
    ck_assert_ptr_nonnull(M);
    G = ph_model_graph(M);
    memset(&E, 0, sizeof E);
}

static void teardown(void)
{
    ph_model_free(M);
    M = NULL;
}

/* "batch,3,?" -> dims/params; "*" = unknown rank; "" = scalar. */
static ph_value *in(const char *name, int dt, const char *shape)
{
    int64_t dims[16] = {0};
    char params[16][32];
    int rank = 0;
    if (strcmp(shape, "*") == 0) {
        ph_value *v = ph_graph_add_input(G, name, dt, -1, NULL);
        ck_assert_ptr_nonnull(v);
        return v;
    }
    const char *p = shape;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char tok[32];
        snprintf(tok, sizeof tok, "%.*s", (int)len, p);
        params[rank][0] = 0;
        if (tok[0] >= '0' && tok[0] <= '9')
            dims[rank] = atoll(tok);
        else {
            dims[rank] = -1;
            if (strcmp(tok, "?") != 0)
                snprintf(params[rank], sizeof params[rank], "%s", tok);
        }
        rank++;
        p += len;
        if (*p == ',')
            p++;
    }
    ph_value *v = ph_graph_add_input(G, name, dt, rank, dims);
    ck_assert_ptr_nonnull(v);
    for (int i = 0; i < rank; i++)
        if (params[i][0])
            ph_value_set_dim_param(v, i, params[i]);
    return v;
}

static ph_value *i64s(int n, ...)
{
    int64_t vals[64];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        vals[i] = va_arg(ap, long long);
    va_end(ap);
    int64_t d = n;
    ph_value *v = ph_graph_add_initializer(G, "c", ph_tensor_new(I64, 1, &d, vals));
    ck_assert_ptr_nonnull(v);
    return v;
}

static ph_value *i64scalar(int64_t x)
{
    ph_value *v = ph_graph_add_initializer(G, "s", ph_tensor_new(I64, 0, NULL, &x));
    ck_assert_ptr_nonnull(v);
    return v;
}

static ph_value *f32s(int n, ...)
{
    float vals[64];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        vals[i] = (float)va_arg(ap, double);
    va_end(ap);
    int64_t d = n;
    ph_value *v = ph_graph_add_initializer(G, "f", ph_tensor_new(F, 1, &d, vals));
    ck_assert_ptr_nonnull(v);
    return v;
}

/* A float initializer of a given shape (zeros). */
static ph_value *fconst(int rank, ...)
{
    int64_t dims[8];
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++)
        dims[i] = va_arg(ap, long long);
    va_end(ap);
    ph_value *v = ph_graph_add_initializer(G, "w", ph_tensor_new(F, (size_t)rank, dims, NULL));
    ck_assert_ptr_nonnull(v);
    return v;
}

/* node(op, nout, inputs..., END); NULL inputs are omitted optional ones. */
static ph_node *node(const char *op, size_t nout, ...)
{
    ph_value *ins[16];
    size_t n = 0;
    va_list ap;
    va_start(ap, nout);
    for (ph_value *v; (v = va_arg(ap, ph_value *)) != END;)
        ins[n++] = v;
    va_end(ap);
    ph_node *nd = ph_node_create(G, NULL, op, n, ins, nout);
    ck_assert_ptr_nonnull(nd);
    return nd;
}

static ph_value *out(ph_node *n, size_t i) { return ph_node_output(n, i); }

static void ints(ph_node *n, const char *name, int count, ...)
{
    int64_t v[16];
    va_list ap;
    va_start(ap, count);
    for (int i = 0; i < count; i++)
        v[i] = va_arg(ap, long long);
    va_end(ap);
    ck_assert_int_eq(ph_node_set_attr_ints(n, name, (size_t)count, v), 0);
}

static const char *fmt(const ph_value *v)
{
    static char buf[8][256];
    static int k;
    char *b = buf[k++ & 7];
    size_t n = (size_t)snprintf(b, 256, "%s", ph_value_dtype(v) ? ph_dtype_name(ph_value_dtype(v)) : "?");
    int r = ph_value_rank(v);
    if (r < 0) {
        snprintf(b + n, 256 - n, "[*]");
        return b;
    }
    n += (size_t)snprintf(b + n, 256 - n, "[");
    for (int i = 0; i < r; i++) {
        const char *p = ph_value_dim_param(v, i);
        if (ph_value_dim(v, i) >= 0)
            n += (size_t)snprintf(b + n, 256 - n, "%s%lld", i ? "," : "", (long long)ph_value_dim(v, i));
        else
            n += (size_t)snprintf(b + n, 256 - n, "%s%s", i ? "," : "", p && *p ? p : "?");
    }
    snprintf(b + n, 256 - n, "]");
    return b;
}

#define EXPECT(v, s) ck_assert_str_eq(fmt(v), s)

static void infer_ok(void)
{
    int rc = ph_graph_infer_shapes(G, &E);
    ck_assert_msg(rc == 0, "inference failed: %s", E.message);
}

static void infer_fails(const char *needle)
{
    int rc = ph_graph_infer_shapes(G, &E);
    ck_assert_int_eq(rc, PH_EVERIFY);
    ck_assert_msg(strstr(E.message, needle) != NULL, "message '%s' lacks '%s'", E.message, needle);
}

/* The shape constant of v as "a,b,?" (symbolic entries by name). */
static const char *pcfmt(const ph_value *v)
{
    static char b[256];
    ptrdiff_t n = ph_value_shape_const_len(v);
    if (n < 0)
        return "none";
    size_t k = 0;
    b[0] = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        int64_t val;
        const char *p;
        ph_shape_const_kind kind = ph_value_shape_const_at(v, (size_t)i, &val, &p);
        const char *sep = i ? "," : "";
        if (kind == PH_SC_KNOWN)
            k += (size_t)snprintf(b + k, sizeof b - k, "%s%lld", sep, (long long)val);
        else if (kind == PH_SC_SYMBOLIC)
            k += (size_t)snprintf(b + k, sizeof b - k, "%s%s", sep, p);
        else
            k += (size_t)snprintf(b + k, sizeof b - k, "%s?", sep);
    }
    return b;
}

/* ================================================================ tests */

START_TEST(test_unary_and_cast)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,3,?");
    const char *ops[] = {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Erf", "Reciprocal",
                         "Floor", "Ceil", "LeakyRelu", "HardSigmoid", "HardSwish", "Selu", "Elu", "Softmax",
                         "LogSoftmax", "Identity", "Gelu", "CumSum", "Trilu"};
    ph_value *outs[32];
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        outs[i] = out(node(ops[i], 1, x, END), 0);
    ph_node *cast = node("Cast", 1, x, END);
    ph_node_set_attr_int(cast, "to", PH_DT_FLOAT16);
    ph_node *drop = node("Dropout", 2, x, END);
    ph_node *clip = node("Clip", 1, x, f32s(1, 0.0), END);
    ph_node *nt = node("Not", 1, out(node("Greater", 1, x, f32s(1, 0.5), END), 0), END);
    infer_ok();
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        ck_assert_msg(strcmp(fmt(outs[i]), "float[batch,3,?]") == 0, "%s gives %s", ops[i], fmt(outs[i]));
    EXPECT(out(cast, 0), "float16[batch,3,?]");
    EXPECT(out(drop, 0), "float[batch,3,?]");
    EXPECT(out(drop, 1), "bool[batch,3,?]");
    EXPECT(out(clip, 0), "float[batch,3,?]");
    EXPECT(out(nt, 0), "bool[batch,3,?]");
}
END_TEST

START_TEST(test_broadcast)
{
    setup_opset(13);
    ph_value *a = in("a", F, "2,1,4"), *b = in("b", F, "3,1"), *s = in("s", F, "batch,1");
    ph_value *t = in("t", F, "1,5"), *u = in("u", F, "N,3"), *w = in("w", F, "4,3"), *q = in("q", F, "");
    ph_value *r1 = out(node("Add", 1, a, b, END), 0);
    ph_value *r2 = out(node("Mul", 1, s, t, END), 0);
    ph_value *r3 = out(node("Sub", 1, u, w, END), 0);
    ph_value *r4 = out(node("Div", 1, q, a, END), 0);
    ph_value *r5 = out(node("Pow", 1, s, s, END), 0);
    ph_value *r6 = out(node("Equal", 1, a, b, END), 0);
    ph_value *r7 = out(node("Where", 1, r6, a, q, END), 0);
    ph_value *r8 = out(node("Max", 1, a, b, in("t4", F, "1,4"), END), 0);
    ph_value *r9 = out(node("Sum", 1, q, END), 0);
    ph_value *r10 = out(node("Mean", 1, s, u, END), 0);
    ph_value *r11 = out(node("PRelu", 1, a, f32s(1, 0.1), END), 0);
    ph_value *r12 = out(node("And", 1, r6, r6, END), 0);
    ph_value *r13 = out(node("Min", 1, s, in("v", F, "batch,7"), END), 0);
    infer_ok();
    EXPECT(r1, "float[2,3,4]");
    EXPECT(r2, "float[batch,5]");
    EXPECT(r3, "float[4,3]");
    EXPECT(r4, "float[2,1,4]");
    EXPECT(r5, "float[batch,1]");
    EXPECT(r6, "bool[2,3,4]");
    EXPECT(r7, "float[2,3,4]");
    EXPECT(r8, "float[2,3,4]");
    EXPECT(r9, "float[]");
    EXPECT(r10, "float[?,3]"); /* batch vs N: different names */
    EXPECT(r11, "float[2,1,4]");
    EXPECT(r12, "bool[2,3,4]");
    EXPECT(r13, "float[batch,7]");
}
END_TEST

START_TEST(test_broadcast_error_names_node)
{
    setup_opset(13);
    ph_node *n = node("Add", 1, in("a", F, "2,3"), in("b", F, "4,3"), END);
    ph_node_set_name(n, "bad_add");
    infer_fails("node 'bad_add' (Add)");
    ck_assert_ptr_nonnull(strstr(E.message, "cannot broadcast"));
}
END_TEST

START_TEST(test_matmul_gemm)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,seq,64");
    ph_value *r1 = out(node("MatMul", 1, x, fconst(2, 64LL, 32LL), END), 0);
    ph_value *r2 = out(node("MatMul", 1, in("v", F, "4"), fconst(2, 4LL, 5LL), END), 0);
    ph_value *r3 = out(node("MatMul", 1, fconst(2, 5LL, 4LL), in("v2", F, "4"), END), 0);
    ph_value *r4 = out(node("MatMul", 1, in("a", F, "2,1,3,4"), in("b", F, "5,4,6"), END), 0);
    ph_value *r5 = out(node("MatMul", 1, x, in("xt", F, "batch,64,seq"), END), 0);
    ph_node *g = node("Gemm", 1, in("ga", F, "7,batch"), in("gb", F, "9,7"), f32s(1, 0.0), END);
    ph_node_set_attr_int(g, "transA", 1);
    ph_node_set_attr_int(g, "transB", 1);
    ph_value *r7 = out(node("MatMulInteger", 1, in("qa", PH_DT_UINT8, "2,3"), in("qb", PH_DT_UINT8, "3,4"), END), 0);
    infer_ok();
    EXPECT(r1, "float[batch,seq,32]");
    EXPECT(r2, "float[5]");
    EXPECT(r3, "float[5]");
    EXPECT(r4, "float[2,5,3,6]");
    EXPECT(r5, "float[batch,seq,seq]");
    EXPECT(out(g, 0), "float[batch,9]");
    EXPECT(r7, "int32[2,4]");
}
END_TEST

START_TEST(test_matmul_mismatch)
{
    setup_opset(13);
    ph_node *n = node("MatMul", 1, in("a", F, "2,3"), in("b", F, "4,5"), END);
    ph_node_set_name(n, "mm");
    infer_fails("node 'mm' (MatMul): inner dims differ");
}
END_TEST

START_TEST(test_conv)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,3,32,32");
    ph_node *c1 = node("Conv", 1, x, fconst(4, 8LL, 3LL, 3LL, 3LL), END);
    ints(c1, "pads", 4, 1LL, 1LL, 1LL, 1LL);
    ph_node *c2 = node("Conv", 1, x, fconst(4, 8LL, 3LL, 3LL, 3LL), f32s(8, 0., 0., 0., 0., 0., 0., 0., 0.), END);
    ints(c2, "strides", 2, 2LL, 2LL);
    ph_node *c3 = node("Conv", 1, in("x3", F, "1,4,33,33"), fconst(4, 4LL, 1LL, 3LL, 3LL), END);
    ph_node_set_attr_string(c3, "auto_pad", "SAME_UPPER");
    ph_node_set_attr_int(c3, "group", 4);
    ints(c3, "strides", 2, 2LL, 2LL);
    ph_node *c4 = node("Conv", 1, x, fconst(4, 8LL, 3LL, 3LL, 3LL), END);
    ints(c4, "dilations", 2, 2LL, 2LL);
    ph_node *c5 = node("Conv", 1, in("s", F, "N,3,H,W"), fconst(4, 16LL, 3LL, 3LL, 3LL), END);
    ints(c5, "pads", 4, 1LL, 1LL, 1LL, 1LL);
    ph_node *c6 = node("Conv", 1, in("x1d", F, "1,2,10"), fconst(3, 4LL, 2LL, 3LL), END);
    ph_node *t1 = node("ConvTranspose", 1, in("y", F, "1,8,16,16"), fconst(4, 8LL, 4LL, 4LL, 4LL), END);
    ints(t1, "strides", 2, 2LL, 2LL);
    ints(t1, "pads", 4, 1LL, 1LL, 1LL, 1LL);
    ph_node *t2 = node("ConvTranspose", 1, in("y2", F, "1,8,5,5"), fconst(4, 8LL, 2LL, 3LL, 3LL), END);
    ph_node_set_attr_int(t2, "group", 2);
    ints(t2, "strides", 2, 3LL, 3LL);
    ints(t2, "output_shape", 2, 16LL, 17LL);
    infer_ok();
    EXPECT(out(c1, 0), "float[batch,8,32,32]");
    EXPECT(out(c2, 0), "float[batch,8,15,15]");
    EXPECT(out(c3, 0), "float[1,4,17,17]");
    EXPECT(out(c4, 0), "float[batch,8,28,28]");
    EXPECT(out(c5, 0), "float[N,16,H,W]");
    EXPECT(out(c6, 0), "float[1,4,8]");
    EXPECT(out(t1, 0), "float[1,4,32,32]");
    EXPECT(out(t2, 0), "float[1,4,16,17]");
}
END_TEST

START_TEST(test_conv_channel_mismatch)
{
    setup_opset(13);
    ph_node *c = node("Conv", 1, in("x", F, "1,3,8,8"), fconst(4, 8LL, 4LL, 3LL, 3LL), END);
    ph_node_set_name(c, "conv0");
    infer_fails("node 'conv0' (Conv): input has 3 channels");
}
END_TEST

START_TEST(test_pools_and_norms)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,64,64,64");
    ph_node *p1 = node("MaxPool", 2, x, END);
    ints(p1, "kernel_shape", 2, 3LL, 3LL);
    ints(p1, "strides", 2, 2LL, 2LL);
    ints(p1, "pads", 4, 1LL, 1LL, 1LL, 1LL);
    ph_node *p2 = node("AveragePool", 1, in("y", F, "1,2,5,5"), END);
    ints(p2, "kernel_shape", 2, 2LL, 2LL);
    ints(p2, "strides", 2, 2LL, 2LL);
    ph_node_set_attr_int(p2, "ceil_mode", 1);
    ph_node *p3 = node("MaxPool", 1, x, END);
    ints(p3, "kernel_shape", 2, 1LL, 1LL);
    ph_node *g1 = node("GlobalAveragePool", 1, x, END);
    ph_node *g2 = node("GlobalMaxPool", 1, in("z", F, "2,3,4,5,6"), END);
    ph_value *s64 = fconst(1, 64LL);
    ph_node *bn = node("BatchNormalization", 1, x, s64, s64, s64, s64, END);
    ph_node *inn = node("InstanceNormalization", 1, x, s64, s64, END);
    ph_node *ln = node("LayerNormalization", 3, in("t", F, "batch,seq,64"), s64, s64, END);
    infer_ok();
    EXPECT(out(p1, 0), "float[batch,64,32,32]");
    EXPECT(out(p1, 1), "int64[batch,64,32,32]");
    EXPECT(out(p2, 0), "float[1,2,3,3]");
    EXPECT(out(p3, 0), "float[batch,64,64,64]");
    EXPECT(out(g1, 0), "float[batch,64,1,1]");
    EXPECT(out(g2, 0), "float[2,3,1,1,1]");
    EXPECT(out(bn, 0), "float[batch,64,64,64]");
    EXPECT(out(inn, 0), "float[batch,64,64,64]");
    EXPECT(out(ln, 0), "float[batch,seq,64]");
    EXPECT(out(ln, 1), "float[batch,seq,1]");
}
END_TEST

START_TEST(test_reshape)
{
    setup_opset(14);
    ph_value *x = in("x", F, "batch,seq,64");
    ph_value *r1 = out(node("Reshape", 1, x, i64s(4, 0LL, 0LL, 4LL, 16LL), END), 0);
    ph_value *r2 = out(node("Reshape", 1, x, i64s(2, -1LL, 64LL), END), 0);
    ph_value *r3 = out(node("Reshape", 1, in("y", F, "batch,12"), i64s(3, -1LL, 3LL, 4LL), END), 0);
    ph_value *r4 = out(node("Reshape", 1, in("z", F, "2,3,4"), i64s(2, 0LL, -1LL), END), 0);
    ph_value *r5 = out(node("Reshape", 1, in("w", F, "2,3,4"), i64s(3, 4LL, -1LL, 2LL), END), 0);
    ph_value *r6 = out(node("Reshape", 1, x, in("dyn", I64, "3"), END), 0);
    ph_node *az = node("Reshape", 1, in("e", F, "0,3"), i64s(2, 0LL, 3LL), END);
    ph_node_set_attr_int(az, "allowzero", 1);
    infer_ok();
    EXPECT(r1, "float[batch,seq,4,16]");
    EXPECT(r2, "float[?,64]");
    EXPECT(r3, "float[batch,3,4]");
    EXPECT(r4, "float[2,12]");
    EXPECT(r5, "float[4,3,2]");
    EXPECT(r6, "float[?,?,?]");
    EXPECT(out(az, 0), "float[0,3]");
}
END_TEST

START_TEST(test_reshape_errors)
{
    setup_opset(13);
    ph_node *n = node("Reshape", 1, in("x", F, "2,3"), i64s(2, 4LL, 2LL), END);
    ph_node_set_name(n, "rs");
    infer_fails("node 'rs' (Reshape): cannot reshape 6 elements");
    setup_opset(13);
    node("Reshape", 1, in("x", F, "2,3"), i64s(2, -1LL, 4LL), END);
    infer_fails("cannot reshape");
}
END_TEST

/* x -> Shape -> Gather(0) -> Unsqueeze -> Concat([.., -1]) -> Reshape */
START_TEST(test_shape_chain_static)
{
    setup_opset(13);
    ph_value *x = in("x", F, "2,3,4");
    ph_value *shp = out(node("Shape", 1, x, END), 0);
    ph_value *g0 = out(node("Gather", 1, shp, i64scalar(0), END), 0);
    ph_value *u = out(node("Unsqueeze", 1, g0, i64s(1, 0LL), END), 0);
    ph_value *cat = out(node("Concat", 1, u, i64s(1, -1LL), END), 0);
    ph_node_set_attr_int(ph_value_producer(cat), "axis", 0);
    ph_value *r = out(node("Reshape", 1, x, cat, END), 0);
    infer_ok();
    EXPECT(shp, "int64[3]");
    EXPECT(g0, "int64[]");
    EXPECT(u, "int64[1]");
    EXPECT(cat, "int64[2]");
    ck_assert_str_eq(pcfmt(shp), "2,3,4");
    ck_assert_str_eq(pcfmt(g0), "2");
    ck_assert_str_eq(pcfmt(cat), "2,-1");
    const int64_t *vals;
    ck_assert_int_eq(ph_value_shape_const(cat, &vals), 2);
    ck_assert_int_eq(vals[0], 2);
    ck_assert_int_eq(vals[1], -1);
    EXPECT(r, "float[2,12]");
}
END_TEST

/* The same chain on symbolic dims, as torch exports it for multi-head attention. */
START_TEST(test_shape_chain_symbolic)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,seq,64");
    ph_value *shp = out(node("Shape", 1, x, END), 0);
    ph_value *b = out(node("Gather", 1, shp, i64scalar(0), END), 0);
    ph_value *s = out(node("Gather", 1, shp, i64scalar(-2), END), 0);
    ph_value *ub = out(node("Unsqueeze", 1, b, i64s(1, 0LL), END), 0);
    ph_value *us = out(node("Unsqueeze", 1, s, i64s(1, 0LL), END), 0);
    ph_node *cat = node("Concat", 1, ub, us, i64s(2, 4LL, 16LL), END);
    ph_node_set_attr_int(cat, "axis", 0);
    ph_value *r = out(node("Reshape", 1, x, out(cat, 0), END), 0);
    /* [batch, -1] on [batch, seq, 64] cannot drop seq: unknown; [batch, seq, -1] is 64 */
    ph_node *cat2 = node("Concat", 1, ub, us, i64s(1, -1LL), END);
    ph_node_set_attr_int(cat2, "axis", 0);
    ph_value *r2 = out(node("Reshape", 1, x, out(cat2, 0), END), 0);
    /* arithmetic on shape constants: seq * 1 + 0 stays seq */
    ph_value *m = out(node("Add", 1, out(node("Mul", 1, us, i64s(1, 1LL), END), 0), i64s(1, 0LL), END), 0);
    ph_value *e = out(node("Expand", 1, in("y", F, "1,1"), out(node("Concat", 1, ub, m, END), 0), END), 0);
    ph_node_set_attr_int(ph_value_producer(ph_node_input(ph_value_producer(e), 1)), "axis", 0);
    ph_value *cs = out(node("ConstantOfShape", 1, out(cat, 0), END), 0);
    ph_value *rg = out(node("Range", 1, i64scalar(0), s, i64scalar(1), END), 0);
    ph_value *sz = out(node("Size", 1, x, END), 0);
    infer_ok();
    ck_assert_str_eq(pcfmt(shp), "batch,seq,64");
    ck_assert_str_eq(pcfmt(out(cat, 0)), "batch,seq,4,16");
    ck_assert_int_eq(ph_value_shape_const(out(cat, 0), NULL), -1); /* not all numbers */
    EXPECT(r, "float[batch,seq,4,16]");
    EXPECT(r2, "float[batch,seq,64]");
    ck_assert_str_eq(pcfmt(m), "seq");
    EXPECT(e, "float[batch,seq]");
    EXPECT(cs, "float[batch,seq,4,16]");
    EXPECT(rg, "int64[seq]");
    EXPECT(sz, "int64[]");
    ck_assert_str_eq(pcfmt(sz), "?");
}
END_TEST

/* ph_value_set_type: unknown dims (any negative, or no dims) read -1, a
 * symbolic dim's name goes with a new type, setting the same type again
 * keeps it; values inferred to one static type and to one with a symbolic
 * dim of the same sizes each read their own (the interned shape keeps the
 * IR's dims only for types without names). */
START_TEST(test_value_set_type_forms)
{
    setup_opset(13);
    ph_value *v = in("v", F, "batch,3");
    ck_assert_int_eq(ph_value_set_type(v, F, 3, (const int64_t[]){4, -7, 5}), 0);
    EXPECT(v, "float[4,?,5]");
    ck_assert_ptr_null(ph_value_dim_param(v, 0));
    ck_assert_int_eq(ph_value_set_type(v, I64, 2, NULL), 0);
    EXPECT(v, "int64[?,?]");
    ck_assert_int_eq(ph_value_set_dim_param(v, 1, "n"), 0);
    EXPECT(v, "int64[?,n]");
    ck_assert_int_eq(ph_value_set_type(v, I64, 2, (const int64_t[]){-1, -1}), 0);
    EXPECT(v, "int64[?,?]");
    ck_assert_int_eq(ph_value_set_type(v, I64, 2, (const int64_t[]){-1, -1}), 0);
    EXPECT(v, "int64[?,?]");
    ck_assert_int_eq(ph_value_set_type(v, F, -1, NULL), 0);
    EXPECT(v, "float[*]");

    ph_value *a = out(node("Relu", 1, in("x", F, "batch,3"), END), 0);
    ph_value *b = out(node("Relu", 1, in("y", F, "?,3"), END), 0);
    ph_value *c = out(node("Relu", 1, in("z", F, "?,3"), END), 0);
    ph_value *d = out(node("Relu", 1, in("w", F, "batch,3"), END), 0);
    infer_ok();
    EXPECT(a, "float[batch,3]");
    EXPECT(b, "float[?,3]");
    EXPECT(c, "float[?,3]");
    EXPECT(d, "float[batch,3]");
    ck_assert_ptr_null(ph_value_dim_param(c, 0));
    ck_assert_str_eq(ph_value_dim_param(d, 0), "batch");
}
END_TEST

START_TEST(test_shape_ops)
{
    setup_opset(13);
    ph_value *x = in("x", F, "2,3,4,5");
    ph_node *fl = node("Flatten", 1, x, END);
    ph_node_set_attr_int(fl, "axis", -2);
    ph_node *fl0 = node("Flatten", 1, in("xs", F, "batch,3,4"), END);
    ph_node *tr = node("Transpose", 1, x, END);
    ph_node *tp = node("Transpose", 1, x, END);
    ints(tp, "perm", 4, 0LL, 2LL, 3LL, 1LL);
    ph_value *sq = out(node("Squeeze", 1, in("s1", F, "1,3,1,batch"), i64s(2, 0LL, -2LL), END), 0);
    ph_value *sq_all = out(node("Squeeze", 1, in("s2", F, "1,3,1"), END), 0);
    ph_value *us = out(node("Unsqueeze", 1, in("u1", F, "3,batch"), i64s(2, -1LL, 0LL), END), 0);
    ph_node *cc = node("Concat", 1, in("c1", F, "batch,3,7"), in("c2", F, "batch,3,2"), END);
    ph_node_set_attr_int(cc, "axis", -1);
    ph_node *cs = node("Concat", 1, in("c3", F, "2,seq"), in("c4", F, "2,3"), END);
    ph_node_set_attr_int(cs, "axis", 1);
    ph_node *sp = node("Split", 3, in("sp", F, "batch,9"), END);
    ph_node_set_attr_int(sp, "axis", 1);
    ph_node *sp2 = node("Split", 2, in("sp2", F, "10,4"), i64s(2, 3LL, 7LL), END);
    ph_value *sl1 = out(node("Slice", 1, x, i64s(2, 1LL, -3LL), i64s(2, 1000LL, -1LL), i64s(2, 1LL, -1LL), END), 0);
    ph_value *sl2 = out(node("Slice", 1, x, i64s(1, -1LL), i64s(1, -1000LL), i64s(1, 3LL), i64s(1, -1LL), END), 0);
    ph_value *sl3 = out(node("Slice", 1, in("sy", F, "batch,seq"), i64s(1, 0LL), i64s(1, 9223372036854775807LL),
                             i64s(1, 1LL), END), 0);
    ph_value *sl4 = out(node("Slice", 1, x, i64s(1, 0LL), i64s(1, 5LL), i64s(1, 3LL), i64s(1, 2LL), END), 0);
    /* negative step, start before the beginning: the spec clamps it to 0, one element */
    ph_value *sl5 = out(node("Slice", 1, in("sn", F, "3"), i64s(1, -10LL), i64s(1, (long long)INT64_MIN),
                             i64s(1, 0LL), i64s(1, -1LL), END), 0);
    ph_node *ga = node("Gather", 1, x, in("idx", I64, "7,8"), END);
    ph_node_set_attr_int(ga, "axis", -3);
    ph_value *ge = out(node("GatherElements", 1, x, in("gi", I64, "2,3,4,1"), END), 0);
    ph_value *ex = out(node("Expand", 1, in("e1", F, "3,1"), i64s(3, 2LL, 1LL, 6LL), END), 0);
    ph_value *ti = out(node("Tile", 1, in("t1", F, "batch,3"), i64s(2, 1LL, 2LL), END), 0);
    ph_value *pd = out(node("Pad", 1, x, i64s(8, 0LL, 0LL, 1LL, 2LL, 0LL, 0LL, 1LL, 2LL), END), 0);
    ph_node *d2s = node("DepthToSpace", 1, in("d", F, "1,8,3,3"), END);
    ph_node_set_attr_int(d2s, "blocksize", 2);
    ph_node *s2d = node("SpaceToDepth", 1, in("sd", F, "1,2,4,6"), END);
    ph_node_set_attr_int(s2d, "blocksize", 2);
    ph_value *nz = out(node("NonZero", 1, x, END), 0);
    ph_node *oh = node("OneHot", 1, in("oi", I64, "batch,5"), i64scalar(10), f32s(2, 0.0, 1.0), END);
    ph_node_set_attr_int(oh, "axis", 1);
    ph_node *shs = node("Shape", 1, x, END);
    ph_node_set_attr_int(shs, "start", 1);
    ph_node_set_attr_int(shs, "end", -1);
    infer_ok();
    EXPECT(out(fl, 0), "float[6,20]");
    EXPECT(out(fl0, 0), "float[batch,12]");
    EXPECT(out(tr, 0), "float[5,4,3,2]");
    EXPECT(out(tp, 0), "float[2,4,5,3]");
    EXPECT(sq, "float[3,batch]");
    EXPECT(sq_all, "float[3]");
    EXPECT(us, "float[1,3,batch,1]");
    EXPECT(out(cc, 0), "float[batch,3,9]");
    EXPECT(out(cs, 0), "float[2,?]");
    EXPECT(out(sp, 0), "float[batch,3]");
    EXPECT(out(sp, 2), "float[batch,3]");
    EXPECT(out(sp2, 0), "float[3,4]");
    EXPECT(out(sp2, 1), "float[7,4]");
    EXPECT(sl1, "float[2,2,4,2]");
    EXPECT(sl2, "float[2,3,4,5]");
    EXPECT(sl3, "float[batch,seq]");
    EXPECT(sl4, "float[2,3,4,3]");
    EXPECT(sl5, "float[1]");
    EXPECT(out(ga, 0), "float[2,7,8,4,5]");
    EXPECT(ge, "float[2,3,4,1]");
    EXPECT(ex, "float[2,3,6]");
    EXPECT(ti, "float[batch,6]");
    EXPECT(pd, "float[2,3,6,9]");
    EXPECT(out(d2s, 0), "float[1,2,6,6]");
    EXPECT(out(s2d, 0), "float[1,8,2,3]");
    EXPECT(nz, "int64[4,?]");
    EXPECT(out(oh, 0), "float[batch,10,5]");
    EXPECT(out(shs, 0), "int64[2]");
    ck_assert_str_eq(pcfmt(out(shs, 0)), "3,4");
}
END_TEST

START_TEST(test_opset_differences)
{
    /* opset 11: Squeeze/Unsqueeze/Split/Reduce axes are attributes */
    setup_opset(11);
    ph_node *sq = node("Squeeze", 1, in("a", F, "1,3,1"), END);
    ints(sq, "axes", 1, -1LL);
    ph_node *us = node("Unsqueeze", 1, in("b", F, "3"), END);
    ints(us, "axes", 2, 0LL, 2LL);
    ph_node *sp = node("Split", 2, in("c", F, "5,2"), END);
    ints(sp, "split", 2, 2LL, 3LL);
    ph_node *rs = node("ReduceSum", 1, in("d", F, "2,3,4"), END);
    ints(rs, "axes", 1, 1LL);
    ph_node *sl = node("Slice", 1, in("e", F, "10,10"), i64s(1, 2LL), i64s(1, 8LL), END);
    ph_node *tk = node("TopK", 2, in("t", F, "3,10"), i64s(1, 4LL), END);
    ph_node *pd = node("Pad", 1, in("p", F, "2,2"), i64s(4, 1LL, 0LL, 1LL, 0LL), END);
    /* negative pads crop a known dim; on a symbolic dim they cancel or give unknown */
    ph_node *pn = node("Pad", 1, in("pn", F, "3,5"), i64s(4, -1LL, 1LL, 0LL, -3LL), END);
    ph_node *ps = node("Pad", 1, in("ps", F, "n,m"), i64s(4, -1LL, 0LL, 2LL, 0LL), END);
    infer_ok();
    EXPECT(out(pn, 0), "float[2,3]");
    EXPECT(out(ps, 0), "float[?,m]");
    EXPECT(out(sq, 0), "float[1,3]");
    EXPECT(out(us, 0), "float[1,3,1]");
    EXPECT(out(sp, 1), "float[3,2]");
    EXPECT(out(rs, 0), "float[2,1,4]");
    EXPECT(out(sl, 0), "float[6,10]");
    EXPECT(out(tk, 0), "float[3,4]");
    EXPECT(out(tk, 1), "int64[3,4]");
    EXPECT(out(pd, 0), "float[4,2]");

    /* opset 9: Slice takes attributes */
    setup_opset(9);
    ph_node *s9 = node("Slice", 1, in("e", F, "10,10"), END);
    ints(s9, "starts", 1, 1LL);
    ints(s9, "ends", 1, -1LL);
    ints(s9, "axes", 1, 1LL);
    infer_ok();
    EXPECT(out(s9, 0), "float[10,8]");

    /* opset 18: Reduce* axes input, Split num_outputs */
    setup_opset(18);
    ph_node *rm = node("ReduceMax", 1, in("d", F, "2,3,4"), i64s(2, 0LL, -1LL), END);
    ph_node_set_attr_int(rm, "keepdims", 0);
    ph_node *sp18 = node("Split", 3, in("x", F, "2,7"), END);
    ph_node_set_attr_int(sp18, "axis", -1);
    ph_node_set_attr_int(sp18, "num_outputs", 3);
    infer_ok();
    EXPECT(out(rm, 0), "float[3]");
    EXPECT(out(sp18, 0), "float[2,3]");
    EXPECT(out(sp18, 2), "float[2,1]");
}
END_TEST

START_TEST(test_reductions)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,seq,64");
    ph_node *rm = node("ReduceMean", 1, x, END);
    ints(rm, "axes", 1, -1LL);
    ph_node *rs = node("ReduceSum", 1, x, i64s(2, 0LL, 1LL), END);
    ph_node_set_attr_int(rs, "keepdims", 0);
    ph_node *rall = node("ReduceProd", 1, x, END);
    ph_node *rmin = node("ReduceMin", 1, x, END);
    ints(rmin, "axes", 1, 1LL);
    ph_node_set_attr_int(rmin, "keepdims", 0);
    ph_node *am = node("ArgMax", 1, x, END);
    ph_node_set_attr_int(am, "axis", -1);
    ph_node_set_attr_int(am, "keepdims", 0);
    ph_node *tk = node("TopK", 2, x, i64s(1, 5LL), END);
    ph_node *rdyn = node("ReduceSum", 1, x, in("ax", I64, "1"), END);
    infer_ok();
    EXPECT(out(rm, 0), "float[batch,seq,1]");
    EXPECT(out(rs, 0), "float[64]");
    EXPECT(out(rall, 0), "float[1,1,1]");
    EXPECT(out(rmin, 0), "float[batch,64]");
    EXPECT(out(am, 0), "int64[batch,seq]");
    EXPECT(out(tk, 0), "float[batch,seq,5]");
    EXPECT(out(tk, 1), "int64[batch,seq,5]");
    EXPECT(out(rdyn, 0), "float[?,?,?]");
}
END_TEST

START_TEST(test_misc_ops)
{
    setup_opset(13);
    ph_value *x = in("x", F, "1,3,8,8");
    ph_value *rs = out(node("Resize", 1, x, NULL, f32s(4, 1.0, 1.0, 2.0, 0.5), END), 0);
    ph_value *rz = out(node("Resize", 1, in("y", F, "batch,3,8,8"), NULL, NULL, i64s(4, 1LL, 3LL, 16LL, 12LL), END), 0);
    ph_value *rsy = out(node("Resize", 1, in("z", F, "batch,3,8,8"), NULL, f32s(4, 1.0, 1.0, 2.0, 2.0), END), 0);
    ph_node *es = node("Einsum", 1, in("ea", F, "batch,4,5"), in("eb", F, "batch,5,6"), END);
    ph_node_set_attr_string(es, "equation", "bij,bjk->bik");
    ph_node *es2 = node("Einsum", 1, in("ec", F, "3,4"), END);
    ph_node_set_attr_string(es2, "equation", "ij");
    ph_node *es3 = node("Einsum", 1, in("ed", F, "2,7,3,4"), END);
    ph_node_set_attr_string(es3, "equation", "...ij->...ji");
    ph_value *nms = out(node("NonMaxSuppression", 1, in("boxes", F, "1,100,4"), in("scores", F, "1,1,100"), END), 0);
    ph_value *snd = out(node("ScatterND", 1, x, in("si", I64, "2,4"), in("su", F, "2"), END), 0);
    ph_value *ql = out(node("QuantizeLinear", 1, x, f32s(1, 0.1), END), 0);
    ph_value *zp = ph_graph_add_initializer(G, "zp", ph_tensor_new(PH_DT_INT8, 0, NULL, NULL));
    ph_value *ql8 = out(node("QuantizeLinear", 1, x, f32s(1, 0.1), zp, END), 0);
    ph_value *dq = out(node("DequantizeLinear", 1, ql8, f32s(1, 0.1), zp, END), 0);
    ph_value *ct = ph_graph_add_initializer(G, "cv", ph_tensor_new(PH_DT_INT32, 0, NULL, NULL));
    ph_node *cos = node("ConstantOfShape", 1, i64s(2, 2LL, 3LL), END);
    ph_node_set_attr_tensor(cos, "value", ph_tensor_new(PH_DT_INT32, 1, (int64_t[]){1}, NULL));
    ph_node *k = node("Constant", 1, END);
    ph_node_set_attr_ints(k, "value_ints", 3, (int64_t[]){1, 2, 3});
    ph_node *kt = node("Constant", 1, END);
    ph_node_set_attr_tensor(kt, "value", ph_tensor_new(F, 2, (int64_t[]){2, 5}, NULL));
    ph_value *rg = out(node("Range", 1, f32s(1, 0.0), f32s(1, 10.0), f32s(1, 3.0), END), 0);
    ph_value *rgi = out(node("Range", 1, i64scalar(10), i64scalar(0), i64scalar(-3), END), 0);
    (void)ct;
    infer_ok();
    EXPECT(rs, "float[1,3,16,4]");
    EXPECT(rz, "float[1,3,16,12]");
    EXPECT(rsy, "float[batch,3,16,16]");
    EXPECT(out(es, 0), "float[batch,4,6]");
    EXPECT(out(es2, 0), "float[3,4]");
    EXPECT(out(es3, 0), "float[2,7,4,3]");
    EXPECT(nms, "int64[?,3]");
    EXPECT(snd, "float[1,3,8,8]");
    EXPECT(ql, "uint8[1,3,8,8]");
    EXPECT(ql8, "int8[1,3,8,8]");
    EXPECT(dq, "float[1,3,8,8]");
    EXPECT(out(cos, 0), "int32[2,3]");
    EXPECT(out(k, 0), "int64[3]");
    ck_assert_str_eq(pcfmt(out(k, 0)), "1,2,3");
    EXPECT(out(kt, 0), "float[2,5]");
    EXPECT(rg, "float[4]");
    EXPECT(rgi, "int64[4]");
    ck_assert_str_eq(pcfmt(rgi), "10,7,4,1");
}
END_TEST

START_TEST(test_unknown_op_and_unknown_rank)
{
    setup_opset(13);
    ph_node *cu = node("MyCustomOp", 1, in("x", F, "2,3"), END);
    ph_node_set_domain(cu, "com.example");
    ph_value *r = out(node("Relu", 1, out(cu, 0), END), 0);
    ph_value *a = out(node("Add", 1, in("u", F, "*"), in("v", F, "2"), END), 0);
    ph_value *t = out(node("Transpose", 1, in("w", F, "*"), END), 0);
    infer_ok();
    EXPECT(out(cu, 0), "?[*]");
    EXPECT(r, "?[*]");
    EXPECT(a, "float[*]");
    EXPECT(t, "float[*]");
    ph_infer_stats st;
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_unknown, 1);
}
END_TEST

START_TEST(test_declared_type_contradiction)
{
    setup_opset(13);
    ph_node *n = node("Relu", 1, in("x", F, "2,3"), END);
    ph_node_set_name(n, "relu7");
    ph_value_set_type(out(n, 0), F, 2, (int64_t[]){2, 4});
    infer_fails("node 'relu7' (Relu): output");
    ck_assert_ptr_nonnull(strstr(E.message, "declared float[2,4] but inferred as float[2,3]"));

    /* a declared dtype that contradicts */
    setup_opset(13);
    n = node("Shape", 1, in("x", F, "2,3"), END);
    ph_value_set_type(out(n, 0), F, -1, NULL);
    infer_fails("(Shape)");

    /* a declared type with more information is kept */
    setup_opset(13);
    n = node("NonZero", 1, in("x", F, "2,3"), END);
    ph_value_set_type(out(n, 0), I64, 2, (int64_t[]){2, 5});
    infer_ok();
    EXPECT(out(n, 0), "int64[2,5]");
}
END_TEST

/* A chain x -> (Relu -> Transpose -> ...) with a side branch. */
START_TEST(test_incremental_update)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,8,16");
    ph_value *side_in = in("s", F, "4,4");
    ph_value *side = out(node("Relu", 1, side_in, END), 0);
    ph_value *side2 = out(node("Sigmoid", 1, side, END), 0);
    ph_graph_add_output(G, side2);
    ph_value *v = x;
    ph_node *nodes[50];
    for (int i = 0; i < 50; i++) {
        nodes[i] = node(i % 2 ? "Relu" : "Neg", 1, v, END);
        v = out(nodes[i], 0);
    }
    ph_graph_add_output(G, v);
    infer_ok();
    ph_infer_stats st;
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 52);
    EXPECT(v, "float[batch,8,16]");

    /* nothing changed: nothing re-inferred */
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), 0);
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 0);

    /* insert a Transpose after node 40: it and the 9 after it change */
    const char *side_dims_before = ph_value_dim_param(side, 0);
    ph_node *t = ph_node_create(G, nodes[41], "Transpose", 1, (ph_value *[]){out(nodes[40], 0)}, 1);
    ck_assert_ptr_nonnull(t);
    ints(t, "perm", 3, 0LL, 2LL, 1LL);
    ph_node_set_input(nodes[41], 0, out(t, 0));
    ck_assert_msg(ph_graph_update_shapes(G, &E) == 0, "%s", E.message);
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 10); /* Transpose + nodes 41..49 */
    EXPECT(v, "float[batch,16,8]");
    EXPECT(out(nodes[40], 0), "float[batch,8,16]");
    EXPECT(side2, "float[4,4]");
    ck_assert_ptr_eq(ph_value_dim_param(side, 0), side_dims_before);

    /* a rewrite that does not change types stops at the rewritten node */
    ph_node *id = ph_node_create(G, nodes[10], "Identity", 1, (ph_value *[]){out(nodes[9], 0)}, 1);
    ph_node_set_input(nodes[10], 0, out(id, 0));
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), 0);
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 2); /* Identity and node 10 */

    /* an attribute change re-infers the node and what changes after it */
    ints(t, "perm", 3, 1LL, 0LL, 2LL);
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), 0);
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 10);
    EXPECT(v, "float[8,batch,16]");

    /* bypassing the Transpose (ph_value_replace) restores the old shapes */
    ck_assert_int_eq(ph_node_bypass(t, 0, out(nodes[40], 0)), 0);
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), 0);
    EXPECT(v, "float[batch,8,16]");
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 9);

    /* an update that finds a contradiction names the node and keeps it queued */
    ph_node *bad = ph_node_create(G, nodes[45], "Add", 2, (ph_value *[]){out(nodes[44], 0), side}, 1);
    ph_node_set_name(bad, "bad_add");
    ph_node_set_input(nodes[45], 0, out(bad, 0));
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), PH_EVERIFY);
    ck_assert_ptr_nonnull(strstr(E.message, "node 'bad_add' (Add)"));
}
END_TEST

/* ph_value_replace by a value inference sees the same way (same dtype and
 * dims, computed by a node, no partial constant) does not re-infer the
 * readers; a replacement by other dims does, and the shapes stay right. */
START_TEST(test_replace_alike_does_not_reinfer)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,8,16");
    ph_value *a = out(node("Neg", 1, x, END), 0);
    ph_node *id = node("Identity", 1, a, END);
    ph_node *r = node("Relu", 1, out(id, 0), END);
    ph_node *t = node("Transpose", 1, x, END);
    ints(t, "perm", 3, 0LL, 2LL, 1LL);
    ph_value *p = out(node("Abs", 1, x, END), 0);
    ph_node *r2 = node("Sigmoid", 1, p, END);
    ph_graph_add_output(G, out(r, 0));
    ph_graph_add_output(G, out(r2, 0));
    ph_graph_add_output(G, out(t, 0));
    infer_ok();
    ph_infer_stats st;

    /* the Identity's output replaced by its input: the Relu is not queued */
    ck_assert_int_eq(ph_value_replace(out(id, 0), a), 0);
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), 0);
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 0);
    EXPECT(out(r, 0), "float[batch,8,16]");

    /* replaced by a value of other dims: the reader is re-inferred */
    ck_assert_int_eq(ph_value_replace(p, out(t, 0)), 0);
    ck_assert_msg(ph_graph_update_shapes(G, &E) == 0, "%s", E.message);
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 1);
    EXPECT(out(r2, 0), "float[batch,16,8]");
}
END_TEST

/* ... and a replacement by an initializer of the same type re-infers them:
 * a reader may read a constant's values. */
START_TEST(test_replace_by_constant_reinfers)
{
    setup_opset(13);
    ph_value *y = in("y", F, "6");
    ph_value *b = out(node("Neg", 1, y, END), 0);
    ph_node *rr = node("Relu", 1, b, END);
    ph_graph_add_output(G, out(rr, 0));
    infer_ok();
    ck_assert_int_eq(ph_value_replace(b, f32s(6, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)), 0);
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), 0);
    ph_infer_stats st;
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 1);
    EXPECT(out(rr, 0), "float[6]");
}
END_TEST

/* ... except for a MatMul or Gemm, which reads only its inputs' types: a
 * folded weight of the same static type leaves it as it is; one of other
 * dims re-infers it. */
START_TEST(test_replace_by_constant_of_a_matmul)
{
    setup_opset(13);
    ph_value *x = in("x", F, "batch,4");
    ph_value *w = out(node("Transpose", 1, fconst(2, 4LL, 4LL), END), 0);
    ph_node *mm = node("MatMul", 1, x, w, END);
    ph_value *w2 = out(node("Neg", 1, fconst(2, 4LL, 4LL), END), 0);
    ph_node *gm = node("Gemm", 1, out(mm, 0), w2, END);
    ph_graph_add_output(G, out(gm, 0));
    infer_ok();
    ph_infer_stats st;
    ck_assert_int_eq(ph_value_replace(w, fconst(2, 4LL, 4LL)), 0);
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), 0);
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 0);
    EXPECT(out(mm, 0), "float[batch,4]");

    ck_assert_int_eq(ph_value_replace(w2, fconst(2, 4LL, 6LL)), 0);
    ck_assert_msg(ph_graph_update_shapes(G, &E) == 0, "%s", E.message);
    ph_model_infer_stats(M, &st);
    ck_assert_uint_eq(st.nodes_inferred, 1);
    EXPECT(out(gm, 0), "float[batch,6]");
}
END_TEST

START_TEST(test_incremental_shape_constant)
{
    /* changing a Reshape target initializer re-infers the Reshape and its consumers */
    setup_opset(13);
    ph_value *x = in("x", F, "2,3,4");
    ph_node *rs = node("Reshape", 1, x, i64s(2, 6LL, 4LL), END);
    ph_value *r = out(node("Relu", 1, out(rs, 0), END), 0);
    ph_value *sh = out(node("Shape", 1, r, END), 0);
    infer_ok();
    EXPECT(r, "float[6,4]");
    ck_assert_str_eq(pcfmt(sh), "6,4");
    ph_node_set_input(rs, 1, i64s(3, 4LL, -1LL, 2LL));
    ck_assert_int_eq(ph_graph_update_shapes(G, &E), 0);
    EXPECT(r, "float[4,3,2]");
    ck_assert_str_eq(pcfmt(sh), "4,3,2");
}
END_TEST

static ph_model *load(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PH_SOURCE_DIR, rel);
    ph_model *m = NULL;
    int rc = ph_model_load(path, &m, &E);
    ck_assert_msg(rc == 0, "load %s: %s", path, E.message);
    return m;
}

static ph_value *find(ph_model *m, const char *name)
{
    ph_value *v = ph_graph_find_value(ph_model_graph(m), name);
    ck_assert_msg(v != NULL, "no value %s", name);
    return v;
}

START_TEST(test_user_input_shapes)
{
    ph_model *m = load("models/transformer_block.onnx");
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_infer_shapes(g, &E), 0);
    EXPECT(find(m, "hidden"), "float[batch,seq,64]");
    EXPECT(find(m, "sim"), "float[batch,batch]");
    EXPECT(find(m, "/Reshape_output_0"), "float[batch,seq,4,16]");
    ck_assert(ph_value_same_shape(find(m, "tokens"), find(m, "hidden")));
    ck_assert(!ph_value_shape_known(find(m, "hidden")));

    /* errors: no such input, wrong rank, contradicting a static dim */
    ck_assert_int_eq(ph_graph_set_input_shape(g, "nope", 1, (int64_t[]){1}, &E), PH_ENOTFOUND);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 2, (int64_t[]){1, 2}, &E), PH_EINVAL);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, (int64_t[]){1, 8, 32}, &E), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(E.message, "dim 2 is 64"));

    /* fix batch only, then seq too */
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, (int64_t[]){2, -1, -1}, &E), 0);
    EXPECT(find(m, "tokens"), "float[2,seq,64]");
    ck_assert_int_eq(ph_graph_update_shapes(g, &E), 0);
    EXPECT(find(m, "/Reshape_output_0"), "float[2,seq,4,16]");
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, (int64_t[]){2, 8, 64}, &E), 0);
    ck_assert_int_eq(ph_graph_update_shapes(g, &E), 0);
    EXPECT(find(m, "/Reshape_output_0"), "float[2,8,4,16]");
    EXPECT(find(m, "hidden"), "float[2,8,64]");
    EXPECT(find(m, "present_k"), "float[2,4,8,16]");
    ck_assert(ph_value_shape_known(find(m, "hidden")));
    ck_assert_int_eq(ph_value_numel(find(m, "hidden")), 2 * 8 * 64);
    const int64_t *vals;
    ck_assert_int_eq(ph_value_shape_const(find(m, "/Concat_output_0"), &vals), 4);
    ck_assert_int_eq(vals[0], 2);
    ck_assert_int_eq(vals[1], 8);
    ph_model_free(m);

    /* user shapes before the first inference */
    m = load("models/cnn_small.onnx");
    g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "input", 4, (int64_t[]){4, 3, 64, 64}, &E), 0);
    ck_assert_int_eq(ph_graph_infer_shapes(g, &E), 0);
    EXPECT(find(m, "logits"), "float[4,10]");
    ph_model_free(m);
}
END_TEST

START_TEST(test_control_flow_model)
{
    ph_model *m = load("tests/models/control_flow.onnx");
    ck_assert_int_eq(ph_graph_infer_shapes(ph_model_graph(m), &E), 0);
    EXPECT(find(m, "if_out"), "float[2,3]");
    EXPECT(find(m, "loop_out"), "float[2,3]");
    EXPECT(find(m, "y"), "float[6]");
    ph_node *loop = NULL;
    for (ph_node *n = ph_graph_first_node(ph_model_graph(m)); n; n = ph_node_next(n))
        if (ph_node_op(n) == PH_OP_Loop)
            loop = n;
    ck_assert_ptr_nonnull(loop);
    ph_graph *body = ph_node_attr_graph(loop, "body");
    EXPECT(ph_graph_input(body, 0), "int64[]");
    EXPECT(ph_graph_output(body, 1), "float[2,3]");
    ph_model_free(m);
}
END_TEST

START_TEST(test_helpers_and_value_info)
{
    setup_opset(13);
    ph_value *a = in("a", F, "batch,3"), *b = in("b", F, "batch,3"), *c = in("c", F, "N,3"), *d = in("d", F, "?,3");
    ck_assert(ph_value_same_shape(a, b));
    ck_assert(!ph_value_same_shape(a, c));
    ck_assert(!ph_value_same_shape(d, d)); /* unnamed unknown dims are not provably equal */
    ck_assert(ph_value_dim_equal(a, -1, c, 1));
    ck_assert(ph_value_dim_equal(a, 0, b, 0));
    ck_assert(!ph_value_dim_equal(a, 0, c, 0));
    ck_assert(ph_value_dims_are(a, 2, (int64_t[]){PH_DIM_OF(0), 3}, b));
    ck_assert(ph_value_dims_are(b, 2, (int64_t[]){PH_DIM_OF(0), PH_DIM_OF(1)}, a));
    ck_assert(ph_value_dims_are(c, 1, (int64_t[]){PH_DIM_OF(1)}, a) == 0); /* rank 2, not 1 */
    ck_assert(!ph_value_dims_are(a, 2, (int64_t[]){PH_DIM_OF(0), 3}, c)); /* batch is not N */
    ck_assert(!ph_value_dims_are(a, 2, (int64_t[]){PH_DIM_OF(0), 4}, b));
    ck_assert(!ph_value_dims_are(a, 3, (int64_t[]){PH_DIM_OF(0), 3, 1}, b)); /* rank 2 */
    ck_assert(!ph_value_dims_are(d, 2, (int64_t[]){PH_DIM_OF(0), 3}, d)); /* an unnamed unknown dim */
    ck_assert_int_eq(ph_value_numel(a), -1);
    ph_value *r = out(node("Relu", 1, a, END), 0);
    ph_value *o = out(node("Neg", 1, r, END), 0);
    ph_graph_add_output(G, o);
    infer_ok();
    ck_assert(ph_value_same_shape(a, r));
    ck_assert_int_eq(ph_graph_write_value_info(G, &E), 1); /* r; o is a graph output */
    char path[] = "/tmp/ph_infer_vi_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ph_model_save(M, path, &E), 0);
    ph_model *m2 = NULL;
    ck_assert_int_eq(ph_model_load(path, &m2, &E), 0);
    unlink(path);
    EXPECT(ph_graph_find_value(ph_model_graph(m2), ph_value_name(r)), "float[batch,3]");
    ph_model_free(m2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("infer");
    TCase *tc = tcase_create("ops");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_unary_and_cast);
    tcase_add_test(tc, test_broadcast);
    tcase_add_test(tc, test_broadcast_error_names_node);
    tcase_add_test(tc, test_matmul_gemm);
    tcase_add_test(tc, test_matmul_mismatch);
    tcase_add_test(tc, test_conv);
    tcase_add_test(tc, test_conv_channel_mismatch);
    tcase_add_test(tc, test_pools_and_norms);
    tcase_add_test(tc, test_reshape);
    tcase_add_test(tc, test_reshape_errors);
    tcase_add_test(tc, test_shape_chain_static);
    tcase_add_test(tc, test_shape_chain_symbolic);
    tcase_add_test(tc, test_shape_ops);
    tcase_add_test(tc, test_opset_differences);
    tcase_add_test(tc, test_reductions);
    tcase_add_test(tc, test_misc_ops);
    tcase_add_test(tc, test_unknown_op_and_unknown_rank);
    tcase_add_test(tc, test_declared_type_contradiction);
    suite_add_tcase(s, tc);
    TCase *ti = tcase_create("incremental");
    tcase_add_checked_fixture(ti, NULL, teardown);
    tcase_add_test(ti, test_incremental_update);
    tcase_add_test(ti, test_replace_alike_does_not_reinfer);
    tcase_add_test(ti, test_replace_by_constant_of_a_matmul);
    tcase_add_test(ti, test_replace_by_constant_reinfers);
    tcase_add_test(ti, test_incremental_shape_constant);
    tcase_add_test(ti, test_value_set_type_forms);
    suite_add_tcase(s, ti);
    TCase *tm = tcase_create("models");
    tcase_add_checked_fixture(tm, NULL, teardown);
    tcase_add_test(tm, test_user_input_shapes);
    tcase_add_test(tm, test_control_flow_model);
    tcase_add_test(tm, test_helpers_and_value_info);
    suite_add_tcase(s, tm);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
