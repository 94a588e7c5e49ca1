/* host/supervise/supervise.c - contained passes: a supervisor process and its worker
 * (supervise.h). */
#include "supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "check/repro.h"
#include "base/exit.h"
#include "config/loader.h"
#include "io/cleanup.h"
#include "io/model_io.h"
#include "config/plan.h"
#include "base/streams.h"
#include "log/log.h"
#include "base/util.h"

/* ------------------------------------------------------- the shared page */

enum { WHERE_START = 0, WHERE_STAGES, WHERE_AFTER, WHERE_SAVE, WHERE_LOAD, WHERE_UNLOAD, WHERE_END };

/* The files of the input a commit must never remove (their identities). */
#define MAX_INPUT_FILES 64

/* Written by the worker, read by the supervisor: while the worker runs
 * (only call_seq, in_pass and call_start_ns, to time a call) or once it is
 * stopped or dead (everything). */
typedef struct shared_page {
    _Atomic int where;            /* WHERE_* */
    _Atomic int stage;            /* HOST_STAGE_* of the current or last stage, -1: none */
    _Atomic int round;            /* fixpoint round of the current or last call; 0: run-once */
    _Atomic int in_pass;          /* a pass's run() is executing */
    _Atomic uint64_t call_seq;    /* pass calls begun */
    _Atomic int64_t call_start_ns; /* CLOCK_MONOTONIC when the current call began */
    _Atomic uint64_t rewrites;    /* rewrites of the run completed (the ph_ctx count) */
    _Atomic uint64_t call_rewrites; /* of them, in the current call */
    char pass[128];               /* the pass being (or last) called */
    _Atomic int in_plugin;        /* a plugin is being loaded or unloaded (where: LOAD, UNLOAD) ... */
    _Atomic uint64_t plugin_seq;  /* ... the how-many-th, since ... */
    _Atomic int64_t plugin_start_ns;
    char plugin[PATH_MAX];        /* ... this file */
    _Atomic int staged;           /* staging holds the worker's staging folder */
    char staging[PATH_MAX];
    _Atomic int ready;            /* staged_model is complete: commit it if the worker ends with 0 */
    char staged_model[PATH_MAX];
    _Atomic int n_input_files;    /* the input's files (ph_model_files), never removed by the commit */
    uint64_t input_dev[MAX_INPUT_FILES], input_ino[MAX_INPUT_FILES];
    _Atomic int blame;            /* set by the supervisor: this worker re-runs the passes to find ... */
    char blamed[128];             /* ... the pass after which the graph first fails the check ... */
    char blame_message[512];      /* ... and what the check said */
    _Atomic int finished;         /* the run reached its end ... */
    _Atomic int finish_code;      /* ... and exits with this code */
    _Atomic int exit_called;      /* exit() ran (on_exit) ... */
    _Atomic int exit_status;      /* ... with this status */
    _Atomic int fatal_signal;     /* a fatal signal reached the worker's handler ... */
    _Atomic int64_t fatal_ns;     /* ... at this time (CLOCK_MONOTONIC) */
    _Atomic int sanitizer;        /* a sanitizer ended the worker (its death callback) */
    char message[512];            /* the reproducer process's error */
} shared_page;

/* The worker's page (NULL in the supervisor and without one). */
static shared_page *g_page;
/* The supervisor's list of passes to leave out, inherited by each worker. */
static char g_skip[HOST_SUPERVISE_MAX_SKIPS][128];
static int g_nskip;
/* A worker that got a fatal signal may take this long to die (a sanitizer
 * symbolizing its report) before the time limit applies again. */
static const int64_t fatal_grace_ns = 30 * (int64_t)1000000000;
/* In one process (--no-fork, the embedding library): the staged output. */
static char g_staging[PATH_MAX], g_staged[PATH_MAX];
static const ph_model *g_staged_model;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void copy_text(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* ------------------------------------------------------------- options */

/* Seconds: a number >= 0 (0: no limit). */
static int parse_seconds(const char *opt, const char *value, double *out, ph_error *err)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(value, &end);
    if (!*value || errno || *end || !(d >= 0) || d > 1e9)
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: '%.100s' is not a number of seconds >= 0",
                            opt, value);
    *out = d;
    return 0;
}

static const char *const flags[] = {"--no-fork", "--skip-failing-passes"};
static const char *const valued[] = {"--pass-timeout", "--crash-out"};

const char *host_supervise_option_name(size_t i)
{
    return i < 2 ? flags[i] : i < 4 ? valued[i - 2] : NULL;
}

int host_supervise_option(host_supervise_opts *o, int argc, char **argv, int *i, ph_error *err)
{
    const char *arg = argv[*i];
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(flags[k]);
        if (strncmp(arg, flags[k], n) != 0 || (arg[n] && arg[n] != '='))
            continue;
        if (arg[n] == '=')
            return ph_error_set(err, HOST_EXIT_USAGE, "%s takes no value", flags[k]);
        if (k == 0)
            o->no_fork = 1;
        else
            o->skip_failing = 1;
        return 0;
    }
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(valued[k]);
        if (strncmp(arg, valued[k], n) != 0 || (arg[n] && arg[n] != '='))
            continue;
        const char *value = arg[n] == '=' ? arg + n + 1 : NULL;
        if (!value) {
            if (*i + 1 >= argc)
                return ph_error_set(err, HOST_EXIT_USAGE, "%s needs a value; see passhost --help",
                                    valued[k]);
            value = argv[++*i];
        }
        if (k == 0) {
            o->pass_timeout_set = 1;
            return parse_seconds(valued[k], value, &o->pass_timeout, err);
        }
        if (!*value)
            return ph_error_set(err, HOST_EXIT_USAGE, "%s: empty value", valued[k]);
        o->crash_out = value;
        return 0;
    }
    return -1;
}

void host_supervise_usage(FILE *out)
{
    fputs("  --pass-timeout SECONDS   stop a pass call that runs longer (overrides [model]\n"
          "                           pass_timeout_s; 0: no limit, the default)\n"
          "  --crash-out DIR          when a pass crashes, times out or calls exit(), write a\n"
          "                           reproducer into DIR: input.onnx, config.ini, README.txt\n"
          "                           (--bisect-out DIR does the same)\n"
          "  --skip-failing-passes    after such a failure, run again without that pass\n"
          "                           (with a WARNING; at most 3 passes)\n"
          "  --no-fork                run in one process (for debuggers): a crashing pass\n"
          "                           then ends passhost itself; no time limit\n",
          out);
}

/* ------------------------------------------------------ worker progress */

/* What the runner tells (host_run_progress), published in the shared page. */
static void progress_stage(void *user, int stage)
{
    shared_page *p = user;
    atomic_store(&p->stage, stage);
    atomic_store(&p->where, WHERE_STAGES);
}

static void progress_after_stages(void *user)
{
    shared_page *p = user;
    atomic_store(&p->where, WHERE_AFTER);
}

static void progress_pass_begin(void *user, int stage, int round, const char *pass, uint64_t rewrites)
{
    shared_page *p = user;
    atomic_store(&p->in_pass, 0);
    copy_text(p->pass, sizeof p->pass, pass);
    atomic_store(&p->where, WHERE_STAGES);
    atomic_store(&p->stage, stage);
    atomic_store(&p->round, round);
    atomic_store(&p->rewrites, rewrites);
    atomic_store(&p->call_rewrites, 0);
    atomic_store(&p->call_start_ns, now_ns());
    atomic_fetch_add(&p->call_seq, 1);
    atomic_store(&p->in_pass, 1);
}

static void progress_pass_end(void *user, uint64_t rewrites)
{
    shared_page *p = user;
    atomic_store(&p->in_pass, 0);
    atomic_store(&p->rewrites, rewrites);
}

static void progress_rewrite(void *user, uint64_t index, uint64_t pass_index)
{
    shared_page *p = user;
    atomic_store(&p->rewrites, index);
    atomic_store(&p->call_rewrites, pass_index);
}

/* The blame worker's re-run found the pass that broke the graph. */
static void progress_blamed(void *user, const char *pass, const char *message)
{
    shared_page *p = user;
    copy_text(p->blame_message, sizeof p->blame_message, message);
    copy_text(p->blamed, sizeof p->blamed, pass);
}

static host_run_progress g_progress = {
    .stage = progress_stage,
    .pass_begin = progress_pass_begin,
    .pass_end = progress_pass_end,
    .rewrite = progress_rewrite,
    .after_stages = progress_after_stages,
    .blamed = progress_blamed,
};

const host_run_progress *host_supervise_progress(void)
{
    if (!g_page)
        return NULL;
    g_progress.user = g_page;
    return &g_progress;
}

/* The loader's hook (host_loader_set_phase_hook): a plugin file is about
 * to be dlopen'ed (loading 1) or dlclose'd (0); path NULL: that is over. */
static void plugin_phase(const char *path, int loading)
{
    shared_page *p = g_page;
    if (!p)
        return;
    if (!path) {
        atomic_store(&p->in_plugin, 0);
        return;
    }
    atomic_store(&p->in_plugin, 0);
    copy_text(p->plugin, sizeof p->plugin, path);
    atomic_store(&p->where, loading ? WHERE_LOAD : WHERE_UNLOAD);
    atomic_store(&p->plugin_start_ns, now_ns());
    atomic_fetch_add(&p->plugin_seq, 1);
    atomic_store(&p->in_plugin, 1);
}

int host_supervise_blame_mode(void) { return g_page && atomic_load(&g_page->blame); }

int host_supervise_in_worker(void) { return g_page != NULL; }


void host_supervise_finished(int code)
{
    if (!g_page)
        return;
    atomic_store(&g_page->finish_code, code);
    atomic_store(&g_page->finished, 1);
    atomic_store(&g_page->where, WHERE_END);
}

void host_supervise_plan(host_plan *plan)
{
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        host_stage_plan *sp = &plan->stage[s];
        size_t kept = 0;
        for (size_t i = 0; i < sp->count; i++) {
            int skip = 0;
            for (int k = 0; k < g_nskip && !skip; k++)
                skip = strcmp(sp->steps[i].plugin->desc->name, g_skip[k]) == 0;
            if (skip && sp->steps[i].params)
                ph_params_free(sp->steps[i].params);
            else
                sp->steps[kept++] = sp->steps[i];
        }
        sp->count = kept;
    }
}

/* ---------------------------------------------------- the staged output */

/* Replace the first occurrence of from in msg (of capacity size) by to. */
static void replace_text(char *msg, size_t size, const char *from, const char *to)
{
    char *at = strstr(msg, from);
    if (!at)
        return;
    char tail[sizeof ((ph_error *)0)->message];
    copy_text(tail, sizeof tail, at + strlen(from));
    *at = 0;
    size_t len = strlen(msg);
    snprintf(msg + len, size - len, "%s%s", to, tail);
}

/* The commit's keep: a file of the input (by identity) is never removed. */
static int input_file(void *user, const char *path)
{
    const shared_page *p = user;
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    int n = atomic_load(&p->n_input_files);
    if (n > MAX_INPUT_FILES)
        return 1; /* too many to know them all: keep everything */
    for (int i = 0; i < n; i++)
        if (p->input_dev[i] == (uint64_t)st.st_dev && p->input_ino[i] == (uint64_t)st.st_ino)
            return 1;
    return 0;
}

static int model_reads(void *user, const char *path) { return ph_model_reads_file(user, path); }

/* The message of a failed commit, as exit code 6. */
static int commit_failed(const ph_error *e, const char *output, ph_error *err)
{
    if (e->message[0] && strstr(e->message, output))
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%.500s", e->message);
    return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %.400s", output, e->message[0] ? e->message : "cannot write output");
}

int host_supervise_stage(ph_model *m, const char *output, const char **staged, double *ms, ph_error *err)
{
    shared_page *p = g_page;
    char folder[PATH_MAX];
    ph_error e = {0};
    *staged = NULL;
    if (p)
        atomic_store(&p->where, WHERE_SAVE);
    /* the staging folder carries the pid of the process that commits it: the supervisor's */
    int rc = ph_staging_make(output, p ? (long)getppid() : 0, folder, sizeof folder, &e);
    if (rc) {
        if (p)
            atomic_store(&p->where, WHERE_AFTER);
        return commit_failed(&e, output, err);
    }
    if (p) { /* published before anything is written there: the supervisor removes it */
        copy_text(p->staging, sizeof p->staging, folder);
        atomic_store(&p->staged, 1);
    } else {
        copy_text(g_staging, sizeof g_staging, folder);
        host_cleanup_temp_file(NULL, folder, 1); /* a signal removes it */
    }
    char *target = realpath(output, NULL); /* an output that is a link: its file's name */
    const char *name = strrchr(target ? target : output, '/');
    name = name ? name + 1 : target ? target : output;
    char *model = host_xasprintf("%s/%s", folder, name);
    rc = host_model_save_staged(m, folder, name, ms, err);
    if (rc) {
        replace_text(err->message, sizeof err->message, name, output);
        host_supervise_discard();
    } else if (p) {
        copy_text(p->staged_model, sizeof p->staged_model, model);
        uint64_t dev[MAX_INPUT_FILES], ino[MAX_INPUT_FILES];
        size_t n = ph_model_files(m, dev, ino, MAX_INPUT_FILES);
        memcpy(p->input_dev, dev, sizeof dev);
        memcpy(p->input_ino, ino, sizeof ino);
        atomic_store(&p->n_input_files, (int)(n > MAX_INPUT_FILES ? MAX_INPUT_FILES + 1 : n));
        atomic_store(&p->ready, 1);
        *staged = p->staged_model;
    } else {
        copy_text(g_staged, sizeof g_staged, model);
        g_staged_model = m;
        *staged = g_staged;
    }
    free(model);
    free(target);
    if (p)
        atomic_store(&p->where, WHERE_AFTER);
    return rc;
}

int host_supervise_commit(const char *output, ph_error *err)
{
    if (g_page || !g_staged[0]) /* a worker's output is committed by its supervisor */
        return 0;
    ph_error e = {0};
    int rc = ph_model_commit(g_staged, output, model_reads, (void *)g_staged_model, &e);
    host_supervise_discard();
    return rc ? commit_failed(&e, output, err) : 0;
}

void host_supervise_discard(void)
{
    shared_page *p = g_page;
    if (p && atomic_load(&p->staged)) {
        atomic_store(&p->ready, 0);
        ph_staging_remove(p->staging);
        atomic_store(&p->staged, 0);
    }
    if (g_staging[0]) {
        ph_staging_remove(g_staging);
        host_cleanup_temp_file(NULL, g_staging, 0);
    }
    g_staging[0] = g_staged[0] = 0;
    g_staged_model = NULL;
}

/* ---------------------------------------------------------- the worker */

/* Signals the supervisor passes on to the worker (and then dies from). */
static const int passed_on[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
/* Signals whose arrival the worker records before dying, so the name is
 * known even when a sanitizer's handler ends the process with an exit
 * code instead. */
static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
static struct sigaction g_prev[NSIG];

static void on_fatal_signal(int sig, siginfo_t *info, void *uctx)
{
    if (g_page) {
        atomic_store(&g_page->fatal_ns, now_ns()); /* clock_gettime: async-signal-safe */
        atomic_store(&g_page->fatal_signal, sig);
    }
    const struct sigaction *prev = &g_prev[sig];
    if (prev->sa_flags & SA_SIGINFO) {
        if (prev->sa_sigaction)
            prev->sa_sigaction(sig, info, uctx); /* e.g. AddressSanitizer's report */
    } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
    }
    signal(sig, SIG_DFL);
    raise(sig); /* blocked here: delivered on return, with the default action */
}

static void on_sanitizer_death(void)
{
    if (g_page)
        atomic_store(&g_page->sanitizer, 1);
}

static void on_exit_record(int status, void *arg)
{
    (void)arg;
    if (!g_page)
        return;
    atomic_store(&g_page->exit_status, status);
    atomic_store(&g_page->exit_called, 1);
}

/* In sanitized builds: the runtime's hook, called before it ends the process. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void worker_setup(shared_page *page, pid_t supervisor, const sigset_t *mask)
{
    g_page = page;
    setpgid(0, 0); /* its own process group: whatever the passes start is ended with it */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != supervisor) /* it died before the line above */
        _exit(HOST_EXIT_CRASH);
    sigprocmask(SIG_SETMASK, mask, NULL);
    host_streams_protect_stdout(); /* before any plugin is loaded */
    host_loader_set_phase_hook(plugin_phase);
    if (atomic_load(&page->blame)) { /* a re-run to find the culprit: silent */
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
    static char altstack[1 << 18];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {.sa_sigaction = on_fatal_signal, .sa_flags = SA_SIGINFO | SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaction(fatal[i], &sa, &g_prev[fatal[i]]);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(on_sanitizer_death);
    on_exit(on_exit_record, NULL);
}

/* ---------------------------------------------------------- supervisor */

typedef struct supervisor {
    const host_supervise_opts *opts;
    host_config *cfg;
    host_log *log;
    shared_page *page;
    sigset_t waited;     /* SIGCHLD and passed_on, blocked */
    sigset_t old_mask;   /* the mask before, restored in children */
    int64_t limit_ns;    /* per pass call; 0: none */
    int64_t load_limit_ns; /* per plugin load or unload; 0: none */
    const char *repro_dir; /* --crash-out or --bisect-out, NULL: none */
    int repro_written;
} supervisor;

/* How a worker ended. */
typedef struct outcome {
    int status;    /* waitpid status */
    int timed_out; /* the supervisor killed it at the time limit */
    int external;  /* a signal passed on from outside (0: none) */
} outcome;

/* The time the current limit ends: the pass call's, a plugin's load or
 * unload, or, once the worker got a fatal signal, the grace it has to die
 * of it; INT64_MAX: none. */
static int64_t deadline(const supervisor *s)
{
    const shared_page *p = s->page;
    if (atomic_load(&p->fatal_signal))
        return atomic_load(&p->fatal_ns) + fatal_grace_ns;
    if (atomic_load(&p->in_pass) && s->limit_ns > 0)
        return atomic_load(&p->call_start_ns) + s->limit_ns;
    if (atomic_load(&p->in_plugin) && s->load_limit_ns > 0)
        return atomic_load(&p->plugin_start_ns) + s->load_limit_ns;
    return INT64_MAX;
}

/* Kill the worker's whole process group (whatever the passes started
 * that stayed in it), then wait for the worker. */
static void kill_and_wait(pid_t pid, outcome *o)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &o->status, 0) < 0 && errno == EINTR)
        ;
}

/* At the time limit?  The worker is stopped, the call (or the plugin's
 * load) checked, then killed (1, *o filled) or continued (0).  -1: it died
 * meanwhile (*o filled). */
static int check_time(supervisor *s, pid_t pid, outcome *o)
{
    shared_page *p = s->page;
    uint64_t seq = atomic_load(&p->call_seq), pseq = atomic_load(&p->plugin_seq);
    int in_pass = atomic_load(&p->in_pass);
    if (now_ns() < deadline(s))
        return 0;
    if (atomic_load(&p->fatal_signal)) { /* dying too slowly: described by its signal */
        kill_and_wait(pid, o);
        return 1;
    }
    kill(pid, SIGSTOP);
    int st = 0;
    if (waitpid(pid, &st, WUNTRACED) == pid && !WIFSTOPPED(st)) {
        o->status = st;
        return -1;
    }
    int same = in_pass ? atomic_load(&p->in_pass) && atomic_load(&p->call_seq) == seq
                       : atomic_load(&p->in_plugin) && atomic_load(&p->plugin_seq) == pseq;
    if (same && !atomic_load(&p->fatal_signal) && now_ns() >= deadline(s)) {
        kill_and_wait(pid, o);
        o->timed_out = 1;
        return 1;
    }
    kill(pid, SIGCONT);
    return 0;
}

/* Wait for the worker to end, enforcing the time limits and passing on
 * signals. */
static void wait_worker(supervisor *s, pid_t pid, outcome *o)
{
    memset(o, 0, sizeof *o);
    for (;;) {
        if (waitpid(pid, &o->status, WNOHANG) == pid && !WIFSTOPPED(o->status) &&
            !WIFCONTINUED(o->status))
            return;
        struct timespec ts, *tsp = NULL;
        if ((s->limit_ns > 0 || s->load_limit_ns > 0 || atomic_load(&s->page->fatal_signal)) && !o->external) {
            int r = check_time(s, pid, o);
            if (r)
                return;
            int64_t end = deadline(s);
            /* nothing timed now: a call or load starting now ends no sooner than this */
            int64_t least = s->limit_ns > 0 && (s->load_limit_ns <= 0 || s->limit_ns < s->load_limit_ns)
                                ? s->limit_ns : s->load_limit_ns;
            int64_t wait = end == INT64_MAX ? least : end - now_ns();
            if (wait < 1000000)
                wait = 1000000;
            ts.tv_sec = (time_t)(wait / 1000000000);
            ts.tv_nsec = (long)(wait % 1000000000);
            tsp = &ts;
        }
        siginfo_t si;
        int sig = sigtimedwait(&s->waited, &si, tsp);
        if (sig > 0 && sig != SIGCHLD) { /* the second one is not asked twice */
            kill(pid, o->external ? SIGKILL : sig);
            if (!o->external)
                o->external = sig;
        }
    }
}

/* How many processes are in process group pgid (from /proc). */
static int group_size(pid_t pgid)
{
    DIR *d = opendir("/proc");
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%.40s/stat", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k <= 0)
            continue;
        buf[k] = 0;
        const char *rp = strrchr(buf, ')'); /* after "pid (comm)": state ppid pgrp */
        long pg = 0;
        if (rp && sscanf(rp + 1, " %*c %*d %ld", &pg) == 1 && pg == (long)pgid)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* The supervisor's children (descendants of an ended worker come back to
 * it, their subreaper): killed and reaped.  Returns how many there were. */
static int end_children(void)
{
    int ended = 0;
    for (int round = 0; round < 100; round++) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)getpid());
        FILE *f = fopen(path, "r");
        long child;
        int found = 0;
        while (f && fscanf(f, "%ld", &child) == 1) {
            kill((pid_t)child, SIGKILL);
            found++;
        }
        if (f)
            fclose(f);
        if (!found)
            break;
        ended += round == 0 ? found : 0;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return ended;
}

/* The worker has ended: end every process it left behind, in its process
 * group or not.  Returns how many were still running. */
static int end_descendants(pid_t pgid)
{
    int left = group_size(pgid);
    kill(-pgid, SIGKILL);
    int reparented = end_children();
    return left > reparented ? left : reparented;
}

static void remove_staged(supervisor *s)
{
    if (atomic_load(&s->page->staged))
        ph_staging_remove(s->page->staging);
    atomic_store(&s->page->staged, 0);
    atomic_store(&s->page->ready, 0);
}

/* "SIGSEGV (Segmentation fault)" */
static void signal_text(int sig, char *buf, size_t size)
{
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev)
        snprintf(buf, size, "SIG%s (%s)", abbrev, strsignal(sig));
    else
        snprintf(buf, size, "signal %d", sig);
}

static int is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT ||
           sig == SIGTRAP || sig == SIGSYS;
}

/* The one line: what ended the worker, in which pass, where. */
static void describe(const supervisor *s, const outcome *o, char *line, size_t size)
{
    const shared_page *p = s->page;
    int in_pass = atomic_load(&p->in_pass);
    char what[200], sig[80];
    int recorded = atomic_load(&p->fatal_signal);
    int in_plugin = atomic_load(&p->in_plugin);
    if (o->timed_out && in_plugin && !in_pass) {
        snprintf(what, sizeof what, "ran longer than the %g s time limit (load_timeout_s) and was "
                 "killed", (double)s->load_limit_ns / 1e9);
    } else if (o->timed_out) {
        snprintf(what, sizeof what, "ran longer than the %g s time limit (pass_timeout_s) and was "
                 "killed", (double)s->limit_ns / 1e9);
    } else if (recorded) { /* our handler saw it; a sanitizer's may have ended the process */
        signal_text(recorded, sig, sizeof sig);
        snprintf(what, sizeof what, "crashed with %s%s", sig,
                 atomic_load(&p->sanitizer) ? " (the sanitizer's report is above)" : "");
    } else if (WIFSIGNALED(o->status)) {
        int n = WTERMSIG(o->status);
        signal_text(n, sig, sizeof sig);
        snprintf(what, sizeof what, "%s %s", is_fault(n) ? "crashed with" : "was killed by", sig);
    } else if (atomic_load(&p->exit_called)) { /* before any leak check at exit */
        snprintf(what, sizeof what, "called exit(%d)", atomic_load(&p->exit_status));
    } else if (atomic_load(&p->sanitizer)) {
        snprintf(what, sizeof what, "was stopped by a sanitizer error (its report is above)");
    } else {
        snprintf(what, sizeof what, "ended the process with _exit(%d)", WEXITSTATUS(o->status));
    }
    int stage = atomic_load(&p->stage), round = atomic_load(&p->round);
    unsigned long long k = atomic_load(&p->rewrites), j = atomic_load(&p->call_rewrites);
    const char *sname = stage >= 0 ? host_stage_name(stage) : "?";
    char rounds[64];
    if (round > 0)
        snprintf(rounds, sizeof rounds, "round %d", round);
    else
        snprintf(rounds, sizeof rounds, "the run-once passes");
    if (in_pass) {
        snprintf(line, size, "pass %s %s in stage %s, %s, after rewrite %llu of the run (%llu of "
                 "this call)", p->pass, what, sname, rounds, k, j);
        return;
    }
    int where = atomic_load(&p->where);
    if (in_plugin && (where == WHERE_LOAD || where == WHERE_UNLOAD)) {
        snprintf(line, size, "plugin %.1500s %s while it was %s (%s)", p->plugin, what,
                 where == WHERE_LOAD ? "loaded" : "unloaded",
                 where == WHERE_LOAD ? "its constructors run in dlopen" : "its destructors run in dlclose");
        return;
    }
    switch (where) {
    case WHERE_START:
        snprintf(line, size, "the run %s before any pass ran (loading the passes or the model, "
                 "or computing reference outputs)", what);
        break;
    case WHERE_STAGES:
        snprintf(line, size, "the run %s in stage %s between pass calls (the last: %s, %s), "
                 "after rewrite %llu", what, sname, p->pass[0] ? p->pass : "none", rounds, k);
        break;
    case WHERE_SAVE:
        snprintf(line, size, "the run %s while writing the output, after %llu rewrites", what, k);
        break;
    case WHERE_END:
        snprintf(line, size, "the run %s as the worker process exited, after its passes were unloaded "
                 "(%llu rewrites)", what, k);
        break;
    default:
        snprintf(line, size, "the run %s after the passes (%llu rewrites)", what, k);
        break;
    }
}

/* ------------------------------------------------------- the reproducer */

static int write_readme(const supervisor *s, host_repro *r, const char *line, uint64_t k,
                        ph_error *err)
{
    FILE *f = host_repro_readme(r, err);
    if (!f)
        return HOST_EXIT_OUTPUT;
    unsigned long long kk = (unsigned long long)k;
    fprintf(f, "passhost: a pass failed and was contained\n\n  %s\n\n", line);
    fprintf(f, "Files\n"
               "  input.onnx  a copy of the input model (%s)\n"
               "  config.ini  the effective configuration of the run, every key; its input is\n"
               "              input.onnx and its output out.onnx, both in this folder\n", s->cfg->input);
    fprintf(f, "\nReproduce (from the same installation and environment: the plugin search also\n"
               "reads PASSHOST_PLUGIN_PATH and the folders next to the passhost binary)\n");
    char args[64], note[64];
    snprintf(note, sizeof note, "fails the same way (exit %d)", HOST_EXIT_CRASH);
    host_repro_command(r, NULL, "", note);
    snprintf(args, sizeof args, "--max-rewrites %llu", kk);
    host_repro_command(r, NULL, args, "stops just before the failing rewrite: writes out.onnx");
    host_repro_command(r, "gdb --args passhost", "--no-fork", "the failure in a debugger, in one process");
    fprintf(f, "\nThe state just before the failure is --max-rewrites %llu: the first %llu rewrites "
               "of the run.\n", kk, kk);
    host_repro_argv(r, s->opts->argc, s->opts->argv);
    return 0;
}

/* In a child of the supervisor: load the passes again for the plan, then
 * write the reproducer files. */
static int reproduce(const supervisor *s, const char *line, uint64_t k, ph_error *err)
{
    host_repro r;
    int rc = host_repro_open(&r, s->repro_dir, s->opts->crash_out ? "--crash-out" : "--bisect-out", err);
    if (!rc)
        rc = host_repro_copy(&r, s->cfg->input, "input.onnx", err);
    host_registry *reg = rc ? NULL : host_registry_new();
    host_plan plan = {0};
    if (!rc && !reg)
        rc = ph_error_set(err, HOST_EXIT_PLUGIN, "out of memory");
    if (!rc)
        rc = host_load_plugins(reg, s->cfg->plugin_dir, err);
    if (!rc)
        rc = host_plan_build(&plan, s->cfg, reg, err);
    if (!rc) {
        host_supervise_plan(&plan);
        char *input = host_xasprintf("%s/input.onnx", r.dir);
        host_config copy = *s->cfg;
        copy.input = realpath(input, NULL);
        host_verify_config vc = s->cfg->verify;
        if (s->opts->verify_runs > 0)
            vc.runs = s->opts->verify_runs;
        rc = host_repro_config(&r, copy.input ? &copy : s->cfg, &plan, &vc, err);
        free(copy.input);
        free(input);
    }
    if (!rc)
        rc = write_readme(s, &r, line, k, err);
    host_plan_free(&plan);
    host_registry_free(reg);
    return host_repro_close(&r, rc, err);
}

/* Write the reproducer in a child process (the passes are loaded there,
 * never in the supervisor).  Appends what happened to line. */
static void write_reproducer(supervisor *s, char *line, size_t size)
{
    uint64_t k = atomic_load(&s->page->rewrites);
    char first[1024];
    copy_text(first, sizeof first, line);
    s->page->message[0] = 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
        ph_error err = {0};
        int rc = reproduce(s, first, k, &err);
        if (rc)
            copy_text(s->page->message, sizeof s->page->message, err.message);
        fflush(NULL);
        _exit(rc);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    size_t len = strlen(line);
    if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        s->repro_written = 1;
        snprintf(line + len, size - len, "; reproducer in %s (--max-rewrites %llu)", s->repro_dir,
                 (unsigned long long)k);
    } else {
        snprintf(line + len, size - len, "; no reproducer: %s",
                 s->page->message[0] ? s->page->message : "the process writing it failed");
    }
}

/* Die from sig as the worker did (after a signal passed on from outside). */
static void die_from(int sig)
{
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* Fork a worker (blame: the silent re-run of blame_crash).  In the worker
 * returns 0; in the supervisor its pid, or -1 when fork failed. */
static pid_t start_worker(supervisor *s, int blame)
{
    memset(s->page, 0, sizeof *s->page);
    atomic_store(&s->page->stage, -1);
    atomic_store(&s->page->blame, blame);
    fflush(NULL);
    pid_t self = getpid(), pid = fork();
    if (pid == 0) {
        worker_setup(s->page, self, &s->old_mask);
        return 0;
    }
    if (pid > 0)
        setpgid(pid, pid); /* as the worker does itself: whichever runs first */
    return pid;
}

/* The worker ended with code 0: put its output in place (one rename). */
static int commit_output(supervisor *s)
{
    shared_page *p = s->page;
    if (!atomic_load(&p->ready)) /* --bisect, --list-passes...: no output */
        return 0;
    ph_error e = {0}, err = {0};
    if (ph_model_commit(p->staged_model, s->cfg->output, input_file, p, &e) == 0)
        return 0;
    int rc = commit_failed(&e, s->cfg->output, &err);
    host_log_fatal(s->log, err.message);
    return rc;
}

/* A failed or signalled worker, a crashed pass: 1 for a crash (a signal
 * or a sanitizer's report), 0 for a time limit or exit(). */
static int crashed(const shared_page *p, const outcome *o)
{
    return !o->timed_out && (atomic_load(&p->fatal_signal) || atomic_load(&p->sanitizer) ||
                             (WIFSIGNALED(o->status) && is_fault(WTERMSIG(o->status))));
}

/* Pass `pass` crashed.  Was the graph already broken when it was called?
 * Run the passes again in a silent worker that checks the graph's
 * structure (ph_graph_verify) after every pass call, as --verify-each
 * does, and stops at the first call that leaves it broken.  When that is
 * another pass, it is the culprit: *line is rewritten to name it first, and
 * its name is copied into culprit (size 128). */
static void blame_crash(supervisor *s, const char *pass, char *line, size_t size, char *culprit)
{
    copy_text(culprit, 128, pass);
    pid_t pid = start_worker(s, 1);
    if (pid == 0)
        return; /* the worker: back to main (host_supervise returns -1) */
    if (pid < 0)
        return;
    outcome o;
    wait_worker(s, pid, &o);
    end_descendants(pid);
    remove_staged(s);
    shared_page *p = s->page;
    if (o.external)
        die_from(o.external);
    if (!p->blamed[0] || strcmp(p->blamed, pass) == 0)
        return;
    char first[2048];
    copy_text(first, sizeof first, line);
    snprintf(line, size, "pass %s left a graph that fails the structural check (%.500s); then %.1300s", p->blamed,
             p->blame_message, first);
    copy_text(culprit, 128, p->blamed);
}

/* Run workers until one ends the run; returns the exit code (-1 in a
 * worker). */
static int supervise(supervisor *s)
{
    for (;;) {
        pid_t pid = start_worker(s, 0);
        if (pid == 0)
            return -1;
        if (pid < 0) {
            host_log_msg(s->log, PH_LOG_WARN, NULL, "cannot start a worker process (%s): running "
                         "in one process, without containment", strerror(errno));
            return -1;
        }
        outcome o;
        wait_worker(s, pid, &o);
        int left = end_descendants(pid); /* before the output is committed */
        shared_page *p = s->page;
        if (o.external || (WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGPIPE)) {
            remove_staged(s); /* `passhost ... | head` (SIGPIPE): quietly, as any program would */
            die_from(o.external ? o.external : SIGPIPE);
        }
        if (!o.timed_out && WIFEXITED(o.status) && atomic_load(&p->finished)) {
            int code = WEXITSTATUS(o.status); /* the worker's own; it printed its message */
            if (left)
                host_log_msg(s->log, PH_LOG_WARN, NULL, "%d process%s started by the passes %s still running "
                             "when the worker ended; ended (SIGKILL)", left, left == 1 ? "" : "es",
                             left == 1 ? "was" : "were");
            if (code == 0 && atomic_load(&p->finish_code) == 0)
                code = commit_output(s);
            remove_staged(s);
            return code;
        }
        remove_staged(s);
        char line[2048], culprit[128] = "";
        describe(s, &o, line, sizeof line);
        if (atomic_load(&p->in_pass)) {
            copy_text(culprit, sizeof culprit, p->pass);
            if (crashed(p, &o) && atomic_load(&p->call_seq) > 1) { /* the first call: nothing before it */
                char pass[128];
                copy_text(pass, sizeof pass, p->pass);
                uint64_t k = atomic_load(&p->rewrites); /* the reproducer's --max-rewrites */
                blame_crash(s, pass, line, sizeof line, culprit);
                if (g_page)
                    return -1; /* the blame worker */
                atomic_store(&p->rewrites, k);
            }
        }
        if (s->opts->skip_failing && culprit[0] && g_nskip < HOST_SUPERVISE_MAX_SKIPS) {
            if (s->repro_dir && !s->repro_written) /* before the skip: with the culprit */
                write_reproducer(s, line, sizeof line);
            fflush(NULL);
            fprintf(s->log->err, "passhost: WARNING: %s; running again without pass %s "
                    "(--skip-failing-passes): the output lacks its rewrites\n", line, culprit);
            if (s->log->file) {
                fprintf(s->log->file, "WARNING: %s; running again without pass %s "
                        "(--skip-failing-passes)\n", line, culprit);
                fflush(s->log->file);
            }
            copy_text(g_skip[g_nskip++], sizeof g_skip[0], culprit);
            continue;
        }
        if (s->opts->skip_failing && culprit[0])
            snprintf(line + strlen(line), sizeof line - strlen(line),
                     " (--skip-failing-passes: %d passes skipped already, the most it does)",
                     g_nskip);
        if (s->repro_dir && !s->repro_written)
            write_reproducer(s, line, sizeof line);
        size_t len = strlen(line);
        snprintf(line + len, sizeof line - len, "; no output written");
        host_log_fatal(s->log, line);
        return HOST_EXIT_CRASH;
    }
}

int host_supervise(const host_supervise_opts *o, host_config *cfg, host_log *log)
{
    if (o->pass_timeout_set)
        cfg->pass_timeout_s = o->pass_timeout;
    if (o->no_fork) {
        const char *other = o->skip_failing ? "--skip-failing-passes"
                            : o->crash_out ? "--crash-out"
                            : o->pass_timeout_set ? "--pass-timeout" : NULL;
        if (other) {
            char msg[200];
            snprintf(msg, sizeof msg, "%s needs the supervisor process: drop --no-fork", other);
            host_log_fatal(log, msg);
            return HOST_EXIT_USAGE;
        }
        if (cfg->pass_timeout_s > 0)
            host_log_msg(log, PH_LOG_INFO, NULL, "--no-fork: pass_timeout_s is not enforced");
        return -1;
    }
    supervisor s = {.opts = o, .cfg = cfg, .log = log,
                    .limit_ns = (int64_t)(cfg->pass_timeout_s * 1e9),
                    .load_limit_ns = (int64_t)(cfg->load_timeout_s * 1e9),
                    .repro_dir = o->crash_out ? o->crash_out : o->bisect_out};
    s.page = mmap(NULL, sizeof *s.page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s.page == MAP_FAILED) {
        host_log_msg(log, PH_LOG_WARN, NULL, "cannot map shared memory (%s): running in one "
                     "process, without containment", strerror(errno));
        return -1;
    }
    /* descendants the worker leaves behind come back to the supervisor,
     * which ends them (end_descendants) */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigemptyset(&s.waited);
    sigaddset(&s.waited, SIGCHLD);
    for (size_t i = 0; i < sizeof passed_on / sizeof passed_on[0]; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started passhost (a background job of
         * a script: SIGINT, SIGQUIT) stays ignored, by the worker too: it is
         * not waited for, so it can neither end the run nor be passed on */
        if (sigaction(passed_on[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaddset(&s.waited, passed_on[i]);
    }
    sigprocmask(SIG_BLOCK, &s.waited, &s.old_mask);
    int code = supervise(&s);
    if (code < 0 && !g_page) { /* no worker could be started: run here */
        sigprocmask(SIG_SETMASK, &s.old_mask, NULL);
        munmap(s.page, sizeof *s.page);
    }
    if (code >= 0)
        munmap(s.page, sizeof *s.page);
    return code;
}
