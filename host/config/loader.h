/* host/config/loader.h - finds pass plugins, dlopens them and checks their descriptors.
 *
 * The order in which plugins are found decides nothing about the order in
 * which they run (order.h): only which of two passes of one name is used.
 *
 * A registry owns the dlopen handles of every plugin it loaded; descriptors
 * stay valid until host_registry_free.  Load errors are one line each, naming
 * the file: not loadable (with dlerror()), no entry symbol, ABI mismatch
 * (found vs supported), malformed descriptor, duplicate pass name.
 */
#ifndef PASSHOST_HOST_LOADER_H
#define PASSHOST_HOST_LOADER_H

#include <stddef.h>

#include "passhost/host.h"
#include "passhost/plugin.h"

typedef struct host_plugin {
    const ph_pass_desc *desc; /* borrowed from the plugin; valid while loaded */
    char *path;               /* owned: the file it came from */
    void *handle;             /* owned: dlopen handle */
    ph_ruleset *rules;        /* owned: a pattern pass's compiled rules, or NULL */
} host_plugin;

typedef struct host_registry host_registry;

/* Load errors, distinct so callers and tests can tell them apart. */
enum {
    HOST_LOAD_OK = 0,
    HOST_LOAD_NOT_LOADABLE = -101,
    HOST_LOAD_NO_ENTRY = -102,
    HOST_LOAD_ABI_MISMATCH = -103,
    HOST_LOAD_MALFORMED = -104,
    HOST_LOAD_DUPLICATE = -105
};

/* A new empty registry; caller frees with host_registry_free.  NULL on OOM. */
host_registry *host_registry_new(void);
/* Unloads every plugin.  NULL allowed. */
void host_registry_free(host_registry *r);

/* Load one plugin file.  0 or a HOST_LOAD_* code with a one-line message in
 * err naming the file. */
int host_registry_load_file(host_registry *r, const char *path, ph_error *err);

/* Load every *.so in dir, in name order.  Stops at the first error.  A file
 * without the entry symbol (a shared object that is no pass plugin) is
 * skipped and remembered: see host_registry_skipped.  The first folder
 * loaded that holds a pipeline.txt gives the registry its pipeline file
 * (read when an order is asked for: order.h). */
int host_registry_load_dir(host_registry *r, const char *dir, ph_error *err);

/* The pipeline file of the first folder that had one, or NULL; borrowed. */
const char *host_registry_pipeline_path(const host_registry *r);

/* The files folder scans skipped, each as its one-line load message
 * (naming the file); borrowed, valid until the registry is freed. */
size_t host_registry_skipped_count(const host_registry *r);
const char *host_registry_skipped(const host_registry *r, size_t i);
/* The message of a skipped file NAME.so for pass_name, or NULL. */
const char *host_registry_skipped_for(const host_registry *r, const char *pass_name);

/* Told of each plugin file just before it is dlopen'ed (loading 1: its
 * constructors run) or dlclose'd (loading 0: its destructors run), and
 * with path NULL when that is over.  The supervised worker publishes it,
 * so a constructor or destructor that hangs or crashes is named
 * (supervise.h).  One hook per process (the host is a program); NULL: none.
 * path is borrowed for the call. */
typedef void (*host_plugin_phase_fn)(const char *path, int loading);
void host_loader_set_phase_hook(host_plugin_phase_fn fn);

/* Run a loaded pass on g: its run function, or its rules through
 * ph_ruleset_run.  The pass's rewrite count or a negative PH_E* code. */
int host_plugin_run(const host_plugin *p, ph_graph *g, const ph_params *params, ph_ctx *ctx);

/* Borrowed; NULL when no plugin has that name. */
const host_plugin *host_registry_find(const host_registry *r, const char *name);
size_t host_registry_count(const host_registry *r);
const host_plugin *host_registry_at(const host_registry *r, size_t i);

/* The default plugin folders after plugin_dir and PASSHOST_PLUGIN_PATH:
 * <exe dir>/../plugins (the build tree) and <exe dir>/../lib/passhost/plugins
 * (an install), where <exe dir> is the folder of the passhost program, or of
 * libpasshost-pipeline.so when the host runs embedded in another program.  Fills up to max entries of out (owned by caller, free each);
 * returns how many. */
size_t host_default_plugin_dirs(char **out, size_t max);
/* The folder of the passhost program, or of libpasshost-pipeline.so when
 * embedded (caller frees); NULL when it cannot be told. */
char *host_code_dir(void);

#endif
