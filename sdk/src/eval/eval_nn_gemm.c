/* sdk/src/eval/eval_nn_gemm.c - the blocked float32 GEMM behind MatMul, Gemm,
 * Conv, ConvTranspose and Einsum, and the MatMul and Gemm kernels.
 *
 * The GEMM follows the usual three-level blocking: the K x N operand is
 * packed KC x NC at a time into NR-wide column slivers, the M x K operand
 * MC x KC at a time into MR-tall row slivers, and a register-tiled
 * micro-kernel multiplies one MR x KC sliver by one KC x NR sliver with all
 * MR x NR accumulators held in vector registers.  Packing makes every
 * micro-kernel read sequential and turns any operand strides (transposes
 * included) into one layout.  The micro-kernels use GCC/Clang vector
 * extensions (no intrinsics): a 6x8 kernel built for the baseline ISA and,
 * on x86, a 6x16 kernel compiled for AVX+FMA and chosen at run time when
 * the CPU has both.  Other compilers get a plain C kernel.
 *
 * float64 uses a simpler cache-blocked loop nest; integer MatMul a naive
 * loop with wrap-around (unsigned) arithmetic.
 */
#include <stdlib.h>
#include <string.h>

#include "eval_nn.h"

#define MR 6
#define NR_MAX 16
#define KC 256
#define MC 120  /* multiple of MR */
#define NC 3072 /* multiple of NR_MAX */

/* t[i * nr + j] = sum_p a[p * MR + i] * b[p * nr + j] for a full MR x nr tile. */
typedef void (*ukr_fn)(size_t kc, const float *a, const float *b, float *t);

#if defined(__GNUC__)
typedef float v4f __attribute__((vector_size(16)));

static void ukr_6x8(size_t kc, const float *restrict a, const float *restrict b, float *restrict t)
{
    v4f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
    v4f c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
    for (size_t p = 0; p < kc; p++) {
        v4f b0, b1;
        memcpy(&b0, b, sizeof b0);
        memcpy(&b1, b + 4, sizeof b1);
        c00 += a[0] * b0; c01 += a[0] * b1;
        c10 += a[1] * b0; c11 += a[1] * b1;
        c20 += a[2] * b0; c21 += a[2] * b1;
        c30 += a[3] * b0; c31 += a[3] * b1;
        c40 += a[4] * b0; c41 += a[4] * b1;
        c50 += a[5] * b0; c51 += a[5] * b1;
        a += MR;
        b += 8;
    }
    v4f r[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
    memcpy(t, r, sizeof r);
}

#if (defined(__x86_64__) || defined(__i386__))
#define HAVE_AVX_KERNEL 1
typedef float v8f __attribute__((vector_size(32)));

#if defined(__clang__)
__attribute__((target("avx,fma")))
#else
__attribute__((target("avx,fma"), optimize("fp-contract=fast")))
#endif
static void ukr_6x16_avx(size_t kc, const float *restrict a, const float *restrict b,
                         float *restrict t)
{
#if defined(__clang__)
#pragma clang fp contract(fast)
#endif
    v8f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
    v8f c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
    for (size_t p = 0; p < kc; p++) {
        v8f b0, b1;
        memcpy(&b0, b, sizeof b0);
        memcpy(&b1, b + 8, sizeof b1);
        c00 += a[0] * b0; c01 += a[0] * b1;
        c10 += a[1] * b0; c11 += a[1] * b1;
        c20 += a[2] * b0; c21 += a[2] * b1;
        c30 += a[3] * b0; c31 += a[3] * b1;
        c40 += a[4] * b0; c41 += a[4] * b1;
        c50 += a[5] * b0; c51 += a[5] * b1;
        a += MR;
        b += 16;
    }
    v8f r[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
    memcpy(t, r, sizeof r);
}

static int cpu_has_avx_fma(void)
{
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("fma");
}
#endif /* x86 */

#else /* not GNU C: plain loops */
static void ukr_6x8(size_t kc, const float *a, const float *b, float *t)
{
    float acc[MR * 8] = {0};
    for (size_t p = 0; p < kc; p++, a += MR, b += 8)
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < 8; j++)
                acc[i * 8 + j] += a[i] * b[j];
    memcpy(t, acc, sizeof acc);
}
#endif

/* Rows [0, mc) x cols [0, kc) of A into MR-tall slivers, zero padded. */
static void pack_a(const float *A, ptrdiff_t rsa, ptrdiff_t csa, size_t mc, size_t kc, float *dst)
{
    for (size_t ir = 0; ir < mc; ir += MR) {
        size_t m = mc - ir < MR ? mc - ir : MR;
        const float *src = A + (ptrdiff_t)ir * rsa;
        if (m == MR && rsa == 1) {
            for (size_t p = 0; p < kc; p++, dst += MR)
                memcpy(dst, src + (ptrdiff_t)p * csa, MR * sizeof *dst);
            continue;
        }
        for (size_t p = 0; p < kc; p++, dst += MR) {
            const float *col = src + (ptrdiff_t)p * csa;
            size_t i = 0;
            for (; i < m; i++)
                dst[i] = col[(ptrdiff_t)i * rsa];
            for (; i < MR; i++)
                dst[i] = 0.0f;
        }
    }
}

/* Rows [0, kc) x cols [0, nc) of B into nr-wide slivers, zero padded. */
static void pack_b(const float *B, ptrdiff_t rsb, ptrdiff_t csb, size_t kc, size_t nc, size_t nr,
                   float *dst)
{
    for (size_t jr = 0; jr < nc; jr += nr) {
        size_t n = nc - jr < nr ? nc - jr : nr;
        const float *src = B + (ptrdiff_t)jr * csb;
        for (size_t p = 0; p < kc; p++, dst += nr) {
            const float *row = src + (ptrdiff_t)p * rsb;
            size_t j = 0;
            if (csb == 1) {
                memcpy(dst, row, n * sizeof *dst);
                j = n;
            } else {
                for (; j < n; j++)
                    dst[j] = row[(ptrdiff_t)j * csb];
            }
            for (; j < nr; j++)
                dst[j] = 0.0f;
        }
    }
}

/* C[m x n] = alpha * t + beta * C (beta == 0: C not read). */
static void update_c(float *C, ptrdiff_t ldc, const float *t, size_t nr, size_t m, size_t n,
                     float alpha, float beta)
{
    for (size_t i = 0; i < m; i++) {
        float *c = C + (ptrdiff_t)i * ldc;
        const float *r = t + i * nr;
        if (beta == 0.0f)
            for (size_t j = 0; j < n; j++)
                c[j] = alpha * r[j];
        else if (beta == 1.0f)
            for (size_t j = 0; j < n; j++)
                c[j] += alpha * r[j];
        else
            for (size_t j = 0; j < n; j++)
                c[j] = alpha * r[j] + beta * c[j];
    }
}

static void scale_c(float *C, ptrdiff_t ldc, size_t M, size_t N, float beta)
{
    for (size_t i = 0; i < M; i++) {
        float *c = C + (ptrdiff_t)i * ldc;
        for (size_t j = 0; j < N; j++)
            c[j] = beta == 0.0f ? 0.0f : beta * c[j];
    }
}

int eval_sgemm(size_t M, size_t N, size_t K, float alpha,
              const float *A, ptrdiff_t rsa, ptrdiff_t csa,
              const float *B, ptrdiff_t rsb, ptrdiff_t csb,
              float beta, float *C, ptrdiff_t ldc)
{
    if (M == 0 || N == 0)
        return 0;
    if (K == 0 || alpha == 0.0f) {
        scale_c(C, ldc, M, N, beta);
        return 0;
    }
    ukr_fn ukr = ukr_6x8;
    size_t nr = 8;
#ifdef HAVE_AVX_KERNEL
    if (cpu_has_avx_fma()) {
        ukr = ukr_6x16_avx;
        nr = 16;
    }
#endif
    size_t kcmax = K < KC ? K : KC;
    size_t mcmax = M < MC ? (M + MR - 1) / MR * MR : MC;
    size_t ncmax = N < NC ? (N + nr - 1) / nr * nr : NC;
    float *pa = malloc(mcmax * kcmax * sizeof *pa);
    float *pb = malloc(ncmax * kcmax * sizeof *pb);
    if (!pa || !pb) {
        free(pa);
        free(pb);
        return PH_ENOMEM;
    }
    float t[MR * NR_MAX];
    for (size_t jc = 0; jc < N; jc += NC) {
        size_t nc = N - jc < NC ? N - jc : NC;
        for (size_t pc = 0; pc < K; pc += KC) {
            size_t kc = K - pc < KC ? K - pc : KC;
            float bet = pc == 0 ? beta : 1.0f;
            pack_b(B + (ptrdiff_t)pc * rsb + (ptrdiff_t)jc * csb, rsb, csb, kc, nc, nr, pb);
            for (size_t ic = 0; ic < M; ic += MC) {
                size_t mc = M - ic < MC ? M - ic : MC;
                pack_a(A + (ptrdiff_t)ic * rsa + (ptrdiff_t)pc * csa, rsa, csa, mc, kc, pa);
                for (size_t jr = 0; jr < nc; jr += nr) {
                    size_t n = nc - jr < nr ? nc - jr : nr;
                    for (size_t ir = 0; ir < mc; ir += MR) {
                        size_t m = mc - ir < MR ? mc - ir : MR;
                        ukr(kc, pa + ir * kc, pb + jr * kc, t);
                        update_c(C + (ptrdiff_t)(ic + ir) * ldc + (ptrdiff_t)(jc + jr), ldc, t, nr,
                                 m, n, alpha, bet);
                    }
                }
            }
        }
    }
    free(pa);
    free(pb);
    return 0;
}

void eval_dgemm(size_t M, size_t N, size_t K, double alpha,
               const double *A, ptrdiff_t rsa, ptrdiff_t csa,
               const double *B, ptrdiff_t rsb, ptrdiff_t csb,
               double beta, double *C, ptrdiff_t ldc)
{
    for (size_t i = 0; i < M; i++) {
        double *c = C + (ptrdiff_t)i * ldc;
        for (size_t j = 0; j < N; j++)
            c[j] = beta == 0.0 ? 0.0 : beta * c[j];
    }
    if (alpha == 0.0)
        return;
    const size_t kb = 128, nb = 512;
    for (size_t j0 = 0; j0 < N; j0 += nb) {
        size_t j1 = N - j0 < nb ? N : j0 + nb;
        for (size_t p0 = 0; p0 < K; p0 += kb) {
            size_t p1 = K - p0 < kb ? K : p0 + kb;
            for (size_t i = 0; i < M; i++) {
                double *c = C + (ptrdiff_t)i * ldc;
                for (size_t p = p0; p < p1; p++) {
                    double av = alpha * A[(ptrdiff_t)i * rsa + (ptrdiff_t)p * csa];
                    const double *b = B + (ptrdiff_t)p * rsb;
                    if (csb == 1)
                        for (size_t j = j0; j < j1; j++)
                            c[j] += av * b[j];
                    else
                        for (size_t j = j0; j < j1; j++)
                            c[j] += av * b[(ptrdiff_t)j * csb];
                }
            }
        }
    }
}

int64_t eval_nn_prod(const int64_t *dims, size_t n)
{
    return ir_dims_numel(dims, n);
}

/* y[0..n) += w * x[0..n): the inner loop of direct convolutions.  Written
 * with vector extensions because -O2 does not vectorize loops of unknown
 * trip count on its own. */
#if defined(__GNUC__)
#ifdef HAVE_AVX_KERNEL
#if defined(__clang__)
__attribute__((target("avx,fma")))
#else
__attribute__((target("avx,fma"), optimize("fp-contract=fast")))
#endif
static void saxpy_avx(size_t n, float w, const float *restrict x, float *restrict y)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8f xv, yv;
        memcpy(&xv, x + i, sizeof xv);
        memcpy(&yv, y + i, sizeof yv);
        yv += w * xv;
        memcpy(y + i, &yv, sizeof yv);
    }
    for (; i < n; i++)
        y[i] += w * x[i];
}
#endif
void eval_saxpy(size_t n, float w, const float *restrict x, float *restrict y)
{
#ifdef HAVE_AVX_KERNEL
    if (n >= 16 && cpu_has_avx_fma()) {
        saxpy_avx(n, w, x, y);
        return;
    }
#endif
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f xv, yv;
        memcpy(&xv, x + i, sizeof xv);
        memcpy(&yv, y + i, sizeof yv);
        yv += w * xv;
        memcpy(y + i, &yv, sizeof yv);
    }
    for (; i < n; i++)
        y[i] += w * x[i];
}
#else
void eval_saxpy(size_t n, float w, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] += w * x[i];
}
#endif

/* ------------------------------------------------------------- MatMul */

/* Integer product with wrap-around: C(MxN) = A(MxK) B(KxN), all contiguous. */
#define DEF_IMATMUL(NAME, T, U)                                                          \
    static void NAME(size_t M, size_t N, size_t K, const T *A, const T *B, T *C)         \
    {                                                                                    \
        for (size_t i = 0; i < M; i++)                                                   \
            for (size_t j = 0; j < N; j++) {                                             \
                U acc = 0;                                                               \
                for (size_t p = 0; p < K; p++)                                           \
                    acc += (U)A[i * K + p] * (U)B[p * N + j];                            \
                C[i * N + j] = (T)acc;                                                   \
            }                                                                            \
    }
DEF_IMATMUL(imatmul_i32, int32_t, uint32_t)
DEF_IMATMUL(imatmul_i64, int64_t, uint64_t)
DEF_IMATMUL(imatmul_u32, uint32_t, uint32_t)
DEF_IMATMUL(imatmul_u64, uint64_t, uint64_t)

/* One (M x K) * (K x N) product of element type dt at the given pointers. */
static int matmul_one(int dt, size_t M, size_t N, size_t K, const void *A, const void *B, void *C)
{
    switch (dt) {
    case PH_DT_FLOAT:
        return eval_sgemm(M, N, K, 1.0f, A, (ptrdiff_t)K, 1, B, (ptrdiff_t)N, 1, 0.0f, C,
                         (ptrdiff_t)N);
    case PH_DT_DOUBLE:
        eval_dgemm(M, N, K, 1.0, A, (ptrdiff_t)K, 1, B, (ptrdiff_t)N, 1, 0.0, C, (ptrdiff_t)N);
        return 0;
    case PH_DT_INT32: imatmul_i32(M, N, K, A, B, C); return 0;
    case PH_DT_INT64: imatmul_i64(M, N, K, A, B, C); return 0;
    case PH_DT_UINT32: imatmul_u32(M, N, K, A, B, C); return 0;
    case PH_DT_UINT64: imatmul_u64(M, N, K, A, B, C); return 0;
    default: return PH_EUNSUPPORTED;
    }
}

int eval_k_matmul(eval_kargs *a)
{
    const ph_tensor *ta = a->in[0], *tb = a->n_in > 1 ? a->in[1] : NULL;
    if (!ta || !tb)
        return ph_error_set(a->err, PH_EINVAL, "MatMul: needs two inputs");
    int dt = ph_tensor_dtype(ta);
    if (ph_tensor_dtype(tb) != dt)
        return ph_error_set(a->err, PH_EINVAL, "MatMul: inputs of different dtypes (%s, %s)",
                            ph_dtype_name(dt), ph_dtype_name(ph_tensor_dtype(tb)));
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE && dt != PH_DT_INT32 && dt != PH_DT_INT64 &&
        dt != PH_DT_UINT32 && dt != PH_DT_UINT64)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "MatMul: dtype %s not supported",
                            ph_dtype_name(dt));
    size_t ra = ph_tensor_rank(ta), rb = ph_tensor_rank(tb);
    if (ra == 0 || rb == 0)
        return ph_error_set(a->err, PH_EINVAL, "MatMul: scalar operand");
    const int64_t *da = ph_tensor_dims(ta), *db = ph_tensor_dims(tb);
    int64_t M = ra == 1 ? 1 : da[ra - 2], K = da[ra - 1];
    int64_t Kb = rb == 1 ? db[0] : db[rb - 2], N = rb == 1 ? 1 : db[rb - 1];
    if (K != Kb)
        return ph_error_set(a->err, PH_EINVAL, "MatMul: inner dims differ (%lld vs %lld)",
                            (long long)K, (long long)Kb);
    size_t ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    size_t nb = ba > bb ? ba : bb;
    int64_t bdims[EVAL_NN_MAX_RANK * 4], sa[EVAL_NN_MAX_RANK * 4], sb[EVAL_NN_MAX_RANK * 4];
    if (nb > EVAL_NN_MAX_RANK * 4)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "MatMul: rank too large");
    /* broadcast batch dims; sa/sb: batch strides in matrices (0 = broadcast) */
    int64_t stride_a = 1, stride_b = 1;
    for (size_t k = nb; k-- > 0;) {
        size_t off = nb - 1 - k; /* distance from the last batch dim */
        int64_t x = off < ba ? da[ba - 1 - off] : 1, y = off < bb ? db[bb - 1 - off] : 1;
        if (x != y && x != 1 && y != 1)
            return ph_error_set(a->err, PH_EINVAL, "MatMul: batch dims %lld and %lld do not broadcast",
                                (long long)x, (long long)y);
        bdims[k] = x == 1 ? y : x;
        sa[k] = x == 1 ? 0 : stride_a;
        sb[k] = y == 1 ? 0 : stride_b;
        stride_a *= x;
        stride_b *= y;
    }
    int64_t odims[EVAL_NN_MAX_RANK * 4 + 2];
    size_t orank = 0;
    for (size_t k = 0; k < nb; k++)
        odims[orank++] = bdims[k];
    if (ra > 1)
        odims[orank++] = M;
    if (rb > 1)
        odims[orank++] = N;
    ph_tensor *out = ir_tensor_alloc(dt, orank, odims);
    if (!out)
        return ph_error_set(a->err, PH_ENOMEM, "MatMul: out of memory");
    int64_t nbatch = eval_nn_prod(bdims, nb);
    size_t es = ph_dtype_size(dt);
    const char *pa = ph_tensor_data(ta), *pb = ph_tensor_data(tb);
    char *pc = ir_tensor_mut(out);
    int rc = 0;
    if (stride_b == 1 && nbatch > 1 && stride_a == nbatch) {
        /* B shared by every batch, A not broadcast: one tall product */
        rc = matmul_one(dt, (size_t)(nbatch * M), (size_t)N, (size_t)K, pa, pb, pc);
    } else {
        int64_t idx[EVAL_NN_MAX_RANK * 4] = {0};
        for (int64_t bi = 0; bi < nbatch && rc == 0; bi++) {
            int64_t oa = 0, ob = 0;
            for (size_t k = 0; k < nb; k++) {
                oa += idx[k] * sa[k];
                ob += idx[k] * sb[k];
            }
            rc = matmul_one(dt, (size_t)M, (size_t)N, (size_t)K, pa + (size_t)(oa * M * K) * es,
                            pb + (size_t)(ob * K * N) * es, pc + (size_t)(bi * M * N) * es);
            for (size_t k = nb; k-- > 0;) {
                if (++idx[k] < bdims[k])
                    break;
                idx[k] = 0;
            }
        }
    }
    if (rc) {
        ph_tensor_free(out);
        return ph_error_set(a->err, rc, "MatMul: %s", rc == PH_ENOMEM ? "out of memory" : "failed");
    }
    a->out[0] = out;
    return 0;
}

/* --------------------------------------------------------------- Gemm */

int eval_k_gemm(eval_kargs *a)
{
    const ph_tensor *ta = a->in[0], *tb = a->n_in > 1 ? a->in[1] : NULL;
    const ph_tensor *tc = a->n_in > 2 ? a->in[2] : NULL;
    if (!ta || !tb)
        return ph_error_set(a->err, PH_EINVAL, "Gemm: needs inputs A and B");
    int dt = ph_tensor_dtype(ta);
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Gemm: dtype %s not supported",
                            ph_dtype_name(dt));
    if (ph_tensor_dtype(tb) != dt || (tc && ph_tensor_dtype(tc) != dt))
        return ph_error_set(a->err, PH_EINVAL, "Gemm: inputs of different dtypes");
    if (ph_tensor_rank(ta) != 2 || ph_tensor_rank(tb) != 2)
        return ph_error_set(a->err, PH_EINVAL, "Gemm: A and B must be 2-D");
    int transA = ph_node_attr_int(a->node, "transA", 0) != 0;
    int transB = ph_node_attr_int(a->node, "transB", 0) != 0;
    double alpha = ph_node_attr_float(a->node, "alpha", 1.0f);
    double beta = ph_node_attr_float(a->node, "beta", 1.0f);
    const int64_t *da = ph_tensor_dims(ta), *db = ph_tensor_dims(tb);
    int64_t M = transA ? da[1] : da[0], K = transA ? da[0] : da[1];
    int64_t Kb = transB ? db[1] : db[0], N = transB ? db[0] : db[1];
    if (K != Kb)
        return ph_error_set(a->err, PH_EINVAL, "Gemm: inner dims differ (%lld vs %lld)",
                            (long long)K, (long long)Kb);
    /* C: unidirectionally broadcastable to (M, N) */
    int64_t cm = 1, cn = 1;
    if (tc) {
        size_t rc = ph_tensor_rank(tc);
        const int64_t *dc = ph_tensor_dims(tc);
        if (rc > 2)
            return ph_error_set(a->err, PH_EINVAL, "Gemm: C has rank %zu", rc);
        if (rc >= 1)
            cn = dc[rc - 1];
        if (rc == 2)
            cm = dc[0];
        if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
            return ph_error_set(a->err, PH_EINVAL, "Gemm: C does not broadcast to (%lld, %lld)",
                                (long long)M, (long long)N);
    }
    int64_t odims[2] = {M, N};
    ph_tensor *out = ir_tensor_alloc(dt, 2, odims);
    if (!out)
        return ph_error_set(a->err, PH_ENOMEM, "Gemm: out of memory");
    int use_c = tc && beta != 0.0;
    ptrdiff_t rsa = transA ? 1 : (ptrdiff_t)K, csa = transA ? (ptrdiff_t)M : 1;
    ptrdiff_t rsb = transB ? 1 : (ptrdiff_t)N, csb = transB ? (ptrdiff_t)K : 1;
    int rc = 0;
    if (dt == PH_DT_FLOAT) {
        float *y = ir_tensor_mut(out);
        const float *c = tc ? ph_tensor_data(tc) : NULL;
        for (int64_t i = 0; use_c && i < M; i++)
            for (int64_t j = 0; j < N; j++)
                y[i * N + j] = (float)beta * c[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
        rc = eval_sgemm((size_t)M, (size_t)N, (size_t)K, (float)alpha, ph_tensor_data(ta), rsa, csa,
                       ph_tensor_data(tb), rsb, csb, use_c ? 1.0f : 0.0f, y, (ptrdiff_t)N);
    } else {
        double *y = ir_tensor_mut(out);
        const double *c = tc ? ph_tensor_data(tc) : NULL;
        for (int64_t i = 0; use_c && i < M; i++)
            for (int64_t j = 0; j < N; j++)
                y[i * N + j] = beta * c[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
        eval_dgemm((size_t)M, (size_t)N, (size_t)K, alpha, ph_tensor_data(ta), rsa, csa,
                  ph_tensor_data(tb), rsb, csb, use_c ? 1.0 : 0.0, y, (ptrdiff_t)N);
    }
    if (rc) {
        ph_tensor_free(out);
        return ph_error_set(a->err, rc, "Gemm: out of memory");
    }
    a->out[0] = out;
    return 0;
}
