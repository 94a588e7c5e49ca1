/* host/config/loader.c - the plugin registry of loader.h: dlopen, entry symbol,
 * ABI check, descriptor validation, duplicate and shadowed names.
 *
 * Each plugin's descriptor is copied into a zeroed ph_pass_desc owned by the
 * registry, reading only the first struct_size bytes the plugin declares, so
 * a plugin built against an older minor version (shorter descriptor) loads
 * and its missing fields read as zero.  The strings and tables the copy
 * points to stay owned by the plugin.
 *
 * host_registry_load_dir calls are numbered: a name loaded by an earlier
 * call (an earlier folder of the search path) shadows the same name found
 * later, which is then unloaded again; the same name twice within one folder,
 * or through host_registry_load_file, is the duplicate-name error.
 */
#include "loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "order.h"
#include "passhost/target.h"

/* Told of each dlopen and dlclose (host_loader_set_phase_hook). */
static host_plugin_phase_fn g_phase;

void host_loader_set_phase_hook(host_plugin_phase_fn fn) { g_phase = fn; }

/* The host needs every field of ABI 1.0, up to and including run. */
#define HOST_DESC_MIN_SIZE (offsetof(ph_pass_desc, run) + sizeof(((ph_pass_desc *)0)->run))
#define HOST_MAX_ROWS 1024 /* a table longer than this lacks its terminator */

typedef struct entry {
    host_plugin plugin;
    ph_pass_desc copy; /* plugin.desc points here */
    unsigned generation;
} entry;

typedef struct skipped_file {
    char *path;
    char *name;    /* the file name without ".so": the pass it would be */
    char *message; /* why it was skipped */
} skipped_file;

struct host_registry {
    entry **entries;
    size_t count;
    size_t cap;
    unsigned generation; /* bumped by every host_registry_load_dir */
    skipped_file *skipped; /* files of a folder scan that are no pass plugin */
    size_t n_skipped, cap_skipped;
    char *pipeline_path; /* the first folder's pipeline.txt (order.h), or NULL */
};

host_registry *host_registry_new(void)
{
    return calloc(1, sizeof(host_registry));
}

static void entry_free(entry *e)
{
    if (!e)
        return;
    ph_ruleset_free(e->plugin.rules); /* before dlclose: it borrows the plugin's table */
    if (e->plugin.handle) {
        if (g_phase)
            g_phase(e->plugin.path, 0); /* its destructors run now */
        dlclose(e->plugin.handle);
        if (g_phase)
            g_phase(NULL, 0);
    }
    free(e->plugin.path);
    free(e);
}

void host_registry_free(host_registry *r)
{
    if (!r)
        return;
    for (size_t i = r->count; i-- > 0;)
        entry_free(r->entries[i]);
    free(r->entries);
    for (size_t i = 0; i < r->n_skipped; i++) {
        free(r->skipped[i].path);
        free(r->skipped[i].name);
        free(r->skipped[i].message);
    }
    free(r->skipped);
    free(r->pipeline_path);
    free(r);
}

/* ------------------------------------------------------ descriptor checks */

static int valid_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
            return 0;
    return 1;
}

static int malformed(ph_error *err, const char *path, const char *what)
{
    return ph_error_set(err, HOST_LOAD_MALFORMED, "%s: malformed pass descriptor: %s", path,
                        what);
}

static int check_name_list(const char *const *list, const char *field, const char *path,
                           ph_error *err)
{
    if (!list)
        return 0;
    for (size_t i = 0; list[i]; i++) {
        if (i >= HOST_MAX_ROWS)
            return malformed(err, path, field);
        if (!valid_name(list[i])) {
            char what[128];
            snprintf(what, sizeof what, "%s[%zu] is not a valid pass name", field, i);
            return malformed(err, path, what);
        }
    }
    return 0;
}

static int check_params(const ph_param_def *table, const char *path, ph_error *err)
{
    if (!table)
        return 0;
    char what[300];
    size_t n = 0;
    for (; table[n].name; n++) {
        const ph_param_def *row = &table[n];
        if (n >= HOST_MAX_ROWS)
            return malformed(err, path, "parameter table has no terminating NULL-name row");
        if (!*row->name) {
            snprintf(what, sizeof what, "parameter %zu has an empty name", n);
            return malformed(err, path, what);
        }
        if (row->type < PH_PARAM_INT || row->type > PH_PARAM_STRING) {
            snprintf(what, sizeof what, "parameter '%.60s' has unknown type %d", row->name,
                     (int)row->type);
            return malformed(err, path, what);
        }
        for (size_t j = 0; j < n; j++) {
            if (strcmp(table[j].name, row->name) == 0) {
                snprintf(what, sizeof what, "parameter '%.60s' declared twice", row->name);
                return malformed(err, path, what);
            }
        }
    }
    ph_error perr = {0};
    ph_params *p = ph_params_new(table, &perr);
    if (!p)
        return ph_error_set(err, HOST_LOAD_MALFORMED,
                            "%s: malformed pass descriptor: parameter default: %.300s", path,
                            perr.message[0] ? perr.message : "does not parse");
    ph_params_free(p);
    return 0;
}

/* Every profile key a descriptor declares is a key of the format
 * (target.h), and its parameter one of the pass's table. */
static int check_profile_keys(const ph_pass_desc *d, const char *path, ph_error *err)
{
    char what[400];
    for (const ph_profile_key *k = d->profile_keys; k && k->key; k++) {
        ph_error kerr = {0};
        if (ph_target_key_check(k->key, &kerr)) {
            snprintf(what, sizeof what, "profile key: %.300s", kerr.message);
            return malformed(err, path, what);
        }
        if (!k->param)
            continue;
        const ph_param_def *p = d->params;
        while (p && p->name && strcmp(p->name, k->param))
            p++;
        if (!p || !p->name) {
            snprintf(what, sizeof what, "profile key %.100s sets parameter '%.80s', which the pass does not declare",
                     k->key, k->param);
            return malformed(err, path, what);
        }
    }
    return 0;
}

static int check_desc(const ph_pass_desc *d, const char *path, ph_error *err)
{
    char what[160];
    if (!valid_name(d->name)) {
        if (!d->name)
            return malformed(err, path, "name is NULL");
        if (!*d->name)
            return malformed(err, path, "name is empty");
        snprintf(what, sizeof what, "name '%.80s' is not [a-z0-9_.]+", d->name);
        return malformed(err, path, what);
    }
    if (!d->run && !d->rules)
        return malformed(err, path, "neither run nor rules is set");
    if (d->run && d->rules)
        return malformed(err, path, "both run and rules are set (a pass is one or the other)");
    unsigned all = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT;
    if (!(d->stages & all) || (d->stages & ~all)) {
        snprintf(what, sizeof what, "stages 0x%x: need PH_STAGE_OPTIMIZE and/or PH_STAGE_ADAPT",
                 d->stages);
        return malformed(err, path, what);
    }
    if ((int)d->exactness < PH_EXACT || (int)d->exactness > PH_APPROX) {
        snprintf(what, sizeof what, "exactness %d is not PH_EXACT, PH_FP or PH_APPROX",
                 (int)d->exactness);
        return malformed(err, path, what);
    }
    int rc = check_name_list(d->run_after, "run_after", path, err);
    if (!rc)
        rc = check_name_list(d->run_before, "run_before", path, err);
    if (!rc)
        rc = check_params(d->params, path, err);
    if (!rc)
        rc = check_profile_keys(d, path, err);
    return rc;
}

/* Read the descriptor: ABI, size, then copy and validate the fields. */
static int read_desc(entry *e, ph_pass_entry_fn fn, const char *path, ph_error *err)
{
    const ph_pass_desc *d = fn();
    if (!d)
        return malformed(err, path, "the entry function returned NULL");
    if (d->abi_major != PH_ABI_MAJOR)
        return ph_error_set(err, HOST_LOAD_ABI_MISMATCH,
                            "%s: plugin ABI %u.%u, this host supports %d.x (rebuild the plugin "
                            "against this SDK)", path, (unsigned)d->abi_major,
                            (unsigned)d->abi_minor, PH_ABI_MAJOR);
    if (d->struct_size < HOST_DESC_MIN_SIZE) {
        char what[128];
        snprintf(what, sizeof what, "struct_size %u is smaller than the %zu bytes of ABI %d.0",
                 (unsigned)d->struct_size, (size_t)HOST_DESC_MIN_SIZE, PH_ABI_MAJOR);
        return malformed(err, path, what);
    }
    size_t n = d->struct_size < sizeof e->copy ? d->struct_size : sizeof e->copy;
    memset(&e->copy, 0, sizeof e->copy);
    memcpy(&e->copy, d, n);
    e->plugin.desc = &e->copy;
    int rc = check_desc(&e->copy, path, err);
    if (rc || !e->copy.rules)
        return rc;
    /* A pattern pass: its patterns are parsed now, so a malformed one is a
     * load error that names the plugin and the position. */
    ph_error perr = {0};
    e->plugin.rules = ph_ruleset_new(e->copy.rules, &perr);
    if (!e->plugin.rules)
        return ph_error_set(err, HOST_LOAD_MALFORMED, "%s: pass %s: %s", path, e->copy.name,
                            perr.message[0] ? perr.message : ph_strerror(perr.code));
    return 0;
}

/* dlopen and read one plugin into a new entry (not yet registered). */
static int open_plugin(const char *path, entry **out, ph_error *err)
{
    *out = NULL;
    entry *e = host_xcalloc(1, sizeof *e);
    e->plugin.path = host_xstrdup(path);
    /* dlopen searches the library path for a name without '/'. */
    char *open_path = strchr(path, '/') ? host_xstrdup(path) : host_xasprintf("./%s", path);
    dlerror();
    if (g_phase)
        g_phase(path, 1); /* its constructors run now */
    e->plugin.handle = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
    if (g_phase)
        g_phase(NULL, 1);
    free(open_path);
    int rc = 0;
    if (!e->plugin.handle) {
        const char *why = dlerror();
        rc = ph_error_set(err, HOST_LOAD_NOT_LOADABLE, "%s: cannot load plugin: %s", path,
                          why ? why : "unknown dlopen error");
    } else {
        dlerror();
        void *sym = dlsym(e->plugin.handle, PH_PASS_ENTRY_SYMBOL);
        if (!sym)
            rc = ph_error_set(err, HOST_LOAD_NO_ENTRY,
                              "%s: no entry symbol %s (define the pass with PH_PASS_DEFINE)",
                              path, PH_PASS_ENTRY_SYMBOL);
        else {
            ph_pass_entry_fn fn;
            memcpy(&fn, &sym, sizeof fn); /* object pointer to function pointer */
            rc = read_desc(e, fn, path, err);
        }
    }
    if (rc) {
        entry_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

int host_plugin_run(const host_plugin *p, ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return p->desc->run ? ph_ctx_run(ctx, g, p->desc->run, params) : ph_ruleset_run(p->rules, g, params, ctx);
}

static entry *find_entry(const host_registry *r, const char *name)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->entries[i]->copy.name, name) == 0)
            return r->entries[i];
    return NULL;
}

/* Register e (taking ownership): a duplicate within one generation is an
 * error, a name from an earlier generation shadows e. */
static int add_entry(host_registry *r, entry *e, unsigned generation, ph_error *err)
{
    e->generation = generation;
    entry *old = find_entry(r, e->copy.name);
    if (old && old->generation == generation) {
        int rc = ph_error_set(err, HOST_LOAD_DUPLICATE,
                              "%s: duplicate pass name '%s' (also defined by %s)",
                              e->plugin.path, e->copy.name, old->plugin.path);
        entry_free(e);
        return rc;
    }
    if (old) {
        entry_free(e); /* shadowed by an earlier folder */
        return 0;
    }
    host_xgrow(&r->entries, &r->cap, r->count + 1, sizeof *r->entries);
    r->entries[r->count++] = e;
    return 0;
}

int host_registry_load_file(host_registry *r, const char *path, ph_error *err)
{
    entry *e;
    int rc = open_plugin(path, &e, err);
    if (rc)
        return rc;
    /* A single file is its own folder: any name already loaded clashes. */
    entry *old = find_entry(r, e->copy.name);
    return add_entry(r, e, old ? old->generation : ++r->generation, err);
}

static int is_plugin_file(const char *dir, const char *name)
{
    size_t n = strlen(name);
    if (n <= 3 || strcmp(name + n - 3, ".so") != 0)
        return 0;
    char *path = host_xasprintf("%s/%s", dir, name);
    struct stat st;
    int ok = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int host_registry_load_dir(host_registry *r, const char *dir, ph_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return ph_error_set(err, HOST_LOAD_NOT_LOADABLE, "%s: cannot open plugin folder: %m",
                            dir);
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!is_plugin_file(dir, de->d_name))
            continue;
        host_xgrow(&names, &cap, count + 1, sizeof *names);
        names[count++] = host_xstrdup(de->d_name);
    }
    closedir(d);
    if (count > 1)
        qsort(names, count, sizeof *names, cmp_names);
    unsigned generation = ++r->generation;
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        if (!rc) {
            char *path = host_xasprintf("%s/%s", dir, names[i]);
            entry *e;
            rc = open_plugin(path, &e, err);
            if (rc == HOST_LOAD_NO_ENTRY) { /* a shared object that is no pass: skipped */
                host_xgrow(&r->skipped, &r->cap_skipped, r->n_skipped + 1, sizeof *r->skipped);
                skipped_file *sk = &r->skipped[r->n_skipped++];
                sk->path = host_xstrdup(path);
                sk->name = host_xstrndup(names[i], strlen(names[i]) - 3);
                sk->message = host_xstrdup(err->message);
                rc = 0;
            } else if (!rc) {
                rc = add_entry(r, e, generation, err);
            }
            free(path);
        }
        free(names[i]);
    }
    free(names);
    if (!rc && !r->pipeline_path) {
        char *pipeline = host_xasprintf("%s/%s", dir, HOST_PIPELINE_FILE);
        struct stat st;
        if (stat(pipeline, &st) == 0 && S_ISREG(st.st_mode))
            r->pipeline_path = pipeline;
        else
            free(pipeline);
    }
    return rc;
}

const char *host_registry_pipeline_path(const host_registry *r)
{
    return r->pipeline_path;
}

const host_plugin *host_registry_find(const host_registry *r, const char *name)
{
    entry *e = find_entry(r, name);
    return e ? &e->plugin : NULL;
}

size_t host_registry_skipped_count(const host_registry *r)
{
    return r->n_skipped;
}

const char *host_registry_skipped(const host_registry *r, size_t i)
{
    return i < r->n_skipped ? r->skipped[i].message : NULL;
}

const char *host_registry_skipped_for(const host_registry *r, const char *pass_name)
{
    for (size_t i = 0; i < r->n_skipped; i++)
        if (strcmp(r->skipped[i].name, pass_name) == 0)
            return r->skipped[i].message;
    return NULL;
}

size_t host_registry_count(const host_registry *r)
{
    return r->count;
}

const host_plugin *host_registry_at(const host_registry *r, size_t i)
{
    return i < r->count ? &r->entries[i]->plugin : NULL;
}

/* The file the host code runs from: the passhost program, or the shared
 * library it was linked into (libpasshost-pipeline.so, whose link map
 * names it; the program's own map has an empty name).  Writes into
 * path[PATH_MAX]; 0 when it cannot be told. */
static int host_code_file(char *path)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (dladdr1((void *)&host_default_plugin_dirs, &info, (void **)&map, RTLD_DL_LINKMAP) &&
        map && map->l_name && map->l_name[0] && realpath(map->l_name, path))
        return 1;
    ssize_t n = readlink("/proc/self/exe", path, PATH_MAX - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    return 1;
}

char *host_code_dir(void)
{
    char file[PATH_MAX];
    return host_code_file(file) ? host_dirname(file) : NULL;
}

size_t host_default_plugin_dirs(char **out, size_t max)
{
    /* bin/passhost or lib/libpasshost-pipeline.so: ../plugins is the build
     * tree's folder, ../lib/passhost/plugins the installed one */
    char *dir = host_code_dir();
    if (!dir)
        return 0;
    const char *rel[] = {"../plugins", "../lib/passhost/plugins"};
    size_t count = 0;
    for (size_t i = 0; i < 2 && count < max; i++)
        out[count++] = host_xasprintf("%s/%s", dir, rel[i]);
    free(dir);
    return count;
}
