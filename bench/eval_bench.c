/* bench/eval_bench.c - time passhost's evaluator on a whole model.
 *
 *   eval_bench MODEL.onnx [--runs N] [--dim SYM=VALUE ...] [--dump DIR]
 *
 * Loads the model, makes one set of seeded inputs exactly as
 * scripts/ort_reference.js and scripts/ort_check.js do (splitmix64 seed 1;
 * floats uniform in [-1, 1), integers in [0, 10), bools fair coins; symbolic
 * dims from --dim, else 1), prepares the evaluator (ph_eval_new), runs it once
 * to warm up and then N times (ph_eval_run), and prints one line:
 *
 *   eval MODEL nodes=K prepare_ms=P best_ms=B median_ms=M runs=N
 *
 * --dump DIR writes output_<i>.bin (raw little-endian bytes, graph output
 * order) so bench/ort_time.js --compare DIR can check the answer.
 *
 * Exit: 0; 1 usage; 2 the model does not load; 3 the evaluator refuses or
 * fails (the message names the node and op); 4 out of memory or I/O.
 * Built by scripts/bench_eval.sh (-O2, against BUILD/lib/libpasshost.so).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "passhost/eval.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* float -> IEEE half bits, round to nearest even (as ort_check.js). */
static uint16_t to_half(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    uint32_t sign = (b >> 16) & 0x8000, mant = b & 0x7fffff;
    int exp = (int)((b >> 23) & 0xff) - 127 + 15;
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000;
        int shift = 14 - exp;
        uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

typedef struct dim_arg {
    const char *name;
    int64_t value;
} dim_arg;

static int64_t dim_value(const ph_value *v, int i, const dim_arg *dims, size_t n_dims)
{
    int64_t d = ph_value_dim(v, i);
    if (d >= 0)
        return d;
    const char *p = ph_value_dim_param(v, i);
    for (size_t k = 0; p && k < n_dims; k++)
        if (strcmp(dims[k].name, p) == 0)
            return dims[k].value;
    return 1;
}

/* Fill n elements of dtype from the generator; 0, or -1 for an unsupported dtype. */
static int fill(void *d, int dtype, int64_t n, uint64_t *s)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(s);
        double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
        double f = 2 * u - 1;
        int64_t k = (int64_t)(u * 10);
        switch (dtype) {
        case PH_DT_FLOAT: ((float *)d)[i] = (float)f; break;
        case PH_DT_DOUBLE: ((double *)d)[i] = f; break;
        case PH_DT_FLOAT16: ((uint16_t *)d)[i] = to_half((float)f); break;
        case PH_DT_BOOL: ((uint8_t *)d)[i] = (uint8_t)(r & 1); break;
        case PH_DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)k; break;
        case PH_DT_INT8: ((int8_t *)d)[i] = (int8_t)k; break;
        case PH_DT_UINT16: ((uint16_t *)d)[i] = (uint16_t)k; break;
        case PH_DT_INT16: ((int16_t *)d)[i] = (int16_t)k; break;
        case PH_DT_UINT32: ((uint32_t *)d)[i] = (uint32_t)k; break;
        case PH_DT_INT32: ((int32_t *)d)[i] = (int32_t)k; break;
        case PH_DT_UINT64: ((uint64_t *)d)[i] = (uint64_t)k; break;
        case PH_DT_INT64: ((int64_t *)d)[i] = k; break;
        default: return -1;
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int usage(void)
{
    fprintf(stderr, "usage: eval_bench MODEL.onnx [--runs N] [--dim SYM=VALUE ...] [--dump DIR]\n");
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *dump = NULL;
    int runs = 5;
    dim_arg dims[32];
    size_t n_dims = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1)
                return usage();
        } else if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc) {
            char *eq = strchr(argv[++i], '=');
            if (!eq || eq == argv[i] || !eq[1] || n_dims == 32)
                return usage();
            *eq = 0;
            dims[n_dims].name = argv[i];
            dims[n_dims++].value = strtoll(eq + 1, NULL, 10);
        } else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc) {
            dump = argv[++i];
        } else if (argv[i][0] == '-' || path) {
            return usage();
        } else {
            path = argv[i];
        }
    }
    if (!path)
        return usage();

    ph_error err = {0};
    ph_model *m = NULL;
    if (ph_model_load(path, &m, &err)) {
        fprintf(stderr, "eval_bench: %s: %s\n", path, err.message);
        return 2;
    }
    ph_graph *g = ph_model_graph(m);
    size_t n_in = ph_graph_input_count(g), n_out = ph_graph_output_count(g);
    ph_tensor **in = calloc(n_in + 1, sizeof *in), **out = calloc(n_out + 1, sizeof *out);
    double *times = calloc((size_t)runs, sizeof *times);
    if (!in || !out || !times)
        return 4;
    uint64_t seed = 1;
    for (size_t i = 0; i < n_in; i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (ph_value_is_initializer(v))
            continue; /* ORT does not list these as inputs; keep the default */
        int dtype = ph_value_dtype(v), rank = ph_value_rank(v);
        if (rank < 0 || rank > 16 || !ph_dtype_size(dtype)) {
            fprintf(stderr, "eval_bench: input '%s': unknown rank or dtype %s\n", ph_value_name(v),
                    ph_dtype_name(dtype));
            return 3;
        }
        int64_t shape[16], n = 1;
        for (int k = 0; k < rank; k++)
            n *= shape[k] = dim_value(v, k, dims, n_dims);
        void *buf = calloc((size_t)n + 1, ph_dtype_size(dtype));
        if (!buf)
            return 4;
        if (fill(buf, dtype, n, &seed)) {
            fprintf(stderr, "eval_bench: input '%s': dtype %s not supported here\n", ph_value_name(v),
                    ph_dtype_name(dtype));
            return 3;
        }
        in[i] = ph_tensor_new(dtype, (size_t)rank, shape, buf);
        free(buf);
        if (!in[i])
            return 4;
    }

    ph_eval *e = NULL;
    double t0 = now_ms();
    if (ph_eval_new(g, &e, &err)) {
        fprintf(stderr, "eval_bench: %s: the evaluator cannot prepare the model: %s\n", path, err.message);
        return 3;
    }
    double prepare = now_ms() - t0;
    for (int r = -1; r < runs; r++) { /* run -1: warm-up (page faults on mapped weights) */
        t0 = now_ms();
        int rc = ph_eval_run(e, (const ph_tensor *const *)in, n_in, out, n_out, &err);
        double t = now_ms() - t0;
        if (rc) {
            fprintf(stderr, "eval_bench: %s: the evaluator failed: %s\n", path, err.message);
            return 3;
        }
        if (r >= 0)
            times[r] = t;
        if (r == runs - 1 && dump) {
            for (size_t o = 0; o < n_out; o++) {
                char file[4096];
                snprintf(file, sizeof file, "%s/output_%zu.bin", dump, o);
                FILE *f = fopen(file, "wb");
                const void *d = ph_tensor_data(out[o]);
                size_t nb = ph_tensor_nbytes(out[o]);
                if (!f || (d && nb && fwrite(d, 1, nb, f) != nb) || fclose(f)) {
                    fprintf(stderr, "eval_bench: %s: %s\n", file, strerror(errno));
                    return 4;
                }
            }
        }
        for (size_t o = 0; o < n_out; o++) {
            ph_tensor_free(out[o]);
            out[o] = NULL;
        }
    }
    qsort(times, (size_t)runs, sizeof *times, cmp_double);
    printf("eval %s nodes=%zu prepare_ms=%.3f best_ms=%.3f median_ms=%.3f runs=%d\n", path,
           ph_model_node_count(m), prepare, times[0], times[runs / 2], runs);
    ph_eval_free(e);
    for (size_t i = 0; i < n_in; i++)
        ph_tensor_free(in[i]);
    free(in);
    free(out);
    free(times);
    ph_model_free(m);
    return 0;
}
