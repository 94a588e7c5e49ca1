/* host/config/profile.c - target profiles: find, read with their bases, list
 * (profile.h).
 */
#include "profile.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/exit.h"
#include "base/util.h"
#include "loader.h"

#define MAX_DIRS 16
#define MAX_BASE_DEPTH 8

int host_profile_is_path(const char *spec)
{
    size_t n = strlen(spec);
    return strchr(spec, '/') != NULL || (n > 4 && strcmp(spec + n - 4, ".ini") == 0);
}

size_t host_target_dirs(char **out, size_t max)
{
    size_t count = 0;
    const char *env = getenv("PASSHOST_TARGET_PATH");
    if (env && *env) {
        char *copy = host_xstrdup(env);
        for (char *save = NULL, *d = strtok_r(copy, ":", &save); d && count < max; d = strtok_r(NULL, ":", &save))
            out[count++] = host_xstrdup(d);
        free(copy);
    }
    char *dir = host_code_dir();
    const char *rel[] = {"../share/passhost/targets", "../../configs/targets", "../../../configs/targets"};
    for (size_t i = 0; dir && i < 3 && count < max; i++)
        out[count++] = host_xasprintf("%s/%s", dir, rel[i]);
    free(dir);
    return count;
}

static void free_dirs(char **dirs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
}

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Names of the shipped profiles (NAME.ini of the folders), each once, in
 * folder then name order; with their files when paths is not NULL. */
typedef struct shipped {
    char **names, **paths;
    size_t count, cap, cap2;
} shipped;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void shipped_scan(shipped *s)
{
    char *dirs[MAX_DIRS];
    size_t nd = host_target_dirs(dirs, MAX_DIRS);
    for (size_t i = 0; i < nd; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d)
            continue;
        char **found = NULL;
        size_t nf = 0, capf = 0;
        for (struct dirent *e; (e = readdir(d));) {
            size_t n = strlen(e->d_name);
            if (n <= 4 || strcmp(e->d_name + n - 4, ".ini") || e->d_name[0] == '.')
                continue;
            host_xgrow(&found, &capf, nf + 1, sizeof *found);
            found[nf++] = host_xstrndup(e->d_name, n - 4);
        }
        closedir(d);
        if (nf) /* found is NULL in a folder without profiles (qsort wants a pointer) */
            qsort(found, nf, sizeof *found, by_name);
        for (size_t k = 0; k < nf; k++) {
            int seen = 0;
            for (size_t j = 0; j < s->count && !seen; j++)
                seen = strcmp(s->names[j], found[k]) == 0;
            char *path = host_xasprintf("%s/%s.ini", dirs[i], found[k]);
            if (seen || !is_file(path)) {
                free(found[k]);
                free(path);
                continue;
            }
            host_xgrow(&s->names, &s->cap, s->count + 1, sizeof *s->names);
            host_xgrow(&s->paths, &s->cap2, s->count + 1, sizeof *s->paths);
            s->names[s->count] = found[k];
            s->paths[s->count++] = path;
        }
        free(found);
    }
    free_dirs(dirs, nd);
}

static void shipped_free(shipped *s)
{
    for (size_t i = 0; i < s->count; i++) {
        free(s->names[i]);
        free(s->paths[i]);
    }
    free(s->names);
    free(s->paths);
}

/* The file of spec: a path as given, or the shipped NAME.ini; NULL with
 * err naming the closest shipped names. */
static char *resolve(const char *spec, const char *where, ph_error *err)
{
    if (host_profile_is_path(spec)) {
        if (is_file(spec))
            return host_xstrdup(spec);
        ph_error_set(err, HOST_EXIT_CONFIG, "%s%starget profile %s: no such file", where ? where : "",
                     where ? ": " : "", spec);
        return NULL;
    }
    shipped s = {0};
    shipped_scan(&s);
    char *path = NULL;
    for (size_t i = 0; i < s.count && !path; i++)
        if (strcmp(s.names[i], spec) == 0)
            path = host_xstrdup(s.paths[i]);
    if (!path) {
        char near[200], all[400] = "";
        ph_close_names_text(spec, (const char *const *)s.names, s.count, near, sizeof near);
        for (size_t i = 0, len = 0; i < s.count && len < sizeof all; i++) {
            int w = snprintf(all + len, sizeof all - len, "%s%s", i ? ", " : "", s.names[i]);
            len += w > 0 ? (size_t)w : 0;
        }
        ph_error_set(err, HOST_EXIT_CONFIG, "%s%sunknown target '%s' (%s%s%s; or give a profile file)",
                     where ? where : "", where ? ": " : "", spec, *near ? "did you mean " : "shipped: ",
                     *near ? near : *all ? all : "none found", *near ? "?" : "");
    }
    shipped_free(&s);
    return path;
}

/* The name a profile goes by: its [target] name, else its file's name
 * without ".ini". */
static char *name_of(const host_target_items *items, const char *path)
{
    for (size_t i = 0; i < items->count; i++)
        if (!*items->items[i].section && strcmp(items->items[i].key, "name") == 0)
            return host_xstrdup(items->items[i].value);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(base);
    return host_xstrndup(base, n > 4 && strcmp(base + n - 4, ".ini") == 0 ? n - 4 : n);
}

static void append_name(char **names, const char *name)
{
    char *joined = *names && **names ? host_xasprintf("%s;%s", *names, name) : host_xstrdup(name);
    free(*names);
    *names = joined;
}

/* Read path and, first, its base into p.  chain: the real paths being
 * read (a base met again is a cycle). */
static int load_into(host_profile *p, const char *path, char **chain, size_t depth, ph_error *err)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        snprintf(real, sizeof real, "%s", path);
    for (size_t i = 0; i < depth; i++)
        if (strcmp(chain[i], real) == 0)
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: target profile extends itself (base)", path);
    if (depth >= MAX_BASE_DEPTH)
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: more than %d profiles extend one another (base)", path,
                            MAX_BASE_DEPTH);
    chain[depth] = real;
    host_target_items items = {0};
    int rc = host_config_read_profile(path, &items, err);
    char *own_name = rc ? NULL : name_of(&items, path);
    if (!rc)
        append_name(&p->names, own_name);
    for (size_t i = 0; i < items.count && !rc; i++) {
        const host_target_item *it = &items.items[i];
        if (*it->section || strcmp(it->key, "base"))
            continue;
        char *dir = host_dirname(path);
        char *spec = host_profile_is_path(it->value) ? host_path_resolve(dir, it->value) : host_xstrdup(it->value);
        char *base = resolve(spec, it->where, err);
        free(spec);
        free(dir);
        if (!base) {
            rc = HOST_EXIT_CONFIG;
            break;
        }
        rc = load_into(p, base, chain, depth + 1, err);
        free(base);
    }
    for (size_t i = 0; i < items.count && !rc; i++) {
        const host_target_item *it = &items.items[i];
        if (!*it->section && strcmp(it->key, "base") == 0)
            continue;
        if (strcmp(it->section, "passes") == 0 || strncmp(it->section, "pass.", 5) == 0) {
            host_xgrow(&p->passes.items, &p->passes.cap, p->passes.count + 1, sizeof *p->passes.items);
            host_target_item *copy = &p->passes.items[p->passes.count++];
            copy->section = host_xstrdup(it->section);
            copy->key = host_xstrdup(it->key);
            copy->value = host_xstrdup(it->value);
            copy->where = host_xstrdup(it->where);
            continue;
        }
        ph_error e = {0};
        if (ph_target_set(p->target, it->section, it->key, it->value, &e))
            rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s", it->where, e.message);
    }
    /* the profile's own name, not its base's */
    if (!rc && depth == 0) {
        ph_error e = {0};
        rc = ph_target_set(p->target, "", "name", own_name, &e)
                 ? ph_error_set(err, HOST_EXIT_CONFIG, "%s: [target] name: %s", path, e.message)
                 : 0;
    }
    free(own_name);
    host_target_items_free(&items);
    return rc;
}

/* The names read so far are in base-last order of reading (a base is
 * appended after its profile): nothing to reorder. */

int host_profile_load(const char *spec, host_profile **out, ph_error *err)
{
    *out = NULL;
    char *path = resolve(spec, NULL, err);
    if (!path)
        return HOST_EXIT_CONFIG;
    host_profile *p = host_xcalloc(1, sizeof *p);
    p->path = path;
    p->target = ph_target_new();
    if (!p->target) {
        host_profile_free(p);
        return ph_error_set(err, HOST_EXIT_CONFIG, "out of memory");
    }
    char *chain[MAX_BASE_DEPTH + 1];
    int rc = load_into(p, path, chain, 0, err);
    if (rc) {
        host_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void host_profile_free(host_profile *p)
{
    if (!p)
        return;
    ph_target_free(p->target);
    free(p->path);
    free(p->names);
    host_target_items_free(&p->passes);
    free(p);
}

int host_profile_list(FILE *out, ph_error *err)
{
    shipped s = {0};
    shipped_scan(&s);
    int rc = 0;
    if (!s.count) {
        char *dirs[MAX_DIRS];
        size_t nd = host_target_dirs(dirs, MAX_DIRS);
        fprintf(out, "no shipped target profiles (searched:");
        for (size_t i = 0; i < nd; i++)
            fprintf(out, " %s", dirs[i]);
        fprintf(out, ")\n");
        free_dirs(dirs, nd);
    }
    for (size_t i = 0; i < s.count && !rc; i++) {
        host_profile *p = NULL;
        rc = host_profile_load(s.paths[i], &p, err);
        if (rc)
            break;
        const char *summary = ph_target_value(p->target, "summary");
        const char *base = strchr(p->names, ';');
        fprintf(out, "%-12s %s%s%s%s  (%s)\n", s.names[i], summary ? summary : "", base ? " [base: " : "",
                base ? base + 1 : "", base ? "]" : "", s.paths[i]);
        host_profile_free(p);
    }
    shipped_free(&s);
    return rc;
}
