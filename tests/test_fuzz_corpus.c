/* tests/test_fuzz_corpus.c - the fuzzers' corpora, replayed in the test build.
 *
 * Every file of fuzz/corpus/NAME goes through the code of the fuzzer NAME
 * (fuzz/NAME.c, compiled in here with its entry point renamed), under the
 * test build's ASan and UBSan, so the seeds and every crash the fuzzers
 * found (kept in the corpora as crash-*.onnx, crash-*.ini) stay regression
 * tests without clang or libFuzzer.  The plugin-fault seeds run the
 * program of this build with its test passes (fuzz/plugin_faults.c).  A broken invariant aborts naming the
 * file; a sanitizer report or a leak fails the test.  See fuzz/fuzz.mk and
 * docs/reliability.md. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLVMFuzzerTestOneInput fuzz_load_one
#include "../fuzz/load.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput fuzz_pipeline_one
#define LLVMFuzzerInitialize fuzz_pipeline_init
#include "../fuzz/pipeline.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize

#define LLVMFuzzerTestOneInput fuzz_config_one
#define LLVMFuzzerInitialize fuzz_config_init
#include "../fuzz/config.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize

#define LLVMFuzzerTestOneInput fuzz_plugin_faults_one
#include "../fuzz/plugin_faults.c"
#undef LLVMFuzzerTestOneInput

#include "../fuzz/support/fuzz_support.c"

extern void __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));

static void name_input(void)
{
    if (fz_current_input)
        fprintf(stderr, "fuzz corpus: died on %s\n", fz_current_input);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every file of fuzz/corpus/name through one; returns how many. */
static size_t replay(const char *name, int (*one)(const uint8_t *, size_t))
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", PH_SOURCE_DIR, name);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no corpus %s", dir);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *data = malloc((size_t)len + 1);
        ck_assert_uint_eq(fread(data, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        fz_current_input = path;
        /* UBSan's exit calls no death callback in gcc's runtimes: the last
         * line of the log names the input instead */
        fprintf(stderr, "fuzz corpus: %s\n", path);
        ck_assert_int_eq(one(data, (size_t)len), 0);
        fz_current_input = NULL;
        free(data);
        free(names[i]);
    }
    free(names);
    return n;
}

START_TEST(load_corpus)
{
    ck_assert_uint_gt(replay("load", fuzz_load_one), 5);
}
END_TEST

START_TEST(pipeline_corpus)
{
    fuzz_pipeline_init(NULL, NULL);
    ck_assert_uint_gt(replay("pipeline", fuzz_pipeline_one), 5);
}
END_TEST

START_TEST(config_corpus)
{
    fuzz_config_init(NULL, NULL);
    ck_assert_uint_gt(replay("config", fuzz_config_one), 3);
}
END_TEST

/* every plugin fault of the seeds, through the program of this build */
START_TEST(plugin_faults_corpus)
{
    setenv("PH_SOURCE_DIR", PH_SOURCE_DIR, 1);
    ck_assert_uint_gt(replay("plugin_faults", fuzz_plugin_faults_one), 15);
}
END_TEST

int main(void)
{
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(name_input);
    Suite *s = suite_create("fuzz_corpus");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, load_corpus);
    tcase_add_test(tc, pipeline_corpus);
    tcase_add_test(tc, config_corpus);
    tcase_add_test(tc, plugin_faults_corpus);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
