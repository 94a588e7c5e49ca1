/* tests/test_example_out_of_tree.c - the out-of-tree example pass, built the
 * way a third party would: install the SDK from the already-built tree into
 * a temporary prefix, build examples/out_of_tree_pass with only pkg-config,
 * and run the installed passhost on a model with Neg(Neg(x)).
 *
 * The install uses the same build tree as this test (PH_BUILD_DIR, and SAN=1
 * when this test is itself built with the sanitizers), so make only copies
 * files and relinks the installed binary.
 * On failure the temporary folder is left in place and named in the message.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "passhost/plugin.h"
#include "passrun.h"
#include "testkit.h"
#include "tmpdir.h"

/* Environment for child makes: no jobserver or flags from an outer make. */
#define CLEAN_ENV "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u PASSHOST_PLUGIN_PATH "

static char tmp[256];

/* The tail of a log file, for failure messages (static buffer). */
static const char *log_tail(const char *name)
{
    static char text[3000];
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    text[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return "(no log)";
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size > (long)sizeof text - 1 ? size - (long)sizeof text + 1 : 0, SEEK_SET);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* Run a shell command with stdout and stderr in tmp/log; its exit status. */
static int run(const char *log, const char *fmt, ...) PH_PRINTF(2, 3);
static int run(const char *log, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    ck_assert_int_lt(n, (int)sizeof cmd - 200);
    snprintf(cmd + n, sizeof cmd - (size_t)n, " > '%s/%s' 2>&1", tmp, log);
    int status = system(cmd);
    ck_assert_int_ne(status, -1);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The tree's SAN setting: this test is compiled with the tree's flags, so
 * it is sanitized exactly when the tree is. */
#if defined(__SANITIZE_ADDRESS__)
#define TREE_SAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TREE_SAN 1
#endif
#endif
#ifndef TREE_SAN
#define TREE_SAN 0
#endif

static int file_exists(const char *dir, const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* x [2,3] -> Neg -> Neg -> Relu -> y, saved to tmp/model.onnx. */
static ph_model *write_model(void)
{
    char path[512];
    ph_error err = {0};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *y = tk_op1(g, "Relu", tk_op1(g, "Neg", tk_op1(g, "Neg", x)));
    tk_output(g, y);
    snprintf(path, sizeof path, "%s/model.onnx", tmp);
    int rc = ph_model_save(m, path, &err);
    ck_assert_msg(rc == 0, "saving %s: %s", path, err.message);
    return m;
}

START_TEST(builds_and_runs_against_installed_sdk)
{
    strcpy(tmp, "/tmp/ph_oot_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));

    /* 1. install the SDK from the tree this test was built from */
    int rc = run("install.log",
                 CLEAN_ENV "make -C '%s' --no-print-directory BUILD='%s' SAN=%d PREFIX='%s/prefix' "
                           "install",
                 PH_SOURCE_DIR, PH_BUILD_DIR, TREE_SAN, tmp);
    ck_assert_msg(rc == 0, "make install failed (%d), see %s:\n%s", rc, tmp,
                  log_tail("install.log"));
    ck_assert_msg(file_exists(tmp, "prefix/lib/pkgconfig/passhost.pc"), "no passhost.pc in %s",
                  tmp);
    /* the man page and the docs are installed; pkg-config's libs bring libm */
    ck_assert_msg(file_exists(tmp, "prefix/share/man/man1/passhost.1"), "no man page in %s", tmp);
    ck_assert_msg(file_exists(tmp, "prefix/share/doc/passhost/config.md") &&
                  file_exists(tmp, "prefix/share/doc/passhost/report.schema.json"),
                  "no docs in %s/prefix/share/doc/passhost", tmp);
    rc = run("pc.log", CLEAN_ENV "PKG_CONFIG_PATH='%s/prefix/lib/pkgconfig' pkg-config --libs passhost "
                       "| grep -q -- ' -lm'", tmp);
    ck_assert_msg(rc == 0, "pkg-config --libs passhost has no -lm: %s", log_tail("pc.log"));
    /* one version: the program's, passhost.pc's and the man page's */
    rc = run("pcversion.log", CLEAN_ENV "PKG_CONFIG_PATH='%s/prefix/lib/pkgconfig' pkg-config "
                              "--modversion passhost", tmp);
    ck_assert_msg(rc == 0, "pkg-config --modversion: %s", log_tail("pcversion.log"));
    char pc_version[64];
    snprintf(pc_version, sizeof pc_version, "%s", log_tail("pcversion.log"));
    pc_version[strcspn(pc_version, "\n")] = 0;
    rc = run("version.log", CLEAN_ENV "'%s/prefix/bin/passhost' --version", tmp);
    char expect[128];
    snprintf(expect, sizeof expect, "passhost %s (plugin ABI", pc_version);
    ck_assert_msg(rc == 0 && strstr(log_tail("version.log"), expect), "passhost.pc says %s, --version: %s",
                  pc_version, log_tail("version.log"));
    char man[512];
    snprintf(man, sizeof man, "%s/prefix/share/man/man1/passhost.1", tmp);
    char *page = tk_slurp(man, NULL);
    snprintf(expect, sizeof expect, "\"passhost %s\"", pc_version);
    ck_assert_msg(page && strstr(page, expect), "the man page does not say %s", expect);
    free(page);
    /* the usual link chain: libpasshost.so -> .so.MAJOR -> .so.MAJOR.MINOR (the file) */
    rc = run("links.log",
             "cd '%s/prefix/lib' && for l in libpasshost libpasshost-pipeline; do "
             "[ \"$(readlink $l.so)\" = $l.so.%d ] && [ \"$(readlink $l.so.%d)\" = $l.so.%d.%d ] && "
             "[ -f $l.so.%d.%d ] && [ ! -L $l.so.%d.%d ] || exit 1; done",
             tmp, PH_ABI_MAJOR, PH_ABI_MAJOR, PH_ABI_MAJOR, PH_ABI_MINOR, PH_ABI_MAJOR, PH_ABI_MINOR,
             PH_ABI_MAJOR, PH_ABI_MINOR);
    ck_assert_msg(rc == 0, "the library links are not libX.so -> libX.so.%d -> libX.so.%d.%d: %s",
                  PH_ABI_MAJOR, PH_ABI_MAJOR, PH_ABI_MINOR, log_tail("links.log"));
    ck_assert_msg(file_exists(tmp, "prefix/share/bash-completion/completions/passhost"),
                  "no bash completion in %s", tmp);
    /* a staged install (DESTDIR) used through pkg-config's sysroot, as
     * docs/embedding.md says */
    rc = run("destdir.log",
             CLEAN_ENV "make -C '%s' --no-print-directory BUILD='%s' SAN=%d PREFIX=/usr "
                       "DESTDIR='%s/stage' install && "
                       "PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR='%s/stage/usr/lib/pkgconfig' "
                       "PKG_CONFIG_SYSROOT_DIR='%s/stage' pkg-config --cflags passhost | "
                       "grep -q -- '-I%s/stage/usr/include'",
             PH_SOURCE_DIR, PH_BUILD_DIR, TREE_SAN, tmp, tmp, tmp, tmp);
    ck_assert_msg(rc == 0, "the DESTDIR install through pkg-config's sysroot: %s", log_tail("destdir.log"));

    /* 2. build the example in a folder of its own with only pkg-config */
    rc = run("copy.log", "mkdir -p '%s/ex' && cp '%s/examples/out_of_tree_pass/pass.c' "
                         "'%s/examples/out_of_tree_pass/Makefile' '%s/ex/'",
             tmp, PH_SOURCE_DIR, PH_SOURCE_DIR, tmp);
    ck_assert_msg(rc == 0, "copying the example: %s", log_tail("copy.log"));
    rc = run("build.log", CLEAN_ENV "PKG_CONFIG_PATH='%s/prefix/lib/pkgconfig' make -C '%s/ex'",
             tmp, tmp);
    ck_assert_msg(rc == 0, "building the example failed (%d), see %s:\n%s", rc, tmp,
                  log_tail("build.log"));
    ck_assert_msg(file_exists(tmp, "ex/example_double_neg.so"), "no .so built in %s/ex", tmp);

    /* 3. run the installed passhost with the example switched on */
    ph_model *before = write_model();
    rc = run("run.log",
             CLEAN_ENV "'%s/prefix/bin/passhost' -v -i '%s/model.onnx' -o '%s/out.onnx' "
                       "--plugin-dir '%s/ex' --set optimize.pass_on=example_double_neg",
             tmp, tmp, tmp, tmp);
    ck_assert_msg(rc == 0, "passhost failed (%d), see %s:\n%s", rc, tmp, log_tail("run.log"));
    /* the whole report, not its tail: the pass table is longer than the tail */
    ck_assert_msg(run("grep.log", "grep -q '^  example_double_neg ' '%s/run.log'", tmp) == 0,
                  "the report does not name example_double_neg:\n%s", log_tail("run.log"));

    /* 4. the output has no Neg left and computes the same */
    char out_path[512];
    ph_error err = {0};
    ph_model *after = NULL;
    snprintf(out_path, sizeof out_path, "%s/out.onnx", tmp);
    rc = ph_model_load(out_path, &after, &err);
    ck_assert_msg(rc == 0, "loading %s: %s", out_path, err.message);
    ck_assert_uint_eq(tk_count_op(ph_model_graph(after), PH_OP_Neg), 0);
    ck_assert_uint_eq(tk_count_op(ph_model_graph(after), PH_OP_Relu), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(after), 0)),
                     ph_value_name(ph_graph_output(ph_model_graph(before), 0)));
    ph_tensor **want, **got;
    size_t nw = tk_eval_model(before, 5, &want), ng = tk_eval_model(after, 5, &got);
    tk_assert_same(want, nw, got, ng);
    tk_free_outs(want, nw);
    tk_free_outs(got, ng);
    ph_model_free(before);
    ph_model_free(after);

    run("cleanup.log", "rm -rf '%s'", tmp);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("example_out_of_tree");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, builds_and_runs_against_installed_sdk);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
