/* tests/test_alloc_failures.c - every allocation that fails is a clean error.
 *
 * SQLite's method: this program replaces malloc, calloc, realloc, strdup and
 * strndup with versions that make the n-th allocation fail, and runs the
 * work of `passhost -i MODEL -o OUT` (load, shape inference, every stage of
 * the default plan through the real runner, save) on the bundled models for
 * n = 1, 2, ... until a run makes fewer than n allocations.  For every n:
 *   - no crash (ASan, UBSan; a death names n and the model);
 *   - the run fails with a message.  A failure the SDK or a pass absorbs
 *     (a cache dropped, a type left unknown, a rewrite not made) is
 *     counted (ph_model_alloc_failures, ph_ctx_alloc_failures) and fails
 *     the run as well: what passhost writes never depends on memory.  A
 *     run that succeeds anyway is reported, and its model compared with
 *     the one a run without failures writes (host/check/verify.h);
 *   - a failed run leaves no file in the output folder (no output, no
 *     temporary file);
 *   - nothing leaks: when more bytes are allocated after the run than
 *     before it (ASan's counter), LeakSanitizer must find all of them still
 *     reachable; else it names the leaked allocations, and n is reported.
 * Only allocations made by the SDK, the pass plugins, libprotobuf-c and the
 * C library on their behalf can fail: calls made directly by the host code
 * and this program (which abort on out-of-memory by design, host/base/util.h)
 * are left alone, told apart by the caller's address.
 *
 * By default every n is tried, in both modes (about 10 s for the bundled
 * models).  Environment:
 *   PH_ALLOC_STRIDE=k       every k-th n instead; 0: only the first n of
 *                           each call site (the chain of four return
 *                           addresses above the allocator), for big models
 *   PH_ALLOC_PERSISTENT=0   only allocation n fails (transient)
 *   PH_ALLOC_PERSISTENT=1   allocation n and every later one fail (persistent);
 *                           without the variable, both modes are run
 *   PH_ALLOC_MODELS=a.onnx:b.onnx   other models (absolute paths)
 *   PH_ALLOC_TRACE=1        print the stack of every refused allocation
 *   PH_ALLOC_ONLY=n         try allocation n only (with PH_ALLOC_TRACE: where it is)
 * One line per model reports the allocation points and call sites, the n
 * tried, how many failed cleanly and how many were absorbed (and of those, how many wrote a
 * model other than the reference). */
#include <check.h>
#include <dirent.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/loader.h"
#include "passhost/host.h"
#include "passhost/passhost.h"
#include "config/plan.h"
#include "report/report.h"
#include "run/runner.h"
#include "io/shapes.h"
#include "check/verify.h"

/* ------------------------------------------------------ the allocator */

/* ASan's allocator when the program is built with it, else glibc's. */
extern void *__interceptor_malloc(size_t) __attribute__((weak));
extern void *__interceptor_calloc(size_t, size_t) __attribute__((weak));
extern void *__interceptor_realloc(void *, size_t) __attribute__((weak));
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));
extern void __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));
extern void __sanitizer_print_stack_trace(void) __attribute__((weak));

extern char __executable_start[], etext[];

typedef struct fault_state {
    int armed;
    int persistent;
    uint64_t fail_at; /* 1-based; 0: never */
    uint64_t count;   /* failable allocations since arming */
    uint64_t failed;  /* allocations refused */
    int trace;        /* print the stack of the refused allocation */
    uint64_t *sites;  /* when not NULL: the call site of each allocation */
    uint64_t n_sites;
    const char *model;
} fault_state;

static fault_state fault;

/* A key for the call chain above the allocator: four return addresses.
 * Not inlined: the allocator runs before ASan's shadow memory exists, so
 * it must have no instrumented stack array of its own. */
static __attribute__((noinline)) uint64_t site_key(void)
{
    void *frames[8];
    int n = backtrace(frames, 8);
    uint64_t h = 1469598103934665603ull;
    for (int i = 3; i < n && i < 7; i++) /* 0 site_key, 1 refuse, 2 malloc... */
        h = (h ^ (uint64_t)(uintptr_t)frames[i]) * 1099511628211ull;
    return h;
}

static int refuse(const void *caller)
{
    if (!fault.armed)
        return 0;
    const char *c = caller;
    if (c >= __executable_start && c < etext)
        return 0; /* the host code or this program: abort-on-OOM callers */
    fault.count++;
    if (fault.sites && fault.count <= fault.n_sites) {
        fault.armed = 0; /* backtrace() must not come back here */
        fault.sites[fault.count - 1] = site_key();
        fault.armed = 1;
    }
    if (fault.fail_at && (fault.count == fault.fail_at || (fault.persistent && fault.count > fault.fail_at))) {
        fault.failed++;
        if (fault.trace && fault.failed == 1 && __sanitizer_print_stack_trace) {
            fprintf(stderr, "alloc_failures: allocation %llu of %s refused here:\n",
                    (unsigned long long)fault.count, fault.model);
            __sanitizer_print_stack_trace();
        }
        return 1;
    }
    return 0;
}

static void *real_malloc(size_t n)
{
    return __interceptor_malloc ? __interceptor_malloc(n) : __libc_malloc(n);
}

void *malloc(size_t n)
{
    return refuse(__builtin_return_address(0)) ? NULL : real_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (refuse(__builtin_return_address(0)))
        return NULL;
    return __interceptor_calloc ? __interceptor_calloc(k, n) : __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    if (refuse(__builtin_return_address(0)))
        return NULL;
    return __interceptor_realloc ? __interceptor_realloc(p, n) : __libc_realloc(p, n);
}

char *strndup(const char *s, size_t max)
{
    if (refuse(__builtin_return_address(0)))
        return NULL;
    size_t n = strnlen(s, max);
    char *d = real_malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

char *strdup(const char *s)
{
    if (refuse(__builtin_return_address(0)))
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = real_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void on_death(void)
{
    if (fault.model)
        fprintf(stderr, "alloc_failures: died at allocation %llu of %s (%s)\n",
                (unsigned long long)fault.fail_at, fault.model, fault.persistent ? "persistent" : "transient");
}

static size_t allocated_bytes(void)
{
    return __sanitizer_get_current_allocated_bytes ? __sanitizer_get_current_allocated_bytes() : 0;
}

/* ------------------------------------------------------------ the run */

typedef struct fixture {
    host_config *cfg;
    host_registry *reg;
    host_plan plan;
    char dir[64];
    char out[128];
} fixture;

static size_t count_entries(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *de; (de = readdir(d));)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* load -> shapes -> every stage -> save, as `passhost -i model -o out`.  0 or
 * an error code, with e's message. */
static int run_once(fixture *fx, const char *model, ph_error *e)
{
    ph_model *m = NULL;
    int rc = ph_model_load(model, &m, e);
    if (!rc)
        rc = host_apply_shapes(m, fx->cfg, 0, e);
    if (!rc) {
        host_stage_stats stats[HOST_STAGE_COUNT];
        host_log quiet = {0}; /* no stream, no file: messages are dropped */
        host_run_opts opts = {.update_shapes = fx->cfg->infer_shapes, .log = &quiet};
        rc = host_run_all(m, &fx->plan, -1, &opts, stats, NULL, e);
        for (int s = 0; s < HOST_STAGE_COUNT; s++)
            host_stage_stats_free(&stats[s]);
    }
    if (!rc)
        rc = ph_model_save(m, fx->out, e);
    ph_model_free(m);
    return rc;
}

static void fixture_init(fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/ph_alloc_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(fx->dir));
    snprintf(fx->out, sizeof fx->out, "%s/out.onnx", fx->dir);
    ph_error e = {0};
    fx->cfg = host_config_new();
    fx->reg = host_registry_new();
    ck_assert_msg(host_load_plugins(fx->reg, PH_BUILD_DIR "/plugins", &e) == 0, "%s", e.message);
    ck_assert_uint_gt(host_registry_count(fx->reg), 4);
    ck_assert_msg(host_plan_build(&fx->plan, fx->cfg, fx->reg, &e) == 0, "%s", e.message);
}

static void fixture_free(fixture *fx)
{
    host_plan_free(&fx->plan);
    host_registry_free(fx->reg);
    host_config_free(fx->cfg);
    rmdir(fx->dir);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(d, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return d;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtoull(s, NULL, 10) : dflt;
}

/* The model a run wrote (fx->out) loads, verifies and computes what the
 * original computes (ver).  1 if so, else 0 with the reason in e. */
static int equivalent(fixture *fx, host_verify *ver, ph_error *e)
{
    ph_model *m = NULL;
    int ok = ph_model_load(fx->out, &m, e) == 0 && ph_graph_verify(ph_model_graph(m), e) == 0 &&
             host_apply_shapes(m, fx->cfg, 0, e) == 0 && host_verify_check(ver, m, e) == 0;
    ph_model_free(m);
    return ok;
}

/* Which n to try (chosen[n - 1]): every stride-th, or with stride 0 the
 * first allocation of each call site (sites[n - 1]: a key per allocation).
 * Returns how many were chosen; *n_sites gets the number of distinct sites. */
static uint64_t choose(const uint64_t *sites, uint64_t points, uint64_t stride, char *chosen,
                       uint64_t *n_sites)
{
    uint64_t cap = 16;
    while (cap < 2 * points)
        cap *= 2;
    uint64_t *seen = calloc(cap, sizeof *seen), k = 0;
    *n_sites = 0;
    for (uint64_t i = 0; i < points; i++) {
        uint64_t key = sites[i] ? sites[i] : 1, h = key & (cap - 1);
        while (seen[h] && seen[h] != key)
            h = (h + 1) & (cap - 1);
        int first = !seen[h];
        seen[h] = key;
        *n_sites += first;
        chosen[i] = stride ? i % stride == 0 : first;
        k += chosen[i];
    }
    free(seen);
    return k;
}

/* Sweep n over the model; returns the number of problems found. */
static int sweep(fixture *fx, const char *model, uint64_t stride)
{
    ph_error e = {0};
    /* the reference: a run without failures (twice: the first warms up
     * whatever is allocated once per process; the second records where
     * each allocation is made) */
    uint64_t *sites = NULL, cap_sites = 0;
    for (int i = 0; i < 2; i++) {
        unlink(fx->out);
        fault = (fault_state){.armed = 1, .model = model, .sites = sites, .n_sites = cap_sites};
        int rc = run_once(fx, model, &e);
        fault.armed = 0;
        ck_assert_msg(rc == 0, "%s: the run fails without allocation failures: %s", model, e.message);
        if (!sites) {
            cap_sites = 2 * fault.count + 1024;
            sites = calloc(cap_sites, sizeof *sites);
        }
    }
    uint64_t points = fault.count, n_sites;
    ck_assert_uint_le(points, cap_sites);
    char *chosen = malloc(points + 1);
    choose(sites, points, stride, chosen, &n_sites);
    size_t ref_len;
    char *ref = slurp(fx->out, &ref_len);
    unlink(fx->out);
    /* reference outputs of the model as loaded, for absorbed failures */
    ph_model *orig = NULL;
    host_verify *ver = NULL;
    ck_assert_msg(ph_model_load(model, &orig, &e) == 0, "%s", e.message);
    ck_assert_msg(host_apply_shapes(orig, fx->cfg, 0, &e) == 0, "%s", e.message);
    ck_assert_msg(host_verify_new(orig, &fx->cfg->verify, &ver, &e) == 0, "%s", e.message);

    /* both modes unless PH_ALLOC_PERSISTENT says which */
    const char *mode_env = getenv("PH_ALLOC_PERSISTENT");
    int first_mode = mode_env && *mode_env ? atoi(mode_env) != 0 : 0;
    int last_mode = mode_env && *mode_env ? first_mode : 1;
    int trace = env_u64("PH_ALLOC_TRACE", 0) != 0;
    uint64_t only = env_u64("PH_ALLOC_ONLY", 0);
    int problems = 0, leaked = 0;
    for (int persistent = first_mode; persistent <= last_mode; persistent++) {
        uint64_t tried = 0, clean = 0, absorbed = 0, differ = 0;
        for (uint64_t n = only ? only : 1; n <= points; n++) {
            if (only ? n != only : !chosen[n - 1])
                continue;
            size_t base_bytes = allocated_bytes();
            fault = (fault_state){.armed = 1, .persistent = persistent, .fail_at = n, .trace = trace,
                                  .model = model};
            memset(&e, 0, sizeof e);
            int rc = run_once(fx, model, &e);
            fault.armed = 0;
            size_t after_bytes = allocated_bytes();
            tried++;
            if (!fault.failed) /* fewer allocations than n this time */
                continue;
            if (rc) {
                if (!e.message[0]) {
                    fprintf(stderr, "%s: allocation %llu: error %d without a message\n", model,
                            (unsigned long long)n, rc);
                    problems++;
                }
                if (count_entries(fx->dir) != 0) {
                    fprintf(stderr, "%s: allocation %llu: the failed run left a file behind (%s)\n", model,
                            (unsigned long long)n, e.message);
                    problems++;
                }
                clean++;
            } else {
                absorbed++;
                /* the run must not depend on memory: every failure the SDK
                 * absorbs is counted (ph_model_alloc_failures) and fails it */
                fprintf(stderr, "%s: allocation %llu (%s) failed and the run succeeded anyway\n", model,
                        (unsigned long long)n, persistent ? "persistent" : "transient");
                problems++;
                size_t len;
                char *got = slurp(fx->out, &len);
                if (len != ref_len || memcmp(got, ref, len) != 0) {
                    differ++;
                    if (!equivalent(fx, ver, &e)) {
                        fprintf(stderr,
                                "%s: allocation %llu failed, the run succeeded, but its model is wrong: %s\n",
                                model, (unsigned long long)n, e.message);
                        problems++;
                    }
                }
                free(got);
            }
            unlink(fx->out);
            /* More bytes allocated than before the run: a leak, unless it is all
             * still reachable (the rule sets of pattern passes keep their scratch
             * arrays from call to call, and a failure can make them grow).
             * LeakSanitizer tells, and names the allocations; after the first
             * leak it would report that one again, so it is asked until then. */
            if (after_bytes > base_bytes && !leaked && __lsan_do_recoverable_leak_check &&
                __lsan_do_recoverable_leak_check()) {
                fprintf(stderr, "%s: allocation %llu (%s): memory leaked (LeakSanitizer's report above)\n",
                        model, (unsigned long long)n, rc ? e.message : "absorbed");
                problems++;
                leaked = 1;
            }
        }
        char how[64];
        if (stride == 1)
            snprintf(how, sizeof how, "every n");
        else if (stride)
            snprintf(how, sizeof how, "every %llu-th n", (unsigned long long)stride);
        else
            snprintf(how, sizeof how, "the first n of each site");
        printf("%s: %llu allocation points at %llu call sites; %llu tried (%s, %s): "
               "%llu failed cleanly, %llu absorbed (%llu wrote another, equivalent model), %d problems\n",
               model, (unsigned long long)points, (unsigned long long)n_sites,
               (unsigned long long)tried, persistent ? "persistent" : "transient", how,
               (unsigned long long)clean, (unsigned long long)absorbed, (unsigned long long)differ, problems);
        fflush(stdout);
        ck_assert_msg(only || (points > 100 && clean > 0), "%s: no allocation failure was injected", model);
    }
    free(ref);
    free(sites);
    free(chosen);
    host_verify_free(ver);
    ph_model_free(orig);
    return problems;
}

static void sweep_model(const char *model)
{
    fixture fx;
    fixture_init(&fx);
    size_t in_len;
    char *in = slurp(model, &in_len);
    int problems = sweep(&fx, model, env_u64("PH_ALLOC_STRIDE", 1));
    size_t after_len;
    char *after = slurp(model, &after_len);
    ck_assert_msg(after_len == in_len && memcmp(in, after, in_len) == 0, "%s was modified", model);
    free(in);
    free(after);
    fixture_free(&fx);
    ck_assert_msg(problems == 0, "%s: %d allocation failures were not clean errors (see above)", model,
                  problems);
}

START_TEST(cnn_small)
{
    sweep_model(PH_SOURCE_DIR "/models/cnn_small.onnx");
}
END_TEST

START_TEST(transformer_block)
{
    sweep_model(PH_SOURCE_DIR "/models/transformer_block.onnx");
}
END_TEST

/* PH_ALLOC_MODELS: other models, one test each. */
START_TEST(other_models)
{
    const char *list = getenv("PH_ALLOC_MODELS");
    char *copy = strdup(list);
    for (char *save = NULL, *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
        sweep_model(p);
    free(copy);
}
END_TEST

int main(void)
{
    void *warm[4];
    backtrace(warm, 4); /* loads the unwinder now, not during a sweep */
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(on_death);
    Suite *s = suite_create("alloc_failures");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 3600);
    if (getenv("PH_ALLOC_MODELS") && *getenv("PH_ALLOC_MODELS")) {
        tcase_add_test(tc, other_models);
    } else {
        tcase_add_test(tc, cnn_small);
        tcase_add_test(tc, transformer_block);
    }
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
