/* host/config/effective.c - the effective configuration as INI text (effective.h). */
#include "effective.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/util.h"

/* path made absolute (the file exists) or as given. */
static char *absolute(const char *path)
{
    char *real = realpath(path, NULL);
    return real ? real : host_xstrdup(path);
}

/* The shortest %g text of v that reads back as v. */
static void shortest_double(char *buf, size_t size, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
}

static void put_double(FILE *f, const char *key, double v)
{
    char buf[64];
    shortest_double(buf, sizeof buf, v);
    fprintf(f, "%s = %s\n", key, buf);
}

static void put_quoted(FILE *f, const char *key, const char *value)
{
    fprintf(f, "%s = \"%s\"\n", key, value);
}

static void put_unset(FILE *f, const char *key)
{
    fprintf(f, "; %s = (not set)\n", key);
}

char *host_param_text(const ph_params *params, const ph_param_def *def)
{
    char buf[64];
    switch (def->type) {
    case PH_PARAM_INT:
        return host_xasprintf("%lld", (long long)ph_params_int(params, def->name));
    case PH_PARAM_FLOAT:
        shortest_double(buf, sizeof buf, ph_params_float(params, def->name));
        return host_xstrdup(buf);
    case PH_PARAM_BOOL:
        return host_xstrdup(ph_params_bool(params, def->name) ? "true" : "false");
    case PH_PARAM_STRING: {
        const char *s = ph_params_string(params, def->name);
        return host_xstrdup(s ? s : "");
    }
    }
    return host_xstrdup("");
}

/* "key = value" lines of every parameter of a step (caller frees). */
static char *param_lines(const host_step *step)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    for (const ph_param_def *p = step->plugin->desc->params; p && p->name; p++) {
        char *text = host_param_text(step->params, p);
        if (p->type == PH_PARAM_STRING)
            put_quoted(f, p->name, text);
        else
            fprintf(f, "%s = %s\n", p->name, text);
        free(text);
    }
    fclose(f);
    return buf;
}

/* The step of pass `name` in stage s, or NULL. */
static const host_step *find_step(const host_plan *plan, int s, const char *name)
{
    const host_stage_plan *sp = &plan->stage[s];
    for (size_t i = 0; i < sp->count; i++)
        if (strcmp(sp->steps[i].plugin->desc->name, name) == 0)
            return &sp->steps[i];
    return NULL;
}

static void write_stage(FILE *f, const host_config *cfg, const host_plan *plan, int s,
                        const char *custom)
{
    const host_stage_plan *sp = &plan->stage[s];
    const host_stage_config *sc = &cfg->stage[s];
    fprintf(f, "\n[%s]\n; exactly the passes of the run, in its order (by the same plugin search)\n",
            host_stage_name(s));
    fputs("no_integral = true\nkeep_order = true\n", f);
    fputs("pass_on =", f);
    for (size_t i = 0; i < sp->count; i++)
        fprintf(f, "%s%s\n", i ? "    " : " ", sp->steps[i].plugin->desc->name);
    if (!sp->count)
        fputc('\n', f);
    fputs("pass_off =\n", f);
    fprintf(f, "max_iterations = %d\n", sp->max_iterations);
    fprintf(f, "allow_approximate = %s\n", sc->allow_approximate ? "true" : "false");
    fprintf(f, "level = %s\n", host_level_name(sc->level));
    if (custom)
        put_quoted(f, "custom_config", custom);
    else
        fputs("; custom_config = (not set: every parameter is in the [pass.*] sections)\n", f);
    if (s == HOST_STAGE_ADAPT)
        put_quoted(f, "target", sp->target ? sp->target : "");
}

/* Parameters: [pass.NAME] in the main file holds every parameter of every
 * pass that ran, as in the first stage that ran it.  Where another stage
 * ran it with other values, that stage gets a custom_config text. */
static void stage_params(host_effective *e, const host_plan *plan)
{
    for (int s = 1; s < HOST_STAGE_COUNT; s++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
            abort();
        const host_stage_plan *sp = &plan->stage[s];
        int any = 0;
        for (size_t i = 0; i < sp->count; i++) {
            const char *name = sp->steps[i].plugin->desc->name;
            const host_step *main_step = NULL;
            for (int x = 0; x < s && !main_step; x++)
                main_step = find_step(plan, x, name);
            if (!main_step)
                continue;
            char *a = param_lines(main_step), *b = param_lines(&sp->steps[i]);
            if (strcmp(a, b) != 0) {
                fprintf(f, "[pass.%s]\n%s\n", name, b);
                any = 1;
            }
            free(a);
            free(b);
        }
        fclose(f);
        if (any) {
            e->custom_name[s] = host_xasprintf("%s_params.ini", host_stage_name(s));
            e->custom_text[s] = host_xasprintf("; parameters of the %s stage where they differ "
                                               "from config.ini\n%s", host_stage_name(s), buf);
        }
        free(buf);
    }
}

void host_effective_make(host_effective *e, const host_config *cfg, const host_plan *plan,
                         const host_verify_config *vcfg, const char *output, const char *header)
{
    memset(e, 0, sizeof *e);
    stage_params(e, plan);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    fputs(header ? header : "", f);
    fputs("[model]\n", f);
    char *in = absolute(cfg->input ? cfg->input : "");
    put_quoted(f, "input", in);
    free(in);
    if (output)
        put_quoted(f, "output", output);
    else
        put_unset(f, "output");
    if (cfg->plugin_dir) {
        char *pd = absolute(cfg->plugin_dir);
        put_quoted(f, "plugin_dir", pd);
        free(pd);
    } else {
        put_unset(f, "plugin_dir");
    }
    put_unset(f, "log_path");
    if (cfg->input_shape)
        put_quoted(f, "input_shape", cfg->input_shape);
    else
        put_unset(f, "input_shape");
    if (cfg->input_shape_range)
        put_quoted(f, "input_shape_range", cfg->input_shape_range);
    else
        put_unset(f, "input_shape_range");
    fprintf(f, "infer_shapes = %s\n", cfg->infer_shapes ? "true" : "false");
    fprintf(f, "write_shapes = %s\n", cfg->write_shapes ? "true" : "false");
    put_double(f, "pass_timeout_s", cfg->pass_timeout_s);
    put_double(f, "load_timeout_s", cfg->load_timeout_s);
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        write_stage(f, cfg, plan, s, e->custom_name[s]);
    fprintf(f, "\n[verify]\nruns = %d\n", vcfg->runs);
    fprintf(f, "seed = %d\n", vcfg->seed);
    put_double(f, "budget_factor", vcfg->budget_factor);
    put_double(f, "budget_ulps", vcfg->budget_ulps);
    if (vcfg->atol >= 0)
        put_double(f, "atol", vcfg->atol);
    else
        fputs("; atol = (not set: the error budget judges the outputs)\n", f);
    if (vcfg->rtol >= 0)
        put_double(f, "rtol", vcfg->rtol);
    else
        fputs("; rtol = (not set: the error budget judges the outputs)\n", f);
    if (vcfg->data.count) {
        fputs("data = ", f);
        for (size_t i = 0; i < vcfg->data.count; i++) {
            char *d = absolute(vcfg->data.items[i].text);
            fprintf(f, "%s\"%s\"", i ? "; " : "", d);
            free(d);
        }
        fputc('\n', f);
    } else {
        fputs("; data = (not set: seeded random inputs)\n", f);
    }
    if (vcfg->range)
        put_quoted(f, "range", vcfg->range);
    else
        fputs("; range = (not set: ranges derived from the model)\n", f);
    /* every parameter of every pass that ran, as in the first stage that ran it */
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        const host_stage_plan *sp = &plan->stage[s];
        for (size_t i = 0; i < sp->count; i++) {
            const char *name = sp->steps[i].plugin->desc->name;
            int earlier = 0;
            for (int x = 0; x < s && !earlier; x++)
                earlier = find_step(plan, x, name) != NULL;
            if (earlier)
                continue;
            char *lines = param_lines(&sp->steps[i]);
            fprintf(f, "\n[pass.%s]\n%s", name, *lines ? lines : "; no parameters\n");
            free(lines);
        }
    }
    fclose(f);
    e->config = buf;
}

void host_effective_free(host_effective *e)
{
    free(e->config);
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        free(e->custom_name[s]);
        free(e->custom_text[s]);
    }
    memset(e, 0, sizeof *e);
}

static int write_text(const char *dir, const char *name, const char *text, ph_error *err)
{
    char *path = host_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    int bad = !f;
    if (f) {
        fputs(text, f);
        bad |= fclose(f) != 0;
    }
    int rc = bad ? ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", path, strerror(errno)) : 0;
    free(path);
    return rc;
}

int host_effective_write(const host_effective *e, const char *dir, const char *name,
                         ph_error *err)
{
    int rc = 0;
    for (int s = 0; s < HOST_STAGE_COUNT && !rc; s++)
        if (e->custom_name[s])
            rc = write_text(dir, e->custom_name[s], e->custom_text[s], err);
    return rc ? rc : write_text(dir, name, e->config, err);
}
