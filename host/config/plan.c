/* host/config/plan.c - plugin search path and the per-stage pass lists (plan.h). */
#include "plan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/exit.h"
#include "base/util.h"
#include "order.h"
#include "profile.h"

/* ------------------------------------------------------------- plugin search */

static int is_dir(const char *path)
{
    struct stat st;
    errno = 0;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return 0;
    }
    return 1;
}

typedef struct dir_set {
    char **real;
    size_t count, cap;
} dir_set;

/* 1 if dir was not searched yet (and remember it). */
static int first_visit(dir_set *seen, const char *dir)
{
    char *real = realpath(dir, NULL);
    if (!real)
        real = host_xstrdup(dir);
    for (size_t i = 0; i < seen->count; i++) {
        if (strcmp(seen->real[i], real) == 0) {
            free(real);
            return 0;
        }
    }
    host_xgrow(&seen->real, &seen->cap, seen->count + 1, sizeof *seen->real);
    seen->real[seen->count++] = real;
    return 1;
}

static int search_dir(host_registry *reg, dir_set *seen, const char *dir, int must_exist,
                      ph_error *err)
{
    if (!is_dir(dir)) {
        if (must_exist)
            return ph_error_set(err, HOST_EXIT_PLUGIN, "plugin_dir %s: %s", dir,
                                strerror(errno));
        return 0;
    }
    if (!first_visit(seen, dir))
        return 0;
    return host_registry_load_dir(reg, dir, err) ? HOST_EXIT_PLUGIN : 0;
}

int host_load_plugins(host_registry *reg, const char *plugin_dir, ph_error *err)
{
    dir_set seen = {0};
    int rc = 0;
    if (plugin_dir)
        rc = search_dir(reg, &seen, plugin_dir, 1, err);
    const char *env = getenv("PASSHOST_PLUGIN_PATH");
    if (!rc && env) {
        char *copy = host_xstrdup(env);
        for (char *save = NULL, *d = strtok_r(copy, ":", &save); d && !rc;
             d = strtok_r(NULL, ":", &save))
            rc = search_dir(reg, &seen, d, 0, err);
        free(copy);
    }
    char *defaults[4];
    size_t n = host_default_plugin_dirs(defaults, 4);
    for (size_t i = 0; i < n; i++) {
        if (!rc)
            rc = search_dir(reg, &seen, defaults[i], 0, err);
        free(defaults[i]);
    }
    for (size_t i = 0; i < seen.count; i++)
        free(seen.real[i]);
    free(seen.real);
    return rc;
}

/* ------------------------------------------------------------- pass names */

size_t host_close_passes(const host_registry *reg, const char *name, const char **out, size_t max)
{
    size_t n = host_registry_count(reg);
    const char **names = host_xcalloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = host_registry_at(reg, i)->desc->name;
    size_t count = ph_close_names(name, names, n, out, max);
    free(names);
    return count;
}

const char *host_closest_pass(const host_registry *reg, const char *name)
{
    const char *best = NULL;
    return host_close_passes(reg, name, &best, 1) ? best : NULL;
}

static int index_of(const host_registry *reg, const char *name)
{
    for (size_t i = 0; i < host_registry_count(reg); i++)
        if (strcmp(host_registry_at(reg, i)->desc->name, name) == 0)
            return (int)i;
    return -1;
}

/* An unknown name: a plugin file of that name that a folder scan skipped
 * is a plugin error (the pass was asked for by name); otherwise the close
 * names, nearest first. */
static int unknown_pass(const host_registry *reg, const char *where, const char *name,
                        ph_error *err)
{
    const char *skipped = host_registry_skipped_for(reg, name);
    if (skipped)
        return ph_error_set(err, HOST_EXIT_PLUGIN, "%s: pass %s cannot be loaded: %.400s", where,
                            name, skipped);
    const char *near[3];
    size_t n = host_close_passes(reg, name, near, 3);
    if (n == 0)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s: unknown pass '%s' (passhost --list-passes shows them)", where,
                            name);
    char list[400] = "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s'%s'", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                 near[i]);
    }
    return ph_error_set(err, HOST_EXIT_CONFIG, "%s: unknown pass '%s' (did you mean %s?)", where,
                        name, list);
}

/* ------------------------------------------------------------- selection */

static unsigned stage_bit(int stage)
{
    return stage == HOST_STAGE_OPTIMIZE ? PH_STAGE_OPTIMIZE : PH_STAGE_ADAPT;
}

/* 1 when the ';'/','-separated targets list is empty or names one of the
 * ';'-separated names (a profile's and its bases'); "*" matches every
 * profile, and nothing when there is none. */
static int targets_match(const char *targets, const char *names)
{
    if (!targets || !*targets)
        return 1;
    if (!strcmp(targets, "*"))
        return *names != '\0';
    char *copy = host_xstrdup(targets);
    int found = 0;
    for (char *save = NULL, *t = strtok_r(copy, ";,", &save); t && !found;
         t = strtok_r(NULL, ";,", &save)) {
        const char *want = host_trim(t);
        size_t n = strlen(want);
        for (const char *p = names; *p && !found;) {
            size_t len = strcspn(p, ";");
            found = len == n && strncmp(p, want, n) == 0;
            p += len + (p[len] == ';');
        }
    }
    free(copy);
    return found;
}

/* 1 when the profile constrains a key the pass declares it reads. */
static int profile_wants(const ph_pass_desc *d, const host_profile *prof)
{
    for (const ph_profile_key *k = d->profile_keys; prof && k && k->key; k++)
        if (ph_target_constrains(prof->target, k->key))
            return 1;
    return 0;
}

/* [target.passes] PASS = on|off of the profile: into on[]; every name and
 * value checked. */
static int profile_switches(int stage, const host_profile *prof, const host_registry *reg, char *on,
                            const char **why, ph_error *err)
{
    for (size_t k = 0; prof && k < prof->passes.count; k++) {
        const host_target_item *it = &prof->passes.items[k];
        int i = index_of(reg, strcmp(it->section, "passes") == 0 ? it->key : it->section + 5);
        if (i < 0)
            return unknown_pass(reg, it->where, strcmp(it->section, "passes") == 0 ? it->key : it->section + 5,
                                err);
        if (strcmp(it->section, "passes"))
            continue;
        int b = 0;
        if (!host_parse_bool(it->value, &b))
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s: '%s' is not on or off", it->where, it->key,
                                it->value);
        if (b && !(host_registry_at(reg, (size_t)i)->desc->stages & stage_bit(stage)))
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: pass %s does not run in the %s stage", it->where,
                                it->key, host_stage_name(stage));
        on[i] = (char)b;
        if (b)
            why[i] = it->where;
    }
    return 0;
}

static const char *stage_names_of(unsigned stages)
{
    if ((stages & PH_STAGE_OPTIMIZE) && (stages & PH_STAGE_ADAPT))
        return "optimize, adapt";
    return stages & PH_STAGE_OPTIMIZE ? "optimize" : "adapt";
}

/* Fill on[] (0/1 per registry index) and why[] (where a pass_on came from). */
static int select_passes(int stage, const host_stage_config *sc, const host_profile *prof,
                         const host_registry *reg, char *on, const char **why, ph_error *err)
{
    size_t n = host_registry_count(reg);
    const host_item **off = host_xcalloc(n, sizeof *off);
    int rc = 0;
    for (size_t i = 0; i < n && !sc->no_integral; i++) {
        const ph_pass_desc *d = host_registry_at(reg, i)->desc;
        on[i] = (d->stages & stage_bit(stage)) &&
                ((d->on_by_default && (!d->default_stages || (d->default_stages & stage_bit(stage))) &&
                  targets_match(d->targets, prof ? prof->names : "")) ||
                 profile_wants(d, prof));
    }
    if (!sc->no_integral)
        rc = profile_switches(stage, prof, reg, on, why, err);
    for (size_t k = 0; k < sc->pass_off.count && !rc; k++) {
        const host_item *it = &sc->pass_off.items[k];
        int i = index_of(reg, it->text);
        if (i < 0 && strcmp(it->where, HOST_WHERE_NO_FOLD) == 0)
            continue; /* --no-fold: only the folding passes that are loaded */
        if (i < 0)
            rc = unknown_pass(reg, it->where, it->text, err);
        else
            off[i] = it;
    }
    for (size_t k = 0; k < sc->pass_on.count && !rc; k++) {
        const host_item *it = &sc->pass_on.items[k];
        int i = index_of(reg, it->text);
        if (i < 0) {
            rc = unknown_pass(reg, it->where, it->text, err);
        } else if (off[i]) {
            rc = ph_error_set(err, HOST_EXIT_CONFIG,
                              "%s: pass %s is both in pass_on and in pass_off (%s) of [%s]",
                              it->where, it->text, off[i]->where, host_stage_name(stage));
        } else if (!(host_registry_at(reg, (size_t)i)->desc->stages & stage_bit(stage))) {
            unsigned st = host_registry_at(reg, (size_t)i)->desc->stages;
            rc = ph_error_set(err, HOST_EXIT_CONFIG,
                              "%s: pass %s does not run in the %s stage (its stages: %s)",
                              it->where, it->text, host_stage_name(stage), stage_names_of(st));
        } else {
            on[i] = 1;
            why[i] = it->where;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (off[i])
            on[i] = 0;
    free(off);
    return rc;
}

static const char *exactness_name(ph_exactness e)
{
    return e == PH_EXACT ? "exact" : e == PH_FP ? "fp" : "approx";
}

/* [STAGE] level (config.h): passes of the default list above it are left
 * out; a pass named in pass_on above it is an error (an approx one at
 * level fp is refuse_approx's). */
static int apply_level(int stage, const host_stage_config *sc, const host_registry *reg, char *on,
                       const char **why, ph_error *err)
{
    for (size_t i = 0; i < host_registry_count(reg); i++) {
        const ph_pass_desc *d = host_registry_at(reg, i)->desc;
        int need = d->exactness == PH_EXACT ? HOST_LEVEL_EXACT
                   : d->exactness == PH_FP  ? HOST_LEVEL_FP
                                            : HOST_LEVEL_APPROX;
        if (!on[i] || need <= sc->level)
            continue;
        if (!why[i] || (need == HOST_LEVEL_APPROX && sc->level == HOST_LEVEL_FP)) {
            on[i] = !why[i] ? 0 : on[i];
            continue;
        }
        if (sc->level == HOST_LEVEL_NONE)
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: pass %s: level none (%s) runs no pass in [%s]",
                                why[i], d->name, sc->level_where ? sc->level_where : "[level]",
                                host_stage_name(stage));
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s: pass %s is %s, above level %s (%s), which runs %s passes only in [%s]",
                            why[i], d->name, exactness_name(d->exactness),
                            host_level_name(sc->level), sc->level_where ? sc->level_where : "level",
                            sc->level == HOST_LEVEL_EXACT ? "exact" : "exact and fp",
                            host_stage_name(stage));
    }
    return 0;
}

/* 1 when the profile's [target.passes] switches pass `name` on: the
 * profile asks for it, approx or not (fp16's convert_float16). */
static int profile_switches_on(const host_profile *prof, const char *name)
{
    int b = 0;
    for (size_t k = 0; prof && k < prof->passes.count; k++) {
        const host_target_item *it = &prof->passes.items[k];
        if (!strcmp(it->section, "passes") && !strcmp(it->key, name))
            b = host_parse_bool(it->value, &b) && b;
    }
    return b;
}

static int refuse_approx(int stage, const host_stage_config *sc, const host_profile *prof,
                         const host_registry *reg, const char *on, const char **why, ph_error *err)
{
    if (sc->allow_approximate || sc->level >= HOST_LEVEL_APPROX)
        return 0;
    for (size_t i = 0; i < host_registry_count(reg); i++) {
        const ph_pass_desc *d = host_registry_at(reg, i)->desc;
        if (!on[i] || d->exactness != PH_APPROX || profile_switches_on(prof, d->name))
            continue;
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s%spass %s changes results by design (approx); set "
                            "allow_approximate = true (or level = approx) in [%s], or give "
                            "--level approx, to run it",
                            why[i] ? why[i] : "", why[i] ? ": " : "", d->name,
                            host_stage_name(stage));
    }
    return 0;
}

/* --------------------------------------------------------------- ordering */

/* keep_order: the passes of pass_on in the order written (--passes=a,b,c).
 * Needs no_integral; a pass named twice is an error; order hints are not
 * applied (the order given is the order run). */
static int given_order(host_stage_plan *sp, int stage, const host_stage_config *sc,
                       const host_registry *reg, const char *on, ph_error *err)
{
    if (!sc->no_integral)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "[%s] keep_order = true needs no_integral = true (keep_order runs "
                            "exactly the passes pass_on lists, in that order)",
                            host_stage_name(stage));
    sp->steps = host_xcalloc(sc->pass_on.count + 1, sizeof *sp->steps);
    for (size_t k = 0; k < sc->pass_on.count; k++) {
        const host_item *it = &sc->pass_on.items[k];
        int i = index_of(reg, it->text);
        if (i < 0 || !on[i])
            continue; /* switched off by pass_off */
        for (size_t j = 0; j < k; j++)
            if (strcmp(sc->pass_on.items[j].text, it->text) == 0)
                return ph_error_set(err, HOST_EXIT_CONFIG,
                                    "%s: pass %s is named twice in the ordered list of [%s] (%s)",
                                    it->where, it->text, host_stage_name(stage),
                                    sc->pass_on.items[j].where);
        sp->steps[sp->count++].plugin = host_registry_at(reg, (size_t)i);
    }
    return 0;
}

/* ------------------------------------------------------------- parameters */

static const ph_param_def no_params[] = {{NULL, 0, NULL, NULL}};

static const ph_param_def *table_of(const ph_pass_desc *d)
{
    return d->params ? d->params : no_params;
}

static const char *type_name(ph_param_type t)
{
    switch (t) {
    case PH_PARAM_INT: return "int";
    case PH_PARAM_FLOAT: return "float";
    case PH_PARAM_BOOL: return "bool";
    case PH_PARAM_STRING: return "string";
    }
    return "?";
}

static const ph_param_def *find_param(const ph_pass_desc *d, const char *key)
{
    for (const ph_param_def *p = table_of(d); p->name; p++)
        if (strcmp(p->name, key) == 0)
            return p;
    return NULL;
}

static int apply_setting(ph_params *params, const ph_pass_desc *d, const host_param_setting *s,
                         ph_error *err)
{
    const ph_param_def *def = find_param(d, s->key);
    if (!def) {
        char names[300] = "";
        for (const ph_param_def *p = table_of(d); p->name; p++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", p->name);
        }
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: pass %s has no parameter '%s' (%s%s)",
                            s->where, d->name, s->key, names[0] ? "it has: " : "it has none",
                            names);
    }
    ph_error perr = {0};
    if (ph_params_set(params, s->key, s->value, &perr) < 0)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s: pass %s: parameter %s: '%s' is not a valid %s", s->where,
                            d->name, s->key, s->value, type_name(def->type));
    return 0;
}

/* Every [pass.NAME] setting names a known pass and parameter with a value
 * of the right type, whether or not the pass runs. */
static int check_settings(const host_config *cfg, const host_registry *reg, ph_error *err)
{
    for (size_t i = 0; i < cfg->param_count; i++) {
        const host_param_setting *s = &cfg->params[i];
        const host_plugin *pl = host_registry_find(reg, s->pass);
        if (!pl)
            return unknown_pass(reg, s->where, s->pass, err);
        ph_params *p = ph_params_new(table_of(pl->desc), NULL);
        if (!p)
            return ph_error_set(err, HOST_EXIT_CONFIG, "pass %s: cannot set up parameters",
                                s->pass);
        int rc = apply_setting(p, pl->desc, s, err);
        ph_params_free(p);
        if (rc)
            return rc;
    }
    return 0;
}

/* The profile's values of a pass's parameters: the keys it declares
 * (ph_profile_key), then [target.pass.NAME]. */
static int profile_params(host_step *step, const host_profile *prof, ph_error *err)
{
    const ph_pass_desc *d = step->plugin->desc;
    for (const ph_profile_key *k = d->profile_keys; prof && k && k->key; k++) {
        const char *v = ph_target_value(prof->target, k->key);
        if (!k->param || !v)
            continue;
        char *where = host_xasprintf("%s: %s", prof->path, k->key);
        host_param_setting s = {.pass = (char *)d->name, .key = (char *)k->param, .value = (char *)v,
                                .where = where};
        int rc = apply_setting(step->params, d, &s, err);
        free(where);
        if (rc)
            return rc;
    }
    for (size_t i = 0; prof && i < prof->passes.count; i++) {
        const host_target_item *it = &prof->passes.items[i];
        if (strncmp(it->section, "pass.", 5) || strcmp(it->section + 5, d->name))
            continue;
        host_param_setting s = {.pass = (char *)d->name, .key = it->key, .value = it->value, .where = it->where};
        int rc = apply_setting(step->params, d, &s, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int make_params(host_step *step, int stage, const host_config *cfg, const host_profile *prof,
                       ph_error *err)
{
    const ph_pass_desc *d = step->plugin->desc;
    step->params = ph_params_new(table_of(d), NULL);
    if (!step->params)
        return ph_error_set(err, HOST_EXIT_CONFIG, "pass %s: cannot set up parameters", d->name);
    int prc = profile_params(step, prof, err);
    if (prc)
        return prc;
    for (int prio = HOST_PRIO_FILE; prio <= HOST_PRIO_SET; prio++) {
        for (size_t i = 0; i < cfg->param_count; i++) {
            const host_param_setting *s = &cfg->params[i];
            if (s->priority != prio || !(s->stage_mask & (1u << stage)) ||
                strcmp(s->pass, d->name) != 0)
                continue;
            int rc = apply_setting(step->params, d, s, err);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ----------------------------------------------------------------- stages */

static int build_stage(host_stage_plan *sp, int stage, const host_config *cfg,
                       const host_registry *reg, ph_error *err)
{
    const host_stage_config *sc = &cfg->stage[stage];
    size_t n = host_registry_count(reg);
    char *on = host_xcalloc(n, 1);
    const char **why = host_xcalloc(n, sizeof *why);
    sp->stage = stage;
    sp->max_iterations = sc->max_iterations;
    sp->allow_approximate = sc->allow_approximate;
    int rc = 0;
    if (stage == HOST_STAGE_ADAPT && *sc->target)
        rc = host_profile_load(sc->target, &sp->profile, err);
    sp->target = host_xstrdup(sp->profile ? ph_target_name(sp->profile->target) : "");
    /* every [target.pass.NAME] item names a pass and parameter it has,
     * whether or not the pass runs */
    for (size_t i = 0; sp->profile && !rc && i < sp->profile->passes.count; i++) {
        const host_target_item *it = &sp->profile->passes.items[i];
        if (strncmp(it->section, "pass.", 5))
            continue;
        const host_plugin *pl = host_registry_find(reg, it->section + 5);
        if (!pl) {
            rc = unknown_pass(reg, it->where, it->section + 5, err);
            break;
        }
        ph_params *tmp = ph_params_new(table_of(pl->desc), NULL);
        host_param_setting s = {.pass = it->section + 5, .key = it->key, .value = it->value, .where = it->where};
        rc = tmp ? apply_setting(tmp, pl->desc, &s, err) : HOST_EXIT_CONFIG;
        ph_params_free(tmp);
    }
    if (!rc)
        rc = select_passes(stage, sc, sp->profile, reg, on, why, err);
    if (!rc)
        rc = apply_level(stage, sc, reg, on, why, err);
    if (!rc)
        rc = refuse_approx(stage, sc, sp->profile, reg, on, why, err);
    if (!rc && sc->keep_order) {
        rc = given_order(sp, stage, sc, reg, on, err);
    } else if (!rc) {
        size_t *order = NULL, count = 0;
        rc = host_stage_order(reg, stage, on, &order, &count, err);
        sp->steps = host_xcalloc(count + 1, sizeof *sp->steps);
        for (size_t k = 0; k < count; k++)
            sp->steps[sp->count++].plugin = host_registry_at(reg, order[k]);
        free(order);
    }
    for (size_t i = 0; i < sp->count && !rc; i++)
        rc = make_params(&sp->steps[i], stage, cfg, sp->profile, err);
    free(on);
    free(why);
    return rc;
}

int host_plan_build(host_plan *plan, const host_config *cfg, const host_registry *reg,
                    ph_error *err)
{
    memset(plan, 0, sizeof *plan);
    int rc = check_settings(cfg, reg, err);
    for (int s = 0; s < HOST_STAGE_COUNT && !rc; s++)
        rc = build_stage(&plan->stage[s], s, cfg, reg, err);
    if (rc)
        host_plan_free(plan);
    return rc;
}

void host_plan_free(host_plan *plan)
{
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        host_stage_plan *sp = &plan->stage[s];
        for (size_t i = 0; i < sp->count; i++)
            if (sp->steps[i].params)
                ph_params_free(sp->steps[i].params);
        free(sp->steps);
        free(sp->target);
        host_profile_free(sp->profile);
        sp->profile = NULL;
        sp->steps = NULL;
        sp->target = NULL;
        sp->count = 0;
    }
}
