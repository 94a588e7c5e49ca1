/* passhost/pipeline.h - the passhost program as a C function: what
 * `passhost CONFIG.ini` or `passhost IN.onnx OUT.onnx --passes=...` does,
 * called from another program, with the model by path or as bytes in
 * memory.  Library: libpasshost-pipeline.so (pkg-config: passhost, plus
 * -lpasshost-pipeline); docs/embedding.md is the guide.
 *
 *     ph_pipeline *p = ph_pipeline_new();
 *     ph_pipeline_passes(p, "eliminate_identity,fuse_conv_bn");
 *     ph_pipeline_input_shape(p, "input:1,3,224,224");
 *     void *out; size_t out_size;
 *     int rc = ph_pipeline_run(p, NULL, bytes, size, NULL, &out, &out_size);
 *     if (rc) fprintf(stderr, "passhost: %s\n", ph_pipeline_error(p));
 *     else { use(out, out_size); ph_pipeline_free_buffer(out); }
 *     ph_pipeline_free(p);
 *
 * The same pipeline as the program.  The passhost program calls the very
 * function ph_pipeline_run runs (host_job_run in the host's source): the
 * options are the program's command-line options, parsed by the program's
 * parser, so a run here and `passhost IN OUT OPTIONS` write the same bytes
 * and fail with the same exit code (PH_PIPELINE_* below, the program's exit
 * codes) and message.
 *
 * Why a library of its own.  The host (config, plugin loader, stage runner,
 * reports) is not part of libpasshost, the plugin SDK: passes link the SDK
 * and must not see the host, and the SDK keeps no global state, while the
 * host keeps a little process state (the save settings of the run, the
 * list of temporary files).  libpasshost-pipeline.so is the host's objects
 * (everything of the program but main()) linked against libpasshost.so,
 * exporting only the ph_pipeline_* functions of this header.
 *
 * What differs from the program, because a library lives in someone
 * else's process:
 *   - quiet: nothing is printed.  What the program would print on stderr
 *     (warnings, the `passhost: <message>` line of a failure, and with
 *     ph_pipeline_full_report the report it prints on stdout) is kept as
 *     text: ph_pipeline_log.  The error's one line: ph_pipeline_error.
 *   - no fork supervisor and no signal handlers: a pass runs in the
 *     caller's process, so a pass that crashes (or calls exit()) takes the
 *     caller down; pass_timeout_s is not enforced.  For untrusted passes or
 *     models run the passhost program instead (exit code 9 contains them).
 *   - out of memory in the host aborts the process (host/base/util.h), as in the
 *     program; the SDK itself returns PH_ENOMEM.
 *   - one run at a time: ph_pipeline_run holds a process-wide lock for its
 *     duration, so runs from several threads take turns (the host's
 *     process state, above).  Each ph_pipeline object is for one thread at
 *     a time.
 *   - plugins are searched as the program searches them: plugin_dir,
 *     PASSHOST_PLUGIN_PATH, then <libdir>/../plugins (a build tree) and
 *     <libdir>/../lib/passhost/plugins (an install), with <libdir> the
 *     folder of libpasshost-pipeline.so.
 *
 * Errors.  Every function that can fail returns 0 or a PH_PIPELINE_* code
 * and keeps a one-line message for ph_pipeline_error.  An option that is
 * refused leaves the object as it was.  Ownership is stated on each
 * function: strings passed in are copied unless said otherwise; strings
 * returned are borrowed from the object.
 */
#ifndef PASSHOST_PIPELINE_H
#define PASSHOST_PIPELINE_H

#include <stddef.h>

#if defined(__GNUC__)
#define PH_PIPELINE_API __attribute__((visibility("default")))
#else
#define PH_PIPELINE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The exit codes of the passhost program (docs/config.md "Exit codes"),
 * returned by every function here. */
enum ph_pipeline_code {
    PH_PIPELINE_OK = 0,
    PH_PIPELINE_USAGE = 1,    /* bad arguments or options */
    PH_PIPELINE_CONFIG = 2,   /* INI syntax, key, value, pass name, pass parameter, input shape */
    PH_PIPELINE_MODEL = 3,    /* the input model cannot be loaded */
    PH_PIPELINE_PLUGIN = 4,   /* a pass plugin cannot be loaded */
    PH_PIPELINE_PASS = 5,     /* a pass failed or broke the graph */
    PH_PIPELINE_OUTPUT = 6,   /* the output model cannot be written */
    PH_PIPELINE_MISMATCH = 7, /* --verify: the rewritten model computes other outputs */
    PH_PIPELINE_NOVERIFY = 8, /* --verify cannot run: the evaluator lacks an op or dtype */
    PH_PIPELINE_CRASH = 9     /* (the program only: a contained crash) */
};

/* The options of runs.  One object may run any number of times. */
typedef struct ph_pipeline ph_pipeline;

/* A new object with no options: a run is then `passhost IN OUT` (the
 * default stages).  Caller frees with ph_pipeline_free; NULL when out of
 * memory. */
PH_PIPELINE_API ph_pipeline *ph_pipeline_new(void);
/* Free p and everything it holds (NULL allowed). */
PH_PIPELINE_API void ph_pipeline_free(ph_pipeline *p);

/* ------------------------------------------------------------ options */

/* The INI file (`passhost CONFIG.ini`), read at each run; NULL: none.
 * Relative paths in it are relative to its folder. */
PH_PIPELINE_API int ph_pipeline_config_file(ph_pipeline *p, const char *path);
/* INI text, read at each run after the file (its keys replace the file's);
 * NULL: none.  Relative paths in it are relative to the working folder;
 * messages name it "<config text>:LINE".  Syntax errors show at the run. */
PH_PIPELINE_API int ph_pipeline_config_text(ph_pipeline *p, const char *text);

/* `--set SECTION.KEY=VALUE` (repeatable), checked now: PH_PIPELINE_USAGE
 * when not of that form, PH_PIPELINE_CONFIG for an unknown section or key
 * or a bad value.  Pass parameters (pass.NAME.PARAM=V) are checked against
 * the pass at the run. */
PH_PIPELINE_API int ph_pipeline_set(ph_pipeline *p, const char *assignment);
/* `--passes=A,B,...`: the optimize stage runs exactly these, in this order.
 * Unknown names fail the run with PH_PIPELINE_CONFIG. */
PH_PIPELINE_API int ph_pipeline_passes(ph_pipeline *p, const char *names);
/* `--skip=A,B,...` (repeatable): these passes off in both stages. */
PH_PIPELINE_API int ph_pipeline_skip(ph_pipeline *p, const char *names);
/* `--input-shape NAME:1,3,224,224` (repeatable; DIMS alone for a model with
 * one input).  PH_PIPELINE_CONFIG when spec is not of that form. */
PH_PIPELINE_API int ph_pipeline_input_shape(ph_pipeline *p, const char *spec);
/* `--verify[=N]`: judge the outputs of the rewritten model against the
 * original's on runs (1..1000) seeded random input sets, or on [verify] runs
 * (default 3) when runs is 0: each within its error budget against a
 * float64 evaluation of the original (docs/verify.md). */
PH_PIPELINE_API int ph_pipeline_verify(ph_pipeline *p, int runs);
/* `--plugin-dir DIR`: search DIR for passes first. */
PH_PIPELINE_API int ph_pipeline_plugin_dir(ph_pipeline *p, const char *dir);
/* Any other option of the program that makes sense in a library, as one
 * word: "--no-fold", "--verify-each", "--verify-data=DIR", "--verify-range=NAME=LO:HI",
 * "--verify-atol=X", "--verify-rtol=X", "--shapes", "--max-rewrites=N",
 * "--dump-dir=DIR", "--report-json=FILE", "--report-html=FILE", and the
 * ones above ("--set=S.K=V", "--passes=...", "--skip=...", "--level=...",
 * "--input-shape=...", "--verify[=N]", "--plugin-dir=DIR").  Options
 * about where the model comes from and goes (-i, -o, positional files),
 * about the process (-q, --no-fork, --pass-timeout, --crash-out,
 * --skip-failing-passes, --print-changes) and other modes (--help,
 * --inspect, --list-passes, --bisect) are refused with PH_PIPELINE_USAGE. */
PH_PIPELINE_API int ph_pipeline_option(ph_pipeline *p, const char *option);
/* on != 0: the log of each run also gets the text report the program prints
 * with -v (per-pass tables, times, summary line).  Default: off (warnings
 * and verify verdicts only). */
PH_PIPELINE_API void ph_pipeline_full_report(ph_pipeline *p, int on);

/* ----------------------------------------------------------------- run */

/* Run the pipeline once.  The input is the file input_path, or the
 * input_size bytes at input_data (borrowed for the call: copied, never
 * changed), or, when both are NULL, [model] input of the config.  The
 * output goes to the file output_path, or into a new buffer (*output_data,
 * *output_size; the caller frees it with ph_pipeline_free_buffer), or,
 * when both are NULL, to [model] output of the config.  Giving both forms
 * of one side is PH_PIPELINE_USAGE.
 *
 * As the program: the input is never modified, a failed run leaves no
 * output file (nor buffer: *output_data is NULL), and the output may not
 * be the input.  A buffer holds the model whole: one that needs an
 * external-data file ([model] external_data_threshold) fails with
 * PH_PIPELINE_OUTPUT; write it to a path instead.
 *
 * Returns 0 or the program's exit code; ph_pipeline_error has the message
 * and ph_pipeline_log everything the run would have printed. */
PH_PIPELINE_API int ph_pipeline_run(ph_pipeline *p, const char *input_path, const void *input_data,
                                    size_t input_size, const char *output_path, void **output_data,
                                    size_t *output_size);

/* Free a buffer of ph_pipeline_run (NULL allowed). */
PH_PIPELINE_API void ph_pipeline_free_buffer(void *data);

/* The one-line message of the last failed call on p ("" after a success),
 * as the program prints it after "passhost: ".  Borrowed: valid until the
 * next call on p. */
PH_PIPELINE_API const char *ph_pipeline_error(const ph_pipeline *p);
/* What the last run printed: warnings, info (with full report), the report
 * and the error line, each ending in a newline ("" when nothing).
 * Borrowed: valid until the next run or ph_pipeline_free. */
PH_PIPELINE_API const char *ph_pipeline_log(const ph_pipeline *p);

/* The version of the passhost program this library is ("0.1.0"); static. */
PH_PIPELINE_API const char *ph_pipeline_version(void);

#ifdef __cplusplus
}
#endif
#endif
