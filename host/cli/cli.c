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
#include "io/output.h"
#include "passhost/host.h"
#include "passhost/plugin.h"
#include "base/streams.h"
#include "base/util.h"
#include "config/pipeline_text.h"

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
    {"-q", "--quiet", OPT_FLAG},       {"-v", "--verbose", OPT_FLAG},
    {"-h", "--help", OPT_FLAG},
    {NULL, "--version", OPT_FLAG},     {NULL, "--max-rewrites", OPT_VALUE},
    {NULL, "--bisect", OPT_FLAG},      {NULL, "--bisect-out", OPT_VALUE},
    {NULL, "--print-changes", OPT_FLAG}, {NULL, "--dump-dir", OPT_VALUE},
    {NULL, "--markdown", OPT_FLAG},    {NULL, "--inspect", OPT_FLAG},
    {NULL, "--passes", OPT_VALUE},     {NULL, "--skip", OPT_VALUE},
    {NULL, "--input-shape", OPT_VALUE}, {NULL, "--overwrite-input-shape", OPT_VALUE},
    {NULL, "--no-fold", OPT_FLAG},     {NULL, "--report-json", OPT_VALUE},
    {NULL, "--report-html", OPT_VALUE}, {NULL, "--level", OPT_VALUE},
    {NULL, "--inputs", OPT_VALUE},     {NULL, "--outputs", OPT_VALUE},
    {NULL, "--trace-rule", OPT_VALUE}, {NULL, "--print-pipeline", OPT_FLAG},
    {NULL, "--verify-atol", OPT_VALUE}, {NULL, "--verify-rtol", OPT_VALUE},
    {NULL, "--verify-data", OPT_VALUE}, {NULL, "--verify-range", OPT_VALUE},
    {NULL, "--target", OPT_VALUE},     {NULL, "--list-targets", OPT_FLAG},
    {NULL, "--strict-target", OPT_FLAG}, {NULL, "--check-target", OPT_VALUE},
};
enum { N_OPTIONS = sizeof options / sizeof options[0] };

void host_cli_usage(FILE *out)
{
    fputs("usage: passhost CONFIG.ini [options]\n"
          "       passhost IN.onnx OUT.onnx [options]\n"
          "       passhost -i IN.onnx -o OUT.onnx [options]\n"
          "       passhost --inspect A.onnx [B.onnx ...]\n"
          "       passhost --list-passes [CONFIG.ini] [--plugin-dir DIR]\n"
          "       passhost --print-pipeline [CONFIG.ini | IN.onnx OUT.onnx] [options]\n"
          "       passhost --list-targets\n"
          "       passhost --check-target PROFILE MODEL [--strict-target]\n"
          "       passhost --check-rules PLUGIN [--instances N] [--seed S] [--rule NAME]\n"
          "                [--repro-dir DIR]   check a pattern pass's rules on generated\n"
          "                                    graphs (docs/sdk.md, \"Checking rules\")\n"
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
          "  --passes='optimize(A,B<KEY=VAL>),adapt<target=T>(C)'\n"
          "                           each stage named runs exactly these passes, in this\n"
          "                           order, with these parameters and stage keys\n"
          "  --print-pipeline         print the passes this run would run, in order, as a\n"
          "                           --passes= value that runs the same, and exit\n"
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
          "  --level LEVEL            run only passes that change results at most this much:\n"
          "                           none (no pass), exact (bit-identical), fp (the default:\n"
          "                           float rounding may differ), approx (results change by\n"
          "                           design); both stages ([STAGE] level)\n"
          "  -O0, -O1, -O2, -O3       --level none, exact, fp, approx\n"
          "  --inputs A,B,...         cut the model to the part between these values and\n"
          "  --outputs C,D,...        those (as onnx's extract_model), then optimize it;\n"
          "                           either alone keeps the model's own outputs / inputs\n"
          "  --inspect                print a side-by-side summary of each model given\n"
          "                           (inputs, outputs, opsets, op types, weights) and exit\n"
          "  --report-json FILE       write the run's report as JSON (docs/report.schema.json)\n"
          "  --report-html FILE       write the run's report as one self-contained HTML file\n"
          "  --set SECTION.KEY=VALUE  override an INI value (repeatable), e.g.\n"
          "                           --set optimize.pass_off=eliminate_identity\n"
          "                           --set pass.NAME.PARAM=VALUE\n"
          "  --plugin-dir DIR         search DIR for passes first (overrides plugin_dir)\n"
          "  --list-passes            print every pass found, in run order, and exit\n"
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
          "  --shapes                 infer shapes, write them into value_info, run no passes\n"
          "  --trace-rule PASS[:RULE] try the rules of pattern pass PASS (or its rule RULE, a\n"
          "                           name or number) at every candidate node of the model and\n"
          "                           print, per node, the match or the statement and\n"
          "                           constraint that failed; writes nothing\n",
          out);
    host_supervise_usage(out); /* --pass-timeout, --crash-out, ... */
    fputs("  -q, --quiet              errors only: no report, no verdicts, no warnings, no\n"
          "                           progress line\n"
          "  -v, --verbose            the full report: every pass of each stage with its calls,\n"
          "                           rewrites, time and node change, the input and output\n"
          "                           side by side, times, each output's errors with --verify\n"
          "                           (the default: the passes that changed the graph, sizes,\n"
          "                           verdicts, one summary line)\n"
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
    else if (strcmp(n, "--verbose") == 0)
        cli->verbose = 1;
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
    else if (strcmp(n, "--print-pipeline") == 0)
        cli->print_pipeline = 1;
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
        push(&cli->passes, &cli->passes_count, value); /* repeatable, like --skip */
    else if (strcmp(n, "--skip") == 0)
        push(&cli->skips, &cli->skip_count, value);
    else if (strcmp(n, "--report-json") == 0)
        cli->report_json = value;
    else if (strcmp(n, "--report-html") == 0)
        cli->report_html = value;
    else if (strcmp(n, "--level") == 0)
        cli->level = value, cli->level_option = "--level";
    else if (strcmp(n, "--trace-rule") == 0)
        cli->trace_rule = value;
    else if (strcmp(n, "--inputs") == 0)
        push(&cli->cut.inputs, &cli->cut.input_count, value);
    else if (strcmp(n, "--outputs") == 0)
        push(&cli->cut.outputs, &cli->cut.output_count, value);
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

/* An unknown option: the close names, if any ("--verfy": "--verify"). */
static int unknown_option(const char *arg, ph_error *err)
{
    const char *names[N_OPTIONS + 8];
    size_t n = 0;
    for (size_t i = 0; i < N_OPTIONS; i++)
        names[n++] = options[i].longname;
    for (size_t i = 0; host_supervise_option_name(i); i++)
        names[n++] = host_supervise_option_name(i);
    char word[128];
    snprintf(word, sizeof word, "%.*s", (int)strcspn(arg, "="), arg); /* --verfy=2: --verfy */
    const char *near[3];
    size_t k = ph_close_names(word, names, n, near, 3);
    if (!k)
        return ph_error_set(err, HOST_EXIT_USAGE, "unknown option %s; see passhost --help", word);
    char list[200] = "";
    for (size_t i = 0; i < k; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i == 0 ? "" : i + 1 == k ? " or " : ", ",
                 near[i]);
    }
    return ph_error_set(err, HOST_EXIT_USAGE, "unknown option %s (did you mean %s?); see passhost --help",
                        word, list);
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
    if (arg[1] == 'O' && arg[2] >= '0' && arg[2] <= '3' && !arg[3]) { /* -O0 .. -O3 */
        if (cli->level_option)
            return ph_error_set(err, HOST_EXIT_USAGE, "%s and %s: give one level", cli->level_option,
                                arg);
        cli->level = host_level_name(arg[2] - '0');
        cli->level_option = arg;
        return 0;
    }
    const char *value;
    const opt_def *o = match_option(arg, &value);
    if (!o) {
        int rc = host_supervise_option(&cli->supervise, argc, argv, i, err); /* supervise.h */
        if (rc >= 0)
            return rc;
        return unknown_option(arg, err);
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
    if (strcmp(o->longname, "--level") == 0 && cli->level_option)
        return ph_error_set(err, HOST_EXIT_USAGE, "%s and --level: give one level", cli->level_option);
    if (strcmp(o->longname, "--level") == 0 && host_level_parse(value) < 0)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "--level %s: want none, exact, fp or approx (or -O0 .. -O3)", value);
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
    if (kind == HOST_FILE_ONNX || kind == HOST_FILE_OTHER || kind == HOST_FILE_EMPTY ||
        kind == HOST_FILE_LFS) { /* a model (the others: the loader says why not) */
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
    host_file_kind second_kind = host_sniff_file(second);
    if (second_kind == HOST_FILE_ONNX || second_kind == HOST_FILE_EMPTY || second_kind == HOST_FILE_LFS)
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
    if (cli->trace_rule && (cli->bisect || cli->list_passes || cli->inspect || cli->shapes_only ||
                            report))
        return ph_error_set(err, HOST_EXIT_USAGE, "--trace-rule only reads the model: drop %s",
                            cli->bisect ? "--bisect" : cli->list_passes ? "--list-passes"
                            : cli->inspect ? "--inspect" : cli->shapes_only ? "--shapes" : report);
    if (cli->list_passes && (cli->input || cli->output))
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "--list-passes lists the passes found and reads no model (%s): give "
                            "CONFIG.ini or --plugin-dir DIR to choose where passes are searched",
                            cli->input ? cli->input : cli->output);
    if (cli->quiet && cli->verbose)
        return ph_error_set(err, HOST_EXIT_USAGE, "-q and -v contradict each other: give one");
    if (cli->inspect && (cli->cut.input_count || cli->cut.output_count))
        return ph_error_set(err, HOST_EXIT_USAGE, "--inspect only reads models: drop --%s",
                            cli->cut.input_count ? "inputs" : "outputs");
    const char *pass_option = cli->passes_count ? "--passes" : cli->skip_count ? "--skip"
                              : cli->no_fold ? "--no-fold" : cli->level ? cli->level_option : NULL;
    if (cli->shapes_only && pass_option)
        return ph_error_set(err, HOST_EXIT_USAGE, "--shapes runs no passes: drop %s", pass_option);
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
    const char *other_mode = cli->list_passes ? "--list-passes" : cli->inspect ? "--inspect"
                             : cli->bisect ? "--bisect" : cli->shapes_only ? "--shapes" : report;
    if (cli->print_pipeline && other_mode)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "--print-pipeline prints what a run would do and runs nothing: drop %s",
                            other_mode);
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

void host_cli_keep_files(host_cli *cli) { cli->keep_files = 1; }

void host_cli_free(host_cli *cli)
{
    free(cli->sets);
    free(cli->positional);
    free(cli->skips);
    free(cli->passes);
    cli->passes = NULL;
    cli->passes_count = 0;
    free(cli->input_shapes);
    free(cli->cut.inputs);
    free(cli->cut.outputs);
    cli->cut.inputs = cli->cut.outputs = NULL;
    cli->cut.input_count = cli->cut.output_count = 0;
    free(cli->verify_data);
    free(cli->verify_ranges);
    cli->verify_data = cli->verify_ranges = NULL;
    cli->verify_data_count = cli->verify_range_count = 0;
    cli->sets = NULL;
    cli->positional = cli->skips = cli->input_shapes = NULL;
    cli->set_count = cli->positional_count = cli->skip_count = cli->input_shape_count = 0;
    if (cli->keep_files) { /* another process's: forget them, leave them */
        free(cli->stdin_model);
        free(cli->stdout_model);
        cli->stdin_model = cli->stdout_model = NULL;
    }
    remove_file(&cli->stdin_model);
    remove_file(&cli->stdout_model);
    free(cli->stream_target);
    cli->stream_target = NULL;
    if (cli->stream_dir && !cli->keep_files)
        ph_staging_remove(cli->stream_dir); /* and whatever a save left there */
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
    /* O_NONBLOCK: a FIFO without a writer must not block the sniffing */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
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
    if (n == 0)
        return HOST_FILE_EMPTY;
    if (ph_model_sniff(buf, n, (uint64_t)st.st_size))
        return HOST_FILE_ONNX;
    static const char lfs[] = "version https://git-lfs.github.com/spec/";
    if (n >= sizeof lfs - 1 && memcmp(buf, lfs, sizeof lfs - 1) == 0)
        return HOST_FILE_LFS;
    return looks_like_text(buf, n) ? HOST_FILE_TEXT : HOST_FILE_OTHER;
}

/* The first line of the text file that is not blank or a comment starts
 * with '[': an INI file. */
static int looks_like_ini(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int ini = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *p = line + strspn(line, " \t\r\n");
        if (!*p || *p == ';' || *p == '#')
            continue;
        ini = *p == '[';
        break;
    }
    if (f)
        fclose(f);
    return ini;
}

const char *host_file_not_a_model(const char *path)
{
    switch (host_sniff_file(path)) {
    case HOST_FILE_EMPTY: return "an empty file, not an ONNX model";
    case HOST_FILE_LFS:
        return "a git-lfs pointer, not the model itself: run `git lfs pull` to fetch it";
    case HOST_FILE_TEXT:
        return looks_like_ini(path) ? "an INI file, not an ONNX model: give it as the configuration "
                                      "(passhost CONFIG.ini) and the model with -i"
                                    : "a text file, not an ONNX model";
    default: return NULL;
    }
}

/* ---------------------------------------------------------------- streams */

static int is_dash(const char *s) { return s && strcmp(s, "-") == 0; }

/* path is the very file passhost's standard output is (/dev/stdout...). */
static int names_stdout(const char *path)
{
    struct stat a, b;
    return path && stat(path, &a) == 0 && fstat(host_stdout_fd(), &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

FILE *host_cli_report_stream(const host_cli *cli)
{
    return is_dash(cli->output) || is_dash(cli->report_json) || is_dash(cli->report_html) ||
                   names_stdout(cli->output) ? stderr : host_stdout();
}

const char *host_cli_input_name(const host_cli *cli, const host_config *cfg)
{
    return cli->stdin_model && cfg->input && strcmp(cfg->input, cli->stdin_model) == 0 ? "-"
                                                                                       : cfg->input;
}

const char *host_cli_output_name(const host_cli *cli, const host_config *cfg)
{
    if (cli->stdout_model && cfg->output && strcmp(cfg->output, cli->stdout_model) == 0)
        return cli->stream_target ? cli->stream_target : "-";
    return cfg->output;
}

/* TMPDIR/.passhost.tmp.PID.XXXXXX (ph_staging_make: a folder left by a
 * killed run is removed by the next one). */
static int make_stream_dir(host_cli *cli, ph_error *err)
{
    if (cli->stream_dir)
        return 0;
    const char *tmp = getenv("TMPDIR");
    char *base = host_xasprintf("%s/passhost", tmp && *tmp ? tmp : "/tmp");
    char folder[PATH_MAX];
    ph_error e = {0};
    int rc = ph_staging_make(base, 0, folder, sizeof folder, &e);
    free(base);
    if (rc)
        return ph_error_set(err, HOST_EXIT_OUTPUT, "cannot make a temporary folder: %.400s", e.message);
    cli->stream_dir = host_xstrdup(folder);
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
    const char *name = cli->stream_target ? cli->stream_target : "-o -";
    if (host_output_has_data_file(cli->stdout_model)) /* one stream cannot carry the data file it names */
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: the model is larger than [model] "
                            "external_data_threshold and needs an external-data file beside it; "
                            "write it to a file with -o OUT.onnx", name);
    int fd = open(cli->stdout_model, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s: %s", name, cli->stdout_model, strerror(errno));
    /* a device or FIFO is written in place, never replaced (a FIFO waits for its reader here) */
    int to = cli->stream_target ? open(cli->stream_target, O_WRONLY | O_NOCTTY | O_CLOEXEC) : host_stdout_fd();
    if (to < 0) {
        int e = errno;
        close(fd);
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: cannot write output: %s", name, strerror(e));
    }
    fflush(host_stdout());
    int read_failed = 0;
    int e = copy_fd(fd, to, &read_failed); /* not fd 1: plugins may have written there */
    close(fd);
    if (cli->stream_target && close(to) != 0 && !e)
        e = errno;
    if (e)
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s: %s", name,
                            read_failed ? "reading the saved model" : "writing the model", strerror(e));
    return 0;
}

/* ------------------------------------------------------------ the config */

static int need_models(const host_cli *cli, const host_config *cfg, ph_error *err)
{
    /* --bisect and --trace-rule write no output model, so they need none */
    const char *missing = !cfg->input                                       ? "input"
                          : !cfg->output && !cli->bisect && !cli->trace_rule ? "output"
                                                                              : NULL;
    if (cli->list_passes || cli->print_pipeline || !missing)
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
        host_list_clear(&vc->data);
        for (size_t i = 0; i < cli->verify_data_count; i++)
            host_list_add(&vc->data, cli->verify_data[i], "--verify-data");
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
    if (cli->passes_count) { /* repeated values are joined, as one list */
        char *joined = host_xstrdup(cli->passes[0]);
        for (size_t i = 1; i < cli->passes_count; i++) {
            char *longer = host_xasprintf("%s,%s", joined, cli->passes[i]);
            free(joined);
            joined = longer;
        }
        int rc = host_pipeline_text_apply(cfg, joined, err);
        free(joined);
        if (rc)
            return rc;
    }
    for (int s = 0; s < HOST_STAGE_COUNT && cli->level; s++) {
        cfg->stage[s].level = host_level_parse(cli->level);
        free(cfg->stage[s].level_where);
        cfg->stage[s].level_where = host_xstrdup(cli->level_option);
    }
    if (cli->level && host_level_parse(cli->level) == HOST_LEVEL_NONE && cli->passes_count)
        return ph_error_set(err, HOST_EXIT_USAGE, "%s runs no pass: drop --passes", cli->level_option);
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        for (size_t i = 0; i < cli->skip_count; i++)
            host_list_append(&cfg->stage[s].pass_off, cli->skips[i], "--skip");
        if (cli->no_fold)
            host_list_append(&cfg->stage[s].pass_off, HOST_NO_FOLD_PASSES, HOST_WHERE_NO_FOLD);
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

/* The output, before anything is loaded (io/output.h): a device, a FIFO or
 * passhost's own standard output is written as -o - is, through
 * stdout_model. */
static int check_output(host_cli *cli, host_config *cfg, ph_error *err)
{
    if (!cfg->output || cli->stdout_model || cli->list_passes || cli->bisect)
        return 0;
    host_output_kind kind;
    int rc = host_output_check(cfg->output, host_stdout_fd(), &kind, err);
    if (rc || kind == HOST_OUTPUT_FILE)
        return rc;
    if ((rc = make_stream_dir(cli, err)) != 0)
        return rc;
    if (kind == HOST_OUTPUT_STREAM)
        cli->stream_target = host_xstrdup(cfg->output);
    cli->stdout_model = host_xasprintf("%s/stdout.onnx", cli->stream_dir);
    return host_config_set_path(&cfg->output, cli->stdout_model, err);
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
    if (!rc && is_dash(cli->input) && !cli->list_passes && !cli->print_pipeline)
        rc = read_stdin_model(cli, err);
    if (!rc && cli->input)
        rc = host_config_set_path(&cfg->input, cli->stdin_model ? cli->stdin_model : cli->input, err);
    if (!rc && is_dash(cli->output) && !cli->list_passes && !cli->print_pipeline) {
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
    if (!rc)
        rc = check_output(cli, cfg, err);
    if (rc) {
        host_config_free(cfg);
        cfg = NULL;
    }
    *out = cfg;
    return rc;
}
