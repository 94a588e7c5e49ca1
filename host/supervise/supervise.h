/* host/supervise/supervise.h - contained passes: the run's work happens in a forked
 * worker process that a small supervisor watches.
 *
 * host_supervise() is called once the command line, the config and the log
 * are set up, before any plugin is loaded.  It forks; the worker returns to
 * main() and runs the pipeline (plugins, model, stages, save, report) as a
 * run in one process would.  The supervisor waits for it.  Both share one
 * page of memory (mmap MAP_SHARED|MAP_ANONYMOUS, made before the fork) in
 * which the worker publishes where it is: the stage, the fixpoint round, the
 * pass being called and since when, the rewrites of the run completed so far
 * (the ph_ctx rewrite count, through the context's count hook, which costs
 * passes nothing) and of the current call, the folder its output is staged
 * in, and, just before it exits, "finished with code N".
 *
 * The worker's output is written into a private folder beside the output
 * (DIR/.NAME.tmp.XXXXXX/, made with mkdtemp and published before anything is
 * written there), then renamed into place, every file of it (external data
 * first, the model last).  Whatever ends the worker, the supervisor removes
 * that folder afterwards, so a killed save leaves nothing behind.
 *
 * When the worker dies from a signal, exceeds the per-call time limit
 * (pass_timeout_s / --pass-timeout; the supervisor stops it with SIGSTOP,
 * checks the call is still the same, then SIGKILLs it), or ends without the
 * "finished" record (a plugin called exit() or _exit(), or a sanitizer ended
 * it), the supervisor prints one line naming the pass, the signal or the
 * time limit, the stage, round and rewrite index, removes the staged output
 * (and the output itself if the worker had already renamed it), and exits
 * with HOST_EXIT_CRASH.  With --crash-out DIR (or --bisect-out DIR) it first
 * writes a reproducer there: input.onnx (a copy of the input), config.ini
 * (the effective configuration, host_write_effective_config) and README.txt
 * with the --max-rewrites value that stops the run just before the failing
 * rewrite.  With --skip-failing-passes it runs a new worker without the
 * culprit pass instead (at most HOST_SUPERVISE_MAX_SKIPS times), after one
 * WARNING line.
 *
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the supervisor are passed on to
 * the worker (a second one kills it); the supervisor then cleans up and dies
 * from the same signal, as it does when the worker dies from SIGPIPE.  The
 * worker dies with the supervisor (PR_SET_PDEATHSIG).
 *
 * The runner tells where it is through the progress callbacks of
 * host_supervise_progress, which the pipeline (cli/job.c) hands to it only
 * in a supervised worker, so the runner and its tests know nothing of the
 * supervisor and work unchanged in one process (--no-fork, test programs).
 *
 * State: one process-wide pointer to the shared page, set in the worker
 * only, and the supervisor's list of skipped passes (inherited by each new
 * worker).  The host is a program, so this is process state, not library
 * state.
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

/* Worker: save m to output (host_model_save), staged in a private folder the
 * supervisor knows, then renamed into place; without a supervisor, or when
 * no folder can be made beside output, straight to output.  0 or
 * HOST_EXIT_OUTPUT with a message naming output. */
int host_supervise_save(ph_model *m, const char *output, double *ms, ph_error *err);

/* Worker: the run reached its end and exits with code; call last.  Also
 * for a signal handler that ends the worker with a code of its own (it is
 * async-signal-safe: two stores into the shared page). */
void host_supervise_finished(int code);

/* Worker: what the runner is to tell (host_run_opts.progress), published
 * in the page the supervisor reads; NULL when this process is no
 * supervised worker (--no-fork, test programs). */
const host_run_progress *host_supervise_progress(void);

#endif
