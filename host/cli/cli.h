/* host/cli/cli.h - the command line: options into a host_cli, then (with the
 * INI file, --set overrides, -i/-o and --plugin-dir) into a host_config.
 *
 *   passhost CONFIG.ini [options]
 *   passhost IN.onnx OUT.onnx [options]            (no INI: default stages)
 *   passhost -i IN.onnx -o OUT.onnx [options]
 *   passhost --inspect A.onnx [B.onnx ...]
 *
 * A positional argument is told apart by its content, not its name: a file
 * that starts like an ONNX ModelProto (host_sniff_file) is a model, text is
 * an INI file.  `-i -` reads the model from stdin, `-o -` writes it to
 * stdout (through a private temporary folder, host_cli_stream_output).
 *
 * host_cli borrows every string from argv; the arrays and the temporary
 * paths of `-i -` / `-o -` are owned (host_cli_free removes the files).
 */
#ifndef PASSHOST_HOST_CLI_H
#define PASSHOST_HOST_CLI_H

#include <stdio.h>

#include "base/version.h"
#include "config/config.h"
#include "io/cut.h"
#include "supervise/supervise.h"

typedef struct host_cli {
    const char *config_path; /* NULL when no INI file is given */
    const char *config_text; /* INI text read after the file (the library's; NULL: none) */
    const char *input;       /* -i, overrides [model] input */
    const char *output;      /* -o, overrides [model] output */
    const char *plugin_dir;  /* --plugin-dir, overrides [model] plugin_dir */
    const char **sets;       /* --set values in order (array owned) */
    size_t set_count;
    int list_passes; /* 1: --list-passes, 2: with --markdown */
    int print_pipeline; /* --print-pipeline: the plan as a --passes= value, no run */
    int verify_each;
    int verify_runs; /* --verify[=N]: 0 = off, else the number of input sets */
    int shapes_only; /* --shapes: infer shapes, write value_info, no passes */
    int quiet;               /* -q: errors only */
    int verbose;             /* -v: the full report */
    int verdicts_only;       /* no report but the verify verdicts (the embedding
                                library's default; not an option) */
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
    /* conventions of onnxsim, OnnxSlim and LLVM opt */
    const char **positional; /* arguments that are no option, in order (array owned) */
    size_t positional_count;
    int inspect;             /* --inspect: the summary table of each positional model */
    const char **passes;     /* --passes=a,b,c values (array owned; repeatable, joined in
                                order): exactly these, in this order, in optimize */
    size_t passes_count;
    const char **skips;      /* --skip=a,b values (array owned): pass_off of both stages */
    size_t skip_count;
    const char **input_shapes; /* --input-shape NAME:1,3,224,224 values (array owned) */
    size_t input_shape_count;
    int no_fold;             /* --no-fold: constant_folding, fold_constant_inputs off */
    const char *target;      /* --target NAME|FILE: [adapt] target */
    int list_targets;        /* --list-targets */
    int strict_target;       /* --strict-target: a violation left is HOST_EXIT_TARGET */
    const char *check_target; /* --check-target PROFILE: check the model, change nothing */
    host_cut cut;            /* --inputs, --outputs (io/cut.h; arrays owned) */
    const char *trace_rule;  /* --trace-rule PASS[:RULE] (rule_trace.h), or NULL */
    const char *level;       /* --level / -O<n>: "none", "exact", "fp" or "approx" (static) */
    const char *level_option; /* the option that set it ("--level", "-O1"), or NULL */
    /* verification data and tolerances (into [verify]; each implies --verify
     * unless --verify-each or --bisect is given) */
    const char *verify_atol;   /* --verify-atol X */
    const char *verify_rtol;   /* --verify-rtol X */
    const char **verify_data;  /* --verify-data DIR values (array owned) */
    size_t verify_data_count;
    const char **verify_ranges; /* --verify-range NAME=LO:HI values (array owned) */
    size_t verify_range_count;
    const char *report_json; /* --report-json FILE */
    const char *report_html; /* --report-html FILE */
    /* streams: `-i -` and `-o -` */
    char *stream_dir;        /* owned: private temporary folder, removed by host_cli_free */
    char *stdin_model;       /* owned: stream_dir/stdin.onnx, the model read from stdin */
    char *stdout_model;      /* owned: stream_dir/stdout.onnx, copied to stdout at the end */
    char *stream_target;     /* owned: a device or FIFO output written like stdout_model (NULL: stdout) */
    int keep_files;          /* the files above belong to another process (host_cli_keep_files) */
    host_supervise_opts supervise; /* --no-fork, --pass-timeout, --crash-out, ... */
} host_cli;

/* 0 or HOST_EXIT_USAGE with a one-line message (HOST_EXIT_CONFIG for a
 * bad --max-rewrites number).  Free with host_cli_free either way. */
int host_cli_parse(host_cli *cli, int argc, char **argv, ph_error *err);
void host_cli_free(host_cli *cli);
/* The files of -i - and -o - (stream_dir) belong to another process (the
 * supervisor of this worker): host_cli_free forgets them, leaves them. */
void host_cli_keep_files(host_cli *cli);

void host_cli_usage(FILE *out);
void host_cli_version(FILE *out);

/* What a file holds, judged by its first bytes (never by its name). */
typedef enum {
    HOST_FILE_MISSING = 0, /* cannot be opened */
    HOST_FILE_ONNX,        /* starts with ModelProto fields (ph_model_sniff, passhost/host.h) */
    HOST_FILE_TEXT,        /* printable text: an INI file */
    HOST_FILE_OTHER,       /* anything else (a damaged model, a folder, binary data) */
    HOST_FILE_EMPTY,       /* no byte at all (a model whose download failed) */
    HOST_FILE_LFS          /* a git-lfs pointer: text naming the model's real content */
} host_file_kind;
host_file_kind host_sniff_file(const char *path);

/* What the file at path is when it failed to load as a model, as a phrase
 * for the message ("a git-lfs pointer, not the model: run git lfs pull"),
 * or NULL when it looks like a model (its own error says more). */
const char *host_file_not_a_model(const char *path);

/* The stream the report goes to: stdout, or stderr when the model itself
 * goes to stdout (`-o -`).  Borrowed. */
FILE *host_cli_report_stream(const host_cli *cli);
/* The input and output names for messages and reports: "-" for a stream,
 * else the configured path.  Borrowed. */
const char *host_cli_input_name(const host_cli *cli, const host_config *cfg);
const char *host_cli_output_name(const host_cli *cli, const host_config *cfg);
/* `-o -`, or an output that is a device, a FIFO or passhost's own stdout
 * (io/output.h): copy the saved model into it, in place.  A supervisor
 * calls it once its worker ended with 0.  0 or HOST_EXIT_OUTPUT. */
int host_cli_stream_output(const host_cli *cli, ph_error *err);

/* The name of config_text in messages ("<config text>:3: ..."). */
#define HOST_CONFIG_TEXT_NAME "<config text>"

/* The run configuration: INI file (if any), INI text (if any), then each --set, then -i/-o and
 * --plugin-dir (and the positional models), then --passes, --skip, --no-fold
 * and --input-shape, then the custom_config files.  `-i -` reads stdin
 * here (into cli's temporary folder, hence cli is not const).  Without --list-passes
 * or --print-pipeline the input and output models must be known.  *out is owned by the caller
 * (host_config_free), NULL on error; returns 0 or a HOST_EXIT_* code. */
int host_cli_config(host_cli *cli, host_config **out, ph_error *err);

#endif
