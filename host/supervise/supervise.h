/* host/supervise/supervise.h - contained passes: the run's work happens in a forked
 * worker process that a small supervisor watches.
 *
 * host_supervise() is called once the command line, the config and the log
 * are set up, before any plugin is loaded.  It forks; the worker returns to
 * main() and runs the pipeline (plugins, model, stages, save, report) as a
 * run in one process would.  The supervisor waits for it.  Both share one
 * page of memory (mmap MAP_SHARED|MAP_ANONYMOUS, made before the fork) in
 * which the worker publishes where it is: the plugin file being loaded or
 * unloaded (its constructors or destructors running) and since when, the
 * stage, the fixpoint round, the pass being called and since when, the
 * rewrites of the run completed so far (the ph_ctx rewrite count, through
 * the context's count hook, which costs passes nothing) and of the current
 * call, the staging folder of its output, and, just before it exits,
 * "finished with code N".
 *
 * The worker is a process group of its own, and the supervisor is the
 * subreaper of its descendants: when the worker ends, whatever ended it,
 * every process the passes started is ended too (SIGKILL), before the
 * output is committed; a run that otherwise succeeded says how many there
 * were in a WARNING.  In the worker, descriptor 1 points at standard error
 * before any plugin is loaded (base/streams.h), so nothing a plugin prints
 * reaches a model or report written to stdout.
 *
 * The output: the worker writes it into a staging folder beside the output
 * (ph_staging_make: .NAME.tmp.PID.XXXXXX/, PID the supervisor's, published
 * before anything is written there) and checks it there (--verify).  The
 * supervisor alone commits it (ph_model_commit: one rename), and only when
 * the worker ended with code 0 and "finished", after its plugins were
 * unloaded and its process group ended: so no plugin code runs after the
 * commit, and the output exists exactly when the exit code is 0.  In any
 * other case the staging folder is removed.  (main() then streams a model
 * staged for -o - or a device output, cli.h.)
 *
 * When the worker dies from a signal, exceeds a time limit (pass_timeout_s
 * / --pass-timeout for one pass call, load_timeout_s for one plugin's load
 * or unload; the supervisor stops it with SIGSTOP, checks the call is still
 * the same, then SIGKILLs it), or ends without the "finished" record (a
 * plugin called exit() or _exit(), or a sanitizer ended it), the supervisor
 * prints one line naming the pass (or plugin), the signal or the time
 * limit, the stage, round and rewrite index, and exits with
 * HOST_EXIT_CRASH.  A pass that crashed may have tripped over a graph an
 * earlier pass broke: the supervisor first runs the passes again in a
 * silent worker that checks the graph after every pass call, and when
 * another pass leaves it broken, that pass is named first (the culprit).
 * With --crash-out DIR (or --bisect-out DIR) it writes a reproducer there:
 * input.onnx (a copy of the input), config.ini (the effective
 * configuration, host_write_effective_config) and README.txt with the
 * --max-rewrites value that stops the run just before the failing rewrite.
 * With --skip-failing-passes it runs a new worker without the culprit pass
 * instead (at most HOST_SUPERVISE_MAX_SKIPS times), after one WARNING line.
 *
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the supervisor are passed on to
 * the worker (a second one kills it); the supervisor then cleans up and dies
 * from the same signal, as it does when the worker dies from SIGPIPE.  A
 * signal that was ignored when passhost started stays ignored, by both.
 * The worker dies with the supervisor (PR_SET_PDEATHSIG).
 *
 * The runner tells where it is through the progress callbacks of
 * host_supervise_progress, which the pipeline (cli/job.c) hands to it only
 * in a supervised worker, so the runner and its tests know nothing of the
 * supervisor and work unchanged in one process (--no-fork, test programs).
 *
 * State: one process-wide pointer to the shared page, set in the worker
 * only, the supervisor's list of skipped passes (inherited by each new
 * worker), and in one process the staged output.  The host is a program,
 * so this is process state, not library state.
 */
#ifndef PASSHOST_HOST_SUPERVISE_H
#define PASSHOST_HOST_SUPERVISE_H

#include <stdint.h>
#include <stdio.h>

#include "passhost/host.h"
#include "passhost/passhost.h"
#include "run/runner.h"

struct host_config;
struct host_log;
struct host_plan;

#define HOST_SUPERVISE_MAX_SKIPS 3

/* The options of this module, kept in host_cli (cli.h). */
typedef struct host_supervise_opts {
    int no_fork;           /* --no-fork: everything in one process */
    int skip_failing;      /* --skip-failing-passes */
    double pass_timeout;   /* --pass-timeout SECONDS (< 0: not given; 0: off) */
    int pass_timeout_set;
    const char *crash_out; /* --crash-out DIR (borrowed from argv) */
    /* The rest of the command line, as the reproducer needs it (set by
     * host_cli_parse; borrowed from argv): */
    const char *bisect_out; /* --bisect-out DIR: the reproducer's folder without --crash-out */
    int verify_runs;        /* --verify[=N] (0: off): the runs config.ini names */
    int argc;               /* the command line, for the README */
    char **argv;
} host_supervise_opts;

/* Options: called by host_cli_parse for an argument it does not know.
 * argv[*i] is the argument; a separate value advances *i.  Returns -1 when
 * the argument is none of this module's options, 0 when taken, or an exit
 * code with a one-line message in err (HOST_EXIT_USAGE: missing value;
 * HOST_EXIT_CONFIG: a bad number of seconds). */
int host_supervise_option(host_supervise_opts *o, int argc, char **argv, int *i, ph_error *err);
/* The options' lines of --help. */
void host_supervise_usage(FILE *out);
/* The long name of the i-th option host_supervise_option takes ("--no-fork"),
 * NULL past the last (for "did you mean" messages). */
const char *host_supervise_option_name(size_t i);

/* Start the run.  Returns -1 in the process that is to run the pipeline
 * (the worker, or the only process with --no-fork); otherwise, in the
 * supervisor, the exit code of the whole run, every message already printed
 * (the worker's own error, or the supervisor's one line).  Also returns an
 * exit code, with its message printed, for options that cannot be combined
 * (HOST_EXIT_USAGE).  cfg->pass_timeout_s takes --pass-timeout's value.
 * Everything is borrowed. */
int host_supervise(const host_supervise_opts *opts, struct host_config *cfg, struct host_log *log);

/* Worker: drop the passes an earlier worker crashed in
 * (--skip-failing-passes) from every stage of plan. */
void host_supervise_plan(struct host_plan *plan);

/* Save m for output into a staging folder beside it (ph_staging_make,
 * host_model_save_staged); *staged gets the model file's path there
 * (valid until the commit or discard), for --verify's check of the written
 * file.  0 or HOST_EXIT_OUTPUT with a message naming output. */
int host_supervise_stage(ph_model *m, const char *output, const char **staged, double *ms, ph_error *err);
/* Put the staged output in place (ph_model_commit: one rename).  In one
 * process (--no-fork, the embedding library) now; in a supervised worker
 * nothing: its supervisor commits once the worker has ended with code 0.
 * 0 or HOST_EXIT_OUTPUT. */
int host_supervise_commit(const char *output, ph_error *err);
/* Drop the staged output (a check of it failed). */
void host_supervise_discard(void);

/* Worker: 1 when this worker is the supervisor's silent re-run that finds
 * the pass after which the graph first fails the structural check: the
 * runner checks after every call (host_run_opts.check_every_call), no
 * dump, report or output is written. */
int host_supervise_blame_mode(void);
/* 1 in a supervised worker, 0 in the supervisor or in one process. */
int host_supervise_in_worker(void);

/* Worker: the run reached its end and exits with code; call last.  Also
 * for a signal handler that ends the worker with a code of its own (it is
 * async-signal-safe: two stores into the shared page). */
void host_supervise_finished(int code);

/* Worker: what the runner is to tell (host_run_opts.progress), published
 * in the page the supervisor reads; NULL when this process is no
 * supervised worker (--no-fork, test programs). */
const host_run_progress *host_supervise_progress(void);

#endif
