/* host/cli.c - command-line parsing, --help and the config it implies. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "exit.h"
#include "passhost/plugin.h"
#include "util.h"

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
    {NULL, "--markdown", OPT_FLAG},
};
enum { N_OPTIONS = sizeof options / sizeof options[0] };

void host_cli_usage(FILE *out)
{
    fputs("usage: passhost CONFIG.ini [options]\n"
          "       passhost -i IN.onnx -o OUT.onnx [options]\n"
          "       passhost --list-passes [CONFIG.ini] [--plugin-dir DIR]\n"
          "\n"
          "Rewrites an ONNX model: an optimize stage, then an adapt stage, each a list\n"
          "of passes run until nothing changes; see docs/config.md.\n"
          "\n"
          "options:\n"
          "  -i, --input FILE         input model (overrides [model] input)\n"
          "  -o, --output FILE        output model (overrides [model] output)\n"
          "  --set SECTION.KEY=VALUE  override an INI value (repeatable), e.g.\n"
          "                           --set optimize.pass_off=eliminate_identity\n"
          "                           --set pass.NAME.PARAM=VALUE\n"
          "  --plugin-dir DIR         search DIR for passes first (overrides plugin_dir)\n"
          "  --list-passes            print every pass found and exit\n"
          "  --markdown               --list-passes as a markdown table (docs/passes.md)\n"
          "  --verify[=N]             run the original and the rewritten model on N (default:\n"
          "                           [verify] runs, 3) seeded random inputs; compare outputs\n"
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
          "  -q, --quiet              no report and no info messages\n"
          "  -h, --help               this help\n"
          "  --version                print the version\n"
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
    else if (strcmp(n, "--help") == 0)
        cli->help = 1;
    else
        cli->version = 1;
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
    else {
        cli->sets = realloc(cli->sets, (cli->set_count + 1) * sizeof *cli->sets);
        if (!cli->sets)
            abort();
        cli->sets[cli->set_count++] = value;
    }
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
        if (cli->config_path)
            return ph_error_set(err, HOST_EXIT_USAGE,
                                "more than one config file (%s and %s); see passhost --help",
                                cli->config_path, arg);
        cli->config_path = arg;
        return 0;
    }
    if (strcmp(arg, "--") == 0)
        return *only_files = 1, 0;
    const char *value;
    const opt_def *o = match_option(arg, &value);
    if (!o)
        return ph_error_set(err, HOST_EXIT_USAGE, "unknown option %s; see passhost --help", arg);
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
    take_value(cli, o, value);
    return 0;
}

/* Options that make no sense together. */
static int check_combinations(const host_cli *cli, ph_error *err)
{
    const char *numbered = cli->bisect ? (cli->bisect_out ? "--bisect-out" : "--bisect")
                           : cli->max_rewrites >= 0 ? "--max-rewrites"
                           : cli->dump_dir ? "--dump-dir"
                           : cli->print_changes ? "--print-changes" : NULL;
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
    return check_combinations(cli, err);
}

void host_cli_free(host_cli *cli)
{
    free(cli->sets);
    cli->sets = NULL;
    cli->set_count = 0;
}

static int need_models(const host_cli *cli, const host_config *cfg, ph_error *err)
{
    /* --bisect writes no output model, so it needs none */
    const char *missing = !cfg->input ? "input" : !cfg->output && !cli->bisect ? "output" : NULL;
    if (cli->list_passes || !missing)
        return 0;
    if (cli->config_path)
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: [model] %s is not set (or give %s FILE)",
                            cli->config_path, missing, missing[0] == 'i' ? "-i" : "-o");
    return ph_error_set(err, HOST_EXIT_USAGE,
                        "no %s model: give CONFIG.ini or -i IN.onnx -o OUT.onnx "
                        "(passhost --help)", missing);
}

int host_cli_config(const host_cli *cli, host_config **out, ph_error *err)
{
    host_config *cfg = host_config_new();
    int rc = 0;
    if (cli->config_path)
        rc = host_config_load_file(cfg, cli->config_path, err);
    for (size_t i = 0; i < cli->set_count && !rc; i++)
        rc = host_config_set(cfg, cli->sets[i], err);
    if (!rc && cli->input)
        rc = host_config_set_path(&cfg->input, cli->input, err);
    if (!rc && cli->output)
        rc = host_config_set_path(&cfg->output, cli->output, err);
    if (!rc && cli->plugin_dir)
        rc = host_config_set_path(&cfg->plugin_dir, cli->plugin_dir, err);
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
