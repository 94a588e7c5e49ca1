/* host/config/config.h - the run configuration: INI file, custom_config files and
 * `--set SECTION.KEY=VALUE` overrides, as plain data.
 *
 * This module knows the keys and their types but nothing about plugins: pass
 * names and pass parameters are kept as text with the place they came from
 * ("file:line" or "--set section.key"), and host_plan_build (plan.h) checks
 * them against the loaded passes.
 *
 * Sections and keys (docs/config.md is the user's reference):
 *   [model]     input, output, plugin_dir, log_path, input_shape,
 *               input_shape_range, infer_shapes, write_shapes, pass_timeout_s,
 *               load_timeout_s, external_data_threshold, external_data_min_size
 *   [optimize]  pass_on, pass_off, no_integral, keep_order, max_iterations,
 *               allow_approximate, level, custom_config
 *   [adapt]     the same keys plus target
 *   [pass.NAME] KEY = VALUE parameters of pass NAME
 *   [target...] a target profile (docs/targets.md): a file holding one is
 *               the adapt stage's profile unless target is set elsewhere
 *   [verify]    runs, seed, budget_factor, budget_ulps, atol, rtol, data, range
 *               (numeric checks: --verify; verify.h)
 * Relative paths in a file are relative to that file's folder; paths given
 * with --set are used as given.  Every key may appear once per file; an
 * indented line continues the previous key (lists only).
 *
 * Use: host_config_new, then host_config_load_file and/or
 * host_config_load_text (optional), any number of
 * host_config_set, then host_config_finish (reads the custom_config files).
 * Every function returns 0 or a HOST_EXIT_* code with a one-line message in
 * err.  Ownership: the config owns every string in it; callers borrow.
 */
#ifndef PASSHOST_HOST_CONFIG_H
#define PASSHOST_HOST_CONFIG_H

#include <stddef.h>

#include "passhost/error.h"

enum { HOST_STAGE_OPTIMIZE = 0, HOST_STAGE_ADAPT = 1, HOST_STAGE_COUNT = 2 };

#define HOST_DEFAULT_MAX_ITERATIONS 16
/* Most seconds one plugin may take to load or unload under the supervisor. */
#define HOST_DEFAULT_LOAD_TIMEOUT_S 60

/* One value as written, and where: "file:line" or "--set section.key". */
typedef struct host_item {
    char *text;
    char *where;
} host_item;

typedef struct host_list {
    host_item *items;
    size_t count;
} host_list;

/* Append each ';'- or ','-separated, optionally quoted, trimmed item of
 * text (empty ones skipped), each with a copy of where. */
void host_list_append(host_list *l, const char *text, const char *where);
/* Append text as one item, as it is (a path may hold ',' or ';'). */
void host_list_add(host_list *l, const char *text, const char *where);
/* Free every item; the list is empty again. */
void host_list_clear(host_list *l);

/* --no-fold adds these to pass_off with this `where`; such an item only
 * applies when the pass is loaded (the plan ignores it otherwise). */
#define HOST_NO_FOLD_PASSES "constant_folding,fold_constant_inputs"
#define HOST_WHERE_NO_FOLD "--no-fold"

/* [STAGE] level: the most a pass of the stage may change results, by its
 * exactness (ph_exactness), like ONNX Runtime's optimization levels and a
 * compiler's -O levels and fast-math: none runs no pass; exact only
 * bit-exact passes; fp (the default) exact and fp passes; approx any pass,
 * approx ones included (as allow_approximate = true).  Passes of the
 * default list above the level are left out; one named in pass_on is an
 * error.  -O0..-O3 stand for none, exact, fp, approx (docs/config.md). */
enum { HOST_LEVEL_NONE = 0, HOST_LEVEL_EXACT = 1, HOST_LEVEL_FP = 2, HOST_LEVEL_APPROX = 3 };
/* "none", "exact", "fp", "approx" */
const char *host_level_name(int level);
/* The level named text, or -1. */
int host_level_parse(const char *text);

typedef struct host_stage_config {
    host_list pass_on;
    host_list pass_off;
    int no_integral;
    int keep_order;     /* run pass_on in the order written (needs no_integral) */
    int max_iterations;
    int allow_approximate;
    char *allow_approximate_where; /* where it was set, NULL if never */
    int level;                     /* HOST_LEVEL_* (default fp) */
    char *level_where;             /* where it was set, NULL if never */
    char *custom_config;           /* resolved path, NULL if none */
    char *custom_config_where;
    char *target;                  /* "" when none; only [adapt] sets it */
} host_stage_config;

/* A [pass.NAME] KEY = VALUE setting.  Applied to a pass's parameters in
 * order of priority (main file < custom_config < --set), then file order. */
enum { HOST_PRIO_FILE = 0, HOST_PRIO_CUSTOM = 1, HOST_PRIO_SET = 2 };

typedef struct host_param_setting {
    char *pass;
    char *key;
    char *value;
    char *where;
    unsigned stage_mask; /* 1u << HOST_STAGE_* this setting applies to */
    int priority;        /* HOST_PRIO_* */
} host_param_setting;

/* Numeric verification settings ([verify]; verify.h has the rules).  A copy
 * borrows data and range from the config it came from. */
typedef struct host_verify_config {
    int runs;       /* random input sets; --verify=N overrides */
    /* fixed tolerances, optimized against original: |got - want| <= atol +
     * rtol * |want|.  < 0: not set.  Setting either (--verify-atol,
     * --verify-rtol) chooses them over the error budget; the other one then
     * takes its default (HOST_DEFAULT_ATOL / HOST_DEFAULT_RTOL). */
    double atol;
    double rtol;
    int seed;
    /* the error budget of a float output: budget_factor x the original's
     * own error against the float64 reference + budget_ulps x the machine
     * epsilon of the output's dtype x its largest reference magnitude */
    double budget_factor;
    double budget_ulps;
    host_list data; /* folders of real inputs (--verify-data), resolved paths */
    char *range;    /* "NAME=LO:HI; ..." value ranges of inputs (--verify-range), NULL: none */
} host_verify_config;

#define HOST_DEFAULT_VERIFY_RUNS 3
#define HOST_DEFAULT_ATOL 1e-5
#define HOST_DEFAULT_RTOL 1e-4
#define HOST_DEFAULT_BUDGET_FACTOR 4.0
#define HOST_DEFAULT_BUDGET_ULPS 4.0

/* [verify] as a new config has it (no data, no ranges). */
host_verify_config host_verify_defaults(void);

/* 1 when the fixed tolerances are chosen over the error budget. */
static inline int host_verify_fixed(const host_verify_config *vc)
{
    return vc->atol >= 0 || vc->rtol >= 0;
}
/* The tolerances in force in fixed mode (and where no reference exists). */
static inline double host_verify_atol(const host_verify_config *vc)
{
    return vc->atol >= 0 ? vc->atol : HOST_DEFAULT_ATOL;
}
static inline double host_verify_rtol(const host_verify_config *vc)
{
    return vc->rtol >= 0 ? vc->rtol : HOST_DEFAULT_RTOL;
}

typedef struct host_config {
    char *path;       /* the INI file given, NULL if none */
    char *input;      /* NULL when not set */
    char *output;
    char *plugin_dir;
    char *log_path;
    char *input_shape;       /* "name:1x3x224x224; other:1x128", NULL if none */
    char *input_shape_range; /* "name:1~32x3x224x224; ...", NULL if none */
    int infer_shapes;        /* infer shapes before the stages (default 1) */
    int write_shapes;        /* write inferred shapes into value_info on save */
    double pass_timeout_s;   /* most seconds one pass call may run (0: no limit); supervise.h */
    double load_timeout_s;   /* most seconds one plugin's load (constructors) or unload
                                (destructors) may run (0: no limit); supervise.h */
    int external_data_threshold; /* bytes: a larger model gets external data (0: always) */
    int external_data_min_size;  /* bytes: smaller tensors stay inline */
    host_verify_config verify;
    host_stage_config stage[HOST_STAGE_COUNT];
    host_param_setting *params;
    size_t param_count;
} host_config;

/* Stage names as used for sections and in messages: "optimize", "adapt". */
const char *host_stage_name(int stage);

/* A config holding the defaults.  Caller frees with host_config_free.
 * NULL when out of memory. */
host_config *host_config_new(void);
void host_config_free(host_config *cfg);

/* Parse an INI file into cfg.  HOST_EXIT_CONFIG on any problem, with
 * "file:line: what" in err. */
int host_config_load_file(host_config *cfg, const char *path, ph_error *err);

/* Parse INI text (NUL-terminated, borrowed) into cfg as host_config_load_file
 * does a file, after it if both are given (a key the text sets replaces the
 * file's; lists are replaced); name stands for it in messages
 * ("name:line: what"), and relative paths in it are used as given (relative
 * to the working folder).  cfg->path is left as it is. */
int host_config_load_text(host_config *cfg, const char *text, const char *name, ph_error *err);

/* Apply one override "SECTION.KEY=VALUE" (the section may contain dots; it
 * ends at the last dot before '=').  A list value replaces the list.
 * HOST_EXIT_USAGE when the text is not of that form, HOST_EXIT_CONFIG for an
 * unknown section or key or a bad value. */
int host_config_set(host_config *cfg, const char *assignment, ph_error *err);

/* Assign SECTION.KEY = VALUE as --set does (priority HOST_PRIO_SET), naming
 * `where` in messages; a [pass.NAME] setting applies to the stages of
 * stage_mask (1u << HOST_STAGE_*) only.  Errors as host_config_set. */
int host_config_assign(host_config *cfg, const char *section, const char *key,
                       const char *value, const char *where, unsigned stage_mask, ph_error *err);

/* Replace a [model] path (for -i/-o and --plugin-dir); value is copied. */
int host_config_set_path(char **slot, const char *value, ph_error *err);

/* Read each stage's custom_config file ([pass.NAME] sections only).
 * Call once, after the last host_config_set. */
int host_config_finish(host_config *cfg, ph_error *err);

/* One KEY = VALUE of a target profile's [target] or [target.SECTION]
 * (section "" or "SECTION"), as written, and where ("file:line"). */
typedef struct host_target_item {
    char *section;
    char *key;
    char *value;
    char *where;
} host_target_item;

typedef struct host_target_items {
    host_target_item *items;
    size_t count, cap;
} host_target_items;

/* Read the [target...] items of a profile file into items (appended, in
 * file order; continuation lines joined with ", "), with the parser and
 * the checks of a config file (its other sections are checked, then
 * ignored).  HOST_EXIT_CONFIG with "file:line: what", or when the file has
 * no [target] section.  docs/targets.md: the format. */
int host_config_read_profile(const char *path, host_target_items *items, ph_error *err);
void host_target_items_free(host_target_items *items);

/* Parse a bool as the INI does (true/false/yes/no/on/off/1/0, any case).
 * Returns 1 and sets *out, or 0 when text is not a bool. */
int host_parse_bool(const char *text, int *out);

#endif
