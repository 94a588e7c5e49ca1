/* host/cli/cli.c - command-line parsing, --help and the config it implies. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/exit.h"
#include "passhost/host.h"
#include "passhost/plugin.h"
#include "base/util.h"

typedef enum { OPT_FLAG, OPT_VALUE, OPT_OPTIONAL } opt_kind; /* OPTIONAL: --opt or --opt=X */

typedef struct opt_def {
    const char *shortname; /* "-i" or NULL */
    const char *longname;  /* "--input" */
    opt_kind kind;
} opt_def;

static const opt_def options[] = {
    {"-i", "--input", OPT_VALUE},      {"-o", "--output", OPT_VALUE},
    {NULL, "--set", OPT_VALUE},        {NULL, "--plugin-dir", OPT_VALUE},
    {NULL, "--list-passes", OPT_FLAG}, {NULL, "--verify-each", OPT_FLAG},
    {NULL, "--verify", OPT_OPTIONAL},  {NULL, "--shapes", OPT_FLAG},
    {"-q", "--quiet", OPT_FLAG},       {"-h", "--help", OPT_FLAG},
    {NULL, "--version", OPT_FLAG},     {NULL, "--max-rewrites", OPT_VALUE},
    {NULL, "--bisect", OPT_FLAG},      {NULL, "--bisect-out", OPT_VALUE},
    {NULL, "--print-changes", OPT_FLAG}, {NULL, "--dump-dir", OPT_VALUE},
    {NULL, "--markdown", OPT_FLAG},    {NULL, "--inspect", OPT_FLAG},
    {NULL, "--passes", OPT_VALUE},     {NULL, "--skip", OPT_VALUE},
    {NULL, "--input-shape", OPT_VALUE}, {NULL, "--overwrite-input-shape", OPT_VALUE},
    {NULL, "--no-fold", OPT_FLAG},     {NULL, "--report-json", OPT_VALUE},
    {NULL, "--report-html", OPT_VALUE}, {NULL, "--verify-atol", OPT_VALUE},
    {NULL, "--verify-rtol", OPT_VALUE}, {NULL, "--verify-data", OPT_VALUE},
    {NULL, "--verify-range", OPT_VALUE}, {NULL, "--target", OPT_VALUE},
    {NULL, "--list-targets", OPT_FLAG}, {NULL, "--strict-target", OPT_FLAG},
    {NULL, "--check-target", OPT_VALUE},
};
enum { N_OPTIONS = sizeof options / sizeof options[0] };

void host_cli_usage(FILE *out)
{
    fputs("usage: passhost CONFIG.ini [options]\n"
          "       passhost IN.onnx OUT.onnx [options]\n"
          "       passhost -i IN.onnx -o OUT.onnx [options]\n"
          "       passhost --inspect A.onnx [B.onnx ...]\n"
          "       passhost --list-passes [CONFIG.ini] [--plugin-dir DIR]\n"
          "       passhost --list-targets\n"
          "       passhost --check-target PROFILE MODEL [--strict-target]\n"
          "\n"
          "Rewrites an ONNX model: an optimize stage, then an adapt stage, each a list\n"
          "of passes run until nothing changes; see docs/config.md and passhost(1).\n"
          "A positional file is a model when its content is ONNX, else an INI file.\n"
          "\n"
          "options:\n"
          "  -i, --input FILE         input model (overrides [model] input); - reads stdin\n"
          "  -o, --output FILE        output model (overrides [model] output); - writes\n"
          "                           stdout (the report then goes to stderr)\n"
          "  --passes=A,B,...         the optimize stage runs exactly these passes, in this\n"
          "                           order (no defaults; adapt is unchanged)\n"
          "  --skip=A,B,...           switch these passes off in both stages (pass_off)\n"
          "  --input-shape NAME:1,3,224,224\n"
          "                           fix an input's dims (repeatable; replaces [model]\n"
          "                           input_shape); alias --overwrite-input-shape\n"
          "  --target NAME|FILE       the adapt stage's target profile: a shipped one by\n"
          "                           name or any profile file (docs/targets.md;\n"
          "                           overrides [adapt] target)\n"
          "  --list-targets           print the shipped target profiles and exit\n"
          "  --strict-target          a target violation left after the adapt stage fails\n"
          "                           the run (exit 10, nothing written); else a warning\n"
          "  --check-target PROFILE MODEL\n"
          "                           list what in MODEL the profile does not support\n"
          "                           (a name or a file); rewrites nothing\n"
          "  --no-fold                no constant folding (constant_folding,\n"
          "                           fold_constant_inputs off)\n"
          "  --inspect                print a side-by-side summary of each model given\n"
          "                           (inputs, outputs, opsets, op types, weights) and exit\n"
          "  --report-json FILE       write the run's report as JSON (docs/report.schema.json)\n"
          "  --report-html FILE       write the run's report as one self-contained HTML file\n"
          "  --set SECTION.KEY=VALUE  override an INI value (repeatable), e.g.\n"
          "                           --set optimize.pass_off=eliminate_identity\n"
          "                           --set pass.NAME.PARAM=VALUE\n"
          "  --plugin-dir DIR         search DIR for passes first (overrides plugin_dir)\n"
          "  --list-passes            print every pass found and exit\n"
          "  --markdown               --list-passes as a markdown table (docs/passes.md)\n"
          "  --verify[=N]             run the original and the rewritten model on N (default:\n"
          "                           [verify] runs, 3) seeded random inputs, and the original\n"
          "                           in float64 as the reference: each output's error must\n"
          "                           stay within its budget (docs/verify.md)\n"
          "  --verify-data DIR        verify on real inputs: an ONNX test_data_set folder\n"
          "                           (input_K.pb, output_K.pb) or .npy files named after\n"
          "                           the inputs (repeatable; implies --verify)\n"
          "  --verify-range NAME=LO:HI  random values of input NAME in [LO, HI) (repeatable)\n"
          "  --verify-atol X, --verify-rtol X\n"
          "                           fixed tolerances instead of the error budget:\n"
          "                           |optimized - original| <= atol + rtol * |original|\n"
          "  --verify-each            after every pass that changed the graph: check its\n"
          "                           structure and (if the evaluator supports the model)\n"
          "                           its outputs; name the first pass that broke either\n"
          "  --max-rewrites N         apply only the first N rewrites of the run (both\n"
          "                           stages; 0: no pass changes anything)\n"
          "  --bisect                 if the result does not verify (as --verify), find the\n"
          "                           first rewrite after which the outputs differ and name\n"
          "                           its pass and nodes; writes no output model\n"
          "  --bisect-out DIR         --bisect, and write a reproducer into DIR: before.onnx,\n"
          "                           after.onnx, config.ini, README.txt\n"
          "  --print-changes          one line per rewrite on stderr:\n"
          "                           rewrite 12 [PASS #3]: matched/removed -> added nodes\n"
          "  --dump-dir DIR           after each pass call that changed the graph, write\n"
          "                           DIR/NNN-STAGE-PASS.onnx and a mermaid picture of the\n"
          "                           region that changed, DIR/NNN-STAGE-PASS.mmd\n"
          "  --shapes                 infer shapes, write them into value_info, run no passes\n",
          out);
    host_supervise_usage(out); /* --pass-timeout, --crash-out, ... */
    fputs("  -q, --quiet              no report, no tables, no progress line and no info\n"
          "                           messages (verify verdicts and warnings still print)\n"
          "  -h, --help               this help\n"
          "  --version                print the version and the plugin ABI\n"
          "\n"
          "passes are searched in: plugin_dir, PASSHOST_PLUGIN_PATH (':'-separated),\n"
          "<exe>/../plugins, <exe>/../lib/passhost/plugins.\n"
          "\n"
          "exit codes:\n", out);
#define HOST_X_HELP(name, value, desc) fprintf(out, "  %d  %s\n", value, desc);
    HOST_EXIT_TABLE(HOST_X_HELP)
#undef HOST_X_HELP
}

void host_cli_version(FILE *out)
{
    fprintf(out, "passhost %s (plugin ABI %d.%d)\n", HOST_VERSION, PH_ABI_MAJOR, PH_ABI_MINOR);
}

/* The option arg names, or NULL; *inline_value gets "X" of "--opt=X". */
static const opt_def *match_option(const char *arg, const char **inline_value)
{
    *inline_value = NULL;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const opt_def *o = &options[i];
        size_t n = strlen(o->longname);
        if (o->shortname && strcmp(arg, o->shortname) == 0)
            return o;
        if (strncmp(arg, o->longname, n) == 0 && (arg[n] == '\0' || arg[n] == '=')) {
            if (arg[n] == '=')
                *inline_value = arg + n + 1;
            return o;
        }
    }
    return NULL;
}

static void take_flag(host_cli *cli, const opt_def *o)
{
    const char *n = o->longname;
    if (strcmp(n, "--list-passes") == 0)
        cli->list_passes = cli->list_passes ? cli->list_passes : 1;
    else if (strcmp(n, "--markdown") == 0)
        cli->list_passes = 2;
    else if (strcmp(n, "--verify-each") == 0)
        cli->verify_each = 1;
    else if (strcmp(n, "--shapes") == 0)
        cli->shapes_only = 1;
    else if (strcmp(n, "--quiet") == 0)
        cli->quiet = 1;
    else if (strcmp(n, "--bisect") == 0)
        cli->bisect = 1;
    else if (strcmp(n, "--print-changes") == 0)
        cli->print_changes = 1;
    else if (strcmp(n, "--inspect") == 0)
        cli->inspect = 1;
    else if (strcmp(n, "--no-fold") == 0)
        cli->no_fold = 1;
    else if (strcmp(n, "--list-targets") == 0)
        cli->list_targets = 1;
    else if (strcmp(n, "--strict-target") == 0)
        cli->strict_target = 1;
    else if (strcmp(n, "--help") == 0)
        cli->help = 1;
    else
        cli->version = 1;
}

static void push(const char ***array, size_t *count, const char *value)
{
    *array = realloc(*array, (*count + 1) * sizeof **array);
    if (!*array)
        abort();
    (*array)[(*count)++] = value;
}

static void take_value(host_cli *cli, const opt_def *o, const char *value)
{
    const char *n = o->longname;
    if (strcmp(n, "--input") == 0)
        cli->input = value;
    else if (strcmp(n, "--output") == 0)
        cli->output = value;
    else if (strcmp(n, "--plugin-dir") == 0)
        cli->plugin_dir = value;
    else if (strcmp(n, "--bisect-out") == 0)
        cli->bisect_out = value, cli->bisect = 1;
    else if (strcmp(n, "--dump-dir") == 0)
        cli->dump_dir = value;
    else if (strcmp(n, "--passes") == 0)
        cli->passes = value;
    else if (strcmp(n, "--skip") == 0)
        push(&cli->skips, &cli->skip_count, value);
    else if (strcmp(n, "--report-json") == 0)
        cli->report_json = value;
    else if (strcmp(n, "--report-html") == 0)
        cli->report_html = value;
    else if (strcmp(n, "--verify-atol") == 0)
        cli->verify_atol = value;
    else if (strcmp(n, "--verify-rtol") == 0)
        cli->verify_rtol = value;
    else if (strcmp(n, "--verify-data") == 0)
        push(&cli->verify_data, &cli->verify_data_count, value);
    else if (strcmp(n, "--verify-range") == 0)
        push(&cli->verify_ranges, &cli->verify_range_count, value);
    else if (strcmp(n, "--target") == 0)
        cli->target = value;
    else if (strcmp(n, "--check-target") == 0)
        cli->check_target = value;
    else
        push(&cli->sets, &cli->set_count, value);
}

/* --input-shape VALUE: NAME:DIMS, or DIMS alone for a model with one input;
 * DIMS are whole numbers or '?' separated by ',' (onnxsim) or 'x'.  Returns
 * the offset of DIMS, or -1 when value is not of that form. */
static long shape_dims_at(const char *value)
{
    const char *colon = strrchr(value, ':');
    const char *dims = colon ? colon + 1 : value;
    if (colon == value || !*dims)
        return -1;
    int want_dim = 1;
    for (const char *c = dims; *c; c++) {
        if ((*c >= '0' && *c <= '9') || *c == '?') {
            if (*c == '?' && (c[1] && c[1] != ',' && c[1] != 'x'))
                return -1;
            want_dim = 0;
        } else if ((*c == ',' || *c == 'x') && !want_dim) {
            want_dim = 1;
        } else {
            return -1;
        }
    }
    return want_dim ? -1 : (long)(dims - value);
}

static int take_input_shape(host_cli *cli, const char *opt, const char *value, ph_error *err)
{
    if (shape_dims_at(value) < 0)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s '%.200s': want NAME:DIMS such as input:1,3,224,224 (dims are "
                            "whole numbers or ?, separated by ',' or 'x')", opt, value);
    push(&cli->input_shapes, &cli->input_shape_count, value);
    return 0;
}

/* After --input-shape A:1,2 more NAME:DIMS words may follow, as onnxsim
 * takes them (--overwrite-input-shape a:1,3 b:1,4); a word that names an
 * existing file stays a positional argument. */
static int more_shapes(const char *arg)
{
    struct stat st;
    return arg[0] != '-' && strchr(arg, ':') && shape_dims_at(arg) > 0 && stat(arg, &st) != 0;
}

/* --max-rewrites N: a whole number >= 0, else a configuration error. */
static int parse_max_rewrites(host_cli *cli, const char *value, ph_error *err)
{
    int ok = *value != '\0';
    for (const char *c = value; *c && ok; c++)
        ok = *c >= '0' && *c <= '9';
    errno = 0;
    long long n = ok ? strtoll(value, NULL, 10) : -1;
    if (!ok || errno == ERANGE)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "--max-rewrites: '%.100s' is not a whole number of rewrites "
                            "(0 to %lld)", value, LLONG_MAX);
    cli->max_rewrites = n;
    return 0;
}

/* One argument at argv[*i]; advances *i past a separate option value. */
static int parse_arg(host_cli *cli, int argc, char **argv, int *i, int *only_files,
                     ph_error *err)
{
    const char *arg = argv[*i];
    if (*only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
        push(&cli->positional, &cli->positional_count, arg);
        return 0;
    }
    if (strcmp(arg, "--") == 0)
        return *only_files = 1, 0;
    const char *value;
    const opt_def *o = match_option(arg, &value);
    if (!o) {
        int rc = host_supervise_option(&cli->supervise, argc, argv, i, err); /* supervise.h */
        if (rc >= 0)
            return rc;
        return ph_error_set(err, HOST_EXIT_USAGE, "unknown option %s; see passhost --help", arg);
    }
    if (o->kind == OPT_OPTIONAL) { /* --verify[=N] */
        char *end = NULL;
        long n = value ? strtol(value, &end, 10) : -1;
        if (value && (end == value || *end || n < 1 || n > 1000))
            return ph_error_set(err, HOST_EXIT_USAGE, "%s=%s: want a whole number from 1 to 1000",
                                o->longname, value);
        cli->verify_runs = (int)n;
        return 0;
    }
    if (o->kind == OPT_FLAG) {
        if (value)
            return ph_error_set(err, HOST_EXIT_USAGE, "%s takes no value", o->longname);
        take_flag(cli, o);
        return 0;
    }
    if (!value) {
        if (*i + 1 >= argc)
            return ph_error_set(err, HOST_EXIT_USAGE, "%s needs a value; see passhost --help",
                                arg);
        value = argv[++*i];
    }
    if (strcmp(o->longname, "--max-rewrites") == 0)
        return parse_max_rewrites(cli, value, err);
    if (!*value)
        return ph_error_set(err, HOST_EXIT_USAGE, "%s: empty value", arg);
    if (strstr(o->longname, "input-shape")) {
        int rc = take_input_shape(cli, o->longname, value, err);
        while (!rc && *i + 1 < argc && more_shapes(argv[*i + 1]))
            rc = take_input_shape(cli, o->longname, argv[++*i], err);
        return rc;
    }
    take_value(cli, o, value);
    return 0;
}

/* The positional arguments: CONFIG.ini, or IN.onnx [OUT.onnx], told apart
 * by the first one's content; with --inspect, every one is a model. */
static int sort_positional(host_cli *cli, ph_error *err)
{
    size_t n = cli->positional_count;
    if (cli->inspect || n == 0)
        return 0;
    const char *first = cli->positional[0];
    host_file_kind kind = strcmp(first, "-") == 0 ? HOST_FILE_ONNX : host_sniff_file(first);
    if (kind == HOST_FILE_ONNX || kind == HOST_FILE_OTHER) { /* a model (OTHER: let the loader say why) */
        if (n > 2)
            return ph_error_set(err, HOST_EXIT_USAGE,
                                "too many arguments (%s ...): passhost IN.onnx OUT.onnx takes two "
                                "models", cli->positional[2]);
        if (cli->input)
            return ph_error_set(err, HOST_EXIT_USAGE,
                                "the input model is given twice: %s and -i %s", first, cli->input);
        if (n == 2 && cli->output)
            return ph_error_set(err, HOST_EXIT_USAGE,
                                "the output model is given twice: %s and -o %s",
                                cli->positional[1], cli->output);
        cli->input = first;
        if (n == 2)
            cli->output = cli->positional[1];
        return 0;
    }
    if (n == 1) {
        cli->config_path = first;
        return 0;
    }
    const char *second = cli->positional[1];
    if (kind == HOST_FILE_MISSING)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "%s does not exist: passhost takes IN.onnx OUT.onnx (an existing "
                            "model first) or one CONFIG.ini, not %s as well", first, second);
    if (host_sniff_file(second) == HOST_FILE_ONNX)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "%s is a config file and %s a model: with CONFIG.ini give the models "
                            "in its [model] section or with -i/-o", first, second);
    return ph_error_set(err, HOST_EXIT_USAGE,
                        "more than one config file (%s and %s); see passhost --help", first,
                        second);
}

/* Options that make no sense together. */
static int check_combinations(const host_cli *cli, ph_error *err)
{
    const char *numbered = cli->bisect ? (cli->bisect_out ? "--bisect-out" : "--bisect")
                           : cli->max_rewrites >= 0 ? "--max-rewrites"
                           : cli->dump_dir ? "--dump-dir"
                           : cli->print_changes ? "--print-changes" : NULL;
    const char *report = cli->report_json ? "--report-json" : cli->report_html ? "--report-html" : NULL;
    if (cli->shapes_only && numbered)
        return ph_error_set(err, HOST_EXIT_USAGE, "--shapes runs no passes: drop %s", numbered);
    if (cli->bisect && cli->max_rewrites >= 0)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "%s chooses the rewrite limit itself: drop --max-rewrites", numbered);
    if (cli->bisect && cli->verify_each)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "%s and --verify-each cannot be combined (--verify-each stops at the "
                            "first pass that breaks the outputs; %s finds the rewrite)",
                            numbered, numbered);
    if (report && (cli->bisect || cli->list_passes || cli->inspect))
        return ph_error_set(err, HOST_EXIT_USAGE, "%s reports a run: not with %s", report,
                            cli->bisect ? "--bisect" : cli->list_passes ? "--list-passes" : "--inspect");
    if (cli->inspect && (cli->output || cli->shapes_only || cli->bisect || cli->list_passes))
        return ph_error_set(err, HOST_EXIT_USAGE, "--inspect only reads models: drop %s",
                            cli->output ? "-o" : cli->shapes_only ? "--shapes"
                            : cli->bisect ? "--bisect" : "--list-passes");
    int dashes = (cli->output && strcmp(cli->output, "-") == 0) +
                 (cli->report_json && strcmp(cli->report_json, "-") == 0) +
                 (cli->report_html && strcmp(cli->report_html, "-") == 0);
    if (dashes > 1)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "only one of -o, --report-json and --report-html can be - (stdout)");
    if (dashes && isatty(STDOUT_FILENO) && cli->output && strcmp(cli->output, "-") == 0)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "-o -: stdout is a terminal; redirect it to a file or a pipe "
                            "(passhost IN.onnx - > out.onnx)");
    return 0;
}

int host_cli_parse(host_cli *cli, int argc, char **argv, ph_error *err)
{
    memset(cli, 0, sizeof *cli);
    cli->max_rewrites = -1;
    cli->argc = argc;
    cli->argv = argv;
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        int rc = parse_arg(cli, argc, argv, &i, &only_files, err);
        if (rc)
            return rc;
    }
    /* what the supervisor's reproducer needs of the rest of the line */
    cli->supervise.bisect_out = cli->bisect_out;
    cli->supervise.verify_runs = cli->verify_runs;
    cli->supervise.argc = argc;
    cli->supervise.argv = argv;
    if (cli->help || cli->version)
        return 0;
    int verify_opts = cli->verify_atol || cli->verify_rtol || cli->verify_data_count ||
                      cli->verify_range_count;
    if (verify_opts && !cli->verify_runs && !cli->verify_each && !cli->bisect)
        cli->verify_runs = -1; /* --verify with [verify] runs */
    int rc = sort_positional(cli, err);
    return rc ? rc : check_combinations(cli, err);
}

static void remove_file(char **path)
{
    if (*path)
        unlink(*path);
    free(*path);
    *path = NULL;
}

void host_cli_free(host_cli *cli)
{
    free(cli->sets);
    free(cli->positional);
    free(cli->skips);
    free(cli->input_shapes);
    free(cli->verify_data);
    free(cli->verify_ranges);
    cli->verify_data = cli->verify_ranges = NULL;
    cli->verify_data_count = cli->verify_range_count = 0;
    cli->sets = NULL;
    cli->positional = cli->skips = cli->input_shapes = NULL;
    cli->set_count = cli->positional_count = cli->skip_count = cli->input_shape_count = 0;
    remove_file(&cli->stdin_model);
    if (cli->stdout_model) { /* and its external-data file, if the save wrote one */
        char *data = host_xasprintf("%s.data", cli->stdout_model);
        unlink(data);
        free(data);
    }
    remove_file(&cli->stdout_model);
    if (cli->stream_dir)
        rmdir(cli->stream_dir);
    free(cli->stream_dir);
    cli->stream_dir = NULL;
}

/* ----------------------------------------------------------- file content */

static int looks_like_text(const unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = buf[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f')
            return 0;
        if (c == 0x7f)
            return 0;
    }
    return 1;
}

host_file_kind host_sniff_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return HOST_FILE_MISSING;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return HOST_FILE_OTHER;
    }
    unsigned char buf[4096];
    ssize_t got = read(fd, buf, sizeof buf);
    close(fd);
    if (got < 0)
        return HOST_FILE_OTHER;
    size_t n = (size_t)got;
    if (ph_model_sniff(buf, n, (uint64_t)st.st_size))
        return HOST_FILE_ONNX;
    return looks_like_text(buf, n) ? HOST_FILE_TEXT : HOST_FILE_OTHER;
}

/* ---------------------------------------------------------------- streams */

static int is_dash(const char *s) { return s && strcmp(s, "-") == 0; }

FILE *host_cli_report_stream(const host_cli *cli)
{
    return is_dash(cli->output) || is_dash(cli->report_json) || is_dash(cli->report_html) ? stderr
                                                                                         : stdout;
}

const char *host_cli_input_name(const host_cli *cli, const host_config *cfg)
{
    return cli->stdin_model && cfg->input && strcmp(cfg->input, cli->stdin_model) == 0 ? "-"
                                                                                       : cfg->input;
}

const char *host_cli_output_name(const host_cli *cli, const host_config *cfg)
{
    return cli->stdout_model && cfg->output && strcmp(cfg->output, cli->stdout_model) == 0
               ? "-" : cfg->output;
}

static int make_stream_dir(host_cli *cli, ph_error *err)
{
    if (cli->stream_dir)
        return 0;
    const char *tmp = getenv("TMPDIR");
    char *tmpl = host_xasprintf("%s/passhost.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl)) {
        int rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: cannot make a temporary folder: %s", tmpl,
                              strerror(errno));
        free(tmpl);
        return rc;
    }
    cli->stream_dir = tmpl;
    return 0;
}

/* Copy everything from fd `from` to fd `to`; 0, or errno. */
static int copy_fd(int from, int to, int *read_failed)
{
    char buf[1 << 16];
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return *read_failed = 1, errno;
        if (n == 0)
            return 0;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return errno;
            off += w;
        }
    }
}

/* `-i -`: the model on stdin into stream_dir/stdin.onnx. */
static int read_stdin_model(host_cli *cli, ph_error *err)
{
    if (isatty(STDIN_FILENO))
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "-i -: stdin is a terminal; pipe a model in (passhost - out.onnx < in.onnx)");
    int rc = make_stream_dir(cli, err);
    if (rc)
        return rc;
    cli->stdin_model = host_xasprintf("%s/stdin.onnx", cli->stream_dir);
    int fd = open(cli->stdin_model, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return ph_error_set(err, HOST_EXIT_MODEL, "%s: %s", cli->stdin_model, strerror(errno));
    int read_failed = 0;
    int e = copy_fd(STDIN_FILENO, fd, &read_failed);
    if (close(fd) != 0 && !e)
        e = errno;
    if (e)
        return ph_error_set(err, HOST_EXIT_MODEL, "-i -: %s %s: %s",
                            read_failed ? "reading stdin" : "writing", read_failed ? "" : cli->stdin_model,
                            strerror(e));
    return 0;
}

int host_cli_stream_output(const host_cli *cli, ph_error *err)
{
    if (!cli->stdout_model)
        return 0;
    char *data = host_xasprintf("%s.data", cli->stdout_model);
    int external = access(data, F_OK) == 0;
    free(data);
    if (external) /* one stream cannot carry the data file the model names */
        return ph_error_set(err, HOST_EXIT_OUTPUT, "-o -: the model is larger than [model] "
                            "external_data_threshold and needs an external-data file beside it; "
                            "write it to a file with -o OUT.onnx");
    int fd = open(cli->stdout_model, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ph_error_set(err, HOST_EXIT_OUTPUT, "-o -: %s: %s", cli->stdout_model, strerror(errno));
    fflush(stdout);
    int read_failed = 0;
    int e = copy_fd(fd, STDOUT_FILENO, &read_failed);
    close(fd);
    if (e)
        return ph_error_set(err, HOST_EXIT_OUTPUT, "-o -: %s: %s",
                            read_failed ? "reading the saved model" : "writing stdout", strerror(e));
    return 0;
}

/* ------------------------------------------------------------ the config */

static int need_models(const host_cli *cli, const host_config *cfg, ph_error *err)
{
    /* --bisect writes no output model, so it needs none */
    const char *missing = !cfg->input ? "input" : !cfg->output && !cli->bisect ? "output" : NULL;
    if (cli->list_passes || !missing)
        return 0;
    if (cli->config_path || cli->config_text)
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: [model] %s is not set (or give %s FILE)",
                            cli->config_path ? cli->config_path : HOST_CONFIG_TEXT_NAME, missing,
                            missing[0] == 'i' ? "-i" : "-o");
    if (cli->positional_count == 1 && missing[0] == 'o')
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "no output model: give it after the input (passhost %s OUT.onnx) or "
                            "with -o OUT.onnx", cli->positional[0]);
    return ph_error_set(err, HOST_EXIT_USAGE,
                        "no %s model: give IN.onnx OUT.onnx, CONFIG.ini, or -i IN.onnx -o OUT.onnx "
                        "(passhost --help)", missing);
}

/* Append one item to a pass list of the config (which owns it). */
static void list_add(host_list *l, const char *text, size_t len, const char *where)
{
    l->items = realloc(l->items, (l->count + 1) * sizeof *l->items);
    if (!l->items)
        abort();
    l->items[l->count].text = host_xstrndup(text, len);
    l->items[l->count].where = host_xstrdup(where);
    l->count++;
}

/* Each ','- or ';'-separated name of text, trimmed, into l. */
static void list_add_names(host_list *l, const char *text, const char *where)
{
    while (*text) {
        size_t len = strcspn(text, ",;");
        const char *a = text, *b = text + len;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (b > a)
            list_add(l, a, (size_t)(b - a), where);
        text += len + (text[len] != '\0');
    }
}

static void list_reset(host_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].text);
        free(l->items[i].where);
    }
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

/* --verify-atol X: a number >= 0. */
static int parse_tolerance(const char *opt, const char *value, double *out, ph_error *err)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(value, &end);
    if (errno || end == value || *end || !(d >= 0) || d > 1e30)
        return ph_error_set(err, HOST_EXIT_USAGE, "%s '%.100s': want a number >= 0", opt, value);
    *out = d;
    return 0;
}

/* --verify-atol, --verify-rtol, --verify-data, --verify-range into [verify]
 * (data and ranges given on the command line replace the config's). */
static int apply_verify_options(const host_cli *cli, host_verify_config *vc, ph_error *err)
{
    int rc = 0;
    if (cli->verify_atol)
        rc = parse_tolerance("--verify-atol", cli->verify_atol, &vc->atol, err);
    if (!rc && cli->verify_rtol)
        rc = parse_tolerance("--verify-rtol", cli->verify_rtol, &vc->rtol, err);
    if (!rc && cli->verify_data_count) {
        list_reset(&vc->data);
        for (size_t i = 0; i < cli->verify_data_count; i++)
            list_add(&vc->data, cli->verify_data[i], strlen(cli->verify_data[i]), "--verify-data");
    }
    if (!rc && cli->verify_range_count) {
        char *spec = host_xstrdup("");
        for (size_t i = 0; i < cli->verify_range_count; i++) {
            char *joined = host_xasprintf("%s%s%s", spec, i ? "; " : "", cli->verify_ranges[i]);
            free(spec);
            spec = joined;
        }
        free(vc->range);
        vc->range = spec;
    }
    return rc;
}

/* --passes, --skip, --no-fold and --input-shape into the config. */
static int apply_conventions(const host_cli *cli, host_config *cfg, ph_error *err)
{
    if (cli->passes) {
        host_stage_config *opt = &cfg->stage[HOST_STAGE_OPTIMIZE];
        list_reset(&opt->pass_on);
        list_add_names(&opt->pass_on, cli->passes, "--passes");
        if (opt->pass_on.count == 0)
            return ph_error_set(err, HOST_EXIT_USAGE, "--passes: no pass named (--passes=A,B,...)");
        opt->no_integral = 1;
        opt->keep_order = 1;
    }
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        for (size_t i = 0; i < cli->skip_count; i++)
            list_add_names(&cfg->stage[s].pass_off, cli->skips[i], "--skip");
        if (cli->no_fold)
            list_add_names(&cfg->stage[s].pass_off, HOST_NO_FOLD_PASSES, HOST_WHERE_NO_FOLD);
    }
    if (cli->input_shape_count) {
        char *spec = host_xstrdup("");
        for (size_t i = 0; i < cli->input_shape_count; i++) {
            char *one = host_xstrdup(cli->input_shapes[i]);
            for (char *c = one + shape_dims_at(one); *c; c++)
                *c = *c == ',' ? 'x' : *c;
            char *joined = host_xasprintf("%s%s%s", spec, i ? "; " : "", one);
            free(one);
            free(spec);
            spec = joined;
        }
        free(cfg->input_shape);
        cfg->input_shape = spec;
    }
    return apply_verify_options(cli, &cfg->verify, err);
}

int host_cli_config(host_cli *cli, host_config **out, ph_error *err)
{
    host_config *cfg = host_config_new();
    int rc = 0;
    if (cli->config_path)
        rc = host_config_load_file(cfg, cli->config_path, err);
    if (!rc && cli->config_text)
        rc = host_config_load_text(cfg, cli->config_text, HOST_CONFIG_TEXT_NAME, err);
    for (size_t i = 0; i < cli->set_count && !rc; i++)
        rc = host_config_set(cfg, cli->sets[i], err);
    if (!rc && cli->target) {
        if (!*cli->target)
            rc = ph_error_set(err, HOST_EXIT_USAGE, "--target: give a profile name or file (passhost --list-targets)");
        else {
            free(cfg->stage[HOST_STAGE_ADAPT].target);
            cfg->stage[HOST_STAGE_ADAPT].target = host_xstrdup(cli->target);
        }
    }
    if (!rc && is_dash(cli->input) && !cli->list_passes)
        rc = read_stdin_model(cli, err);
    if (!rc && cli->input)
        rc = host_config_set_path(&cfg->input, cli->stdin_model ? cli->stdin_model : cli->input, err);
    if (!rc && is_dash(cli->output) && !cli->list_passes) {
        rc = make_stream_dir(cli, err);
        if (!rc)
            cli->stdout_model = host_xasprintf("%s/stdout.onnx", cli->stream_dir);
    }
    if (!rc && cli->output)
        rc = host_config_set_path(&cfg->output, cli->stdout_model ? cli->stdout_model : cli->output, err);
    if (!rc && cli->plugin_dir)
        rc = host_config_set_path(&cfg->plugin_dir, cli->plugin_dir, err);
    if (!rc)
        rc = apply_conventions(cli, cfg, err);
    if (!rc)
        rc = host_config_finish(cfg, err);
    if (!rc)
        rc = need_models(cli, cfg, err);
    if (rc) {
        host_config_free(cfg);
        cfg = NULL;
    }
    *out = cfg;
    return rc;
}
