/* host/log/trace.c - pass-call records and the progress line (trace.h). */
#include "trace.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "base/streams.h"
#include "base/util.h"

#define PROGRESS_AFTER_MS 1000.0 /* a run shorter than this shows no line */
#define PROGRESS_EVERY_MS 100.0

void host_trace_init(host_trace *t, FILE *tty)
{
    memset(t, 0, sizeof *t);
    t->t0 = host_now_ms();
    t->tty = tty;
}

void host_trace_free(host_trace *t)
{
    host_trace_clear_line(t);
    free(t->calls);
    t->calls = NULL;
    t->count = t->cap = 0;
}

FILE *host_trace_terminal(int quiet)
{
    return !quiet && isatty(STDERR_FILENO) ? host_raw_stderr() : NULL; /* its own terminal codes */
}

/* 1,204,311 */
static void grouped(char *buf, size_t size, size_t n)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%zu", n);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < size; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

static host_trace *current; /* the run's trace (host_trace_set_current) */

void host_trace_set_current(host_trace *t) { current = t; }

static void draw(host_trace *t, double now)
{
    if (t->phase) {
        char count[48] = "";
        if (t->phase_runs > 0)
            snprintf(count, sizeof count, ", run %d of %d", t->phase_run, t->phase_runs);
        fprintf(t->tty, "\rpasshost: %.80s%s, %.1f s\033[K", t->phase, count, (now - t->t0) / 1000.0);
        fflush(t->tty);
        t->shown = 1;
        t->last_draw = now;
        return;
    }
    char nodes[40];
    grouped(nodes, sizeof nodes, t->nodes);
    char where[64];
    if (t->round > 0)
        snprintf(where, sizeof where, "round %d", t->round);
    else
        snprintf(where, sizeof where, "run-once passes");
    /* \r, the line, then erase what a longer earlier line left */
    fprintf(t->tty, "\rpasshost: %s %s: %.60s (%zu/%zu), %s nodes, %.1f s\033[K",
            host_stage_name(t->stage), where, t->pass ? t->pass : "", t->step + 1, t->steps, nodes,
            (now - t->t0) / 1000.0);
    fflush(t->tty);
    t->shown = 1;
    t->last_draw = now;
}

static void maybe_draw(host_trace *t)
{
    if (!t->tty)
        return;
    double now = host_now_ms();
    if (now - t->t0 >= PROGRESS_AFTER_MS && now - t->last_draw >= PROGRESS_EVERY_MS)
        draw(t, now);
}

void host_trace_clear_line(host_trace *t)
{
    if (!t || !t->shown || !t->tty)
        return;
    fputs("\r\033[K", t->tty);
    fflush(t->tty);
    t->shown = 0;
}

void host_trace_phase(host_trace *t, const char *phase)
{
    if (!t)
        return;
    t->phase = phase;
    t->phase_run = t->phase_runs = 0;
    if (!t->tty)
        return;
    double now = host_now_ms();
    if (phase && now - t->t0 >= PROGRESS_AFTER_MS)
        draw(t, now);
    else if (!phase)
        host_trace_clear_line(t);
}

void host_trace_phase_step(int run, int runs)
{
    host_trace *t = current;
    if (!t || !t->phase)
        return;
    t->phase_run = run;
    t->phase_runs = runs;
    if (t->tty)
        draw(t, host_now_ms());
}

void host_trace_call_begin(host_trace *t, int stage, int round, size_t step, size_t steps,
                           const char *pass, size_t nodes, double pass_ms)
{
    t->phase = NULL; /* the stages: the line names the pass */
    host_xgrow(&t->calls, &t->cap, t->count + 1, sizeof *t->calls);
    host_call_record *c = &t->calls[t->count++];
    double now = host_now_ms();
    *c = (host_call_record){.stage = stage, .round = round, .step = step, .pass = pass,
                            .start_ms = now - t->t0, .ms = pass_ms, .rewrites = -1,
                            .nodes_before = nodes, .nodes_after = nodes};
    t->stage = stage;
    t->round = round;
    t->step = step;
    t->steps = steps;
    t->pass = pass;
    t->nodes = nodes;
    maybe_draw(t);
}

void host_trace_call_end(host_trace *t, long long rewrites, size_t nodes, double pass_ms)
{
    if (!t->count)
        return;
    host_call_record *c = &t->calls[t->count - 1];
    double total = host_now_ms() - t->t0 - c->start_ms;
    c->ms = pass_ms - c->ms;
    c->check_ms = total > c->ms ? total - c->ms : 0;
    c->rewrites = rewrites < 0 ? -1 : rewrites; /* failed */
    c->nodes_after = nodes;
    t->nodes = nodes;
    maybe_draw(t);
}
