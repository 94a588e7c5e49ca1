/* host/cli.h - the command line: options into a host_cli, then (with the
 * INI file, --set overrides, -i/-o and --plugin-dir) into a host_config.
 *
 *   passhost CONFIG.ini [options]
 *   passhost -i IN.onnx -o OUT.onnx [options]      (no INI: default stages)
 *
 * host_cli borrows every string from argv; only the sets array is owned.
 */
#ifndef PASSHOST_HOST_CLI_H
#define PASSHOST_HOST_CLI_H

#include <stdio.h>

#include "config.h"

#define HOST_VERSION "0.1.0"

typedef struct host_cli {
    const char *config_path; /* NULL when no INI file is given */
    const char *input;       /* -i, overrides [model] input */
    const char *output;      /* -o, overrides [model] output */
    const char *plugin_dir;  /* --plugin-dir, overrides [model] plugin_dir */
    const char **sets;       /* --set values in order (array owned) */
    size_t set_count;
    int list_passes; /* 1: --list-passes, 2: with --markdown */
    int verify_each;
    int verify_runs; /* --verify[=N]: 0 = off, else the number of input sets */
    int shapes_only; /* --shapes: infer shapes, write value_info, no passes */
    int quiet;
    int help;
    int version;
    /* numbered rewrites */
    long long max_rewrites;  /* --max-rewrites N: apply only the first N (-1: all) */
    int bisect;              /* --bisect: find the first rewrite that breaks the outputs */
    const char *bisect_out;  /* --bisect-out DIR: write a reproducer there (implies --bisect) */
    int print_changes;       /* --print-changes: one line per rewrite on stderr */
    const char *dump_dir;    /* --dump-dir DIR: the model after each changing pass call */
    int argc;                /* the command line, for the reproducer */
    char **argv;
} host_cli;

/* 0 or HOST_EXIT_USAGE with a one-line message (HOST_EXIT_CONFIG for a
 * bad --max-rewrites number).  Free with host_cli_free either way. */
int host_cli_parse(host_cli *cli, int argc, char **argv, ph_error *err);
void host_cli_free(host_cli *cli);

void host_cli_usage(FILE *out);
void host_cli_version(FILE *out);

/* The run configuration: INI file (if any), then each --set, then -i/-o and
 * --plugin-dir, then the custom_config files.  Without --list-passes the
 * input and output models must be known.  *out is owned by the caller
 * (host_config_free), NULL on error; returns 0 or a HOST_EXIT_* code. */
int host_cli_config(const host_cli *cli, host_config **out, ph_error *err);

#endif
