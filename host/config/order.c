/* host/config/order.c - the run order of each stage (order.h). */
#include "order.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/util.h"
#include "plan.h"

/* ------------------------------------------------------------ the file */

typedef struct listed {
    char *name;
    int line;
} listed;

typedef struct pipeline_file {
    const char *path; /* borrowed from the registry */
    listed *stage[HOST_STAGE_COUNT];
    size_t count[HOST_STAGE_COUNT], cap[HOST_STAGE_COUNT];
} pipeline_file;

static void file_free(pipeline_file *f)
{
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        for (size_t i = 0; i < f->count[s]; i++)
            free(f->stage[s][i].name);
        free(f->stage[s]);
    }
    memset(f, 0, sizeof *f);
}

static int is_pass_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
            return 0;
    return 1;
}

/* One line (comment and blanks already gone) into f; *stage is the section. */
static int file_line(pipeline_file *f, char *text, int line, int *stage, ph_error *err)
{
    if (text[0] == '[') {
        size_t n = strlen(text);
        if (n < 2 || text[n - 1] != ']')
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s:%d: a section header ends with ']'",
                                f->path, line);
        text[n - 1] = '\0';
        char *name = host_trim(text + 1);
        for (int s = 0; s < HOST_STAGE_COUNT; s++)
            if (strcmp(name, host_stage_name(s)) == 0)
                return *stage = s, 0;
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s:%d: unknown section [%.100s] (expected [optimize] or [adapt])",
                            f->path, line, name);
    }
    if (!is_pass_name(text))
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s:%d: '%.100s' is not a pass name ([a-z0-9_.]+, one a line)",
                            f->path, line, text);
    if (*stage < 0)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s:%d: pass %.100s comes before any [optimize] or [adapt] section",
                            f->path, line, text);
    int s = *stage;
    for (size_t i = 0; i < f->count[s]; i++)
        if (strcmp(f->stage[s][i].name, text) == 0)
            return ph_error_set(err, HOST_EXIT_CONFIG,
                                "%s:%d: pass %s is listed twice in [%s] (also on line %d)",
                                f->path, line, text, host_stage_name(s), f->stage[s][i].line);
    host_xgrow(&f->stage[s], &f->cap[s], f->count[s] + 1, sizeof *f->stage[s]);
    f->stage[s][f->count[s]++] = (listed){host_xstrdup(text), line};
    return 0;
}

static int file_read(pipeline_file *f, const char *path, ph_error *err)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    FILE *in = fopen(path, "r");
    if (!in)
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    int line = 0, stage = -1, rc = 0;
    while (!rc && getline(&buf, &cap, in) >= 0) {
        line++;
        buf[strcspn(buf, "#")] = '\0';
        char *text = host_trim(buf);
        if (*text)
            rc = file_line(f, text, line, &stage, err);
    }
    if (!rc && ferror(in))
        rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s", path, strerror(errno));
    free(buf);
    fclose(in);
    if (rc)
        file_free(f);
    return rc;
}

/* -------------------------------------------------------------- hints */

static int names_in(const char *const *list, const char *name)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return 1;
    return 0;
}

int host_pass_precedes(const ph_pass_desc *a, const ph_pass_desc *b)
{
    return names_in(b->run_after, a->name) || names_in(a->run_before, b->name);
}

/* The hint that makes a precede b, as "b declares run_after a" text. */
static void hint_text(const ph_pass_desc *a, const ph_pass_desc *b, char *out, size_t size)
{
    if (names_in(b->run_after, a->name))
        snprintf(out, size, "%s declares run_after %s", b->name, a->name);
    else
        snprintf(out, size, "%s declares run_before %s", a->name, b->name);
}

/* -------------------------------------------------------------- order */

static unsigned stage_bit(int stage)
{
    return stage == HOST_STAGE_OPTIMIZE ? PH_STAGE_OPTIMIZE : PH_STAGE_ADAPT;
}

/* Where a pass goes before the hints are applied: listed passes at their
 * line (sub 0); an unlisted one just after (sub 1) or just before (sub -1)
 * a listed pass, or after all of them; then by name. */
typedef struct place {
    size_t at;
    int sub;
    const char *name;
} place;

static int place_less(const place *a, const place *b)
{
    if (a->at != b->at)
        return a->at < b->at;
    if (a->sub != b->sub)
        return a->sub < b->sub;
    return strcmp(a->name, b->name) < 0;
}

/* Check the stage's section against the registry; pos[i] is the listed
 * position of stage pass i, or -1. */
static int check_listed(const pipeline_file *f, int stage, const host_registry *reg,
                        const size_t *idx, size_t n, long *pos, ph_error *err)
{
    for (size_t i = 0; i < n; i++)
        pos[i] = -1;
    for (size_t k = 0; k < f->count[stage]; k++) {
        const listed *l = &f->stage[stage][k];
        const host_plugin *p = host_registry_find(reg, l->name);
        if (!p) {
            const char *near = host_closest_pass(reg, l->name);
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s:%d: unknown pass '%s'%s%s%s", f->path,
                                l->line, l->name, near ? " (did you mean '" : "",
                                near ? near : "", near ? "'?)" : "");
        }
        size_t i = 0;
        while (i < n && host_registry_at(reg, idx[i]) != p)
            i++;
        if (i == n)
            return ph_error_set(err, HOST_EXIT_CONFIG,
                                "%s:%d: pass %s is listed in [%s] but does not run in that stage",
                                f->path, l->line, l->name, host_stage_name(stage));
        pos[i] = (long)k;
    }
    /* the hints of the listed passes must agree with the list */
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < n; b++) {
            if (pos[a] < 0 || pos[b] < 0 || pos[a] >= pos[b])
                continue;
            const ph_pass_desc *da = host_registry_at(reg, idx[a])->desc;
            const ph_pass_desc *db = host_registry_at(reg, idx[b])->desc;
            if (!host_pass_precedes(db, da))
                continue;
            char why[300];
            hint_text(db, da, why, sizeof why);
            return ph_error_set(err, HOST_EXIT_PASS, "%s:%d: %s is listed before %s (line %d), but %s",
                                f->path, f->stage[stage][pos[a]].line, da->name, db->name,
                                f->stage[stage][pos[b]].line, why);
        }
    }
    return 0;
}

/* The places of the stage's passes idx[0..n): listed passes at their line,
 * the others next to the listed pass (run or not) their hints tie them to. */
static place *places(const host_registry *reg, const size_t *idx, size_t n, const long *pos,
                     size_t n_listed)
{
    place *pl = host_xcalloc(n + 1, sizeof *pl);
    for (size_t i = 0; i < n; i++) {
        const ph_pass_desc *d = host_registry_at(reg, idx[i])->desc;
        pl[i].name = d->name;
        if (pos[i] >= 0) {
            pl[i].at = (size_t)pos[i];
            continue;
        }
        long after = -1, before = -1;
        for (size_t j = 0; j < n; j++) {
            if (pos[j] < 0)
                continue;
            const ph_pass_desc *l = host_registry_at(reg, idx[j])->desc;
            if (host_pass_precedes(l, d) && pos[j] > after)
                after = pos[j];
            if (host_pass_precedes(d, l) && (before < 0 || pos[j] < before))
                before = pos[j];
        }
        pl[i].at = after >= 0 ? (size_t)after : before >= 0 ? (size_t)before : n_listed;
        pl[i].sub = after < 0 && before >= 0 ? -1 : 1;
    }
    return pl;
}

/* The selected passes (sel[i]) of idx[0..n) in run order into out: the
 * listed order and every hint among them hold; otherwise by place. */
static int sort_stage(const host_registry *reg, int stage, const size_t *idx, size_t n,
                      const char *sel, const long *pos, const place *pl, const char *file,
                      size_t *out, size_t *count, ph_error *err)
{
    char *prec = host_xcalloc(n * n + 1, 1); /* prec[a * n + b]: a before b */
    size_t *waiting = host_xcalloc(n + 1, sizeof *waiting); /* unplaced predecessors */
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < n && sel[a]; b++) {
            if (a == b || !sel[b])
                continue;
            int listed_before = pos[a] >= 0 && pos[b] >= 0 && pos[a] < pos[b];
            prec[a * n + b] = (char)(listed_before ||
                                     host_pass_precedes(host_registry_at(reg, idx[a])->desc,
                                                        host_registry_at(reg, idx[b])->desc));
            waiting[b] += (size_t)prec[a * n + b];
        }
    }
    char *done = host_xcalloc(n + 1, 1);
    size_t wanted = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        wanted += sel[i] != 0;
    for (; k < wanted; k++) {
        size_t pick = n;
        for (size_t i = 0; i < n; i++)
            if (sel[i] && !done[i] && waiting[i] == 0 && (pick == n || place_less(&pl[i], &pl[pick])))
                pick = i;
        if (pick == n)
            break;
        done[pick] = 1;
        out[k] = idx[pick];
        for (size_t b = 0; b < n; b++)
            waiting[b] -= (size_t)prec[pick * n + b];
    }
    *count = k;
    int rc = 0;
    if (k < wanted) {
        char names[400] = "";
        int any_listed = 0;
        for (size_t i = 0; i < n; i++) {
            if (!sel[i] || done[i])
                continue;
            any_listed |= pos[i] >= 0;
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", pl[i].name);
        }
        char *with = any_listed ? host_xasprintf(" (with the order of %s)", file) : host_xstrdup("");
        rc = ph_error_set(err, HOST_EXIT_PASS,
                          "stage %s: run_after/run_before hints form a cycle among: %s%s",
                          host_stage_name(stage), names, with);
        free(with);
    }
    free(done);
    free(waiting);
    free(prec);
    return rc;
}

/* The loaded passes that declare stage, as registry indices (allocated). */
static size_t *stage_passes(const host_registry *reg, int stage, size_t *n)
{
    size_t total = host_registry_count(reg);
    size_t *idx = host_xcalloc(total + 1, sizeof *idx);
    *n = 0;
    for (size_t i = 0; i < total; i++)
        if (host_registry_at(reg, i)->desc->stages & stage_bit(stage))
            idx[(*n)++] = i;
    return idx;
}

int host_stage_order(const host_registry *reg, int stage, const char *only, size_t **out,
                     size_t *count, ph_error *err)
{
    *out = NULL;
    *count = 0;
    pipeline_file f = {0};
    const char *path = host_registry_pipeline_path(reg);
    int rc = path ? file_read(&f, path, err) : 0;
    size_t n = 0, *idx = NULL;
    long *pos = NULL;
    /* every section is checked, whichever stage is asked for */
    for (int s = 0; s < HOST_STAGE_COUNT && !rc; s++) {
        if (s == stage)
            continue;
        size_t *other = stage_passes(reg, s, &n);
        long *other_pos = host_xcalloc(n + 1, sizeof *other_pos);
        rc = check_listed(&f, s, reg, other, n, other_pos, err);
        free(other_pos);
        free(other);
    }
    idx = stage_passes(reg, stage, &n);
    pos = host_xcalloc(n + 1, sizeof *pos);
    char *sel = host_xcalloc(n + 1, 1);
    for (size_t i = 0; i < n; i++)
        sel[i] = !only || only[idx[i]];
    place *pl = NULL;
    size_t *order = host_xcalloc(n + 1, sizeof *order), k = 0;
    if (!rc)
        rc = check_listed(&f, stage, reg, idx, n, pos, err);
    if (!rc) {
        pl = places(reg, idx, n, pos, f.count[stage]);
        rc = sort_stage(reg, stage, idx, n, sel, pos, pl, path ? path : "", order, &k, err);
    }
    free(pl);
    free(pos);
    free(sel);
    free(idx);
    file_free(&f);
    if (rc) {
        free(order);
        return rc;
    }
    *out = order;
    *count = k;
    return 0;
}

int host_catalogue_order(const host_registry *reg, size_t **out, size_t *count, ph_error *err)
{
    *out = NULL;
    *count = 0;
    size_t *all = host_xcalloc(host_registry_count(reg) + 1, sizeof *all);
    size_t n = 0;
    int rc = 0;
    for (int s = 0; s < HOST_STAGE_COUNT && !rc; s++) {
        size_t *idx, k;
        rc = host_stage_order(reg, s, NULL, &idx, &k, err);
        for (size_t i = 0; i < k; i++) {
            size_t j = 0;
            while (j < n && all[j] != idx[i])
                j++;
            if (j == n)
                all[n++] = idx[i];
        }
        free(idx);
    }
    if (rc) {
        free(all);
        return rc;
    }
    *out = all;
    *count = n;
    return 0;
}
