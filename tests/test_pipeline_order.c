/* tests/test_pipeline_order.c - the one explicit pipeline (host/config/order.h,
 * pipeline_text.h): the shipped plugins/pipeline.txt lists every built-in
 * pass of each stage in run order and agrees with their hints; a pass it
 * does not list goes right after or before the built-in its hints name,
 * else after the built-ins by name, wherever it was found and whatever else
 * is on; renaming plugin files changes neither the order nor the output;
 * the file's errors (line numbers, close names, hints it contradicts);
 * --list-passes in run order; --passes values (stages, stage keys, pass
 * parameters, quoting) and their errors; and --print-pipeline, whose value
 * given back to --passes makes the same output byte for byte and prints
 * itself again. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/exit.h"
#include "clirun.h"
#include "config/config.h"
#include "config/loader.h"
#include "config/order.h"
#include "config/pipeline_text.h"
#include "config/plan.h"
#include "tmpdir.h"

static const char *tmpdir;

static void setup(void)
{
    tmpdir = tk_tmpdir_make("order");
    unsetenv("PASSHOST_PLUGIN_PATH");
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

/* ------------------------------------------------------------- helpers */

typedef struct names {
    char *item[256];
    size_t count;
} names;

static void names_free(names *n)
{
    for (size_t i = 0; i < n->count; i++)
        free(n->item[i]);
    n->count = 0;
}

/* The passes plugins/pipeline.txt lists under [stage], read here with a
 * reader of the test's own. */
static names file_order(const char *stage)
{
    char path[600], line[512], header[64];
    snprintf(path, sizeof path, "%s/plugins/pipeline.txt", PH_SOURCE_DIR);
    snprintf(header, sizeof header, "[%s]", stage);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    names out = {0};
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "#\n")] = '\0';
        char word[256] = "";
        if (sscanf(line, "%255s", word) != 1)
            continue;
        if (word[0] == '[')
            in = strcmp(word, header) == 0;
        else if (in)
            out.item[out.count++] = strdup(word);
    }
    fclose(f);
    return out;
}

/* The built-in passes (PH_BUILD_DIR/plugins, the default folder of this
 * program), after the folder dir (NULL: none). */
static host_registry *load_with(const char *dir)
{
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_msg(host_load_plugins(reg, dir, &err) == 0, "%s", err.message);
    return reg;
}

/* The names of a stage order (registry indices). */
static names order_names(const host_registry *reg, int stage, const char *only)
{
    size_t *idx, n;
    ph_error err = {0};
    ck_assert_msg(host_stage_order(reg, stage, only, &idx, &n, &err) == 0, "%s", err.message);
    names out = {0};
    for (size_t i = 0; i < n; i++)
        out.item[out.count++] = strdup(host_registry_at(reg, idx[i])->desc->name);
    free(idx);
    return out;
}

static long index_of(const names *n, const char *name)
{
    for (size_t i = 0; i < n->count; i++)
        if (strcmp(n->item[i], name) == 0)
            return (long)i;
    return -1;
}

/* The plan of a config given as --set values; the step names of stage. */
static names plan_names(const host_registry *reg, int stage, const char *const *sets)
{
    host_config *cfg = host_config_new();
    ph_error err = {0};
    for (size_t i = 0; sets && sets[i]; i++)
        ck_assert_msg(host_config_set(cfg, sets[i], &err) == 0, "%s", err.message);
    host_plan plan;
    ck_assert_msg(host_plan_build(&plan, cfg, reg, &err) == 0, "%s", err.message);
    names out = {0};
    for (size_t i = 0; i < plan.stage[stage].count; i++)
        out.item[out.count++] = strdup(plan.stage[stage].steps[i].plugin->desc->name);
    host_plan_free(&plan);
    host_config_free(cfg);
    return out;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = tk_slurp(a, &la), *y = tk_slurp(b, &lb);
    int same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* --------------------------------------------------- the shipped pipeline */

START_TEST(shipped_pipeline_lists_every_builtin_in_order)
{
    host_registry *reg = load_with(NULL);
    const char *path = host_registry_pipeline_path(reg);
    ck_assert_ptr_nonnull(path);
    ck_assert_msg(strstr(path, "plugins/pipeline.txt") != NULL, "%s", path);
    size_t total = 0;
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        names want = file_order(host_stage_name(s)), got = order_names(reg, s, NULL);
        ck_assert_msg(want.count > 10, "[%s] lists %zu passes", host_stage_name(s), want.count);
        /* every pass of the stage is listed (an unlisted one would come
         * after them all), in the listed order, and no hint disagrees
         * (host_stage_order would have failed) */
        ck_assert_uint_eq(got.count, want.count);
        for (size_t i = 0; i < want.count; i++)
            ck_assert_str_eq(got.item[i], want.item[i]);
        total += want.count;
        names_free(&want);
        names_free(&got);
    }
    /* each built plugin is in the list of each stage it runs in
     * (explicit_pads and type_cast_narrow run in both) */
    size_t stages = 0;
    for (size_t i = 0; i < host_registry_count(reg); i++) {
        unsigned st = host_registry_at(reg, i)->desc->stages;
        stages += !!(st & PH_STAGE_OPTIMIZE) + !!(st & PH_STAGE_ADAPT);
    }
    ck_assert_uint_eq(total, stages);
    host_registry_free(reg);
}
END_TEST

/* The default plan is the listed order restricted to the passes on. */
START_TEST(plans_follow_the_file_whatever_is_on)
{
    host_registry *reg = load_with(NULL);
    names all = order_names(reg, HOST_STAGE_OPTIMIZE, NULL);
    const char *const none[] = {NULL};
    const char *const more[] = {"optimize.pass_on=fold_constant_inputs,batchnorm_to_mul_add",
                                "optimize.pass_off=eliminate_identity", NULL};
    const char *const *cases[] = {none, more};
    for (size_t c = 0; c < 2; c++) {
        names plan = plan_names(reg, HOST_STAGE_OPTIMIZE, cases[c]);
        ck_assert_uint_gt(plan.count, 40);
        for (size_t i = 1; i < plan.count; i++)
            ck_assert_msg(index_of(&all, plan.item[i - 1]) < index_of(&all, plan.item[i]),
                          "%s before %s", plan.item[i - 1], plan.item[i]);
        ck_assert_int_eq(index_of(&plan, "eliminate_identity") < 0, c == 1);
        names_free(&plan);
    }
    /* the file's own order: constants become initializers before folding
     * (a hint of constant_folding), and switching fold_constant_inputs on
     * no longer moves constant_folding */
    names plan = plan_names(reg, HOST_STAGE_OPTIMIZE, more);
    ck_assert_int_eq(index_of(&plan, "constant_to_initializer") + 1,
                     index_of(&plan, "fold_constant_inputs"));
    ck_assert_int_eq(index_of(&plan, "fold_constant_inputs") + 1, index_of(&plan, "constant_folding"));
    names_free(&plan);
    names_free(&all);
    host_registry_free(reg);
}
END_TEST

/* -------------------------------------------------------- unlisted passes */

START_TEST(unlisted_passes_go_by_their_hints_then_by_name)
{
    const char *dir = tk_tmpdir_plugins((const char *const[]){
        "tp_after_identity", "tp_before_folding", "tp_good", "tp_order_a", "tp_order_b",
        "tp_order_c", NULL});
    host_registry *reg = load_with(dir); /* found before the built-ins */
    const char *const on[] = {"optimize.pass_on=tp_order_a,tp_before_folding,tp_good,tp_order_b,"
                              "tp_order_c,tp_after_identity",
                              NULL};
    names plan = plan_names(reg, HOST_STAGE_OPTIMIZE, on);
    long fold = index_of(&plan, "constant_folding"), id = index_of(&plan, "eliminate_identity");
    ck_assert_int_eq(index_of(&plan, "tp_before_folding"), fold - 1);
    ck_assert_int_eq(index_of(&plan, "tp_after_identity"), id + 1);
    /* no hint on a built-in: after every built-in, by name, hints among
     * them holding (c before b before a) */
    const char *tail[] = {"transpose_to_reshape", "tp_good", "tp_order_c", "tp_order_b",
                          "tp_order_a"};
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(plan.item[plan.count - 5 + i], tail[i]);
    names_free(&plan);

    /* the place next to a built-in holds when that built-in is off */
    const char *const skip[] = {"optimize.pass_on=tp_after_identity",
                                "optimize.pass_off=eliminate_identity", NULL};
    plan = plan_names(reg, HOST_STAGE_OPTIMIZE, skip);
    long before = index_of(&plan, "eliminate_empty_slice");
    ck_assert_int_ge(before, 0);
    ck_assert_str_eq(plan.item[before + 1], "tp_after_identity");
    ck_assert_str_eq(plan.item[before + 2], "eliminate_inverse_pairs");
    names_free(&plan);
    host_registry_free(reg);
}
END_TEST

/* ----------------------------------------------------------- file names */

/* Copy every *.so of from into to, the i-th in name order as NAME_OF(i). */
static void copy_renamed(const char *from, const char *to, int reverse)
{
    DIR *d = opendir(from);
    ck_assert_ptr_nonnull(d);
    names files = {0};
    for (struct dirent *de; (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        if (n > 3 && strcmp(de->d_name + n - 3, ".so") == 0)
            files.item[files.count++] = strdup(de->d_name);
    }
    closedir(d);
    mkdir(to, 0700);
    for (size_t i = 0; i < files.count; i++) {
        char src[700], dst[700];
        snprintf(src, sizeof src, "%s/%s", from, files.item[i]);
        /* readdir's order, numbered against it: no name says what is inside */
        snprintf(dst, sizeof dst, "%s/p%03zu.so", to, reverse ? files.count - i : i);
        tk_copy_file(src, dst);
    }
    names_free(&files);
}

START_TEST(renamed_plugin_files_change_nothing)
{
    /* the registry: test plugins under their names and under numbers */
    const char *dir = tk_tmpdir_plugins((const char *const[]){
        "tp_good", "tp_order_a", "tp_order_b", "tp_order_c", "tp_once", "tp_one_step", NULL});
    char renamed[600];
    snprintf(renamed, sizeof renamed, "%s/renamed", tmpdir);
    copy_renamed(dir, renamed, 1);
    host_registry *a = host_registry_new(), *b = host_registry_new();
    ph_error err = {0};
    ck_assert_int_eq(host_registry_load_dir(a, dir, &err), 0);
    ck_assert_int_eq(host_registry_load_dir(b, renamed, &err), 0);
    names na = order_names(a, HOST_STAGE_OPTIMIZE, NULL), nb = order_names(b, HOST_STAGE_OPTIMIZE, NULL);
    ck_assert_uint_eq(na.count, 6);
    ck_assert_uint_eq(na.count, nb.count);
    for (size_t i = 0; i < na.count; i++)
        ck_assert_str_eq(na.item[i], nb.item[i]);
    names_free(&na);
    names_free(&nb);
    host_registry_free(a);
    host_registry_free(b);

    /* the program: every built-in pass under another file name, found
     * first; the same bytes out, with the default stages and target ort */
    char builtins[600], renamed_all[600], model[600];
    snprintf(builtins, sizeof builtins, "%s/plugins", PH_BUILD_DIR);
    snprintf(renamed_all, sizeof renamed_all, "%s/builtins", tmpdir);
    copy_renamed(builtins, renamed_all, 1);
    const char *models[] = {"transformer_block.onnx", "cnn_small.onnx"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(model, sizeof model, "%s/models/%s", PH_SOURCE_DIR, models[i]);
        tk_cli_result r = TK_CLI(model, tk_tpath("plain.onnx"), "-q", "--set", "adapt.target=ort");
        ck_assert_msg(r.status == 0, "%s", r.err);
        tk_cli_free(&r);
        r = TK_CLI(model, tk_tpath("renamed.onnx"), "-q", "--set", "adapt.target=ort",
                   "--plugin-dir", renamed_all);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tk_cli_free(&r);
        ck_assert_msg(same_file(tk_tpath("plain.onnx"), tk_tpath("renamed.onnx")), "%s", models[i]);
    }
    tk_cli_result r1 = TK_CLI("--list-passes"), r2 = TK_CLI("--list-passes", "--plugin-dir", renamed_all);
    ck_assert_int_eq(r1.status, 0);
    ck_assert_int_eq(r2.status, 0);
    ck_assert_str_eq(r1.out, r2.out);
    tk_cli_free(&r1);
    tk_cli_free(&r2);
}
END_TEST

/* ------------------------------------------------------------ file errors */

/* The order of [optimize] with dir/pipeline.txt holding text, over the
 * test plugins copied there: rc, and the message in msg. */
static int order_with_file(const char *text, char *msg, size_t size)
{
    static int n;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/f%d", tmpdir, n++);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    tk_copy_test_plugins(dir, (const char *const[]){"tp_good", "tp_order_a", "tp_order_b",
                                                    "tp_order_c", "tp_adapt_npu", NULL});
    char path[700];
    snprintf(path, sizeof path, "%s/pipeline.txt", dir);
    write_file(path, text);
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_int_eq(host_registry_load_dir(reg, dir, &err), 0);
    ck_assert_str_eq(host_registry_pipeline_path(reg), path);
    size_t *idx = NULL, count = 0;
    int rc = host_stage_order(reg, HOST_STAGE_OPTIMIZE, NULL, &idx, &count, &err);
    snprintf(msg, size, "%s", rc ? err.message : "");
    if (!rc) { /* the names, space-separated */
        for (size_t i = 0; i < count; i++) {
            size_t len = strlen(msg);
            snprintf(msg + len, size - len, "%s%s", i ? " " : "",
                     host_registry_at(reg, idx[i])->desc->name);
        }
    }
    free(idx);
    host_registry_free(reg);
    return rc;
}

static void expect_file_error(const char *text, int code, const char *frag1, const char *frag2)
{
    char msg[600];
    int rc = order_with_file(text, msg, sizeof msg);
    ck_assert_msg(rc == code, "rc %d for: %s", rc, text);
    ck_assert_msg(strstr(msg, "pipeline.txt:") && strstr(msg, frag1) &&
                  (!frag2 || strstr(msg, frag2)), "%s", msg);
}

START_TEST(pipeline_file_errors)
{
    expect_file_error("[optimize]\ntp_order_b\nnot_there\n", HOST_EXIT_CONFIG,
                      "pipeline.txt:3: unknown pass 'not_there'", NULL);
    expect_file_error("[optimize]\ntp_order_bb\n", HOST_EXIT_CONFIG, ":2: unknown pass",
                      "did you mean 'tp_order_b'");
    expect_file_error("[optimize]\ntp_order_b\n# again\ntp_order_b\n", HOST_EXIT_CONFIG,
                      ":4: pass tp_order_b is listed twice in [optimize] (also on line 2)", NULL);
    expect_file_error("\n[optimise]\n", HOST_EXIT_CONFIG, ":2: unknown section [optimise]", NULL);
    expect_file_error("[optimize\n", HOST_EXIT_CONFIG, ":1: a section header ends with ']'", NULL);
    expect_file_error("tp_order_b\n", HOST_EXIT_CONFIG, ":1: pass tp_order_b comes before any",
                      NULL);
    expect_file_error("[optimize]\nTp Order\n", HOST_EXIT_CONFIG, ":2: 'Tp Order' is not a pass name",
                      NULL);
    expect_file_error("[adapt]\ntp_order_b\n", HOST_EXIT_CONFIG,
                      ":2: pass tp_order_b is listed in [adapt] but does not run in that stage",
                      NULL);
    /* the file contradicts a hint: a is listed before b, but runs after it */
    expect_file_error("[optimize]\ntp_order_a\ntp_order_b\n", HOST_EXIT_PASS,
                      ":2: tp_order_a is listed before tp_order_b (line 3)",
                      "tp_order_a declares run_after tp_order_b");
    expect_file_error("[optimize]\ntp_order_b\ntp_order_c\n", HOST_EXIT_PASS,
                      "tp_order_c declares run_before tp_order_b", NULL);

    /* comments, blanks, a section twice; the unlisted after the listed */
    char msg[600];
    ck_assert_int_eq(order_with_file("# the order\n\n  [optimize]   # comment\n  tp_order_b  # b\n"
                                     "[adapt]\ntp_adapt_npu\n[optimize]\ntp_good\n",
                                     msg, sizeof msg), 0);
    ck_assert_str_eq(msg, "tp_order_c tp_order_b tp_order_a tp_good");
    /* an empty file lists nothing: hints, then names */
    ck_assert_int_eq(order_with_file("", msg, sizeof msg), 0);
    ck_assert_str_eq(msg, "tp_good tp_order_c tp_order_b tp_order_a");
}
END_TEST

/* ------------------------------------------------------------ --list-passes */

START_TEST(list_passes_in_run_order)
{
    tk_cli_result r = TK_CLI("--list-passes");
    ck_assert_msg(r.status == 0, "%s", r.err);
    names rows = {0};
    char *save = NULL;
    strtok_r(r.out, "\n", &save); /* the header */
    for (char *l = strtok_r(NULL, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char word[256];
        if (*l != ' ' && !strstr(l, " passes") && sscanf(l, "%255s", word) == 1)
            rows.item[rows.count++] = strdup(word);
    }
    /* the optimize stage's order, then the adapt stage's passes not listed
     * already */
    names opt = file_order("optimize"), adapt = file_order("adapt"), want = {0};
    for (size_t i = 0; i < opt.count; i++)
        want.item[want.count++] = opt.item[i];
    for (size_t i = 0; i < adapt.count; i++) {
        int seen = 0;
        for (size_t j = 0; j < opt.count; j++)
            seen |= !strcmp(adapt.item[i], opt.item[j]);
        if (!seen)
            want.item[want.count++] = adapt.item[i];
    }
    ck_assert_uint_eq(rows.count, want.count);
    for (size_t i = 0; i < rows.count; i++)
        ck_assert_str_eq(rows.item[i], want.item[i]);
    names_free(&rows);
    names_free(&opt);
    names_free(&adapt);
    tk_cli_free(&r);
}
END_TEST

/* ---------------------------------------------------------- --passes values */

static host_config *apply(const char *value, int want_rc, const char *frag)
{
    host_config *cfg = host_config_new();
    ph_error err = {0};
    int rc = host_pipeline_text_apply(cfg, value, &err);
    ck_assert_msg(rc == want_rc, "%s: rc %d: %s", value, rc, err.message);
    if (frag)
        ck_assert_msg(strstr(err.message, frag) != NULL, "%s: '%s' not in: %s", value, frag,
                      err.message);
    if (rc) {
        host_config_free(cfg);
        return NULL;
    }
    return cfg;
}

START_TEST(passes_values)
{
    /* names only: the optimize stage, as before */
    host_config *cfg = apply(" a ; b,c ", 0, NULL);
    const host_stage_config *opt = &cfg->stage[HOST_STAGE_OPTIMIZE];
    const host_stage_config *ad = &cfg->stage[HOST_STAGE_ADAPT];
    ck_assert_uint_eq(opt->pass_on.count, 3);
    ck_assert_str_eq(opt->pass_on.items[2].text, "c");
    ck_assert(opt->no_integral && opt->keep_order && !ad->no_integral);
    host_config_free(cfg);

    /* stages, stage keys, parameters, quotes */
    cfg = apply("optimize ( a < k = \"x,\\\"y\\\"<>\" , n=2 >, b ) ,adapt<max_iterations=4,target=ort>()",
                0, NULL);
    opt = &cfg->stage[HOST_STAGE_OPTIMIZE];
    ad = &cfg->stage[HOST_STAGE_ADAPT];
    ck_assert_uint_eq(opt->pass_on.count, 2);
    ck_assert_str_eq(opt->pass_on.items[0].text, "a");
    ck_assert_str_eq(opt->pass_on.items[1].text, "b");
    ck_assert(ad->no_integral && ad->keep_order && ad->pass_on.count == 0);
    ck_assert_int_eq(ad->max_iterations, 4);
    ck_assert_str_eq(ad->target, "ort");
    ck_assert_uint_eq(cfg->param_count, 2);
    ck_assert_str_eq(cfg->params[0].pass, "a");
    ck_assert_str_eq(cfg->params[0].key, "k");
    ck_assert_str_eq(cfg->params[0].value, "x,\"y\"<>");
    ck_assert_uint_eq(cfg->params[0].stage_mask, 1u << HOST_STAGE_OPTIMIZE);
    ck_assert_int_eq(cfg->params[0].priority, HOST_PRIO_SET);
    ck_assert_str_eq(cfg->params[1].value, "2");
    host_config_free(cfg);

    /* one stage named: the other as configured */
    cfg = apply("adapt(x)", 0, NULL);
    ck_assert(!cfg->stage[HOST_STAGE_OPTIMIZE].no_integral);
    host_config_free(cfg);

    apply("", HOST_EXIT_USAGE, "no pass named");
    apply("optimize(a,b", HOST_EXIT_USAGE, "expected ',' or ')' at the end");
    apply("optimise(a)", HOST_EXIT_USAGE, "expected 'optimize(' or 'adapt(' at character 9");
    apply("optimize(a),optimize(b)", HOST_EXIT_USAGE, "the optimize stage is given twice");
    apply("optimize(a) adapt(b)", HOST_EXIT_USAGE, "expected ',' and another stage");
    apply("optimize(a<k>)", HOST_EXIT_USAGE, "expected '=' after the option name");
    apply("optimize(a<k=\"x)", HOST_EXIT_USAGE, "quote at character 14");
    apply("optimize(,a)", HOST_EXIT_USAGE, "expected a pass name");
    apply("optimize<depth=3>(a)", HOST_EXIT_CONFIG, "a stage's options are max_iterations");
    apply("optimize<target=ort>(a)", HOST_EXIT_CONFIG, "unknown key 'target' in [optimize]");
    apply("adapt<max_iterations=0>(a)", HOST_EXIT_CONFIG, "max_iterations: '0'");
}
END_TEST

/* ------------------------------------------------------- --print-pipeline */

/* The value of a "--passes='...'" line (the shell quoting undone). */
static char *value_of(const char *line)
{
    ck_assert_msg(strncmp(line, "--passes='", 10) == 0, "%s", line);
    char *out = calloc(strlen(line) + 1, 1);
    size_t n = 0;
    for (const char *c = line + 10; *c && *c != '\n'; c++) {
        if (strncmp(c, "'\\''", 4) == 0) {
            out[n++] = '\'';
            c += 3;
        } else if (*c != '\'') {
            out[n++] = *c;
        }
    }
    return out;
}

/* Run args (model, output and options) once as given and once as
 * --print-pipeline says; the same bytes out, and the printed value prints
 * itself again.  Returns the value (caller frees). */
static char *reproduce(const char *model, const char *const *opts, size_t n_opts)
{
    const char *args[40] = {"-i", model, "-o", tk_tpath("a.onnx"), "-q"};
    size_t n = 5;
    for (size_t i = 0; i < n_opts; i++)
        args[n++] = opts[i];
    tk_cli_result run = tk_cli_run(args);
    ck_assert_msg(run.status == 0, "%s", run.err);
    tk_cli_free(&run);
    args[n] = "--print-pipeline";
    args[n + 1] = NULL;
    tk_cli_result pr = tk_cli_run(args);
    ck_assert_msg(pr.status == 0, "%s", pr.err);
    ck_assert_int_eq(tk_line_count(pr.out), 1);
    char *value = value_of(pr.out);
    tk_cli_free(&pr);
    /* the value alone, with no other option but the plugin folder */
    char *passes = NULL;
    ck_assert_int_gt(asprintf(&passes, "--passes=%s", value), 0);
    const char *again[8] = {model, tk_tpath("b.onnx"), "-q", passes};
    size_t m = 4;
    for (size_t i = 0; i + 1 < n_opts; i++)
        if (strcmp(opts[i], "--plugin-dir") == 0)
            again[m++] = opts[i], again[m++] = opts[i + 1];
    again[m] = NULL;
    tk_cli_result b = tk_cli_run(again);
    ck_assert_msg(b.status == 0, "%s: %s", passes, b.err);
    tk_cli_free(&b);
    ck_assert_msg(same_file(tk_tpath("a.onnx"), tk_tpath("b.onnx")), "%s", value);
    again[m] = "--print-pipeline";
    again[m + 1] = NULL;
    tk_cli_result p2 = tk_cli_run(again);
    ck_assert_msg(p2.status == 0, "%s", p2.err);
    char *value2 = value_of(p2.out);
    ck_assert_str_eq(value2, value);
    free(value2);
    tk_cli_free(&p2);
    free(passes);
    return value;
}

START_TEST(print_pipeline_reproduces_the_run)
{
    char tb[600], cnn[600];
    snprintf(tb, sizeof tb, "%s/models/transformer_block.onnx", PH_SOURCE_DIR);
    snprintf(cnn, sizeof cnn, "%s/models/cnn_small.onnx", PH_SOURCE_DIR);

    /* the default stages: the file's order, adapt empty */
    char *v = reproduce(cnn, NULL, 0);
    ck_assert_msg(starts_with(v, "optimize(add_tree_to_chain,constant_to_initializer,constant_folding,"),
                  "%s", v);
    ck_assert_msg(strstr(v, "),adapt()") && !strchr(v, '<'), "%s", v);
    free(v);

    /* target, a parameter, a pass off, a stage key */
    const char *o1[] = {"--set", "adapt.target=ort", "--set",
                        "pass.constant_folding.max_output_bytes=64", "--skip=eliminate_identity",
                        "--set", "optimize.max_iterations=3"};
    v = reproduce(tb, o1, 7);
    ck_assert_msg(strstr(v, "optimize<max_iterations=3>(") && strstr(v, "constant_folding<max_output_bytes=64>") &&
                  !strstr(v, "eliminate_identity") && strstr(v, "adapt<target=ort>(fuse_conv_activation,"),
                  "%s", v);
    free(v);

    /* an approx pass needs allow_approximate: the value says so */
    const char *o2[] = {"--set", "optimize.pass_on=resize_to_nearest", "--set",
                        "optimize.allow_approximate=true"};
    v = reproduce(cnn, o2, 4);
    ck_assert_msg(strstr(v, "optimize<allow_approximate=true>(") && strstr(v, ",resize_to_nearest,"),
                  "%s", v);
    free(v);

    /* a third-party pass with parameters of every type, a string that needs
     * quotes (and a shell quote), in an INI file */
    const char *dir = tk_tmpdir_plugins((const char *const[]){"tp_good", "tp_after_identity", NULL});
    write_file(tk_tpath("run.ini"),
               "[optimize]\npass_on = tp_good, tp_after_identity\n"
               "[pass.tp_good]\nlimit = 7\nscale = 0.1\nstrict = yes\nlabel = \"it's a,b <c>\"\n");
    const char *o3[] = {tk_tpath("run.ini"), "--plugin-dir", dir};
    v = reproduce(tb, o3, 3);
    ck_assert_msg(strstr(v, "eliminate_identity,tp_after_identity,") &&
                  strstr(v, "tp_good<limit=7,scale=0.1,strict=true,label=\"it's a,b <c>\">"), "%s", v);
    free(v);

    /* nothing to run: a plain round trip */
    const char *o4[] = {"--set", "optimize.no_integral=true"};
    v = reproduce(tb, o4, 2);
    ck_assert_str_eq(v, "optimize(),adapt()");
    free(v);
}
END_TEST

START_TEST(print_pipeline_errors)
{
    char cnn[600];
    snprintf(cnn, sizeof cnn, "%s/models/cnn_small.onnx", PH_SOURCE_DIR);
    tk_cli_result r = TK_CLI("--print-pipeline", "--list-passes");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--print-pipeline", "drop --list-passes");
    r = TK_CLI(cnn, tk_tpath("o.onnx"), "--print-pipeline", "--shapes");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "runs nothing", "drop --shapes");
    r = TK_CLI(cnn, tk_tpath("o.onnx"), "--print-pipeline", "--skip=fuse_conv_bm");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "unknown pass 'fuse_conv_bm'", "fuse_conv_bn");
    ck_assert(!tk_exists(tk_tpath("o.onnx")));
    /* a broken pipeline file beside the passes found first */
    const char *dir = tk_tmpdir_plugins((const char *const[]){"tp_good", NULL});
    char path[700];
    snprintf(path, sizeof path, "%s/pipeline.txt", dir);
    write_file(path, "[optimize]\ntp_good\nfuse_conv_bm\n");
    r = TK_CLI("--print-pipeline", "--plugin-dir", dir);
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "pipeline.txt:3: unknown pass 'fuse_conv_bm'",
                      "did you mean 'fuse_conv_bn'");
    r = TK_CLI("--list-passes", "--plugin-dir", dir);
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "pipeline.txt:3", NULL);
    r = TK_CLI(cnn, tk_tpath("o.onnx"), "--plugin-dir", dir);
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "pipeline.txt:3", NULL);
    ck_assert(!tk_exists(tk_tpath("o.onnx")));
    /* a folder found first may bring its own order; the passes it does not
     * list follow, the hints among them holding */
    write_file(path, "[optimize]\ntp_good\neliminate_nop_pool\neliminate_identity\n");
    r = TK_CLI("--print-pipeline", "--plugin-dir", dir, "--set", "optimize.pass_on=tp_good");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(starts_with(r.out, "--passes='optimize(tp_good,eliminate_nop_pool,eliminate_identity,"
                                     "add_tree_to_chain,"), "%s", r.out);
    tk_cli_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipeline_order");
    TCase *t = tcase_create("core");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, shipped_pipeline_lists_every_builtin_in_order);
    tcase_add_test(t, plans_follow_the_file_whatever_is_on);
    tcase_add_test(t, unlisted_passes_go_by_their_hints_then_by_name);
    tcase_add_test(t, renamed_plugin_files_change_nothing);
    tcase_add_test(t, pipeline_file_errors);
    tcase_add_test(t, list_passes_in_run_order);
    tcase_add_test(t, passes_values);
    tcase_add_test(t, print_pipeline_reproduces_the_run);
    tcase_add_test(t, print_pipeline_errors);
    suite_add_tcase(s, t);
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
