/* tests/test_constant.c - constant helpers (constant.h): reading every dtype
 * with broadcasting, rounding doubles once into float16/bfloat16/float,
 * replacing an initializer's data, and per-channel checks. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passhost/host.h"
#include "passhost/passhost.h"
#include "pbwire.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})

/* A [2, 3] tensor of dtype dt from raw little-endian elements. */
static ph_tensor *t23(int dt, const void *data)
{
    ph_tensor *t = ph_tensor_new(dt, 2, I64(2, 3), data);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void expect_f64(const ph_tensor *t, const double *want)
{
    double out[6];
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), out), 0);
    for (int k = 0; k < 6; k++)
        ck_assert_msg(out[k] == want[k] || (isnan(out[k]) && isnan(want[k])),
                      "%s element %d: %.17g, want %.17g", ph_dtype_name(ph_tensor_dtype(t)), k, out[k],
                      want[k]);
}

static void expect_i64(const ph_tensor *t, const int64_t *want)
{
    int64_t out[6];
    ck_assert_int_eq(ph_tensor_read_i64(t, 2, I64(2, 3), out), 0);
    for (int k = 0; k < 6; k++)
        ck_assert_msg(out[k] == want[k], "%s element %d: %lld, want %lld", ph_dtype_name(ph_tensor_dtype(t)), k,
                      (long long)out[k], (long long)want[k]);
}

START_TEST(read_every_dtype)
{
    {
        float v[6] = {1.5f, -2, 0, 3.25f, 1e30f, -0.5f};
        ph_tensor *t = t23(PH_DT_FLOAT, v);
        expect_f64(t, (double[]){1.5, -2, 0, 3.25, (double)1e30f, -0.5});
        int64_t o[6];
        ck_assert_int_eq(ph_tensor_read_i64(t, 2, I64(2, 3), o), PH_ERANGE); /* 1.5 */
        ph_tensor_free(t);
        float w[6] = {1, -2, 0, 3, 16777216.0f, -7};
        t = t23(PH_DT_FLOAT, w);
        expect_i64(t, (int64_t[]){1, -2, 0, 3, 16777216, -7});
        ph_tensor_free(t);
    }
    {
        double v[6] = {0.1, -1e300, 5e-324, 3, INFINITY, NAN};
        ph_tensor *t = t23(PH_DT_DOUBLE, v);
        expect_f64(t, v);
        int64_t o[6];
        ck_assert_int_eq(ph_tensor_read_i64(t, 2, I64(2, 3), o), PH_ERANGE);
        ph_tensor_free(t);
    }
    {
        /* 1, -2, 0.5, 65504, smallest subnormal 2^-24, +inf */
        uint16_t v[6] = {0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001, 0x7C00};
        ph_tensor *t = t23(PH_DT_FLOAT16, v);
        expect_f64(t, (double[]){1, -2, 0.5, 65504, ldexp(1, -24), INFINITY});
        ph_tensor_free(t);
        uint16_t w[6] = {0x3C00, 0xC000, 0x0000, 0x8000, 0x4200, 0x7BFF};
        t = t23(PH_DT_FLOAT16, w);
        expect_i64(t, (int64_t[]){1, -2, 0, 0, 3, 65504});
        ph_tensor_free(t);
    }
    {
        /* 1, -2, 0.5, 3.0, 2^-133 (a bfloat16 subnormal), -inf */
        uint16_t v[6] = {0x3F80, 0xC000, 0x3F00, 0x4040, 0x0001, 0xFF80};
        ph_tensor *t = t23(PH_DT_BFLOAT16, v);
        expect_f64(t, (double[]){1, -2, 0.5, 3, ldexp(1, -133), -INFINITY});
        ph_tensor_free(t);
    }
    {
        int8_t v[6] = {-128, 127, 0, -1, 5, 6};
        ph_tensor *t = t23(PH_DT_INT8, v);
        expect_f64(t, (double[]){-128, 127, 0, -1, 5, 6});
        expect_i64(t, (int64_t[]){-128, 127, 0, -1, 5, 6});
        ph_tensor_free(t);
    }
    {
        uint8_t v[6] = {0, 255, 1, 2, 128, 7};
        ph_tensor *t = t23(PH_DT_UINT8, v);
        expect_f64(t, (double[]){0, 255, 1, 2, 128, 7});
        expect_i64(t, (int64_t[]){0, 255, 1, 2, 128, 7});
        ph_tensor_free(t);
    }
    {
        int16_t v[6] = {-32768, 32767, 0, -1, 300, 6};
        ph_tensor *t = t23(PH_DT_INT16, v);
        expect_f64(t, (double[]){-32768, 32767, 0, -1, 300, 6});
        expect_i64(t, (int64_t[]){-32768, 32767, 0, -1, 300, 6});
        ph_tensor_free(t);
    }
    {
        uint16_t v[6] = {0, 65535, 1, 2, 40000, 7};
        ph_tensor *t = t23(PH_DT_UINT16, v);
        expect_f64(t, (double[]){0, 65535, 1, 2, 40000, 7});
        expect_i64(t, (int64_t[]){0, 65535, 1, 2, 40000, 7});
        ph_tensor_free(t);
    }
    {
        int32_t v[6] = {INT32_MIN, INT32_MAX, 0, -1, 70000, 6};
        ph_tensor *t = t23(PH_DT_INT32, v);
        expect_f64(t, (double[]){INT32_MIN, INT32_MAX, 0, -1, 70000, 6});
        expect_i64(t, (int64_t[]){INT32_MIN, INT32_MAX, 0, -1, 70000, 6});
        ph_tensor_free(t);
    }
    {
        uint32_t v[6] = {0, UINT32_MAX, 1, 2, 3000000000u, 7};
        ph_tensor *t = t23(PH_DT_UINT32, v);
        expect_f64(t, (double[]){0, UINT32_MAX, 1, 2, 3000000000.0, 7});
        expect_i64(t, (int64_t[]){0, UINT32_MAX, 1, 2, 3000000000LL, 7});
        ph_tensor_free(t);
    }
    {
        int64_t v[6] = {INT64_MIN, INT64_MAX, 0, -1, (1LL << 53) + 1, 6};
        ph_tensor *t = t23(PH_DT_INT64, v);
        expect_i64(t, v);
        double o[6];
        ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), o), 0);
        ck_assert(o[0] == -9223372036854775808.0);
        ck_assert(o[4] == 9007199254740992.0); /* 2^53 + 1 rounds to the nearest double */
        ph_tensor_free(t);
    }
    {
        uint64_t v[6] = {0, 1, 2, 3, 4, (uint64_t)INT64_MAX};
        ph_tensor *t = t23(PH_DT_UINT64, v);
        expect_i64(t, (int64_t[]){0, 1, 2, 3, 4, INT64_MAX});
        ph_tensor_free(t);
        uint64_t w[6] = {0, 1, 2, 3, 4, UINT64_MAX};
        t = t23(PH_DT_UINT64, w);
        int64_t o[6];
        ck_assert_int_eq(ph_tensor_read_i64(t, 2, I64(2, 3), o), PH_ERANGE);
        double d[6];
        ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), d), 0);
        ck_assert(d[5] == 18446744073709551616.0);
        ph_tensor_free(t);
    }
    {
        uint8_t v[6] = {0, 1, 1, 0, 0, 1};
        ph_tensor *t = t23(PH_DT_BOOL, v);
        expect_f64(t, (double[]){0, 1, 1, 0, 0, 1});
        expect_i64(t, (int64_t[]){0, 1, 1, 0, 0, 1});
        ph_tensor_free(t);
    }
    {
        float c[12] = {0};
        double o[6];
        ph_tensor *t = t23(PH_DT_COMPLEX64, c);
        ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), o), PH_EUNSUPPORTED);
        ph_tensor_free(t);
        ck_assert_int_eq(ph_dtype_is_numeric(PH_DT_STRING), 0);
        ck_assert_int_eq(ph_dtype_is_numeric(PH_DT_BFLOAT16), 1);
        ck_assert_int_eq(ph_dtype_is_float(PH_DT_INT8), 0);
    }
}
END_TEST

START_TEST(read_i64_refuses_non_integers)
{
    double bad[] = {2.5, NAN, INFINITY, -INFINITY, 9.3e18, -9.3e18, 9223372036854775808.0};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ph_tensor *t = ph_tensor_new(PH_DT_DOUBLE, 0, NULL, &bad[i]);
        int64_t o;
        ck_assert_msg(ph_tensor_read_i64(t, 0, NULL, &o) == PH_ERANGE, "%g", bad[i]);
        ph_tensor_free(t);
    }
    double ok = -9223372036854775808.0;
    ph_tensor *t = ph_tensor_new(PH_DT_DOUBLE, 0, NULL, &ok);
    int64_t o;
    ck_assert_int_eq(ph_tensor_read_i64(t, 0, NULL, &o), 0);
    ck_assert(o == INT64_MIN);
    ph_tensor_free(t);
}
END_TEST

START_TEST(broadcast_positive)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    double o[24];
    /* [3] -> [2, 3]: rows repeat */
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, 1, I64(3), v);
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), o), 0);
    double w1[] = {1, 2, 3, 1, 2, 3};
    ck_assert_mem_eq(o, w1, sizeof w1);
    ph_tensor_free(t);
    /* [2, 1] -> [2, 3]: columns repeat */
    t = ph_tensor_new(PH_DT_FLOAT, 2, I64(2, 1), v);
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), o), 0);
    double w2[] = {1, 1, 1, 2, 2, 2};
    ck_assert_mem_eq(o, w2, sizeof w2);
    ph_tensor_free(t);
    /* [1, 3, 1] -> [2, 3, 4] */
    t = ph_tensor_new(PH_DT_FLOAT, 3, I64(1, 3, 1), v);
    ck_assert_int_eq(ph_tensor_read_f64(t, 3, I64(2, 3, 4), o), 0);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++)
                ck_assert(o[a * 12 + b * 4 + c] == b + 1);
    ph_tensor_free(t);
    /* [2, 1, 3] -> [2, 2, 3] (int64 reader, int8 data) */
    int8_t iv[6] = {-1, -2, -3, 4, 5, 6};
    t = ph_tensor_new(PH_DT_INT8, 3, I64(2, 1, 3), iv);
    int64_t io[12];
    ck_assert_int_eq(ph_tensor_read_i64(t, 3, I64(2, 2, 3), io), 0);
    int64_t w3[] = {-1, -2, -3, -1, -2, -3, 4, 5, 6, 4, 5, 6};
    ck_assert_mem_eq(io, w3, sizeof w3);
    ph_tensor_free(t);
    /* scalar and [1] -> anything */
    t = ph_tensor_new(PH_DT_FLOAT, 0, NULL, v + 4);
    ck_assert_int_eq(ph_tensor_read_f64(t, 3, I64(2, 2, 2), o), 0);
    for (int k = 0; k < 8; k++)
        ck_assert(o[k] == 5);
    ck_assert_int_eq(ph_tensor_read_f64(t, 0, NULL, o), 0);
    ck_assert(o[0] == 5);
    ph_tensor_free(t);
    t = ph_tensor_new(PH_DT_FLOAT, 1, I64(1), v + 5);
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(3, 1), o), 0);
    ck_assert(o[0] == 6 && o[1] == 6 && o[2] == 6);
    ph_tensor_free(t);
    /* same shape; and an empty target */
    t = ph_tensor_new(PH_DT_FLOAT, 2, I64(2, 3), v);
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), o), 0);
    ck_assert(o[5] == 6);
    ck_assert_int_eq(ph_tensor_read_f64(t, 3, I64(0, 2, 3), o), 0);
    ph_tensor_free(t);
    ck_assert_int_eq(ph_shape_broadcasts_to(2, I64(1, 3), 3, I64(4, 5, 3)), 1);
}
END_TEST

START_TEST(broadcast_negative)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    double o[64];
    int64_t io[64];
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, 1, I64(3), v);
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 4), o), PH_EINVAL); /* 3 vs 4 */
    ck_assert_int_eq(ph_tensor_read_f64(t, 0, NULL, o), PH_EINVAL);       /* rank 1 into rank 0 */
    ck_assert_int_eq(ph_tensor_read_f64(t, 1, I64(-1), o), PH_EINVAL);    /* negative dim */
    ck_assert_int_eq(ph_tensor_read_i64(t, 2, I64(3, 1), io), PH_EINVAL); /* [3] aligns with the 1 */
    ph_tensor_free(t);
    t = ph_tensor_new(PH_DT_FLOAT, 1, I64(2), v);
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), o), PH_EINVAL); /* right-aligned: 2 vs 3 */
    ph_tensor_free(t);
    t = ph_tensor_new(PH_DT_FLOAT, 2, I64(1, 3), v);
    ck_assert_int_eq(ph_tensor_read_f64(t, 1, I64(3), o), PH_EINVAL); /* would have rank 2 */
    ph_tensor_free(t);
    t = ph_tensor_new(PH_DT_FLOAT, 2, I64(2, 3), v);
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(1, 3), o), PH_EINVAL); /* no shrinking */
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), NULL), PH_EINVAL);
    ck_assert_int_eq(ph_tensor_read_f64(NULL, 2, I64(2, 3), o), PH_EINVAL);
    ph_tensor_free(t);
    ck_assert_int_eq(ph_shape_broadcasts_to(1, I64(3), 1, I64(1)), 0);
}
END_TEST

/* A model saved and loaded back keeps raw_data in the file mapping, at the
 * offset the encoding gives it: reading must not assume alignment. */
START_TEST(read_unaligned_mapped_data)
{
    char dir[] = "/tmp/ph_test_constant.XXXXXX", path[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    int found = 0;
    /* the name's length moves the data; one of 8 lengths is misaligned */
    for (int len = 1; len <= 8 && !found; len++) {
        ph_model *m = ph_model_new(17);
        ph_graph *g = ph_model_graph(m);
        char name[16];
        memset(name, 'w', (size_t)len);
        name[len] = 0;
        double vals[6] = {0.5, -1.25, 3, 1e-3, 7, -8};
        ph_value *w = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_DOUBLE, 2, I64(2, 3), vals));
        ph_value *x = ph_graph_add_input(g, "x", PH_DT_DOUBLE, 2, I64(2, 3));
        ph_value *in[2] = {x, w};
        ph_graph_add_output(g, ph_node_output(ph_node_create(g, NULL, "Add", 2, in, 1), 0));
        ph_error e = {0};
        unlink(path);
        ck_assert_msg(ph_model_save(m, path, &e) == 0, "%s", e.message);
        ph_model_free(m);
        ck_assert_msg(ph_model_load(path, &m, &e) == 0, "%s", e.message);
        g = ph_model_graph(m);
        const ph_tensor *t = ph_value_const(ph_graph_find_value(g, name));
        ck_assert_ptr_nonnull(t);
        if ((uintptr_t)ph_tensor_data(t) % 8 != 0) {
            found = 1;
            double o[12];
            ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), o), 0);
            ck_assert_mem_eq(o, vals, sizeof vals);
            ck_assert_int_eq(ph_tensor_read_f64(t, 3, I64(2, 2, 3), o), 0);
            ck_assert(o[9] == 1e-3 && o[11] == -8);
            ck_assert_int_eq(ph_const_channel_values(t, 2, 0, 2, o), PH_EINVAL);
        }
        ph_model_free(m);
    }
    unlink(path);
    rmdir(dir);
    ck_assert_msg(found, "no misaligned initializer came out of the mapping");
}
END_TEST

static uint16_t f16_of(double d)
{
    ph_tensor *t = ph_tensor_from_f64(PH_DT_FLOAT16, 0, NULL, &d);
    ck_assert_ptr_nonnull(t);
    uint16_t h;
    memcpy(&h, ph_tensor_data(t), 2);
    ph_tensor_free(t);
    ck_assert_uint_eq(h, ph_f64_to_f16_bits(d));
    return h;
}

static uint16_t bf16_of(double d)
{
    ph_tensor *t = ph_tensor_from_f64(PH_DT_BFLOAT16, 0, NULL, &d);
    ck_assert_ptr_nonnull(t);
    uint16_t h;
    memcpy(&h, ph_tensor_data(t), 2);
    ph_tensor_free(t);
    ck_assert_uint_eq(h, ph_f64_to_bf16_bits(d));
    return h;
}

static float f32_of(double d)
{
    ph_tensor *t = ph_tensor_from_f64(PH_DT_FLOAT, 0, NULL, &d);
    ck_assert_ptr_nonnull(t);
    float f;
    memcpy(&f, ph_tensor_data(t), 4);
    ph_tensor_free(t);
    return f;
}

START_TEST(rounding_float16)
{
    /* Double rounding: 1 + 2^-11 + 2^-40 is just above the midpoint between
     * 1 and 1 + 2^-10.  Through float it becomes the midpoint itself (2^-40
     * is below float's precision), which then ties to even: 1.0.  Rounded
     * once from the double it must go up. */
    double d = 1 + ldexp(1, -11) + ldexp(1, -40);
    ck_assert_float_eq((float)d, 1 + ldexp(1, -11)); /* what float would keep */
    ck_assert_uint_eq(f16_of(d), 0x3C01);
    ck_assert_uint_eq(f16_of(-d), 0xBC01);
    /* ties to even */
    ck_assert_uint_eq(f16_of(1 + ldexp(1, -11)), 0x3C00);     /* 1 | 1+u: even is 1 */
    ck_assert_uint_eq(f16_of(1 + 3 * ldexp(1, -11)), 0x3C02); /* 1+u | 1+2u: even is 1+2u */
    ck_assert_uint_eq(f16_of(1 + ldexp(1, -11) - ldexp(1, -45)), 0x3C00);
    ck_assert_uint_eq(f16_of(0.1), 0x2E66);
    ck_assert_uint_eq(f16_of(1.0 / 3), 0x3555);
    /* overflow to infinity, as IEEE rounds */
    ck_assert_uint_eq(f16_of(65504), 0x7BFF);
    ck_assert_uint_eq(f16_of(65519.99), 0x7BFF);
    ck_assert_uint_eq(f16_of(65520), 0x7C00); /* the midpoint to 2^16 ties to even: inf */
    ck_assert_uint_eq(f16_of(1e10), 0x7C00);
    ck_assert_uint_eq(f16_of(-1e300), 0xFC00);
    ck_assert_uint_eq(f16_of(INFINITY), 0x7C00);
    ck_assert_uint_eq(f16_of(-INFINITY), 0xFC00);
    /* subnormals */
    ck_assert_uint_eq(f16_of(ldexp(1, -24)), 0x0001);                   /* smallest */
    ck_assert_uint_eq(f16_of(ldexp(1, -25)), 0x0000);                   /* tie to even: 0 */
    ck_assert_uint_eq(f16_of(ldexp(1, -25) + ldexp(1, -60)), 0x0001);   /* above the tie */
    ck_assert_uint_eq(f16_of(3 * ldexp(1, -25)), 0x0002);               /* 1.5 units: tie to 2 */
    ck_assert_uint_eq(f16_of(5 * ldexp(1, -25)), 0x0002);               /* 2.5 units: tie to 2 */
    ck_assert_uint_eq(f16_of(1023 * ldexp(1, -24)), 0x03FF);            /* largest subnormal */
    ck_assert_uint_eq(f16_of(1023.5 * ldexp(1, -24)), 0x0400);          /* rounds up to the smallest normal */
    ck_assert_uint_eq(f16_of(-ldexp(1, -24)), 0x8001);
    ck_assert_uint_eq(f16_of(1e-300), 0x0000);
    ck_assert_uint_eq(f16_of(-1e-300), 0x8000);
    ck_assert_uint_eq(f16_of(5e-324), 0x0000); /* a double subnormal */
    ck_assert_uint_eq(f16_of(-0.0), 0x8000);
    /* the subnormal double-rounding trap: float keeps 2^-25 + 2^-49 as is
     * but 2^-25 + 2^-60 is rounded once here, not via float */
    ck_assert_uint_eq(f16_of(ldexp(1, -25) + ldexp(1, -49)), 0x0001);
    /* NaN stays NaN, sign kept */
    uint16_t n = f16_of(NAN);
    ck_assert_uint_eq(n & 0x7C00, 0x7C00);
    ck_assert_uint_ne(n & 0x03FF, 0);
    n = f16_of(-NAN);
    ck_assert_uint_eq(n & 0xFC00, 0xFC00);
    ck_assert_uint_ne(n & 0x03FF, 0);
    /* every half value round-trips */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF))
            continue;
        ck_assert_uint_eq(ph_f64_to_f16_bits(ph_f16_bits_to_f64((uint16_t)h)), h);
    }
}
END_TEST

START_TEST(rounding_bfloat16_and_float)
{
    /* bfloat16: 8 significant bits.  Double rounding through float again. */
    double d = 1 + ldexp(1, -8) + ldexp(1, -30);
    ck_assert_uint_eq(bf16_of(d), 0x3F81);
    ck_assert_uint_eq(bf16_of(1 + ldexp(1, -8)), 0x3F80);     /* tie to even */
    ck_assert_uint_eq(bf16_of(1 + 3 * ldexp(1, -8)), 0x3F82); /* tie to even */
    ck_assert_uint_eq(bf16_of(3.0), 0x4040);
    ck_assert_uint_eq(bf16_of((2 - ldexp(1, -7)) * ldexp(1, 127)), 0x7F7F); /* largest */
    ck_assert_uint_eq(bf16_of((2 - ldexp(1, -8)) * ldexp(1, 127)), 0x7F80); /* tie above it: inf */
    ck_assert_uint_eq(bf16_of(1e300), 0x7F80);
    ck_assert_uint_eq(bf16_of(-1e300), 0xFF80);
    ck_assert_uint_eq(bf16_of(ldexp(1, -133)), 0x0001); /* smallest subnormal */
    ck_assert_uint_eq(bf16_of(ldexp(1, -134)), 0x0000); /* tie to even */
    ck_assert_uint_eq(bf16_of(ldexp(1, -134) + ldexp(1, -160)), 0x0001);
    uint16_t n = bf16_of(NAN);
    ck_assert_uint_eq(n & 0x7F80, 0x7F80);
    ck_assert_uint_ne(n & 0x7F, 0);
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7F80) == 0x7F80 && (h & 0x7F))
            continue;
        ck_assert_uint_eq(ph_f64_to_bf16_bits(ph_bf16_bits_to_f64((uint16_t)h)), h);
    }
    /* float: the same rounding the hardware does from double */
    uint64_t s = 12345;
    for (int i = 0; i < 20000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t bits = s;
        int e = (int)((s >> 20) % 300) - 150; /* around float's range, subnormals included */
        double x;
        memcpy(&x, &bits, 8);
        if (isnan(x) || isinf(x) || x == 0)
            continue;
        int ex;
        x = ldexp(frexp(x, &ex), e);
        float got = f32_of(x), want = (float)x;
        ck_assert_msg(memcmp(&got, &want, 4) == 0, "%.17g: got %.9g, want %.9g", x, (double)got, (double)want);
    }
    ck_assert(isinf(f32_of(1e39)) && f32_of(1e39) > 0);
    ck_assert(isinf(f32_of(-1e300)) && f32_of(-1e300) < 0);
    ck_assert(f32_of(1e-46) == 0 && signbit(f32_of(-1e-46)));
    ck_assert(f32_of(1.5e-45) == ldexpf(1, -149));
    ck_assert(isnan(f32_of(NAN)));
    /* double is copied */
    double dv[2] = {0.1, -5e-324};
    ph_tensor *t = ph_tensor_from_f64(PH_DT_DOUBLE, 1, I64(2), dv);
    ck_assert_mem_eq(ph_tensor_data(t), dv, sizeof dv);
    ph_tensor_free(t);
}
END_TEST

START_TEST(from_f64_integers_and_shapes)
{
    double v[6] = {-128, 127, 0, 1, -1, 5};
    ph_tensor *t = ph_tensor_from_f64(PH_DT_INT8, 2, I64(2, 3), v);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_INT8);
    ck_assert_int_eq(ph_tensor_numel(t), 6);
    double back[6];
    ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), back), 0);
    ck_assert_mem_eq(back, v, sizeof v);
    ph_tensor_free(t);
    int dts[] = {PH_DT_INT16, PH_DT_INT32, PH_DT_INT64, PH_DT_FLOAT, PH_DT_DOUBLE, PH_DT_FLOAT16,
                 PH_DT_BFLOAT16};
    for (size_t i = 0; i < sizeof dts / sizeof *dts; i++) {
        t = ph_tensor_from_f64(dts[i], 2, I64(2, 3), v);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(ph_tensor_read_f64(t, 2, I64(2, 3), back), 0);
        ck_assert_mem_eq(back, v, sizeof v);
        ph_tensor_free(t);
    }
    double u[3] = {0, 255, 7};
    int udts[] = {PH_DT_UINT8, PH_DT_UINT16, PH_DT_UINT32, PH_DT_UINT64};
    for (size_t i = 0; i < sizeof udts / sizeof *udts; i++) {
        t = ph_tensor_from_f64(udts[i], 1, I64(3), u);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(ph_tensor_read_f64(t, 1, I64(3), back), 0);
        ck_assert_mem_eq(back, u, sizeof u);
        ph_tensor_free(t);
    }
    double b[2] = {1, 0};
    t = ph_tensor_from_f64(PH_DT_BOOL, 1, I64(2), b);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(((const uint8_t *)ph_tensor_data(t))[0], 1);
    ph_tensor_free(t);
    /* values an integer dtype cannot hold exactly */
    struct { int dt; double v; } bad[] = {
        {PH_DT_INT8, 128}, {PH_DT_INT8, -129}, {PH_DT_INT8, 1.5}, {PH_DT_INT32, NAN},
        {PH_DT_UINT8, -1}, {PH_DT_UINT16, 65536}, {PH_DT_BOOL, 2}, {PH_DT_BOOL, 0.5},
        {PH_DT_INT64, 9223372036854775808.0}, {PH_DT_UINT64, 18446744073709551616.0},
        {PH_DT_INT64, INFINITY}, {PH_DT_STRING, 0}, {PH_DT_COMPLEX64, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(ph_tensor_from_f64(bad[i].dt, 0, NULL, &bad[i].v) == NULL, "%s %g",
                      ph_dtype_name(bad[i].dt), bad[i].v);
    double edge[2] = {-9223372036854775808.0, 9223372036854774784.0};
    t = ph_tensor_from_f64(PH_DT_INT64, 1, I64(2), edge);
    ck_assert_ptr_nonnull(t);
    int64_t io[2];
    ck_assert_int_eq(ph_tensor_read_i64(t, 1, I64(2), io), 0);
    ck_assert(io[0] == INT64_MIN && io[1] == 9223372036854774784LL);
    ph_tensor_free(t);
    ck_assert_ptr_null(ph_tensor_from_f64(PH_DT_FLOAT, 1, I64(-1), v));
    /* empty tensors need no values */
    t = ph_tensor_from_f64(PH_DT_FLOAT, 2, I64(0, 3), NULL);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_numel(t), 0);
    ph_tensor_free(t);
}
END_TEST

/* ph_tensor_scaled gives the bits of reading as doubles, scaling and
 * ph_tensor_from_f64, for every float dtype, both layouts of the factor,
 * multiply and divide, including values that overflow, underflow to
 * subnormals, NaN and infinities; and refuses what it cannot do. */
START_TEST(scaled_per_channel_rounds_once)
{
    const int dts[] = {PH_DT_FLOAT, PH_DT_DOUBLE, PH_DT_FLOAT16, PH_DT_BFLOAT16};
    int64_t dims[3] = {4, 3, 5};
    const int64_t n = 60;
    double vals[60], f4[4] = {0.1, -3.0000001, 1e30, 1e-30}, f5[5] = {1.0 / 3, 7.5, -0.2, 1e-40, 65504.0};
    unsigned seed = 12345;
    for (int64_t k = 0; k < n; k++) {
        seed = seed * 1103515245u + 12345u;
        vals[k] = ((double)(seed >> 8) / (1 << 24) - 0.5) * pow(10, (int)(seed % 9) - 4);
    }
    vals[7] = INFINITY, vals[8] = -INFINITY, vals[9] = NAN, vals[10] = 3.4e38, vals[11] = 1e-38;
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (int layout = 0; layout < 2; layout++)
            for (int divide = 0; divide < 2; divide++) {
                int64_t inner = layout ? 1 : 15, count = layout ? 5 : 4;
                const double *f = layout ? f5 : f4;
                ph_tensor *t = ph_tensor_from_f64(dts[d], 3, dims, vals), *got = NULL;
                ck_assert_ptr_nonnull(t);
                double *src = malloc(n * sizeof *src), *want = malloc(n * sizeof *want);
                ck_assert_int_eq(ph_tensor_read_f64(t, 3, dims, src), 0);
                for (int64_t k = 0; k < n; k++)
                    want[k] = divide ? src[k] / f[(k / inner) % count] : src[k] * f[(k / inner) % count];
                ph_tensor *ref = ph_tensor_from_f64(dts[d], 3, dims, want);
                ck_assert_int_eq(ph_tensor_scaled(t, inner, count, f, divide, &got), 0);
                ck_assert_int_eq(ph_tensor_dtype(got), dts[d]);
                ck_assert_int_eq(ph_tensor_nbytes(got), ph_tensor_nbytes(ref));
                ck_assert_msg(memcmp(ph_tensor_data(got), ph_tensor_data(ref), ph_tensor_nbytes(ref)) == 0,
                              "dtype %d layout %d divide %d: other bits", dts[d], layout, divide);
                ph_tensor_free(got);
                ph_tensor_free(ref);
                ph_tensor_free(t);
                free(src);
                free(want);
            }
    ph_tensor *t = ph_tensor_from_f64(PH_DT_FLOAT, 3, dims, vals), *got = (ph_tensor *)1;
    ck_assert_int_eq(ph_tensor_scaled(t, 0, 4, f4, 0, &got), PH_EINVAL);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(ph_tensor_scaled(t, 15, 0, f4, 0, &got), PH_EINVAL);
    ph_tensor_free(t);
    int64_t one = 3, iv[3] = {1, 2, 3};
    t = ph_tensor_new(PH_DT_INT64, 1, &one, iv);
    ck_assert_int_eq(ph_tensor_scaled(t, 1, 3, f4, 0, &got), PH_EINVAL);
    ph_tensor_free(t);
}
END_TEST

START_TEST(set_const_changes_shape_and_notifies)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_error e = {0};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, I64(2, 3));
    float cv[3] = {1, 2, 3};
    ph_value *c = ph_graph_add_initializer(g, "c", ph_tensor_new(PH_DT_FLOAT, 1, I64(3), cv));
    ph_value *in[2] = {x, c};
    ph_node *add = ph_node_create(g, NULL, "Add", 2, in, 1);
    ph_value *y = ph_node_output(add, 0);
    ph_value *z = ph_node_output(ph_node_create(g, NULL, "Relu", 1, &y, 1), 0);
    ph_graph_add_output(g, z);
    ck_assert_msg(ph_graph_infer_shapes(g, &e) == 0, "%s", e.message);
    ck_assert_int_eq(ph_value_rank(z), 2);

    /* a new shape: [4, 1, 3] broadcasts the Add to [4, 2, 3] */
    double nv[12];
    for (int k = 0; k < 12; k++)
        nv[k] = k;
    ph_tensor *nt = ph_tensor_from_f64(PH_DT_FLOAT, 3, I64(4, 1, 3), nv);
    ck_assert_int_eq(ph_value_set_const(c, nt), 0);
    ck_assert_ptr_eq(ph_value_const(c), nt);
    ck_assert_int_eq(ph_value_rank(c), 3);
    ck_assert_int_eq(ph_value_dim(c, 0), 4);
    ck_assert_msg(ph_graph_update_shapes(g, &e) == 0, "%s", e.message);
    ck_assert_int_eq(ph_value_rank(y), 3);
    ck_assert_int_eq(ph_value_dim(y, 0), 4);
    ck_assert_int_eq(ph_value_dim(y, 1), 2);
    ck_assert_int_eq(ph_value_rank(z), 3); /* and on downstream */
    ck_assert_msg(ph_graph_verify(g, &e) == 0, "%s", e.message);

    /* a new dtype: the known type follows */
    ck_assert_int_eq(ph_value_set_const(c, ph_tensor_from_f64(PH_DT_DOUBLE, 1, I64(3), nv)), 0);
    ck_assert_int_eq(ph_value_dtype(c), PH_DT_DOUBLE);

    /* refusals take ownership too (ASan checks nothing leaks) */
    ph_value *d = ph_graph_add_input(g, "d", PH_DT_FLOAT, 1, I64(3));
    ck_assert_int_eq(ph_value_set_const(y, ph_tensor_from_f64(PH_DT_FLOAT, 1, I64(3), nv)), PH_EINVAL);
    ck_assert_int_eq(ph_value_set_const(d, ph_tensor_from_f64(PH_DT_FLOAT, 1, I64(3), nv)), PH_EINVAL);
    ck_assert_int_eq(ph_value_set_const(NULL, ph_tensor_from_f64(PH_DT_FLOAT, 1, I64(3), nv)), PH_EINVAL);
    ck_assert_int_eq(ph_value_set_const(c, NULL), PH_EINVAL);
    ph_model_free(m);
}
END_TEST

/* Same shape, new values: nothing in the value's type changes, so only the
 * notification tells inference that the Reshape must be looked at again. */
START_TEST(set_const_same_shape_new_values)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_error e = {0};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, I64(2, 6));
    int64_t sv[2] = {3, 4};
    ph_value *s = ph_graph_add_initializer(g, "shape", ph_tensor_new(PH_DT_INT64, 1, I64(2), sv));
    ph_value *in[2] = {x, s};
    ph_value *r = ph_node_output(ph_node_create(g, NULL, "Reshape", 2, in, 1), 0);
    ph_graph_add_output(g, r);
    ck_assert_msg(ph_graph_infer_shapes(g, &e) == 0, "%s", e.message);
    ck_assert_int_eq(ph_value_dim(r, 0), 3);
    double nv[2] = {4, 3};
    ck_assert_int_eq(ph_value_set_const(s, ph_tensor_from_f64(PH_DT_INT64, 1, I64(2), nv)), 0);
    ck_assert_msg(ph_graph_update_shapes(g, &e) == 0, "%s", e.message);
    ck_assert_int_eq(ph_value_dim(r, 0), 4);
    ck_assert_int_eq(ph_value_dim(r, 1), 3);

    /* it survives a save and a load */
    char dir[] = "/tmp/ph_test_constant.XXXXXX", path[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    ck_assert_msg(ph_model_save(m, path, &e) == 0, "%s", e.message);
    ph_model *m2 = NULL;
    ck_assert_msg(ph_model_load(path, &m2, &e) == 0, "%s", e.message);
    int64_t got[2];
    const ph_tensor *t = ph_value_const(ph_graph_find_value(ph_model_graph(m2), "shape"));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_read_i64(t, 1, I64(2), got), 0);
    ck_assert(got[0] == 4 && got[1] == 3);
    ph_model_free(m2);
    unlink(path);
    rmdir(dir);

    ph_model_free(m);
}
END_TEST

/* An initializer that is also a graph input is only a default the user can
 * override: not a constant, so it cannot be replaced either. */
START_TEST(set_const_on_an_overridable_initializer)
{
    pb graph = {0}, t = {0}, model = {0}, op = {0};
    const float wv[2] = {1, 2};
    pb_node(&graph, "Add", "x", "w", "y", NULL);
    pb_str(&graph, 2, "g");
    pb_int(&t, 1, 2);
    pb_int(&t, 2, PH_DT_FLOAT);
    pb_str(&t, 8, "w");
    pb_bytes(&t, 9, wv, sizeof wv);
    pb_msg(&graph, 5, &t);
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 1, I64(2));
    pb_value_info(&graph, 11, "w", PH_DT_FLOAT, 1, I64(2));
    pb_value_info(&graph, 12, "y", PH_DT_FLOAT, 1, I64(2));
    pb_int(&model, 1, 8);
    pb_int(&op, 2, 17);
    pb_msg(&model, 8, &op);
    pb_msg(&model, 7, &graph);
    ph_model *m = pb_load(&model);
    ph_value *w = ph_graph_find_value(ph_model_graph(m), "w");
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(ph_value_is_initializer(w), 1);
    ck_assert_int_eq(ph_value_is_graph_input(w), 1);
    ck_assert_int_eq(ph_value_set_const(w, ph_tensor_new(PH_DT_FLOAT, 1, I64(2), wv)), PH_EBUSY);
    ph_model_free(m);
}
END_TEST

START_TEST(per_channel_checks)
{
    ph_tensor *t;
#define PC(shape_rank, shape, out_rank, axis, ch, want)                                            \
    do {                                                                                           \
        t = ph_tensor_new(PH_DT_FLOAT, shape_rank, shape, NULL);                                   \
        ck_assert_ptr_nonnull(t);                                                                  \
        ck_assert_msg(ph_const_is_per_channel(t, out_rank, axis, ch) == (want),                    \
                      "line %d: expected %d", __LINE__, want);                                     \
        ph_tensor_free(t);                                                                         \
    } while (0)
    PC(3, I64(8, 1, 1), 4, 1, 8, 1);    /* BN-style [C, 1, 1] against NCHW */
    PC(4, I64(1, 8, 1, 1), 4, 1, 8, 1);
    PC(3, I64(8, 1, 1), 4, -3, 8, 1);   /* negative axis */
    PC(3, I64(8, 1, 1), 4, 1, -1, 1);   /* any channel count */
    PC(1, I64(1), 4, 1, 8, 1);          /* one value */
    PC(0, NULL, 4, 1, 8, 1);            /* scalar */
    PC(4, I64(1, 1, 1, 1), 4, 1, 8, 1); /* all ones */
    PC(4, I64(8, 1, 1, 1), 4, 0, 8, 1);
    PC(1, I64(8), 4, -1, 8, 1);         /* [C] is per-channel on the last axis */
    PC(1, I64(8), 4, 1, 8, 0);          /* ... not on axis 1 */
    PC(4, I64(1, 8, 1, 2), 4, 1, 8, 0); /* varies along another axis too */
    PC(4, I64(2, 8, 1, 1), 4, 1, 8, 0);
    PC(3, I64(8, 1, 1), 4, 1, 4, 0);    /* wrong channel count */
    PC(5, I64(1, 1, 1, 1, 1), 4, 1, 8, 0); /* would raise the rank */
    PC(3, I64(8, 1, 1), 4, 4, 8, 0);    /* axis out of range */
    PC(3, I64(8, 1, 1), 4, -5, 8, 0);
    PC(3, I64(8, 1, 1), -1, 0, 8, 0);
#undef PC
    ck_assert_int_eq(ph_const_is_per_channel(NULL, 4, 1, 8), 0);
}
END_TEST

/* ph_tensor_slice_columns: [2, 12] read as [outer 2, parts 3, inner 2] per
 * row; parts 1..2 keep columns 2..5 and 8..11 of each row; a rank-1
 * constant (a per-column bias) and plain columns (inner 1) the same way. */
START_TEST(slice_columns_keeps_blocks)
{
    int32_t v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i;
    int64_t d[2] = {2, 12};
    ph_tensor *t = ph_tensor_new(PH_DT_INT32, 2, d, v);
    ph_tensor *r = ph_tensor_slice_columns(t, 3, 2, 1, 2);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(ph_tensor_dtype(r), PH_DT_INT32);
    ck_assert_uint_eq(ph_tensor_rank(r), 2);
    ck_assert_int_eq(ph_tensor_dim(r, 0), 2);
    ck_assert_int_eq(ph_tensor_dim(r, 1), 8);
    const int32_t want[16] = {2, 3, 4, 5, 8, 9, 10, 11, 14, 15, 16, 17, 20, 21, 22, 23};
    int32_t got[16];
    memcpy(got, ph_tensor_data(r), sizeof got);
    for (int i = 0; i < 16; i++)
        ck_assert_int_eq(got[i], want[i]);
    ph_tensor_free(r);
    double b[6] = {0, 1, 2, 3, 4, 5};
    int64_t bd[1] = {6};
    ph_tensor *bt = ph_tensor_new(PH_DT_DOUBLE, 1, bd, b);
    r = ph_tensor_slice_columns(bt, 6, 1, 4, 2); /* plain columns 4..5 */
    ck_assert_int_eq(ph_tensor_dim(r, 0), 2);
    ck_assert(((const double *)ph_tensor_data(r))[0] == 4 && ((const double *)ph_tensor_data(r))[1] == 5);
    ph_tensor_free(r);
    /* refused: K not a multiple of parts * inner, a block past the end, a scalar */
    ck_assert_ptr_null(ph_tensor_slice_columns(t, 5, 1, 0, 1));
    ck_assert_ptr_null(ph_tensor_slice_columns(t, 3, 2, 2, 2));
    ck_assert_ptr_null(ph_tensor_slice_columns(t, 3, 2, -1, 1));
    float s = 1;
    ph_tensor *sc = ph_tensor_new(PH_DT_FLOAT, 0, NULL, &s);
    ck_assert_ptr_null(ph_tensor_slice_columns(sc, 1, 1, 0, 1));
    ph_tensor_free(sc);
    ph_tensor_free(bt);
    ph_tensor_free(t);
}
END_TEST

START_TEST(per_channel_values)
{
    double out[8];
    uint16_t hv[4] = {0x3C00, 0x4000, 0x4200, 0x4400}; /* 1 2 3 4 in float16 */
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT16, 3, I64(4, 1, 1), hv);
    ck_assert_int_eq(ph_const_channel_values(t, 4, 1, 4, out), 0);
    ck_assert(out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 4);
    ck_assert_int_eq(ph_const_channel_values(t, 4, 1, 5, out), PH_EINVAL); /* other count */
    ck_assert_int_eq(ph_const_channel_values(t, 4, 2, 4, out), PH_EINVAL); /* other axis */
    ck_assert_int_eq(ph_const_channel_values(t, 4, 1, -1, out), PH_EINVAL);
    ph_tensor_free(t);
    int32_t s = -7;
    t = ph_tensor_new(PH_DT_INT32, 0, NULL, &s);
    ck_assert_int_eq(ph_const_channel_values(t, 4, 1, 8, out), 0);
    for (int c = 0; c < 8; c++)
        ck_assert(out[c] == -7);
    ck_assert_int_eq(ph_const_channel_values(t, 4, 1, 0, out), 0);
    ph_tensor_free(t);
    float fv[3] = {0.5f, 1.5f, 2.5f};
    t = ph_tensor_new(PH_DT_FLOAT, 4, I64(1, 1, 1, 3), fv);
    ck_assert_int_eq(ph_const_channel_values(t, 4, -1, 3, out), 0);
    ck_assert(out[0] == 0.5 && out[2] == 2.5);
    ph_tensor_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("constant");
    TCase *tc = tcase_create("constant");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, read_every_dtype);
    tcase_add_test(tc, read_i64_refuses_non_integers);
    tcase_add_test(tc, broadcast_positive);
    tcase_add_test(tc, broadcast_negative);
    tcase_add_test(tc, read_unaligned_mapped_data);
    tcase_add_test(tc, rounding_float16);
    tcase_add_test(tc, rounding_bfloat16_and_float);
    tcase_add_test(tc, from_f64_integers_and_shapes);
    tcase_add_test(tc, scaled_per_channel_rounds_once);
    tcase_add_test(tc, set_const_changes_shape_and_notifies);
    tcase_add_test(tc, set_const_same_shape_new_values);
    tcase_add_test(tc, set_const_on_an_overridable_initializer);
    tcase_add_test(tc, per_channel_checks);
    tcase_add_test(tc, per_channel_values);
    tcase_add_test(tc, slice_columns_keeps_blocks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
