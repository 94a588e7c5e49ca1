/* tests/test_load_memory.c - ph_model_load_memory: a model from bytes.
 *
 * The same model as ph_model_load gives (every bundled model, saved, is the
 * same file byte for byte), from a copy: the caller's buffer is overwritten
 * and freed before the model is used.  Bad bytes are refused with the name
 * given; a model with external data is refused (no folder to find it in),
 * and a model loaded from memory saves to any path, twice (the save drops
 * mapped pages it has written: they must come back intact). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passhost/host.h"
#include "passhost/passhost.h"
#include "tmpdir.h"

static void setup(void) { tk_tmpdir_make("loadmem"); }
static void teardown(void) { tk_tmpdir_remove(); }

static void *file_bytes(const char *path, size_t *len)
{
    char *d = tk_slurp(path, len);
    ck_assert_msg(d != NULL, "cannot read %s", path);
    return d;
}

/* Save m to the scratch folder as name and return the file's bytes. */
static char *saved(ph_model *m, const char *name, size_t *len)
{
    ph_error e = {0};
    ck_assert_msg(ph_model_save(m, tk_tpath(name), &e) == 0, "%s", e.message);
    return file_bytes(tk_tpath(name), len);
}

START_TEST(same_model_as_from_the_file)
{
    const char *models[] = {PH_SOURCE_DIR "/models/cnn_small.onnx", PH_SOURCE_DIR "/models/transformer_block.onnx",
                            PH_SOURCE_DIR "/tests/models/control_flow.onnx",
                            PH_SOURCE_DIR "/tests/models/unknown_fields.onnx"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        ph_model *a = NULL, *b = NULL;
        ph_error e = {0};
        ck_assert_msg(ph_model_load(models[i], &a, &e) == 0, "%s", e.message);
        size_t n;
        char *bytes = file_bytes(models[i], &n);
        ck_assert_msg(ph_model_load_memory(bytes, n, "m", &b, &e) == 0, "%s: %s", models[i], e.message);
        memset(bytes, 0xa5, n); /* the model holds its own copy */
        free(bytes);
        ck_assert_uint_eq(ph_model_node_count(a), ph_model_node_count(b));
        size_t la, lb, lb2;
        char *sa = saved(a, "a.onnx", &la), *sb = saved(b, "b.onnx", &lb);
        char *sb2 = saved(b, "b2.onnx", &lb2); /* after the first save dropped its pages */
        ck_assert_msg(la == lb && memcmp(sa, sb, la) == 0, "%s: saved differently from memory", models[i]);
        ck_assert_msg(lb2 == lb && memcmp(sb2, sb, lb) == 0, "%s: a second save differs", models[i]);
        free(sa);
        free(sb);
        free(sb2);
        ph_model_free(a);
        ph_model_free(b);
    }
}
END_TEST

START_TEST(bad_bytes_are_named)
{
    ph_model *m = (ph_model *)1;
    ph_error e = {0};
    ck_assert_int_ne(ph_model_load_memory("", 0, "upload.onnx", &m, &e), 0);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(e.message, "upload.onnx") && strstr(e.message, "empty"), "%s", e.message);
    const char junk[] = "\x0a\xff\xff\xff\xff\x0f not protobuf";
    ck_assert_int_eq(ph_model_load_memory(junk, sizeof junk, NULL, &m, &e), PH_EPARSE);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(e.message, "<memory>") != NULL, "%s", e.message);
    /* a truncated model */
    size_t n;
    char *bytes = file_bytes(PH_SOURCE_DIR "/tests/models/control_flow.onnx", &n);
    ck_assert_int_ne(ph_model_load_memory(bytes, n / 2, "half.onnx", &m, &e), 0);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(e.message, "half.onnx") != NULL, "%s", e.message);
    free(bytes);
}
END_TEST

START_TEST(external_data_is_refused)
{
    size_t n;
    char *bytes = file_bytes(PH_SOURCE_DIR "/tests/models/external_data.onnx", &n);
    ph_model *m = NULL;
    ph_error e = {0};
    /* external_data.bin is beside the file, but a model from memory has no folder */
    ck_assert_int_eq(ph_model_load_memory(bytes, n, "ext.onnx", &m, &e), PH_EPARSE);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(e.message, "ext.onnx") && strstr(e.message, "external data") &&
                      strstr(e.message, "memory"),
                  "%s", e.message);
    free(bytes);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load_memory");
    TCase *tc = tcase_create("load_memory");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, same_model_as_from_the_file);
    tcase_add_test(tc, bad_bytes_are_named);
    tcase_add_test(tc, external_data_is_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
