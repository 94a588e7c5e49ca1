/* tests/test_load_mutations.c - damaged models never crash the loader.
 *
 * Seeded byte flips, insertions, deletions and truncations of every bundled
 * model are loaded; a load must either fail with a message naming the file,
 * or give a model that verifies, infers shapes (or reports a contradiction),
 * goes through every built pass leaving a graph that still verifies, and
 * saves a file that loads again.  Under ASan/UBSan any out-of-bounds read,
 * leak or undefined behaviour fails the run. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/loader.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

#define MUTATIONS_PER_MODEL 300

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc(*n + 64);
    ck_assert_uint_eq(fread(d, 1, *n, f), *n);
    fclose(f);
    return d;
}

/* One damaged copy of src into dst; returns its length. */
static size_t mutate(const unsigned char *src, size_t n, unsigned char *dst, uint64_t *s)
{
    memcpy(dst, src, n);
    size_t len = n;
    int edits = 1 + (int)(next_rand(s) % 4);
    for (int e = 0; e < edits && len > 1; e++) {
        size_t at = (size_t)(next_rand(s) % len);
        switch (next_rand(s) % 5) {
        case 0: /* flip a bit */
            dst[at] ^= (unsigned char)(1u << (next_rand(s) % 8));
            break;
        case 1: /* a random byte */
            dst[at] = (unsigned char)next_rand(s);
            break;
        case 2: /* a varint-ish big value: lengths that run past the end */
            dst[at] = 0xff;
            break;
        case 3: /* delete a byte */
            memmove(dst + at, dst + at + 1, len - at - 1);
            len--;
            break;
        default: /* truncate */
            len = at + 1;
            break;
        }
    }
    return len;
}

static void quiet_log(void *user, ph_log_level level, const char *pass, const char *message)
{
    (void)user, (void)level, (void)pass, (void)message;
}

/* Two rounds of every built pass, as the host runs them; the graph must
 * still verify after each pass that changed it. */
static void run_all_passes(ph_model *m, const host_registry *reg, const char *what)
{
    ph_graph *g = ph_model_graph(m);
    ph_ctx *ctx = ph_ctx_new(quiet_log, NULL);
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < host_registry_count(reg); i++) {
            const host_plugin *hp = host_registry_at(reg, i);
            const ph_pass_desc *d = hp->desc;
            ph_params *p = ph_params_new(d->params, NULL);
            ck_assert_ptr_nonnull(p);
            ph_ctx_begin_pass(ctx, d->name, "");
            int r = host_plugin_run(hp, g, p, ctx);
            ph_ctx_end_pass(ctx);
            ph_params_free(p);
            if (r <= 0)
                continue; /* an error is allowed (reported, graph untouched by contract) */
            ph_error e = {0};
            ck_assert_msg(ph_graph_toposort(g) == 0, "%s: pass %s left a cycle", what, d->name);
            ck_assert_msg(ph_graph_verify(g, &e) == 0, "%s: pass %s broke the graph: %s", what, d->name,
                          e.message);
            ph_graph_update_shapes(g, &e);
        }
    }
    ph_ctx_free(ctx);
}

static void check_model_file(const char *path, const char *scratch, const host_registry *reg)
{
    size_t n;
    unsigned char *orig = read_all(path, &n);
    unsigned char *buf = malloc(n + 64);
    uint64_t seed = 0x51ed270b4f3a9c1dull ^ n;
    char damaged[512], out[600];
    snprintf(damaged, sizeof damaged, "%s/damaged.onnx", scratch);
    snprintf(out, sizeof out, "%s/out.onnx", scratch);
    int loaded = 0, refused = 0;
    for (int i = 0; i < MUTATIONS_PER_MODEL; i++) {
        size_t len = mutate(orig, n, buf, &seed);
        FILE *f = fopen(damaged, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
        fclose(f);
        ph_model *m = NULL;
        ph_error e = {0};
        if (ph_model_load(damaged, &m, &e) != 0) {
            ck_assert_ptr_null(m);
            ck_assert_msg(strstr(e.message, damaged) != NULL, "message does not name the file: %s", e.message);
            refused++;
            continue;
        }
        loaded++;
        ph_graph *g = ph_model_graph(m);
        ck_assert_msg(ph_graph_verify(g, &e) == 0, "%s mutation %d loads but does not verify: %s", path, i,
                      e.message);
        char what[600];
        snprintf(what, sizeof what, "%s mutation %d", path, i);
        if (ph_graph_infer_shapes(g, &e) == 0) /* may report a contradiction; must not crash */
            run_all_passes(m, reg, what);
        if (ph_model_save(m, out, &e) == 0) {
            ph_model *again = NULL;
            ck_assert_msg(ph_model_load(out, &again, &e) == 0, "%s mutation %d: saved file does not load: %s",
                          path, i, e.message);
            ph_model_free(again);
        }
        ph_model_free(m);
    }
    printf("%s: %d damaged copies loaded, %d refused\n", path, loaded, refused);
    ck_assert_int_gt(refused, 0);
    unlink(damaged);
    unlink(out);
    free(buf);
    free(orig);
}

START_TEST(damaged_models_never_crash)
{
    char scratch[] = "/tmp/ph_mutations_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(scratch));
    host_registry *reg = host_registry_new();
    ph_error e = {0};
    ck_assert_msg(host_registry_load_dir(reg, PH_BUILD_DIR "/plugins", &e) == 0, "%s", e.message);
    ck_assert_uint_gt(host_registry_count(reg), 4);
    const char *dirs[] = {PH_SOURCE_DIR "/models", PH_SOURCE_DIR "/tests/models"};
    for (int d = 0; d < 2; d++) {
        DIR *dir = opendir(dirs[d]);
        ck_assert_ptr_nonnull(dir);
        for (struct dirent *de; (de = readdir(dir));) {
            size_t l = strlen(de->d_name);
            if (l < 5 || strcmp(de->d_name + l - 5, ".onnx") != 0 || strstr(de->d_name, "external"))
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[d], de->d_name);
            check_model_file(path, scratch, reg);
        }
        closedir(dir);
    }
    rmdir(scratch);
    host_registry_free(reg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load_mutations");
    TCase *tc = tcase_create("mutations");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, damaged_models_never_crash);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
