/* tests/test_loader.c - the plugin registry: a good plugin, each distinct
 * load error (not loadable, no entry symbol, ABI mismatch, malformed
 * descriptors, duplicate names) with a message naming the file, shadowing
 * across folders, and the search path.  Every test copies the test plugins
 * it needs from $(BUILD)/test-plugins into its own mkdtemp folder. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/exit.h"
#include "config/loader.h"
#include "config/plan.h"
#include "tmpdir.h"

static const char *tmpdir;

static void setup(void)
{
    tmpdir = tk_tmpdir_make("loader");
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

/* tmpdir/sub, created; returns a static path. */
static const char *subdir(const char *sub)
{
    static char dirs[4][512];
    static int next;
    char *d = dirs[next++ % 4];
    snprintf(d, 512, "%s/%s", tmpdir, sub);
    mkdir(d, 0700);
    return d;
}

/* Copy test plugin NAME.so into dir, as NAME.so or as `as` when not NULL. */
static void copy_plugin(const char *dir, const char *name, const char *as)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp '%s/test-plugins/%s.so' '%s/%s%s'", PH_BUILD_DIR, name, dir,
             as ? as : name, as ? "" : ".so");
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

/* Load the single test plugin `name` from a fresh folder; returns the code,
 * the message in err. */
static int load_one(const char *name, ph_error *err)
{
    const char *dir = subdir(name);
    copy_plugin(dir, name, NULL);
    host_registry *reg = host_registry_new();
    int rc = host_registry_load_dir(reg, dir, err);
    if (rc == 0)
        ck_assert_int_eq(host_registry_count(reg), 1);
    host_registry_free(reg);
    return rc;
}

static void expect_load_error(const char *name, int code, const char *fragment)
{
    ph_error err = {0};
    int rc = load_one(name, &err);
    ck_assert_msg(rc == code, "%s: rc %d (want %d): %s", name, rc, code, err.message);
    char file[300];
    snprintf(file, sizeof file, "%s.so", name);
    ck_assert_msg(strstr(err.message, file) != NULL, "file not named: %s", err.message);
    ck_assert_msg(strstr(err.message, fragment) != NULL, "'%s' not in: %s", fragment,
                  err.message);
    ck_assert_ptr_null(strchr(err.message, '\n'));
}

START_TEST(good_plugin)
{
    const char *dir = subdir("good");
    copy_plugin(dir, "tp_good", NULL);
    copy_plugin(dir, "tp_once", NULL);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_msg(host_registry_load_dir(reg, dir, &err) == 0, "%s", err.message);
    ck_assert_int_eq(host_registry_count(reg), 2);
    /* name order within a folder */
    ck_assert_str_eq(host_registry_at(reg, 0)->desc->name, "tp_good");
    ck_assert_str_eq(host_registry_at(reg, 1)->desc->name, "tp_once");
    const host_plugin *p = host_registry_find(reg, "tp_good");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(strstr(p->path, "tp_good.so"));
    ck_assert_str_eq(p->desc->summary, "test pass that changes nothing");
    ck_assert_uint_eq(p->desc->stages, PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT);
    ck_assert_int_eq(p->desc->abi_major, PH_ABI_MAJOR);
    ck_assert_str_eq(p->desc->params[0].name, "limit");
    ck_assert_int_eq(host_registry_find(reg, "tp_once")->desc->run_once, 1);
    ck_assert_ptr_null(host_registry_find(reg, "nope"));
    ck_assert_ptr_null(host_registry_at(reg, 2));
    host_registry_free(reg);
}
END_TEST

START_TEST(not_loadable)
{
    const char *dir = subdir("garbage");
    char path[600];
    snprintf(path, sizeof path, "%s/x.so", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("this is not an ELF file\n", f);
    fclose(f);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_int_eq(host_registry_load_dir(reg, dir, &err), HOST_LOAD_NOT_LOADABLE);
    ck_assert_msg(strstr(err.message, "x.so") != NULL, "%s", err.message);
    ck_assert_msg(strstr(err.message, "cannot load") != NULL, "%s", err.message);
    /* and through load_file */
    ck_assert_int_eq(host_registry_load_file(reg, path, &err), HOST_LOAD_NOT_LOADABLE);
    ck_assert_int_eq(host_registry_count(reg), 0);
    host_registry_free(reg);
}
END_TEST

START_TEST(no_entry)
{
    /* one file: the error */
    const char *dir = subdir("no_entry");
    copy_plugin(dir, "tp_no_entry", NULL);
    copy_plugin(dir, "tp_good", NULL);
    char path[600];
    snprintf(path, sizeof path, "%s/tp_no_entry.so", dir);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_int_eq(host_registry_load_file(reg, path, &err), HOST_LOAD_NO_ENTRY);
    ck_assert_msg(strstr(err.message, "tp_no_entry.so") && strstr(err.message, PH_PASS_ENTRY_SYMBOL),
                  "%s", err.message);
    /* a folder scan: a shared object without the entry symbol is no pass
     * plugin; it is skipped and remembered, the others load */
    ck_assert_msg(host_registry_load_dir(reg, dir, &err) == 0, "%s", err.message);
    ck_assert_int_eq(host_registry_count(reg), 1);
    ck_assert_str_eq(host_registry_at(reg, 0)->desc->name, "tp_good");
    ck_assert_uint_eq(host_registry_skipped_count(reg), 1);
    ck_assert_ptr_nonnull(strstr(host_registry_skipped(reg, 0), "tp_no_entry.so"));
    ck_assert_ptr_null(host_registry_skipped(reg, 1));
    const char *why = host_registry_skipped_for(reg, "tp_no_entry");
    ck_assert_msg(why && strstr(why, PH_PASS_ENTRY_SYMBOL), "%s", why ? why : "(null)");
    ck_assert_ptr_null(host_registry_skipped_for(reg, "tp_good"));
    /* asked for by name, the plan says why it cannot be loaded */
    host_config *cfg = host_config_new();
    ck_assert_int_eq(host_config_set(cfg, "optimize.pass_on=tp_no_entry", &err), 0);
    host_plan plan;
    ck_assert_int_eq(host_plan_build(&plan, cfg, reg, &err), HOST_EXIT_PLUGIN);
    ck_assert_msg(strstr(err.message, "pass tp_no_entry cannot be loaded"), "%s", err.message);
    host_config_free(cfg);
    host_registry_free(reg);
}
END_TEST

START_TEST(abi_mismatch)
{
    expect_load_error("tp_abi2", HOST_LOAD_ABI_MISMATCH, "plugin ABI 2.0, this host supports 1.x");
}
END_TEST

START_TEST(malformed)
{
    expect_load_error("tp_null_run", HOST_LOAD_MALFORMED, "neither run nor rules is set");
    expect_load_error("tp_empty_name", HOST_LOAD_MALFORMED, "name is empty");
    expect_load_error("tp_small_size", HOST_LOAD_MALFORMED, "struct_size 16");
    expect_load_error("tp_bad_default", HOST_LOAD_MALFORMED, "many");
    expect_load_error("tp_both_run_rules", HOST_LOAD_MALFORMED, "both run and rules");
    expect_load_error("tp_bad_profile_key", HOST_LOAD_MALFORMED, "did you mean 'max_kernel_area'");
    /* a pattern is parsed at load: the message names the pass, the rule,
     * the pattern text and the position */
    expect_load_error("tp_bad_pattern", HOST_LOAD_MALFORMED,
                      "pass tp_bad_pattern: rule 2 conv_bn: pattern 'c = Conv(x, w:konst); y = "
                      "BatchNormalization(c, s, t, m, v)' at offset 14 (line 1, column 15): unknown "
                      "constraint 'konst'");
}
END_TEST

START_TEST(duplicate_in_one_dir)
{
    const char *dir = subdir("dup");
    copy_plugin(dir, "tp_dup_a", NULL);
    copy_plugin(dir, "tp_dup_b", NULL);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_int_eq(host_registry_load_dir(reg, dir, &err), HOST_LOAD_DUPLICATE);
    ck_assert_msg(strstr(err.message, "tp_dup_a.so") && strstr(err.message, "tp_dup_b.so"),
                  "both files not named: %s", err.message);
    ck_assert_ptr_nonnull(strstr(err.message, "'tp_dup'"));
    host_registry_free(reg);

    /* load_file of a name already loaded is a duplicate as well */
    reg = host_registry_new();
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/tp_dup_a.so", dir);
    snprintf(b, sizeof b, "%s/tp_dup_b.so", dir);
    ck_assert_int_eq(host_registry_load_file(reg, a, &err), 0);
    ck_assert_int_eq(host_registry_load_file(reg, b, &err), HOST_LOAD_DUPLICATE);
    ck_assert_int_eq(host_registry_count(reg), 1);
    host_registry_free(reg);
}
END_TEST

START_TEST(shadowing_across_dirs)
{
    const char *first = subdir("first");
    const char *second = subdir("second");
    copy_plugin(first, "tp_dup_a", NULL);
    copy_plugin(second, "tp_dup_b", NULL);
    copy_plugin(second, "tp_good", NULL);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_int_eq(host_registry_load_dir(reg, first, &err), 0);
    ck_assert_msg(host_registry_load_dir(reg, second, &err) == 0, "%s", err.message);
    ck_assert_int_eq(host_registry_count(reg), 2);
    const host_plugin *p = host_registry_find(reg, "tp_dup");
    ck_assert_ptr_nonnull(strstr(p->path, "first/tp_dup_a.so"));
    ck_assert_str_eq(p->desc->summary, "duplicate a");
    host_registry_free(reg);
}
END_TEST

START_TEST(search_path)
{
    /* plugin_dir first, then PASSHOST_PLUGIN_PATH in order */
    const char *mine = subdir("mine");
    const char *env1 = subdir("env1");
    const char *env2 = subdir("env2");
    copy_plugin(mine, "tp_dup_b", NULL);
    copy_plugin(env1, "tp_dup_a", NULL);
    copy_plugin(env1, "tp_good", NULL);
    copy_plugin(env2, "tp_once", NULL);
    char path[2048];
    snprintf(path, sizeof path, "%s:%s/missing::%s:%s", env1, tmpdir, env2, env1);
    setenv("PASSHOST_PLUGIN_PATH", path, 1);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_msg(host_load_plugins(reg, mine, &err) == 0, "%s", err.message);
    const host_plugin *p = host_registry_find(reg, "tp_dup");
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->desc->summary, "duplicate b");
    ck_assert_ptr_nonnull(host_registry_find(reg, "tp_good"));
    ck_assert_ptr_nonnull(host_registry_find(reg, "tp_once"));
    /* catalogue order: folders in search order */
    ck_assert_str_eq(host_registry_at(reg, 0)->desc->name, "tp_dup");
    ck_assert_str_eq(host_registry_at(reg, 1)->desc->name, "tp_good");
    ck_assert_str_eq(host_registry_at(reg, 2)->desc->name, "tp_once");
    host_registry_free(reg);

    /* a plugin_dir that does not exist is an error */
    reg = host_registry_new();
    char missing[600];
    snprintf(missing, sizeof missing, "%s/nowhere", tmpdir);
    ck_assert_int_eq(host_load_plugins(reg, missing, &err), HOST_EXIT_PLUGIN);
    ck_assert_ptr_nonnull(strstr(err.message, "nowhere"));
    host_registry_free(reg);

    /* a broken plugin anywhere on the path stops the load with exit code 4 */
    copy_plugin(env2, "tp_abi2", NULL);
    reg = host_registry_new();
    ck_assert_int_eq(host_load_plugins(reg, mine, &err), HOST_EXIT_PLUGIN);
    ck_assert_ptr_nonnull(strstr(err.message, "tp_abi2.so"));
    host_registry_free(reg);
    unsetenv("PASSHOST_PLUGIN_PATH");
}
END_TEST

START_TEST(default_dirs)
{
    char *dirs[4];
    size_t n = host_default_plugin_dirs(dirs, 4);
    ck_assert_uint_eq(n, 2);
    /* relative to this test executable: $(BUILD)/tests/../plugins */
    ck_assert_msg(strstr(dirs[0], "/tests/../plugins") != NULL, "%s", dirs[0]);
    ck_assert_msg(strstr(dirs[1], "/tests/../lib/passhost/plugins") != NULL, "%s", dirs[1]);
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    ck_assert_uint_eq(host_default_plugin_dirs(dirs, 1), 1);
    free(dirs[0]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("registry");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, good_plugin);
    tcase_add_test(tc, not_loadable);
    tcase_add_test(tc, no_entry);
    tcase_add_test(tc, abi_mismatch);
    tcase_add_test(tc, malformed);
    tcase_add_test(tc, duplicate_in_one_dir);
    tcase_add_test(tc, shadowing_across_dirs);
    tcase_add_test(tc, search_path);
    tcase_add_test(tc, default_dirs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
