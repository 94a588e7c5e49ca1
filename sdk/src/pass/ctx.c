/* sdk/src/pass/ctx.c - the context a pass runs in: logging, errors, scratch memory. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pass/pass_internal.h"

struct ph_ctx {
    ph_log_fn log;
    void *user;
    char pass[128];
    char target[128];
    char last_error[512];
    void **scratch; /* owned blocks of the running pass */
    size_t n_scratch, cap_scratch;
    /* numbered rewrites */
    int64_t limit;          /* < 0: none */
    uint64_t count;         /* numbered in the run */
    uint64_t pass_count;    /* numbered since begin_pass */
    ph_rewrite_hook hook;
    void *hook_user;
    ph_count_hook count_hook; /* told of each complete rewrite, without names */
    void *count_user;
    int pending;            /* a begun rewrite not yet reported to the hook */
    char *matched, *removed, *added; /* owned, of the pending rewrite */
    /* per pass: its memo word and its reader of the change log (pattern/changes.c) */
    struct memo { char *pass; uint64_t word; void *changes; } *memos; /* owned */
    size_t n_memos, cap_memos;
    uint64_t alloc_failures; /* see ph_ctx_alloc_failures */
    ph_model *watched;      /* ph_ctx_watch: its trap points at status */
    int status;             /* the first setter failure of the pass (ph_ctx_status) */
    const ph_target *profile; /* borrowed: the adapt stage's profile, NULL: none */
    ph_violation_fn violation_fn; /* ph_ctx_set_violation_hook */
    void *violation_user;
};


static void log_default(void *user, ph_log_level level, const char *pass, const char *message)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    (void)user;
    if (pass && *pass)
        fprintf(stderr, "passhost: %s: pass %s: %s\n", names[level], pass, message);
    else
        fprintf(stderr, "passhost: %s: %s\n", names[level], message);
}

PH_API ph_ctx *ph_ctx_new(ph_log_fn fn, void *user)
{
    ph_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->log = fn ? fn : log_default;
    c->user = user;
    c->limit = -1;
    return c;
}

PH_API void ph_ctx_free(ph_ctx *ctx)
{
    if (!ctx)
        return;
    ph_ctx_end_pass(ctx);
    free(ctx->scratch);
    free(ctx->matched);
    free(ctx->removed);
    free(ctx->added);
    for (size_t i = 0; i < ctx->n_memos; i++) {
        free(ctx->memos[i].pass);
        free(ctx->memos[i].changes);
    }
    free(ctx->memos);
    free(ctx);
}

PH_API void ph_ctx_begin_pass(ph_ctx *ctx, const char *pass_name, const char *target)
{
    snprintf(ctx->pass, sizeof ctx->pass, "%s", pass_name ? pass_name : "");
    snprintf(ctx->target, sizeof ctx->target, "%s", target ? target : "");
    ctx->last_error[0] = 0;
    ctx->pass_count = 0;
    ctx->status = 0;
}

PH_API void ph_ctx_watch(ph_ctx *ctx, ph_graph *g)
{
    ph_model *m = g ? g->model : NULL;
    if (ctx->watched && ctx->watched != m && ctx->watched->trap == &ctx->status)
        ctx->watched->trap = NULL;
    ctx->watched = m;
    if (m)
        m->trap = &ctx->status;
}

PH_API int ph_ctx_status(const ph_ctx *ctx) { return ctx->status; }

PH_API int ph_ctx_run(ph_ctx *ctx, ph_graph *g, ph_pass_run_fn run, const ph_params *params)
{
    ph_ctx_watch(ctx, g);
    int r = run(g, params, ctx);
    ph_ctx_watch(ctx, NULL);
    if (r >= 0 && ctx->status < 0)
        r = ph_ctx_error(ctx, ctx->status, "a call failed during the pass (%s), and the pass went on",
                         ph_strerror(ctx->status));
    return r;
}

static void flush_rewrite(ph_ctx *ctx);

PH_API void ph_ctx_end_pass(ph_ctx *ctx)
{
    flush_rewrite(ctx);
    for (size_t i = 0; i < ctx->n_scratch; i++)
        free(ctx->scratch[i]);
    ctx->n_scratch = 0;
}

PH_API const char *ph_ctx_last_error(const ph_ctx *ctx) { return ctx->last_error; }
PH_API const char *ph_ctx_target(const ph_ctx *ctx) { return ctx->target; }

PH_API void ph_ctx_set_profile(ph_ctx *ctx, const ph_target *t) { ctx->profile = t; }
PH_API const ph_target *ph_ctx_profile(const ph_ctx *ctx) { return ctx->profile; }

PH_API void ph_ctx_set_violation_hook(ph_ctx *ctx, ph_violation_fn fn, void *user)
{
    ctx->violation_fn = fn;
    ctx->violation_user = user;
}

PH_API int ph_ctx_violation(ph_ctx *ctx, const ph_violation *v)
{
    if (ctx->violation_fn)
        return ctx->violation_fn(ctx->violation_user, v);
    ph_log(ctx, PH_LOG_WARN, "%s%s%s (%s): %s is %s, the target allows %s", v->graph, *v->graph ? "/" : "",
           *v->name ? v->name : "(unnamed)", v->op, v->key, v->value, v->limit);
    return 0;
}

PH_API void ph_log(ph_ctx *ctx, ph_log_level level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if ((unsigned)level > PH_LOG_DEBUG)
        level = PH_LOG_DEBUG;
    ctx->log(ctx->user, level, ctx->pass, msg);
}

PH_API int ph_ctx_error(ph_ctx *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->last_error, sizeof ctx->last_error, fmt, ap);
    va_end(ap);
    return code;
}

PH_API uint64_t ph_ctx_alloc_failures(const ph_ctx *ctx) { return ctx ? ctx->alloc_failures : 0; }

/* The running pass's memo entry (made on first use); NULL when out of
 * memory (counted). */
static struct memo *pass_memo(ph_ctx *ctx)
{
    for (size_t i = 0; i < ctx->n_memos; i++)
        if (strcmp(ctx->memos[i].pass, ctx->pass) == 0)
            return &ctx->memos[i];
    char *name = ir_strdup(ctx->pass);
    if (!name || ir_grow((void **)&ctx->memos, &ctx->cap_memos, ctx->n_memos + 1, sizeof *ctx->memos)) {
        free(name);
        ctx->alloc_failures++;
        return NULL;
    }
    ctx->memos[ctx->n_memos] = (struct memo){name, 0, NULL};
    return &ctx->memos[ctx->n_memos++];
}

PH_API uint64_t *ph_ctx_pass_memo(ph_ctx *ctx)
{
    struct memo *m = pass_memo(ctx);
    return m ? &m->word : NULL;
}

void **ctx_pass_changes_slot(ph_ctx *ctx)
{
    struct memo *m = pass_memo(ctx);
    return m ? &m->changes : NULL;
}

PH_API void *ph_ctx_alloc(ph_ctx *ctx, size_t size)
{
    void *p = NULL;
    if (!ir_grow((void **)&ctx->scratch, &ctx->cap_scratch, ctx->n_scratch + 1, sizeof *ctx->scratch) &&
        (p = calloc(1, size ? size : 1)))
        ctx->scratch[ctx->n_scratch++] = p;
    else
        ctx->alloc_failures++;
    return p;
}

/* ------------------------------------------------------- numbered rewrites */

static void set_str(char **dst, const char *s)
{
    if (*dst) /* nearly always empty: no free() call per rewrite */
        free(*dst);
    *dst = s ? ir_strdup(s) : NULL; /* NULL on OOM too: reported as "not told" */
}

static void flush_rewrite(ph_ctx *ctx)
{
    if (!ctx->pending)
        return;
    ctx->pending = 0;
    if (ctx->count_hook)
        ctx->count_hook(ctx->count_user, ctx->count, ctx->pass_count);
    if (ctx->hook) {
        ph_rewrite_info info = {.pass = ctx->pass, .index = ctx->count,
                                .pass_index = ctx->pass_count,
                                .matched = ctx->matched ? ctx->matched : "",
                                .removed = ctx->removed, .added = ctx->added};
        ctx->hook(ctx->hook_user, &info);
    }
    set_str(&ctx->matched, NULL);
    set_str(&ctx->removed, NULL);
    set_str(&ctx->added, NULL);
}

PH_API int ph_ctx_rewrite_allowed(const ph_ctx *ctx)
{
    return ctx->limit < 0 || ctx->count < (uint64_t)ctx->limit;
}

PH_API int ph_ctx_rewrite_begin(ph_ctx *ctx, const char *matched)
{
    flush_rewrite(ctx);
    if (!ph_ctx_rewrite_allowed(ctx))
        return 0;
    ctx->count++;
    ctx->pass_count++;
    ctx->pending = 1;
    if (ctx->hook)
        set_str(&ctx->matched, matched);
    return 1;
}

PH_API void ph_ctx_rewrite_end(ph_ctx *ctx, const char *removed, const char *added)
{
    if (!ctx->pending)
        return;
    if (ctx->hook) {
        set_str(&ctx->removed, removed);
        set_str(&ctx->added, added);
    }
    flush_rewrite(ctx);
}

PH_API int ph_ctx_wants_names(const ph_ctx *ctx) { return ctx->hook != NULL; }

PH_API void ph_ctx_set_rewrite_limit(ph_ctx *ctx, int64_t limit) { ctx->limit = limit; }
PH_API uint64_t ph_ctx_rewrite_count(const ph_ctx *ctx) { return ctx->count; }
PH_API uint64_t ph_ctx_pass_rewrites(const ph_ctx *ctx) { return ctx->pass_count; }

PH_API void ph_ctx_count_rewrites(ph_ctx *ctx, uint64_t n)
{
    flush_rewrite(ctx);
    ctx->count += n;
    ctx->pass_count += n;
}

PH_API void ph_ctx_set_rewrite_hook(ph_ctx *ctx, ph_rewrite_hook fn, void *user)
{
    ctx->hook = fn;
    ctx->hook_user = user;
}

PH_API void ph_ctx_set_count_hook(ph_ctx *ctx, ph_count_hook fn, void *user)
{
    ctx->count_hook = fn;
    ctx->count_user = user;
}
