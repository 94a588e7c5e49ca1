/* tests/test_config.c - INI parsing, --set overrides, custom_config files and
 * the plan checks that need the passes (unknown pass, on+off, stages,
 * targets, approx, parameters).  INI files are written to a mkdtemp folder;
 * the plan tests load copies of test plugins from $(BUILD)/test-plugins. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "base/exit.h"
#include "config/loader.h"
#include "config/plan.h"
#include "tmpdir.h"

/* ---------------------------------------------------------------- helpers */

static const char *tmpdir;

/* Write text to tmpdir/name; returns the path (static buffer, one at a time). */
static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Parse text as tmpdir/cfg.ini; returns the rc, the config in *out. */
static int parse_text(const char *text, host_config **out, ph_error *err)
{
    const char *path = write_file("cfg.ini", text);
    host_config *cfg = host_config_new();
    int rc = host_config_load_file(cfg, path, err);
    if (!rc)
        rc = host_config_finish(cfg, err);
    *out = cfg;
    return rc;
}

/* Expect parsing text to fail with code and a message containing each of
 * the NULL-terminated fragments (":LINE:" for the line). */
static void expect_error(const char *text, int code, const char *frag1, const char *frag2)
{
    host_config *cfg;
    ph_error err = {0};
    int rc = parse_text(text, &cfg, &err);
    ck_assert_msg(rc == code, "rc %d (want %d): %s", rc, code, err.message);
    ck_assert_msg(strstr(err.message, "cfg.ini") != NULL, "no file name in: %s", err.message);
    ck_assert_msg(strstr(err.message, frag1) != NULL, "'%s' not in: %s", frag1, err.message);
    if (frag2)
        ck_assert_msg(strstr(err.message, frag2) != NULL, "'%s' not in: %s", frag2,
                      err.message);
    ck_assert_int_eq(strchr(err.message, '\n') == NULL, 1);
    host_config_free(cfg);
}

static void setup(void)
{
    tmpdir = tk_tmpdir_make("config");
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

/* ------------------------------------------------------------- good files */

START_TEST(good_file)
{
    const char *text =
        "; a comment\n"
        "# another\n"
        "[model]\n"
        "input = in.onnx\n"
        "output = /abs/out.onnx   ; inline comment\n"
        "log_path = logs/run.log\n"
        "\n"
        "[optimize]\n"
        "pass_on = \"a;b\"\n"
        "pass_off = c, d\n"
        "no_integral = yes\n"
        "max_iterations = 7\n"
        "allow_approximate = On\n"
        "\n"
        "[adapt]\n"
        "target = npu\n"
        "pass_on = x;\n"
        "    y, z\n"
        "    \"w;v\"\n"
        "no_integral = 0\n"
        "\n"
        "[pass.fuse.x]\n"
        "limit = 3\n"
        "label = \"one; two\"\n";
    host_config *cfg;
    ph_error err = {0};
    ck_assert_msg(parse_text(text, &cfg, &err) == 0, "%s", err.message);
    char want[600];
    snprintf(want, sizeof want, "%s/in.onnx", tmpdir);
    ck_assert_str_eq(cfg->input, want);
    ck_assert_str_eq(cfg->output, "/abs/out.onnx");
    snprintf(want, sizeof want, "%s/logs/run.log", tmpdir);
    ck_assert_str_eq(cfg->log_path, want);
    ck_assert_ptr_null(cfg->plugin_dir);

    const host_stage_config *o = &cfg->stage[HOST_STAGE_OPTIMIZE];
    ck_assert_int_eq(o->pass_on.count, 2);
    ck_assert_str_eq(o->pass_on.items[0].text, "a");
    ck_assert_str_eq(o->pass_on.items[1].text, "b");
    ck_assert_int_eq(o->pass_off.count, 2);
    ck_assert_str_eq(o->pass_off.items[1].text, "d");
    ck_assert_msg(strstr(o->pass_off.items[1].where, "cfg.ini:10") != NULL, "%s",
                  o->pass_off.items[1].where);
    ck_assert_int_eq(o->no_integral, 1);
    ck_assert_int_eq(o->max_iterations, 7);
    ck_assert_int_eq(o->allow_approximate, 1);
    ck_assert_str_eq(o->target, "");

    const host_stage_config *a = &cfg->stage[HOST_STAGE_ADAPT];
    ck_assert_str_eq(a->target, "npu");
    ck_assert_int_eq(a->max_iterations, HOST_DEFAULT_MAX_ITERATIONS);
    ck_assert_int_eq(a->pass_on.count, 5);
    const char *names[] = {"x", "y", "z", "w", "v"};
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(a->pass_on.items[i].text, names[i]);
    ck_assert_str_eq(a->pass_on.items[3].text, "w");
    ck_assert_str_eq(a->pass_on.items[4].text, "v");
    ck_assert_msg(strstr(a->pass_on.items[4].where, "cfg.ini:19") != NULL, "%s",
                  a->pass_on.items[4].where);

    ck_assert_int_eq(cfg->param_count, 2);
    ck_assert_str_eq(cfg->params[0].pass, "fuse.x");
    ck_assert_str_eq(cfg->params[0].key, "limit");
    ck_assert_str_eq(cfg->params[0].value, "3");
    ck_assert_str_eq(cfg->params[1].value, "one; two");
    host_config_free(cfg);
}
END_TEST

START_TEST(defaults)
{
    host_config *cfg;
    ph_error err = {0};
    ck_assert_int_eq(parse_text("", &cfg, &err), 0);
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        ck_assert_int_eq(cfg->stage[s].max_iterations, 16);
        ck_assert_int_eq(cfg->stage[s].no_integral, 0);
        ck_assert_int_eq(cfg->stage[s].allow_approximate, 0);
        ck_assert_int_eq(cfg->stage[s].pass_on.count, 0);
    }
    ck_assert_ptr_null(cfg->input);
    host_config_free(cfg);
}
END_TEST

/* ----------------------------------------------------------------- errors */

START_TEST(malformed_line)
{
    expect_error("[model]\ninput = a.onnx\nthis line has no equals sign\n", HOST_EXIT_CONFIG,
                 "cfg.ini:3:", "malformed");
    expect_error("[model\ninput = a\n", HOST_EXIT_CONFIG, "cfg.ini:1:", "malformed");
}
END_TEST

START_TEST(unknown_section)
{
    expect_error("[model]\ninput = a\n[optimise]\npass_on = x\n", HOST_EXIT_CONFIG,
                 "cfg.ini:3:", "unknown section [optimise]");
    /* an empty section is reported at its header too */
    expect_error("[bogus]\n", HOST_EXIT_CONFIG, "cfg.ini:1:", "[bogus]");
    expect_error("[pass.Bad-Name]\nx = 1\n", HOST_EXIT_CONFIG, "cfg.ini:1:", "pass.Bad-Name");
}
END_TEST

START_TEST(unknown_key)
{
    expect_error("[optimize]\npass_on = a\nfrobnicate = 1\n", HOST_EXIT_CONFIG, "cfg.ini:3:",
                 "unknown key 'frobnicate' in [optimize]");
    /* target belongs to [adapt] only */
    expect_error("[optimize]\ntarget = npu\n", HOST_EXIT_CONFIG, "cfg.ini:2:", "'target'");
    expect_error("input = a.onnx\n", HOST_EXIT_CONFIG, "cfg.ini:1:", "outside any section");
}
END_TEST

START_TEST(scalar_twice)
{
    expect_error("[model]\noutput = a.onnx\ninput = b.onnx\noutput = c.onnx\n", HOST_EXIT_CONFIG,
                 "cfg.ini:4:", "lines 2 and 4");
    expect_error("[optimize]\npass_on = a\n[adapt]\npass_on = a\n[optimize]\npass_on = b\n",
                 HOST_EXIT_CONFIG, "cfg.ini:6:", "lines 2 and 6");
}
END_TEST

START_TEST(bad_values)
{
    expect_error("[optimize]\nno_integral = maybe\n", HOST_EXIT_CONFIG, "cfg.ini:2:",
                 "not a bool");
    expect_error("[adapt]\nmax_iterations = 0\n", HOST_EXIT_CONFIG, "cfg.ini:2:",
                 "max_iterations");
    expect_error("[adapt]\nmax_iterations = 12x\n", HOST_EXIT_CONFIG, "cfg.ini:2:", "12x");
    expect_error("[model]\ninput =\n", HOST_EXIT_CONFIG, "cfg.ini:2:", "empty path");
    expect_error("[optimize]\npass_on = \"a;b\n", HOST_EXIT_CONFIG, "cfg.ini:2:",
                 "unterminated");
}
END_TEST

START_TEST(continuation_of_scalar)
{
    expect_error("[model]\ninput = a.onnx\n   more.onnx\n", HOST_EXIT_CONFIG, "cfg.ini:3:",
                 "indented");
    /* an indented key after a key is a continuation too: refused for scalars */
    expect_error("[optimize]\nno_integral = true\n  max_iterations = 3\n", HOST_EXIT_CONFIG,
                 "cfg.ini:3:", "no_integral");
}
END_TEST

START_TEST(long_line)
{
    char text[1200] = "[optimize]\npass_on = a";
    for (int i = 0; i < 60; i++)
        strcat(text, ", pass_number_x");
    strcat(text, "\n");
    expect_error(text, HOST_EXIT_CONFIG, "cfg.ini:2:", "indented lines");
    /* the same list over continuation lines is fine */
    char ok[2400] = "[optimize]\npass_on = a\n";
    for (int i = 0; i < 60; i++)
        strcat(ok, "    pass_number_x,\n");
    host_config *cfg;
    ph_error err = {0};
    ck_assert_msg(parse_text(ok, &cfg, &err) == 0, "%s", err.message);
    ck_assert_int_eq(cfg->stage[0].pass_on.count, 61);
    host_config_free(cfg);
    /* a file that never ends a line is read no further than one line's
     * length (it once grew the line until memory ran out) */
    char *endless = malloc(1 << 20);
    ck_assert_ptr_nonnull(endless);
    memset(endless, 'a', (1 << 20) - 1);
    endless[(1 << 20) - 1] = 0;
    char endless_path[600];
    snprintf(endless_path, sizeof endless_path, "%s", write_file("endless.ini", endless));
    free(endless);
    char text2[800];
    snprintf(text2, sizeof text2, "[optimize]\ncustom_config = %s\n", endless_path);
    ck_assert_int_eq(parse_text(text2, &cfg, &err), HOST_EXIT_CONFIG);
    ck_assert_msg(strstr(err.message, "endless.ini:1: line longer than") != NULL, "%s", err.message);
    host_config_free(cfg);
    /* an endless binary stream is refused at its first bytes */
    ck_assert_int_eq(parse_text("[optimize]\ncustom_config = /dev/zero\n", &cfg, &err), HOST_EXIT_CONFIG);
    ck_assert_msg(strstr(err.message, "/dev/zero is not an INI file") != NULL, "%s", err.message);
    host_config_free(cfg);
}
END_TEST

START_TEST(missing_file)
{
    host_config *cfg = host_config_new();
    ph_error err = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/nope.ini", tmpdir);
    ck_assert_int_eq(host_config_load_file(cfg, path, &err), HOST_EXIT_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.message, "nope.ini"));
    host_config_free(cfg);
}
END_TEST

START_TEST(custom_config)
{
    write_file("params.ini", "[pass.tp_good]\nlimit = 9\n");
    host_config *cfg;
    ph_error err = {0};
    ck_assert_msg(parse_text("[optimize]\ncustom_config = params.ini\n[pass.tp_good]\nlimit = 4\n",
                             &cfg, &err) == 0, "%s", err.message);
    ck_assert_int_eq(cfg->param_count, 2);
    ck_assert_str_eq(cfg->params[1].value, "9");
    ck_assert_int_eq(cfg->params[1].priority, HOST_PRIO_CUSTOM);
    ck_assert_uint_eq(cfg->params[1].stage_mask, 1u << HOST_STAGE_OPTIMIZE);
    ck_assert_ptr_nonnull(strstr(cfg->params[1].where, "params.ini:2"));
    host_config_free(cfg);

    /* missing: names the key's line and the file */
    expect_error("[adapt]\ncustom_config = none.ini\n", HOST_EXIT_CONFIG, "cfg.ini:2:",
                 "none.ini");
    /* bad: only [pass.NAME] sections, error names the custom file's line */
    write_file("bad.ini", "[pass.a]\nx = 1\n[model]\ninput = q\n");
    ck_assert_int_eq(parse_text("[optimize]\ncustom_config = bad.ini\n", &cfg, &err),
                     HOST_EXIT_CONFIG);
    ck_assert_msg(strstr(err.message, "bad.ini:3:") != NULL, "%s", err.message);
    host_config_free(cfg);
}
END_TEST

/* ------------------------------------------------------------------ --set */

START_TEST(set_overrides)
{
    host_config *cfg;
    ph_error err = {0};
    ck_assert_int_eq(parse_text("[optimize]\npass_on = a, b\nmax_iterations = 3\n", &cfg, &err),
                     0);
    ck_assert_int_eq(host_config_set(cfg, "optimize.pass_on=c;d;e", &err), 0);
    ck_assert_int_eq(cfg->stage[0].pass_on.count, 3);
    ck_assert_str_eq(cfg->stage[0].pass_on.items[2].text, "e");
    ck_assert_str_eq(cfg->stage[0].pass_on.items[0].where, "--set optimize.pass_on");
    ck_assert_int_eq(host_config_set(cfg, "optimize.max_iterations=5", &err), 0);
    ck_assert_int_eq(cfg->stage[0].max_iterations, 5);
    ck_assert_int_eq(host_config_set(cfg, "adapt.no_integral=true", &err), 0);
    ck_assert_int_eq(cfg->stage[1].no_integral, 1);
    ck_assert_int_eq(host_config_set(cfg, "model.output=rel/out.onnx", &err), 0);
    ck_assert_str_eq(cfg->output, "rel/out.onnx"); /* --set paths are used as given */
    /* the section ends at the last dot */
    ck_assert_int_eq(host_config_set(cfg, "pass.fuse_x.limit=3", &err), 0);
    ck_assert_int_eq(host_config_set(cfg, "pass.a.b.c=x=y", &err), 0);
    ck_assert_int_eq(cfg->param_count, 2);
    ck_assert_str_eq(cfg->params[0].pass, "fuse_x");
    ck_assert_str_eq(cfg->params[0].key, "limit");
    ck_assert_int_eq(cfg->params[0].priority, HOST_PRIO_SET);
    ck_assert_str_eq(cfg->params[1].pass, "a.b");
    ck_assert_str_eq(cfg->params[1].key, "c");
    ck_assert_str_eq(cfg->params[1].value, "x=y");
    /* empty value clears a list */
    ck_assert_int_eq(host_config_set(cfg, "optimize.pass_on=", &err), 0);
    ck_assert_int_eq(cfg->stage[0].pass_on.count, 0);

    ck_assert_int_eq(host_config_set(cfg, "optimize", &err), HOST_EXIT_USAGE);
    ck_assert_int_eq(host_config_set(cfg, "pass_on=a", &err), HOST_EXIT_USAGE);
    ck_assert_int_eq(host_config_set(cfg, "optimize.=a", &err), HOST_EXIT_USAGE);
    ck_assert_int_eq(host_config_set(cfg, ".x=a", &err), HOST_EXIT_USAGE);
    ck_assert_int_eq(host_config_set(cfg, "nosuch.key=1", &err), HOST_EXIT_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.message, "--set nosuch.key"));
    ck_assert_int_eq(host_config_set(cfg, "optimize.bogus=1", &err), HOST_EXIT_CONFIG);
    ck_assert_int_eq(host_config_set(cfg, "adapt.allow_approximate=perhaps", &err),
                     HOST_EXIT_CONFIG);
    host_config_free(cfg);
}
END_TEST

/* ---------------------------------------------------- plan (needs passes) */

static host_registry *load_plugins(const char *const *names)
{
    const char *dir = tk_tmpdir_plugins(names);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_msg(host_registry_load_dir(reg, dir, &err) == 0, "%s", err.message);
    return reg;
}

static const char *const plan_plugins[] = {"tp_good", "tp_approx", "tp_adapt_npu", "tp_once",
                                           "tp_one_step", NULL};

/* Build the plan of text (plus --set items); returns rc, plan in *plan. */
static int plan_text(host_registry *reg, const char *text, const char *set, host_plan *plan,
                     ph_error *err)
{
    host_config *cfg;
    int rc = parse_text(text, &cfg, err);
    if (!rc && set)
        rc = host_config_set(cfg, set, err);
    if (!rc)
        rc = host_plan_build(plan, cfg, reg, err);
    if (!rc)
        host_plan_free(plan);
    host_config_free(cfg);
    return rc;
}

static void expect_plan_error(host_registry *reg, const char *text, const char *set, int code,
                              const char *frag1, const char *frag2)
{
    host_plan plan;
    ph_error err = {0};
    int rc = plan_text(reg, text, set, &plan, &err);
    ck_assert_msg(rc == code, "rc %d (want %d): %s", rc, code, err.message);
    ck_assert_msg(strstr(err.message, frag1) != NULL, "'%s' not in: %s", frag1, err.message);
    if (frag2)
        ck_assert_msg(strstr(err.message, frag2) != NULL, "'%s' not in: %s", frag2,
                      err.message);
}

START_TEST(plan_unknown_pass)
{
    host_registry *reg = load_plugins(plan_plugins);
    expect_plan_error(reg, "[optimize]\npass_on = tp_god\n", NULL, HOST_EXIT_CONFIG,
                      "cfg.ini:2: unknown pass 'tp_god'", "did you mean 'tp_good'");
    expect_plan_error(reg, "[adapt]\npass_off = zzzzzzzzzz\n", NULL, HOST_EXIT_CONFIG,
                      "cfg.ini:2:", "'zzzzzzzzzz'");
    expect_plan_error(reg, "[pass.nosuch]\nx = 1\n", NULL, HOST_EXIT_CONFIG, "cfg.ini:2:",
                      "unknown pass 'nosuch'");
    expect_plan_error(reg, "", "optimize.pass_on=tp_good,nope", HOST_EXIT_CONFIG,
                      "--set optimize.pass_on", "'nope'");
    host_registry_free(reg);
}
END_TEST

START_TEST(plan_on_off_conflict)
{
    host_registry *reg = load_plugins(plan_plugins);
    expect_plan_error(reg, "[optimize]\npass_off = tp_once\npass_on = tp_good, tp_once\n", NULL,
                      HOST_EXIT_CONFIG, "cfg.ini:3:", "cfg.ini:2");
    /* the same pass on in one stage and off in the other is fine */
    host_plan plan;
    ph_error err = {0};
    ck_assert_int_eq(plan_text(reg, "[optimize]\npass_on = tp_once\n[adapt]\npass_off = tp_once\n",
                               NULL, &plan, &err), 0);
    host_registry_free(reg);
}
END_TEST

START_TEST(plan_stage_and_target)
{
    host_registry *reg = load_plugins(plan_plugins);
    expect_plan_error(reg, "[optimize]\npass_on = tp_adapt_npu\n", NULL, HOST_EXIT_CONFIG,
                      "cfg.ini:2:", "does not run in the optimize stage");

    host_plan plan;
    ph_error err = {0};
    host_config *cfg;
    /* on by default in adapt only for its targets (target profiles named
     * npu, gpu and dsp, files beside the config) */
    write_file("npu.ini", "[target]\nname = npu\n");
    write_file("gpu.ini", "[target]\nname = gpu\n");
    write_file("dsp.ini", "[target]\nname = dsp\n");
    ck_assert_int_eq(parse_text("[adapt]\ntarget = npu.ini\n", &cfg, &err), 0);
    ck_assert_int_eq(host_plan_build(&plan, cfg, reg, &err), 0);
    ck_assert_int_eq(plan.stage[HOST_STAGE_ADAPT].count, 1);
    ck_assert_str_eq(plan.stage[HOST_STAGE_ADAPT].steps[0].plugin->desc->name, "tp_adapt_npu");
    ck_assert_int_eq(plan.stage[HOST_STAGE_OPTIMIZE].count, 0);
    host_plan_free(&plan);
    ck_assert_int_eq(host_config_set(cfg, "adapt.target=gpu.ini", &err), 0);
    ck_assert_int_eq(chdir(tmpdir), 0); /* --set paths are used as given */
    ck_assert_int_eq(host_plan_build(&plan, cfg, reg, &err), 0);
    ck_assert_int_eq(plan.stage[HOST_STAGE_ADAPT].count, 0);
    host_plan_free(&plan);
    ck_assert_int_eq(host_config_set(cfg, "adapt.target=dsp.ini", &err), 0);
    ck_assert_int_eq(host_config_set(cfg, "adapt.no_integral=true", &err), 0);
    ck_assert_int_eq(host_plan_build(&plan, cfg, reg, &err), 0);
    ck_assert_int_eq(plan.stage[HOST_STAGE_ADAPT].count, 0);
    host_plan_free(&plan);
    ck_assert_int_eq(host_config_set(cfg, "adapt.pass_on=tp_once, tp_good", &err), 0);
    ck_assert_int_eq(host_plan_build(&plan, cfg, reg, &err), 0);
    ck_assert_int_eq(plan.stage[HOST_STAGE_ADAPT].count, 2);
    host_plan_free(&plan);
    host_config_free(cfg);
    host_registry_free(reg);
}
END_TEST

START_TEST(plan_approx_refused)
{
    host_registry *reg = load_plugins(plan_plugins);
    expect_plan_error(reg, "[optimize]\npass_on = tp_approx\n", NULL, HOST_EXIT_CONFIG,
                      "cfg.ini:2:", "allow_approximate");
    host_plan plan;
    ph_error err = {0};
    ck_assert_int_eq(plan_text(reg, "[optimize]\npass_on = tp_approx\nallow_approximate = true\n",
                               NULL, &plan, &err), 0);
    host_registry_free(reg);
}
END_TEST

START_TEST(plan_parameters)
{
    host_registry *reg = load_plugins(plan_plugins);
    expect_plan_error(reg, "[pass.tp_good]\nlimit = 2\nlimt = 3\n", NULL, HOST_EXIT_CONFIG,
                      "cfg.ini:3:", "no parameter 'limt'");
    expect_plan_error(reg, "[pass.tp_good]\nlimit = lots\n", NULL, HOST_EXIT_CONFIG,
                      "cfg.ini:2:", "limit");
    expect_plan_error(reg, "[pass.tp_good]\nstrict = maybe\n", NULL, HOST_EXIT_CONFIG,
                      "cfg.ini:2:", "strict");
    expect_plan_error(reg, "", "pass.tp_good.scale=big", HOST_EXIT_CONFIG,
                      "--set pass.tp_good.scale", "scale");
    expect_plan_error(reg, "[pass.tp_once]\nx = 1\n", NULL, HOST_EXIT_CONFIG, "cfg.ini:2:",
                      "tp_once has no parameter 'x'");

    /* priorities: file < custom_config < --set, per stage */
    write_file("p.ini", "[pass.tp_good]\nlimit = 20\nlabel = custom\n");
    host_config *cfg;
    ph_error err = {0};
    ck_assert_int_eq(parse_text("[optimize]\npass_on = tp_good\ncustom_config = p.ini\n"
                                "[adapt]\npass_on = tp_good\n"
                                "[pass.tp_good]\nlimit = 10\nscale = 2.5\nstrict = yes\n",
                                &cfg, &err), 0);
    ck_assert_int_eq(host_config_set(cfg, "pass.tp_good.label=fromset", &err), 0);
    host_plan plan;
    ck_assert_msg(host_plan_build(&plan, cfg, reg, &err) == 0, "%s", err.message);
    const ph_params *po = plan.stage[HOST_STAGE_OPTIMIZE].steps[0].params;
    const ph_params *pa = plan.stage[HOST_STAGE_ADAPT].steps[0].params;
    ck_assert_int_eq(ph_params_int(po, "limit"), 20);
    ck_assert_int_eq(ph_params_int(pa, "limit"), 10);
    ck_assert_double_eq(ph_params_float(po, "scale"), 2.5);
    ck_assert_int_eq(ph_params_bool(pa, "strict"), 1);
    ck_assert_str_eq(ph_params_string(po, "label"), "fromset");
    ck_assert_str_eq(ph_params_string(pa, "label"), "fromset");
    host_plan_free(&plan);
    host_config_free(cfg);
    host_registry_free(reg);
}
END_TEST

START_TEST(bool_parsing)
{
    const char *yes[] = {"true", "TRUE", "yes", "on", "1", "On"};
    const char *no[] = {"false", "no", "off", "0", "OFF"};
    int b;
    for (size_t i = 0; i < 6; i++)
        ck_assert(host_parse_bool(yes[i], &b) && b == 1);
    for (size_t i = 0; i < 5; i++)
        ck_assert(host_parse_bool(no[i], &b) && b == 0);
    ck_assert(!host_parse_bool("2", &b));
    ck_assert(!host_parse_bool("", &b));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("ini");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, good_file);
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, malformed_line);
    tcase_add_test(tc, unknown_section);
    tcase_add_test(tc, unknown_key);
    tcase_add_test(tc, scalar_twice);
    tcase_add_test(tc, bad_values);
    tcase_add_test(tc, continuation_of_scalar);
    tcase_add_test(tc, long_line);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, custom_config);
    tcase_add_test(tc, set_overrides);
    tcase_add_test(tc, bool_parsing);
    suite_add_tcase(s, tc);

    TCase *tp = tcase_create("plan");
    tcase_add_checked_fixture(tp, setup, teardown);
    tcase_set_timeout(tp, 120);
    tcase_add_test(tp, plan_unknown_pass);
    tcase_add_test(tp, plan_on_off_conflict);
    tcase_add_test(tp, plan_stage_and_target);
    tcase_add_test(tp, plan_approx_refused);
    tcase_add_test(tp, plan_parameters);
    suite_add_tcase(s, tp);
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
