/* tests/test_targets.c - target profiles (docs/targets.md): the keys and
 * their values (passhost/target.h), profile files and their errors
 * (file:line, "did you mean"), base chains, shipped profiles by name
 * (PASSHOST_TARGET_PATH), --list-targets, and the profile -> pass mapping
 * of the plan (profile keys a pass declares, [target.passes],
 * [target.pass.NAME], the config overriding the profile).  Files are
 * written to a mkdtemp folder; plan tests load copies of test plugins. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/exit.h"
#include "config/config.h"
#include "config/loader.h"
#include "config/plan.h"
#include "config/profile.h"
#include "passhost/passhost.h"
#include "passhost/testing.h"
#include "passhost/host.h"
#include "clirun.h"
#include "tmpdir.h"

static const char *tmpdir;

static const char *write_file(const char *name, const char *text)
{
    const char *path = tk_tpath(name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void setup(void)
{
    tmpdir = tk_tmpdir_make("targets");
    setenv("PASSHOST_TARGET_PATH", tk_tpath("shipped"), 1);
    ck_assert_int_eq(mkdir(tk_tpath("shipped"), 0700), 0);
    ck_assert_int_eq(mkdir(tk_tpath("sub"), 0700), 0);
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

/* --------------------------------------------------------------- the keys */

static void expect_set_error(const char *section, const char *key, const char *value, int code,
                             const char *frag)
{
    ph_target *t = ph_target_new();
    ph_error err = {0};
    int rc = ph_target_set(t, section, key, value, &err);
    ck_assert_msg(rc == code, "[%s] %s = %s: rc %d (want %d): %s", section, key, value, rc, code, err.message);
    ck_assert_msg(strstr(err.message, frag) != NULL, "'%s' not in: %s", frag, err.message);
    ph_target_free(t);
}

START_TEST(keys_normalized)
{
    ph_target *t = ph_target_new();
    ph_error err = {0};
    ck_assert_int_eq(ph_target_set(t, "", "dtypes", " float ;int64,  uint8", &err), 0);
    ck_assert_str_eq(ph_target_value(t, "dtypes"), "float32, int64, uint8");
    ck_assert_int_eq(ph_target_set(t, "", "broadcast", "No", &err), 0);
    ck_assert_str_eq(ph_target_value(t, "broadcast"), "no");
    ck_assert_int_eq(ph_target_set(t, "opset", "ai.onnx", "11..13", &err), 0);
    ck_assert_int_eq(ph_target_set(t, "opset", "com.microsoft", "1", &err), 0);
    ck_assert_str_eq(ph_target_value(t, "opset.com.microsoft"), "1..1");
    ck_assert_int_eq(ph_target_set(t, "Conv", "max_kernel_area", "0049", &err), 0);
    ck_assert_str_eq(ph_target_value(t, "Conv.max_kernel_area"), "49");
    ck_assert_int_eq(ph_target_set(t, "Resize", "modes", "nearest, linear", &err), 0);
    ck_assert_int_eq(ph_target_set(t, "TopK", "index_dtype", "int32", &err), 0);
    ck_assert_int_eq(ph_target_set(t, "", "noop_ops", "Reshape, Flatten", &err), 0);
    ck_assert_int_eq(ph_target_set(t, "", "ops_except", "FusedConv@com.microsoft", &err), 0);
    /* a later value replaces an earlier one (a base's) */
    ck_assert_int_eq(ph_target_set(t, "Conv", "max_kernel_area", "64", &err), 0);
    ck_assert_str_eq(ph_target_value(t, "Conv.max_kernel_area"), "64");
    ck_assert_int_eq(ph_target_count(t), 9);
    ck_assert_str_eq(ph_target_key_at(t, 0), "dtypes");
    /* what constrains and what does not */
    ck_assert_int_eq(ph_target_constrains(t, "broadcast"), 1);
    ck_assert_int_eq(ph_target_constrains(t, "TopK.index_dtype"), 1);
    ck_assert_int_eq(ph_target_constrains(t, "Conv.max_kernel_area"), 1);
    ck_assert_int_eq(ph_target_constrains(t, "max_rank"), 0);
    ck_assert_int_eq(ph_target_set(t, "", "broadcast", "yes", &err), 0);
    ck_assert_int_eq(ph_target_constrains(t, "broadcast"), 0);
    ck_assert_int_eq(ph_target_set(t, "TopK", "index_dtype", "int64", &err), 0);
    ck_assert_int_eq(ph_target_constrains(t, "TopK.index_dtype"), 0);
    /* supported operators */
    ck_assert_int_eq(ph_target_supports_op(t, "", "Conv"), 1);
    ck_assert_int_eq(ph_target_supports_op(t, "com.microsoft", "FusedConv"), 0);
    ck_assert_int_eq(ph_target_set(t, "", "domains", "ai.onnx", &err), 0);
    ck_assert_int_eq(ph_target_set(t, "", "ops", "Gelu@com.microsoft", &err), 0);
    ck_assert_int_eq(ph_target_supports_op(t, "ai.onnx", "Relu"), 1);
    ck_assert_int_eq(ph_target_supports_op(t, "com.microsoft", "Gelu"), 1);
    ck_assert_int_eq(ph_target_supports_op(t, "com.microsoft", "FastGelu"), 0);
    ph_target_free(t);
}
END_TEST

START_TEST(keys_refused)
{
    expect_set_error("", "max_rnak", "4", PH_ENOTFOUND, "did you mean 'max_rank'");
    expect_set_error("Conv", "max_kernal_area", "4", PH_ENOTFOUND, "did you mean 'max_kernel_area'");
    expect_set_error("Cnov", "max_kernel", "4", PH_ENOTFOUND, "did you mean 'Conv'");
    expect_set_error("Relu", "max_kernel", "4", PH_ENOTFOUND, "[target.Relu]");
    expect_set_error("", "dtypes", "float32, flaot16", PH_EINVAL, "did you mean 'float16'");
    expect_set_error("", "max_rank", "four", PH_EINVAL, "not a whole number");
    expect_set_error("", "max_rank", "-1", PH_EINVAL, "not a whole number");
    expect_set_error("", "broadcast", "sometimes", PH_EINVAL, "yes, no or same_rank");
    expect_set_error("opset", "ai.onnx", "13..11", PH_EINVAL, "not an opset range");
    expect_set_error("opset", "AI", "13", PH_ENOTFOUND, "not a domain");
    expect_set_error("Resize", "modes", "nearst", PH_EINVAL, "did you mean 'nearest'");
    expect_set_error("", "ops_except", "Cnov", PH_EINVAL, "did you mean 'Conv'");
    expect_set_error("", "name", "My Target", PH_EINVAL, "not a profile name");
    expect_set_error("", "dtypes", " , ", PH_EINVAL, "empty list");
    ph_error err = {0};
    ck_assert_int_eq(ph_target_key_check("Conv.max_dilation", &err), 0);
    ck_assert_int_eq(ph_target_key_check("opset.ai.onnx", &err), 0);
    ck_assert_int_eq(ph_target_key_check("FusedConv@com.microsoft.max_rank", &err), 0);
    ck_assert_int_eq(ph_target_key_check("MaxPool.max_dilaton", &err), PH_ENOTFOUND);
    ck_assert_msg(strstr(err.message, "max_dilation"), "%s", err.message);
}
END_TEST

/* ---------------------------------------------------------- profile files */

static void expect_load_error(const char *spec, const char *frag1, const char *frag2)
{
    host_profile *p = NULL;
    ph_error err = {0};
    int rc = host_profile_load(spec, &p, &err);
    ck_assert_msg(rc == HOST_EXIT_CONFIG, "rc %d: %s", rc, err.message);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err.message, frag1) != NULL, "'%s' not in: %s", frag1, err.message);
    if (frag2)
        ck_assert_msg(strstr(err.message, frag2) != NULL, "'%s' not in: %s", frag2, err.message);
    ck_assert_ptr_null(strchr(err.message, '\n'));
}

START_TEST(file_errors_name_the_line)
{
    write_file("a.ini", "; a profile\n[target]\nname = a\nmax_rnak = 4\n");
    expect_load_error(tk_tpath("a.ini"), "a.ini:4:", "did you mean 'max_rank'");
    write_file("b.ini", "[target]\nname = b\n[target.Conv]\nmax_kernel_area = big\n");
    expect_load_error(tk_tpath("b.ini"), "b.ini:4:", "'big' is not a whole number");
    write_file("c.ini", "[target]\nname = c\n[target.Cnov]\nmax_kernel = 3\n");
    expect_load_error(tk_tpath("c.ini"), "c.ini:4:", "did you mean 'Conv'");
    write_file("d.ini", "[target]\nname = d\nmax_rank = 4\nmax_rank = 5\n");
    expect_load_error(tk_tpath("d.ini"), "d.ini:4:", "given twice");
    write_file("e.ini", "[adapt]\nmax_iterations = 3\n");
    expect_load_error(tk_tpath("e.ini"), "e.ini", "not a target profile");
    write_file("f.ini", "[target]\nname = f\n[optimise]\npass_on = x\n");
    expect_load_error(tk_tpath("f.ini"), "f.ini:3:", "unknown section [optimise]");
    expect_load_error(tk_tpath("nosuch.ini"), "nosuch.ini", "no such file");
    /* a list continues on indented lines */
    write_file("g.ini", "[target]\nname = g\ndtypes = float32,\n  int32\n");
    host_profile *p = NULL;
    ph_error err = {0};
    ck_assert_msg(host_profile_load(tk_tpath("g.ini"), &p, &err) == 0, "%s", err.message);
    ck_assert_str_eq(ph_target_value(p->target, "dtypes"), "float32, int32");
    host_profile_free(p);
}
END_TEST

START_TEST(base_chain_and_names)
{
    write_file("shipped/npu.ini", "[target]\nname = npu\nsummary = an NPU\nmax_rank = 4\nbroadcast = no\n"
                                  "[target.Conv]\nmax_kernel_area = 49\n");
    write_file("shipped/ort.ini", "[target]\nname = ort\nsummary = a runtime\n");
    write_file("board.ini", "[target]\nname = board\nbase = npu\n[target.Conv]\nmax_kernel_area = 25\n");
    write_file("sub/kit.ini", "[target]\nbase = ../board.ini\nmax_rank = 5\n");
    host_profile *p = NULL;
    ph_error err = {0};
    ck_assert_msg(host_profile_load(tk_tpath("sub/kit.ini"), &p, &err) == 0, "%s", err.message);
    ck_assert_str_eq(p->names, "kit;board;npu");
    ck_assert_str_eq(ph_target_name(p->target), "kit");
    ck_assert_str_eq(ph_target_value(p->target, "max_rank"), "5");
    ck_assert_str_eq(ph_target_value(p->target, "Conv.max_kernel_area"), "25");
    ck_assert_str_eq(ph_target_value(p->target, "broadcast"), "no");
    host_profile_free(p);
    /* by name */
    ck_assert_msg(host_profile_load("npu", &p, &err) == 0, "%s", err.message);
    ck_assert_str_eq(p->names, "npu");
    host_profile_free(p);
    expect_load_error("nup", "unknown target 'nup'", "did you mean 'npu'");
    expect_load_error("zzzzzzzz", "unknown target", "npu");
    /* cycles and a missing base */
    write_file("x.ini", "[target]\nbase = y.ini\n");
    write_file("y.ini", "[target]\nbase = x.ini\n");
    expect_load_error(tk_tpath("x.ini"), "extends itself", NULL);
    write_file("z.ini", "[target]\nbase = npx\n");
    expect_load_error(tk_tpath("z.ini"), "z.ini:2:", "did you mean 'npu'");
    /* --list-targets */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(host_profile_list(f, &err), 0);
    fclose(f);
    ck_assert_msg(strstr(text, "npu") && strstr(text, "an NPU") && strstr(text, "ort") &&
                      strstr(text, "a runtime"),
                  "%s", text);
    ck_assert(strstr(text, "npu") < strstr(text, "ort"));
    free(text);
}
END_TEST

/* ------------------------------------------------------------- the plan */

static const char *const plugins[] = {"tp_good", "tp_adapt_npu", "tp_profile_keys", NULL};

static host_registry *load_plugins(void)
{
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_msg(host_registry_load_dir(reg, tk_tmpdir_plugins(plugins), &err) == 0, "%s", err.message);
    return reg;
}

/* The adapt passes of config text (+ one --set) as "a,b", or the error. */
static char *adapt_of(host_registry *reg, const char *text, const char *set, host_plan *plan, ph_error *err)
{
    host_config *cfg = host_config_new();
    int rc = host_config_load_file(cfg, write_file("cfg.ini", text), err);
    if (!rc && set)
        rc = host_config_set(cfg, set, err);
    if (!rc)
        rc = host_config_finish(cfg, err);
    if (!rc)
        rc = host_plan_build(plan, cfg, reg, err);
    host_config_free(cfg);
    if (rc)
        return NULL;
    char *out = calloc(1, 512);
    const host_stage_plan *sp = &plan->stage[HOST_STAGE_ADAPT];
    for (size_t i = 0; i < sp->count; i++)
        snprintf(out + strlen(out), 512 - strlen(out), "%s%s", i ? "," : "", sp->steps[i].plugin->desc->name);
    return out;
}

START_TEST(plan_profile_mapping)
{
    host_registry *reg = load_plugins();
    write_file("shipped/npu.ini", "[target]\nname = npu\nmax_rank = 4\n");
    write_file("conv.ini", "[target]\nname = conv\n[target.Conv]\nmax_kernel_area = 49\n");
    write_file("bcast.ini", "[target]\nname = bcast\nbroadcast = no\n");
    write_file("plain.ini", "[target]\nname = plain\nbroadcast = yes\n");
    host_plan plan;
    ph_error err = {0};

    /* a profile that constrains a key the pass declares switches it on and
     * gives the parameter the profile's value */
    char *got = adapt_of(reg, "[adapt]\ntarget = conv.ini\n", NULL, &plan, &err);
    ck_assert_msg(got, "%s", err.message);
    ck_assert_str_eq(got, "tp_profile_keys");
    ck_assert_int_eq(ph_params_int(plan.stage[HOST_STAGE_ADAPT].steps[0].params, "max_area"), 49);
    ck_assert_str_eq(plan.stage[HOST_STAGE_ADAPT].target, "conv");
    ck_assert_str_eq(ph_target_value(plan.stage[HOST_STAGE_ADAPT].profile->target, "Conv.max_kernel_area"), "49");
    host_plan_free(&plan);
    free(got);
    /* a key read without a parameter */
    got = adapt_of(reg, "[adapt]\ntarget = bcast.ini\n", NULL, &plan, &err);
    ck_assert_str_eq(got, "tp_profile_keys");
    ck_assert_int_eq(ph_params_int(plan.stage[HOST_STAGE_ADAPT].steps[0].params, "max_area"), 0);
    host_plan_free(&plan);
    free(got);
    /* a value that constrains nothing does not */
    got = adapt_of(reg, "[adapt]\ntarget = plain.ini\n", NULL, &plan, &err);
    ck_assert_str_eq(got, "");
    host_plan_free(&plan);
    free(got);
    /* the config's parameters and pass_off override the profile */
    got = adapt_of(reg, "[adapt]\ntarget = conv.ini\n[pass.tp_profile_keys]\nmax_area = 9\n", NULL, &plan, &err);
    ck_assert_int_eq(ph_params_int(plan.stage[HOST_STAGE_ADAPT].steps[0].params, "max_area"), 9);
    host_plan_free(&plan);
    free(got);
    got = adapt_of(reg, "[adapt]\ntarget = conv.ini\npass_off = tp_profile_keys\n", NULL, &plan, &err);
    ck_assert_str_eq(got, "");
    host_plan_free(&plan);
    free(got);
    /* --target (as the CLI sets it) replaces the file's target */
    got = adapt_of(reg, "[adapt]\ntarget = conv.ini\n", "adapt.target=npu", &plan, &err);
    ck_assert_msg(got, "%s", err.message);
    ck_assert_str_eq(got, "tp_adapt_npu");
    host_plan_free(&plan);
    free(got);
    host_registry_free(reg);
}
END_TEST

START_TEST(plan_profile_passes_section)
{
    host_registry *reg = load_plugins();
    write_file("shipped/npu.ini", "[target]\nname = npu\n");
    write_file("p.ini", "[target]\nname = board\nbase = npu\n[target.Conv]\nmax_kernel_area = 49\n"
                        "[target.passes]\ntp_profile_keys = off\ntp_good = on\n"
                        "[target.pass.tp_good]\nlimit = 7\n");
    host_plan plan;
    ph_error err = {0};
    /* a base's name counts for the targets list (tp_adapt_npu: npu) */
    char *got = adapt_of(reg, "[adapt]\ntarget = p.ini\n", NULL, &plan, &err);
    ck_assert_msg(got, "%s", err.message);
    ck_assert_str_eq(got, "tp_adapt_npu,tp_good");
    ck_assert_int_eq(ph_params_int(plan.stage[HOST_STAGE_ADAPT].steps[1].params, "limit"), 7);
    host_plan_free(&plan);
    free(got);
    /* the config's pass_on wins over the profile's off */
    got = adapt_of(reg, "[adapt]\ntarget = p.ini\npass_on = tp_profile_keys\n[pass.tp_good]\nlimit = 8\n", NULL,
                   &plan, &err);
    ck_assert_str_eq(got, "tp_adapt_npu,tp_good,tp_profile_keys");
    ck_assert_int_eq(ph_params_int(plan.stage[HOST_STAGE_ADAPT].steps[1].params, "limit"), 8);
    host_plan_free(&plan);
    free(got);
    /* unknown passes and parameters name the profile's line */
    write_file("q.ini", "[target]\n[target.passes]\ntp_godo = on\n");
    ck_assert_ptr_null(adapt_of(reg, "[adapt]\ntarget = q.ini\n", NULL, &plan, &err));
    ck_assert_msg(strstr(err.message, "q.ini:3:") && strstr(err.message, "did you mean 'tp_good'"), "%s",
                  err.message);
    write_file("r.ini", "[target]\n[target.pass.tp_good]\nlimt = 3\n");
    ck_assert_ptr_null(adapt_of(reg, "[adapt]\ntarget = r.ini\n", NULL, &plan, &err));
    ck_assert_msg(strstr(err.message, "r.ini:3:") && strstr(err.message, "no parameter 'limt'"), "%s",
                  err.message);
    write_file("s.ini", "[target]\n[target.passes]\ntp_good = maybe\n");
    ck_assert_ptr_null(adapt_of(reg, "[adapt]\ntarget = s.ini\n", NULL, &plan, &err));
    ck_assert_msg(strstr(err.message, "s.ini:3:"), "%s", err.message);
    host_registry_free(reg);
}
END_TEST

START_TEST(config_file_is_its_own_profile)
{
    host_registry *reg = load_plugins();
    host_plan plan;
    ph_error err = {0};
    char *got = adapt_of(reg, "[target]\nname = inline\nbroadcast = no\n[adapt]\nmax_iterations = 2\n", NULL,
                         &plan, &err);
    ck_assert_msg(got, "%s", err.message);
    ck_assert_str_eq(got, "tp_profile_keys");
    ck_assert_str_eq(plan.stage[HOST_STAGE_ADAPT].target, "inline");
    host_plan_free(&plan);
    free(got);
    /* naming another target in the same file is an error */
    ck_assert_ptr_null(adapt_of(reg, "[adapt]\ntarget = npu\n[target]\nname = x\n", NULL, &plan, &err));
    ck_assert_msg(strstr(err.message, "cfg.ini:3:") && strstr(err.message, "drop one"), "%s", err.message);
    /* profile keys cannot be given with --set */
    host_config *cfg = host_config_new();
    ck_assert_int_eq(host_config_set(cfg, "target.Conv.max_kernel=3", &err), HOST_EXIT_CONFIG);
    ck_assert_msg(strstr(err.message, "profile file"), "%s", err.message);
    host_config_free(cfg);
    host_registry_free(reg);
}
END_TEST

/* The program: --list-targets, --target NAME|FILE end to end (the real
 * plugins: the shipped ort profile's passes run on a small CNN). */
START_TEST(cli_target_options)
{
    write_file("shipped/ort.ini", "[target]\nname = ort\nsummary = a runtime\n");
    tk_cli_result r = TK_CLI("--list-targets");
    ck_assert_msg(r.status == 0 && strstr(r.out, "ort") && strstr(r.out, "a runtime"), "%d %s %s", r.status, r.out,
                  r.err);
    tk_cli_free(&r);
    const char *in = PH_SOURCE_DIR "/tests/models/cnn_small.onnx", *out = tk_tpath("out.onnx");
    r = TK_CLI("-i", in, "-o", out, "--target", "ort");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "fuse_conv_activation"), "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("-i", in, "-o", out, "--target", "otr");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "unknown target 'otr'", "did you mean 'ort'");
    write_file("bad.ini", "[target]\nmax_rank = 4\nmax_rank_ = 3\n");
    r = TK_CLI("-i", in, "-o", out, "--target", tk_tpath("bad.ini"));
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "bad.ini:3:", "did you mean 'max_rank'");
}
END_TEST

/* --target opset11 end to end: a model at opset 13 comes out at 11 (the
 * shipped profile and the real convert_opset plugin); one whose Unsqueeze
 * axes are computed fails naming the node, and writes nothing. */
START_TEST(cli_target_opset11)
{
    const char *in = PH_SOURCE_DIR "/tests/models/transformer_block.onnx", *out = tk_tpath("o11.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "--target", "opset11", "--strict-target");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "convert_opset"), "%s", r.out);
    tk_cli_free(&r);
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_model_load(out, &m, &err) == 0, "%s", err.message);
    ck_assert_int_eq(ph_model_opset(m, ""), 11);
    ph_model_free(m);

    m = ph_test_model_text("opset 13; x: float[2,3]; a: int64[1]\nu = Unsqueeze(x, a)\nreturn u", &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    const char *dyn = tk_tpath("dyn.onnx"), *dout = tk_tpath("dyn11.onnx");
    ck_assert_msg(ph_model_save(m, dyn, &err) == 0, "%s", err.message);
    ph_model_free(m);
    r = TK_CLI("-i", dyn, "-o", dout, "--target", "opset11");
    tk_expect_failure(&r, HOST_EXIT_PASS, "Unsqueeze", "is computed");
    ck_assert_int_ne(access(dout, F_OK), 0);
}
END_TEST

/* The shipped fp16 profile end to end: convert_float16 (approx) runs
 * because the profile switches it on, --verify passes with float16's
 * budget, the inputs and outputs keep float32, the weights are float16 and
 * the file halves; pass_off still wins; the same pass asked for by the
 * config without allow_approximate is refused. */
START_TEST(cli_fp16_profile)
{
    const char *in = PH_SOURCE_DIR "/tests/models/cnn_small.onnx", *out = tk_tpath("fp16.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "--target", "fp16", "--verify");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "convert_float16") && strstr(r.out, "error budget (float64 reference): OK"), "%s",
                  r.out);
    tk_cli_free(&r);
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_model_load(out, &m, &err) == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_value_dtype(ph_graph_input(g, 0)), PH_DT_FLOAT);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(g, 0)), PH_DT_FLOAT);
    size_t half = 0;
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        half += ph_tensor_dtype(ph_value_const(ph_graph_initializer(g, i))) == PH_DT_FLOAT16;
    ck_assert_uint_gt(half, 0);
    ph_model_free(m);
    struct stat a, b;
    ck_assert(stat(in, &a) == 0 && stat(out, &b) == 0);
    ck_assert_msg(b.st_size * 100 <= a.st_size * 55, "%lld of %lld bytes", (long long)b.st_size,
                  (long long)a.st_size);
    r = TK_CLI("-i", in, "-o", out, "--target", "fp16", "--set", "adapt.pass_off=convert_float16");
    ck_assert_msg(r.status == 0 && !strstr(r.out, "convert_float16 1"), "%s %s", r.out, r.err);
    tk_cli_free(&r);
    r = TK_CLI("-i", in, "-o", out, "--target", "ort", "--set", "adapt.pass_on=convert_float16");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "convert_float16 changes results by design", "allow_approximate");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("targets");
    TCase *tc = tcase_create("profile");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, keys_normalized);
    tcase_add_test(tc, keys_refused);
    tcase_add_test(tc, file_errors_name_the_line);
    tcase_add_test(tc, base_chain_and_names);
    tcase_add_test(tc, plan_profile_mapping);
    tcase_add_test(tc, plan_profile_passes_section);
    tcase_add_test(tc, config_file_is_its_own_profile);
    tcase_add_test(tc, cli_target_options);
    tcase_add_test(tc, cli_target_opset11);
    tcase_add_test(tc, cli_fp16_profile);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
