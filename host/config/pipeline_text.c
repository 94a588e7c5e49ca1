/* host/config/pipeline_text.c - the pipeline as one line of text (pipeline_text.h). */
#include "pipeline_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/util.h"
#include "effective.h"

#define WHERE "--passes"

/* ------------------------------------------------------------- reading */

typedef struct cursor {
    const char *text;
    size_t at;
    ph_error *err;
} cursor;

static void blanks(cursor *c)
{
    while (c->text[c->at] == ' ' || c->text[c->at] == '\t')
        c->at++;
}

/* HOST_EXIT_USAGE naming the character the reading stopped at. */
static int syntax(cursor *c, const char *expected)
{
    char got = c->text[c->at];
    if (!got)
        return ph_error_set(c->err, HOST_EXIT_USAGE, WHERE ": expected %s at the end of '%.200s'",
                            expected, c->text);
    return ph_error_set(c->err, HOST_EXIT_USAGE,
                        WHERE ": expected %s at character %zu ('%c') of '%.200s'", expected,
                        c->at + 1, got, c->text);
}

static int take(cursor *c, char ch)
{
    blanks(c);
    if (c->text[c->at] != ch)
        return 0;
    c->at++;
    return 1;
}

static int name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
}

/* A pass, stage or key name (owned), or NULL. */
static char *read_name(cursor *c)
{
    blanks(c);
    size_t start = c->at;
    while (name_char(c->text[c->at]))
        c->at++;
    return c->at > start ? host_xstrndup(c->text + start, c->at - start) : NULL;
}

/* A bare or "quoted" option value (owned), or NULL after an error. */
static char *read_value(cursor *c)
{
    blanks(c);
    const char *t = c->text;
    if (t[c->at] != '"') {
        size_t start = c->at;
        while (t[c->at] && !strchr(",<>()\" \t", t[c->at]))
            c->at++;
        return host_xstrndup(t + start, c->at - start);
    }
    size_t start = ++c->at;
    char *out = host_xcalloc(strlen(t + start) + 1, 1);
    size_t n = 0;
    for (; t[c->at] && t[c->at] != '"'; c->at++) {
        if (t[c->at] == '\\' && (t[c->at + 1] == '"' || t[c->at + 1] == '\\'))
            c->at++;
        out[n++] = t[c->at];
    }
    if (!t[c->at]) {
        free(out);
        c->at = start - 1;
        ph_error_set(c->err, HOST_EXIT_USAGE,
                     WHERE ": the quote at character %zu of '%.200s' is not closed", start,
                     c->text);
        return NULL;
    }
    c->at++;
    return out;
}

/* One KEY=VAL option of a stage (pass == NULL) or of a pass in stage. */
static int apply_option(host_config *cfg, int stage, const char *pass, const char *key,
                        const char *value, ph_error *err)
{
    if (!pass) {
        if (strcmp(key, "max_iterations") != 0 && strcmp(key, "allow_approximate") != 0 &&
            strcmp(key, "target") != 0)
            return ph_error_set(err, HOST_EXIT_CONFIG,
                                WHERE ": %s<%s=...>: a stage's options are max_iterations, "
                                "allow_approximate and (adapt) target",
                                host_stage_name(stage), key);
        return host_config_assign(cfg, host_stage_name(stage), key, value, WHERE, 1u << stage,
                                  err);
    }
    char *section = host_xasprintf("pass.%s", pass);
    int rc = host_config_assign(cfg, section, key, value, WHERE, 1u << stage, err);
    free(section);
    return rc;
}

/* '<' KEY '=' VAL (',' KEY '=' VAL)* '>', when present. */
static int read_options(cursor *c, host_config *cfg, int stage, const char *pass)
{
    if (!take(c, '<'))
        return 0;
    int rc = 0;
    do {
        char *key = read_name(c);
        char *value = NULL;
        if (!key)
            rc = syntax(c, "an option name");
        else if (!take(c, '='))
            rc = syntax(c, "'=' after the option name");
        else if (!(value = read_value(c)))
            rc = c->err ? c->err->code : HOST_EXIT_USAGE;
        if (!rc)
            rc = apply_option(cfg, stage, pass, key, value, c->err);
        free(key);
        free(value);
    } while (!rc && take(c, ','));
    if (!rc && !take(c, '>'))
        rc = syntax(c, "',' or '>'");
    return rc;
}

static int stage_of(const char *name)
{
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        if (strcmp(name, host_stage_name(s)) == 0)
            return s;
    return -1;
}

/* stage options? '(' [pass (',' pass)*] ')' */
static int read_stage(cursor *c, host_config *cfg, int *seen)
{
    char *name = read_name(c);
    int stage = name ? stage_of(name) : -1;
    int rc = 0;
    if (stage < 0)
        rc = syntax(c, "'optimize(' or 'adapt('");
    else if (seen[stage])
        rc = ph_error_set(c->err, HOST_EXIT_USAGE, WHERE ": the %s stage is given twice", name);
    free(name);
    if (rc)
        return rc;
    seen[stage] = 1;
    host_stage_config *sc = &cfg->stage[stage];
    host_list_clear(&sc->pass_on);
    sc->no_integral = 1;
    sc->keep_order = 1;
    rc = read_options(c, cfg, stage, NULL);
    if (!rc && !take(c, '('))
        rc = syntax(c, "'('");
    if (rc || take(c, ')'))
        return rc;
    do {
        char *pass = read_name(c);
        if (!pass)
            return syntax(c, "a pass name");
        host_list_append(&sc->pass_on, pass, WHERE);
        rc = read_options(c, cfg, stage, pass);
        free(pass);
    } while (!rc && take(c, ','));
    if (!rc && !take(c, ')'))
        rc = syntax(c, "',' or ')'");
    return rc;
}

int host_pipeline_text_apply(host_config *cfg, const char *value, ph_error *err)
{
    if (!strchr(value, '(')) { /* names only: the optimize stage */
        host_stage_config *opt = &cfg->stage[HOST_STAGE_OPTIMIZE];
        host_list_clear(&opt->pass_on);
        host_list_append(&opt->pass_on, value, WHERE);
        if (opt->pass_on.count == 0)
            return ph_error_set(err, HOST_EXIT_USAGE,
                                WHERE ": no pass named (--passes=A,B,... or "
                                "--passes='optimize(A,B),adapt(C)')");
        opt->no_integral = 1;
        opt->keep_order = 1;
        return 0;
    }
    cursor c = {value, 0, err};
    int seen[HOST_STAGE_COUNT] = {0};
    int rc = 0;
    do
        rc = read_stage(&c, cfg, seen);
    while (!rc && take(&c, ','));
    blanks(&c);
    if (!rc && value[c.at])
        rc = syntax(&c, "',' and another stage, or the end");
    return rc;
}

/* ------------------------------------------------------------- writing */

/* value as an option value: bare when it can be, else quoted. */
static void put_value(FILE *f, const char *value)
{
    if (*value && !strpbrk(value, ",<>()\" \t\\")) {
        fputs(value, f);
        return;
    }
    fputc('"', f);
    for (const char *v = value; *v; v++) {
        if (*v == '"' || *v == '\\')
            fputc('\\', f);
        fputc(*v, f);
    }
    fputc('"', f);
}

/* ",key=value" or "<key=value": the separator before the next option. */
static void put_option(FILE *f, int *first, const char *key, const char *value)
{
    fputc(*first ? '<' : ',', f);
    *first = 0;
    fprintf(f, "%s=", key);
    put_value(f, value);
}

/* The step's parameters that differ from its pass's defaults. */
static void put_params(FILE *f, const host_step *step)
{
    const ph_pass_desc *d = step->plugin->desc;
    if (!d->params)
        return;
    ph_params *defaults = ph_params_new(d->params, NULL);
    int first = 1;
    for (const ph_param_def *p = d->params; p->name && defaults; p++) {
        char *now = host_param_text(step->params, p), *was = host_param_text(defaults, p);
        if (strcmp(now, was) != 0)
            put_option(f, &first, p->name, now);
        free(now);
        free(was);
    }
    if (!first)
        fputc('>', f);
    ph_params_free(defaults);
}

static void put_stage(FILE *f, const host_stage_plan *sp)
{
    fputs(host_stage_name(sp->stage), f);
    int first = 1, approx = 0;
    for (size_t i = 0; i < sp->count; i++)
        approx |= sp->steps[i].plugin->desc->exactness == PH_APPROX;
    if (sp->max_iterations != HOST_DEFAULT_MAX_ITERATIONS) {
        char n[32];
        snprintf(n, sizeof n, "%d", sp->max_iterations);
        put_option(f, &first, "max_iterations", n);
    }
    if (approx && sp->allow_approximate)
        put_option(f, &first, "allow_approximate", "true");
    if (sp->target && *sp->target)
        put_option(f, &first, "target", sp->target);
    if (!first)
        fputc('>', f);
    fputc('(', f);
    for (size_t i = 0; i < sp->count; i++) {
        fprintf(f, "%s%s", i ? "," : "", sp->steps[i].plugin->desc->name);
        put_params(f, &sp->steps[i]);
    }
    fputc(')', f);
}

char *host_pipeline_text(const host_plan *plan)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        if (s)
            fputc(',', f);
        put_stage(f, &plan->stage[s]);
    }
    fclose(f);
    return buf;
}
