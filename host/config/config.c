/* host/config/config.c - INI files, custom_config files and --set overrides into a
 * host_config (see config.h for the keys and the rules).
 *
 * inih does the tokenising; our reader function feeds it one line per call,
 * which lets us count lines, refuse lines longer than inih's buffer with a
 * useful message, tell continuation lines apart, check section names at
 * their header line, and hide ';' inside double quotes from inih's inline
 * comment handling (mapped to QUOTED_SEMI and back).  The handler always
 * returns 1: errors are recorded in the parse state with their line, and
 * inih's own return value is used only for lines it could not parse.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "base/exit.h"
#include "base/util.h"
#include "profile.h"

#define QUOTED_SEMI '\x1f'
#define INIH_NAME_MAX 50 /* inih truncates section and key names here */

static const char *const stage_names[HOST_STAGE_COUNT] = {"optimize", "adapt"};

const char *host_stage_name(int stage)
{
    return stage >= 0 && stage < HOST_STAGE_COUNT ? stage_names[stage] : "?";
}

/* ------------------------------------------------------------ data basics */

void host_list_clear(host_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].text);
        free(l->items[i].where);
    }
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

void host_list_append(host_list *l, const char *text, const char *where)
{
    char *copy = host_xstrdup(text);
    for (char *save = NULL, *tok = strtok_r(copy, ";,", &save); tok;
         tok = strtok_r(NULL, ";,", &save)) {
        tok = host_trim(tok);
        size_t n = strlen(tok);
        if (n >= 2 && tok[0] == '"' && tok[n - 1] == '"') {
            tok[n - 1] = '\0';
            tok = host_trim(tok + 1);
        }
        if (*tok)
            host_list_add(l, tok, where);
    }
    free(copy);
}

void host_list_add(host_list *l, const char *text, const char *where)
{
    l->items = realloc(l->items, (l->count + 1) * sizeof *l->items);
    if (!l->items)
        abort();
    l->items[l->count].text = host_xstrdup(text);
    l->items[l->count].where = host_xstrdup(where);
    l->count++;
}

/* host_list_append, each new item a path resolved against base_dir. */
static void list_append_paths(host_list *l, const char *text, const char *where, const char *base_dir)
{
    size_t first = l->count;
    host_list_append(l, text, where);
    for (size_t i = first; i < l->count; i++) {
        char *path = host_path_resolve(base_dir, l->items[i].text);
        free(l->items[i].text);
        l->items[i].text = path;
    }
}

static void set_string(char **slot, const char *value)
{
    free(*slot);
    *slot = value ? host_xstrdup(value) : NULL;
}

host_verify_config host_verify_defaults(void)
{
    return (host_verify_config){.runs = HOST_DEFAULT_VERIFY_RUNS, .atol = -1, .rtol = -1,
                                .budget_factor = HOST_DEFAULT_BUDGET_FACTOR,
                                .budget_ulps = HOST_DEFAULT_BUDGET_ULPS};
}

host_config *host_config_new(void)
{
    host_config *cfg = host_xcalloc(1, sizeof *cfg);
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        cfg->stage[s].max_iterations = HOST_DEFAULT_MAX_ITERATIONS;
        cfg->stage[s].level = HOST_LEVEL_FP;
        cfg->stage[s].target = host_xstrdup("");
    }
    cfg->infer_shapes = 1;
    cfg->load_timeout_s = HOST_DEFAULT_LOAD_TIMEOUT_S;
    cfg->external_data_threshold = 2147483647; /* protobuf's limit */
    cfg->external_data_min_size = 1024;        /* as ONNX's own tools */
    cfg->verify = host_verify_defaults();
    return cfg;
}

void host_config_free(host_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->path);
    free(cfg->input);
    free(cfg->output);
    free(cfg->plugin_dir);
    free(cfg->log_path);
    free(cfg->input_shape);
    free(cfg->input_shape_range);
    host_list_clear(&cfg->verify.data);
    free(cfg->verify.range);
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        host_stage_config *st = &cfg->stage[s];
        host_list_clear(&st->pass_on);
        host_list_clear(&st->pass_off);
        free(st->allow_approximate_where);
        free(st->level_where);
        free(st->custom_config);
        free(st->custom_config_where);
        free(st->target);
    }
    for (size_t i = 0; i < cfg->param_count; i++) {
        host_param_setting *p = &cfg->params[i];
        free(p->pass);
        free(p->key);
        free(p->value);
        free(p->where);
    }
    free(cfg->params);
    free(cfg);
}

static const char *const level_names[] = {"none", "exact", "fp", "approx"};

const char *host_level_name(int level)
{
    return level >= 0 && level <= HOST_LEVEL_APPROX ? level_names[level] : "?";
}

int host_level_parse(const char *text)
{
    for (int i = 0; i <= HOST_LEVEL_APPROX; i++)
        if (strcmp(text, level_names[i]) == 0)
            return i;
    return -1;
}

int host_parse_bool(const char *text, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0)
            return *out = 1, 1;
        if (strcasecmp(text, no[i]) == 0)
            return *out = 0, 1;
    }
    return 0;
}

int host_config_set_path(char **slot, const char *value, ph_error *err)
{
    if (!value || !*value)
        return ph_error_set(err, HOST_EXIT_USAGE, "empty path");
    set_string(slot, value);
    return 0;
}

/* ------------------------------------------------------- sections and keys */

typedef enum {
    KEY_PATH, KEY_LIST, KEY_PATHS, KEY_BOOL, KEY_INT, KEY_TEXT, KEY_REAL, KEY_INT0, KEY_LEVEL, KEY_TARGET
} key_kind;

/* Where a key's value goes. */
typedef struct slot {
    key_kind kind;
    char **str;    /* KEY_PATH, KEY_TEXT */
    host_list *list; /* KEY_LIST, KEY_PATHS (a list of paths) */
    int *num;      /* KEY_BOOL, KEY_INT, KEY_INT0, KEY_LEVEL */
    double *real;  /* KEY_REAL */
    char **where;  /* optional: remembers where the key was set */
} slot;

static int is_pass_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_' || *s == '.'))
            return 0;
    return 1;
}

/* Section kinds: a stage's index (HOST_STAGE_*) or one of these. */
enum { SEC_MODEL = -1, SEC_PASS = -2, SEC_UNKNOWN = -3, SEC_VERIFY = -4, SEC_TARGET = -5 };

static int section_kind(const char *section)
{
    if (strcmp(section, "model") == 0)
        return SEC_MODEL;
    if (strcmp(section, "verify") == 0)
        return SEC_VERIFY;
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        if (strcmp(section, stage_names[s]) == 0)
            return s;
    if (strncmp(section, "pass.", 5) == 0 && is_pass_name(section + 5))
        return SEC_PASS;
    if (strcmp(section, "target") == 0 || (strncmp(section, "target.", 7) == 0 && section[7]))
        return SEC_TARGET;
    return SEC_UNKNOWN;
}

/* 0 when the section may appear (params_only: only [pass.NAME]), else an
 * error naming `where`. */
static int check_section(const char *section, int params_only, const char *where, ph_error *err)
{
    int kind = section_kind(section);
    if (kind == SEC_PASS || (!params_only && kind != SEC_UNKNOWN))
        return 0;
    if (kind == SEC_TARGET)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s: section [%s] not allowed in a custom_config file "
                            "(a target profile is a file of its own: [adapt] target)", where, section);
    if (params_only)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s: section [%s] not allowed in a custom_config file "
                            "(only [pass.NAME] sections)", where, section);
    if (strncmp(section, "pass.", 5) == 0)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s: [%s]: a pass name is lowercase letters, digits, '_' and '.'",
                            where, section);
    return ph_error_set(err, HOST_EXIT_CONFIG,
                        "%s: unknown section [%s] (expected [model], [optimize], [adapt], "
                        "[verify], [pass.NAME] or a profile's [target...])", where, section);
}

static int find_slot(host_config *cfg, int kind, const char *key, slot *out)
{
    memset(out, 0, sizeof *out);
    if (kind == SEC_MODEL) {
        struct { const char *name; char **str; } model[] = {
            {"input", &cfg->input}, {"output", &cfg->output},
            {"plugin_dir", &cfg->plugin_dir}, {"log_path", &cfg->log_path}};
        for (size_t i = 0; i < sizeof model / sizeof model[0]; i++)
            if (strcmp(key, model[i].name) == 0)
                return out->kind = KEY_PATH, out->str = model[i].str, 1;
        if (strcmp(key, "input_shape") == 0)
            return out->kind = KEY_TEXT, out->str = &cfg->input_shape, 1;
        if (strcmp(key, "input_shape_range") == 0)
            return out->kind = KEY_TEXT, out->str = &cfg->input_shape_range, 1;
        if (strcmp(key, "infer_shapes") == 0)
            return out->kind = KEY_BOOL, out->num = &cfg->infer_shapes, 1;
        if (strcmp(key, "write_shapes") == 0)
            return out->kind = KEY_BOOL, out->num = &cfg->write_shapes, 1;
        if (strcmp(key, "pass_timeout_s") == 0)
            return out->kind = KEY_REAL, out->real = &cfg->pass_timeout_s, 1;
        if (strcmp(key, "load_timeout_s") == 0)
            return out->kind = KEY_REAL, out->real = &cfg->load_timeout_s, 1;
        if (strcmp(key, "external_data_threshold") == 0)
            return out->kind = KEY_INT0, out->num = &cfg->external_data_threshold, 1;
        if (strcmp(key, "external_data_min_size") == 0)
            return out->kind = KEY_INT0, out->num = &cfg->external_data_min_size, 1;
        return 0;
    }
    if (kind == SEC_VERIFY) {
        if (strcmp(key, "runs") == 0)
            return out->kind = KEY_INT, out->num = &cfg->verify.runs, 1;
        if (strcmp(key, "seed") == 0)
            return out->kind = KEY_INT0, out->num = &cfg->verify.seed, 1;
        if (strcmp(key, "atol") == 0)
            return out->kind = KEY_REAL, out->real = &cfg->verify.atol, 1;
        if (strcmp(key, "rtol") == 0)
            return out->kind = KEY_REAL, out->real = &cfg->verify.rtol, 1;
        if (strcmp(key, "budget_factor") == 0)
            return out->kind = KEY_REAL, out->real = &cfg->verify.budget_factor, 1;
        if (strcmp(key, "budget_ulps") == 0)
            return out->kind = KEY_REAL, out->real = &cfg->verify.budget_ulps, 1;
        if (strcmp(key, "data") == 0)
            return out->kind = KEY_PATHS, out->list = &cfg->verify.data, 1;
        if (strcmp(key, "range") == 0)
            return out->kind = KEY_TEXT, out->str = &cfg->verify.range, 1;
        return 0;
    }
    host_stage_config *st = &cfg->stage[kind];
    if (strcmp(key, "pass_on") == 0)
        return out->kind = KEY_LIST, out->list = &st->pass_on, 1;
    if (strcmp(key, "pass_off") == 0)
        return out->kind = KEY_LIST, out->list = &st->pass_off, 1;
    if (strcmp(key, "no_integral") == 0)
        return out->kind = KEY_BOOL, out->num = &st->no_integral, 1;
    if (strcmp(key, "keep_order") == 0)
        return out->kind = KEY_BOOL, out->num = &st->keep_order, 1;
    if (strcmp(key, "allow_approximate") == 0)
        return out->kind = KEY_BOOL, out->num = &st->allow_approximate,
               out->where = &st->allow_approximate_where, 1;
    if (strcmp(key, "max_iterations") == 0)
        return out->kind = KEY_INT, out->num = &st->max_iterations, 1;
    if (strcmp(key, "level") == 0)
        return out->kind = KEY_LEVEL, out->num = &st->level, out->where = &st->level_where, 1;
    if (strcmp(key, "custom_config") == 0)
        return out->kind = KEY_PATH, out->str = &st->custom_config,
               out->where = &st->custom_config_where, 1;
    if (kind == HOST_STAGE_ADAPT && strcmp(key, "target") == 0)
        return out->kind = KEY_TARGET, out->str = &st->target, 1;
    return 0;
}

static const char *keys_of(int kind)
{
    if (kind == SEC_MODEL)
        return "input, output, plugin_dir, log_path, input_shape, input_shape_range, "
               "infer_shapes, write_shapes, pass_timeout_s, load_timeout_s, external_data_threshold, "
               "external_data_min_size";
    if (kind == SEC_VERIFY)
        return "runs, seed, budget_factor, budget_ulps, atol, rtol, data, range";
    if (kind == HOST_STAGE_ADAPT)
        return "pass_on, pass_off, no_integral, keep_order, max_iterations, allow_approximate, "
               "level, custom_config, target";
    return "pass_on, pass_off, no_integral, keep_order, max_iterations, allow_approximate, "
           "level, custom_config";
}

static void add_param(host_config *cfg, const char *pass, const char *key, const char *value,
                      const char *where, unsigned stage_mask, int priority)
{
    cfg->params = realloc(cfg->params, (cfg->param_count + 1) * sizeof *cfg->params);
    if (!cfg->params)
        abort();
    host_param_setting *p = &cfg->params[cfg->param_count++];
    p->pass = host_xstrdup(pass);
    p->key = host_xstrdup(key);
    p->value = host_xstrdup(value);
    p->where = host_xstrdup(where);
    p->stage_mask = stage_mask;
    p->priority = priority;
}

/* Store one value in its slot (lists are replaced). */
static int store(const slot *sl, const char *key, const char *value, const char *where,
                 const char *base_dir, ph_error *err)
{
    int b = 0;
    char *end = NULL;
    long n = 0;
    switch (sl->kind) {
    case KEY_PATH:
        if (!*value)
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s: empty path", where, key);
        free(*sl->str);
        *sl->str = host_path_resolve(base_dir, value);
        break;
    case KEY_TEXT:
        set_string(sl->str, value);
        break;
    case KEY_TARGET: /* a shipped profile's name, or a file */
        free(*sl->str);
        *sl->str = host_profile_is_path(value) ? host_path_resolve(base_dir, value) : host_xstrdup(value);
        break;
    case KEY_LIST:
        host_list_clear(sl->list);
        host_list_append(sl->list, value, where);
        break;
    case KEY_PATHS:
        host_list_clear(sl->list);
        list_append_paths(sl->list, value, where, base_dir);
        break;
    case KEY_BOOL:
        if (!host_parse_bool(value, &b))
            return ph_error_set(err, HOST_EXIT_CONFIG,
                                "%s: %s: '%s' is not a bool (true/false, yes/no, on/off, 1/0)",
                                where, key, value);
        *sl->num = b;
        break;
    case KEY_INT:
        errno = 0;
        n = strtol(value, &end, 10);
        if (errno || end == value || *end || n < 1 || n > 1000000)
            return ph_error_set(err, HOST_EXIT_CONFIG,
                                "%s: %s: '%s' is not a whole number from 1 to 1000000",
                                where, key, value);
        *sl->num = (int)n;
        break;
    case KEY_INT0:
        errno = 0;
        n = strtol(value, &end, 10);
        if (errno || end == value || *end || n < 0 || n > 2147483647L)
            return ph_error_set(err, HOST_EXIT_CONFIG,
                                "%s: %s: '%s' is not a whole number from 0 to 2147483647", where,
                                key, value);
        *sl->num = (int)n;
        break;
    case KEY_LEVEL:
        if ((b = host_level_parse(value)) < 0)
            return ph_error_set(err, HOST_EXIT_CONFIG,
                                "%s: %s: '%s' is not a level (none, exact, fp or approx)", where,
                                key, value);
        *sl->num = b;
        break;
    case KEY_REAL: {
        errno = 0;
        double d = strtod(value, &end);
        if (errno || end == value || *end || !(d >= 0) || d > 1e30)
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s: '%s' is not a number >= 0", where,
                                key, value);
        *sl->real = d;
        break;
    }
    }
    if (sl->where)
        set_string(sl->where, where);
    return 0;
}

static void target_item_add(host_target_items *items, const char *section, const char *key, const char *value,
                     const char *where);

/* Assign section.key = value (a fresh assignment, not a continuation). */
static int assign(host_config *cfg, const char *section, const char *key, const char *value,
                  const char *where, const char *base_dir, unsigned stage_mask, int priority,
                  ph_error *err)
{
    int kind = section_kind(section);
    if (kind == SEC_TARGET)
        return 0; /* a profile's: read by host_config_read_profile */
    if (kind == SEC_PASS) {
        if (!*key)
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: [%s]: empty key", where, section);
        add_param(cfg, section + 5, key, value, where, stage_mask, priority);
        return 0;
    }
    slot sl;
    if (kind == SEC_UNKNOWN)
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: unknown section [%s]", where, section);
    if (!find_slot(cfg, kind, key, &sl))
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: unknown key '%s' in [%s] (expected %s)",
                            where, key, section, keys_of(kind));
    return store(&sl, key, value, where, base_dir, err);
}

/* -------------------------------------------------------------- INI files */

typedef struct seen_key {
    char *id; /* "section\nkey" */
    int line;
} seen_key;

typedef struct ini_state {
    host_config *cfg;
    FILE *file;
    const char *path;
    char *dir;          /* folder of path: base of relative paths */
    int params_only;    /* a custom_config file */
    unsigned stage_mask;
    int priority;
    int line;           /* lines handed to inih so far */
    int prev_key;       /* mirrors inih: a key was read since the last header */
    int continuation;   /* the current line continues the previous key */
    seen_key *seen;
    size_t seen_count;
    size_t seen_cap;
    ph_error *err;
    int rc;             /* first error (HOST_EXIT_*), 0 if none */
    int err_line;
    int target_line;    /* the first [target...] header, 0 if none */
    host_target_items *profile; /* reading a profile: its [target...] items go here */
} ini_state;

static void state_fail_code(ini_state *st, int rc)
{
    st->rc = rc;
    st->err_line = st->line;
}

/* Hide ';' inside double quotes from inih; stops at an inline comment. */
static void protect_quotes(char *s)
{
    int quoted = 0;
    for (char *c = s; *c; c++) {
        if (*c == '"')
            quoted = !quoted;
        else if (*c == ';' && quoted)
            *c = QUOTED_SEMI;
        else if (*c == ';' && c > s && isspace((unsigned char)c[-1]))
            return;
    }
}

/* Check a "[name]" header line; inih reports a header without ']'. */
static void check_header(ini_state *st, const char *p)
{
    const char *close = strchr(p, ']');
    if (!close)
        return;
    char *name = host_xstrndup(p + 1, (size_t)(close - p - 1));
    char *where = host_xasprintf("%s:%d", st->path, st->line);
    if (strlen(name) >= INIH_NAME_MAX)
        st->rc = ph_error_set(st->err, HOST_EXIT_CONFIG,
                              "%s: section name longer than %d characters", where,
                              INIH_NAME_MAX - 1);
    else
        st->rc = check_section(name, st->params_only, where, st->err);
    if (!st->rc && !st->target_line && section_kind(name) == SEC_TARGET)
        st->target_line = st->line;
    if (st->rc)
        st->err_line = st->line;
    free(where);
    free(name);
}

/* Track what inih will do with this line (same rules as inih 55). */
static void classify(ini_state *st, char *line)
{
    char *p = line;
    if (st->line == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    char *start = p;
    while (isspace((unsigned char)*p))
        p++;
    st->continuation = 0;
    if (*p == '\0' || *p == ';' || *p == '#')
        return;
    if (p > start && st->prev_key) {
        st->continuation = 1;
    } else if (*p == '[') {
        st->prev_key = 0;
        check_header(st, p);
    } else {
        st->prev_key = 1;
    }
    protect_quotes(p);
}

/* inih's reader: one line per call, NULL at the end or after an error.
 * At most num - 1 bytes are read: a line that has not ended by then is too
 * long, and a file that never ends one (/dev/zero) is read no further. */
static char *read_line(char *str, int num, void *stream)
{
    ini_state *st = stream;
    if (st->rc || num < 4)
        return NULL;
    size_t n = 0;
    int c = 0;
    while (n < (size_t)num - 1 && (c = getc(st->file)) != EOF) {
        str[n++] = (char)c;
        if (c == '\n')
            break;
    }
    if (n == 0)
        return NULL;
    str[n] = '\0';
    st->line++;
    int ended = str[n - 1] == '\n' || c == EOF;
    size_t content = n;
    while (content > 0 && (str[content - 1] == '\n' || str[content - 1] == '\r'))
        content--;
    if (!ended || content > (size_t)num - 3) {
        st->rc = ph_error_set(st->err, HOST_EXIT_CONFIG,
                              "%s:%d: line longer than %d characters; continue long lists "
                              "on indented lines", st->path, st->line, num - 3);
        st->err_line = st->line;
        return NULL;
    }
    classify(st, str);
    return str;
}

/* The value with QUOTED_SEMI restored and surrounding quotes removed;
 * NULL for an unterminated quote. */
static char *unquote(const char *value)
{
    char *v = host_xstrdup(value);
    for (char *c = v; *c; c++)
        if (*c == QUOTED_SEMI)
            *c = ';';
    size_t n = strlen(v);
    if (n == 0 || v[0] != '"')
        return v;
    if (n < 2 || v[n - 1] != '"') {
        free(v);
        return NULL;
    }
    memmove(v, v + 1, n - 2);
    v[n - 2] = '\0';
    return v;
}

/* 0, or an error when section.key was already given in this file. */
static int check_twice(ini_state *st, const char *section, const char *key, const char *where)
{
    char *id = host_xasprintf("%s\n%s", section, key);
    for (size_t i = 0; i < st->seen_count; i++) {
        if (strcmp(st->seen[i].id, id) == 0) {
            free(id);
            int list = strcmp(key, "pass_on") == 0 || strcmp(key, "pass_off") == 0;
            return ph_error_set(st->err, HOST_EXIT_CONFIG,
                                "%s: '%s' in [%s] given twice (lines %d and %d)%s", where, key,
                                section, st->seen[i].line, st->line,
                                list ? "; continue a list on indented lines" : "");
        }
    }
    host_xgrow(&st->seen, &st->seen_cap, st->seen_count + 1, sizeof *st->seen);
    st->seen[st->seen_count].id = id;
    st->seen[st->seen_count].line = st->line;
    st->seen_count++;
    return 0;
}

/* An indented line: more items for a list key, an error for anything else. */
static int continue_key(ini_state *st, const char *section, const char *key, const char *value,
                        const char *where)
{
    int kind = section_kind(section);
    slot sl;
    if (kind == SEC_TARGET) {
        host_target_items *items = st->profile;
        if (items && items->count) {
            host_target_item *last = &items->items[items->count - 1];
            char *joined = host_xasprintf("%s, %s", last->value, value);
            free(last->value);
            last->value = joined;
        }
        return 0;
    }
    if (kind >= SEC_MODEL && find_slot(st->cfg, kind, key, &sl) && sl.kind == KEY_LIST) {
        host_list_append(sl.list, value, where);
        return 0;
    }
    if (kind == SEC_VERIFY && find_slot(st->cfg, kind, key, &sl) && sl.kind == KEY_PATHS) {
        list_append_paths(sl.list, value, where, st->dir);
        return 0;
    }
    return ph_error_set(st->err, HOST_EXIT_CONFIG,
                        "%s: indented line continues '%s' in [%s], which takes one value "
                        "(only pass_on, pass_off and [verify] data continue; unindent a new key)",
                        where, key, section);
}

static int on_pair(void *user, const char *section, const char *name, const char *value)
{
    ini_state *st = user;
    if (st->rc)
        return 1;
    char *where = host_xasprintf("%s:%d", st->path, st->line);
    char *text = unquote(value);
    int rc;
    if (!text)
        rc = ph_error_set(st->err, HOST_EXIT_CONFIG, "%s: %s: unterminated double quote",
                          where, name);
    else if (!*section)
        rc = ph_error_set(st->err, HOST_EXIT_CONFIG,
                          "%s: '%s' is outside any section (put it under [model], "
                          "[optimize], [adapt] or [pass.NAME])", where, name);
    else if (st->continuation)
        rc = continue_key(st, section, name, text, where);
    else if (!(rc = check_twice(st, section, name, where)) && st->profile &&
             section_kind(section) == SEC_TARGET)
        target_item_add(st->profile, section, name, text, where);
    else if (!rc)
        rc = assign(st->cfg, section, name, text, where, st->dir, st->stage_mask, st->priority,
                    st->err);
    if (rc)
        state_fail_code(st, rc);
    free(text);
    free(where);
    return 1;
}

/* Parse the INI text of f, named path in messages; relative paths are
 * relative to dir (NULL: used as given).  profile: collect the [target...]
 * items there (NULL: skip them); *target_line: the line of the first
 * [target...] header (0: none). */
static int parse_stream(host_config *cfg, FILE *f, const char *path, char *dir, int params_only,
                        unsigned stage_mask, int priority, host_target_items *profile, int *target_line,
                        ph_error *err)
{
    ini_state st = {.cfg = cfg, .file = f, .path = path, .dir = dir,
                    .params_only = params_only, .stage_mask = stage_mask,
                    .priority = priority, .err = err, .profile = profile};
    int ret = ini_parse_stream(read_line, &st, on_pair, &st);
    if (!st.rc && ferror(f))
        st.rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: read error", path);
    if (ret == -2) /* inih: out of memory */
        st.rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: out of memory", path);
    else if (ret > 0 && (!st.rc || ret < st.err_line))
        st.rc = ph_error_set(err, HOST_EXIT_CONFIG,
                             "%s:%d: malformed line (expected [section], KEY = VALUE, an "
                             "indented continuation or a ; comment)", path, ret);
    for (size_t i = 0; i < st.seen_count; i++)
        free(st.seen[i].id);
    free(st.seen);
    if (target_line)
        *target_line = st.target_line;
    return st.rc;
}

static int parse_file(host_config *cfg, const char *path, int params_only, unsigned stage_mask,
                      int priority, const char *opened_from, host_target_items *profile,
                      int *target_line, ph_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (opened_from)
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: custom_config %s: %s",
                                opened_from, path, strerror(errno));
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s", path, strerror(errno));
    }
    /* an INI file is text: binary bytes mean a model (or anything else)
     * was given where a configuration belongs */
    unsigned char head[512];
    size_t got = fread(head, 1, sizeof head, f);
    int binary = 0;
    for (size_t i = 0; i < got && !binary; i++)
        binary = (head[i] < 0x20 && head[i] != '\t' && head[i] != '\n' && head[i] != '\r' &&
                  head[i] != '\f') || head[i] == 0x7f;
    if (binary) {
        fclose(f);
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s%s%s is not an INI file: it holds binary data (an ONNX model?)",
                            opened_from ? opened_from : "", opened_from ? ": custom_config " : "",
                            path);
    }
    rewind(f);
    char *dir = host_dirname(path);
    int rc = parse_stream(cfg, f, path, dir, params_only, stage_mask, priority, profile, target_line, err);
    free(dir);
    fclose(f);
    return rc;
}

int host_config_load_file(host_config *cfg, const char *path, ph_error *err)
{
    set_string(&cfg->path, path);
    unsigned all = (1u << HOST_STAGE_COUNT) - 1;
    int target_line = 0;
    int rc = parse_file(cfg, path, 0, all, HOST_PRIO_FILE, NULL, NULL, &target_line, err);
    if (rc || !target_line)
        return rc;
    /* The file is a target profile too: the adapt stage's, unless it names
     * another itself (--target and --set may, after it). */
    char **target = &cfg->stage[HOST_STAGE_ADAPT].target;
    if (**target)
        return ph_error_set(err, HOST_EXIT_CONFIG,
                            "%s:%d: this file is a target profile ([target] sections) and its "
                            "[adapt] names target '%s' too: drop one", path, target_line, *target);
    set_string(target, path);
    return 0;
}

static void target_item_add(host_target_items *items, const char *section, const char *key, const char *value,
                     const char *where)
{
    host_xgrow(&items->items, &items->cap, items->count + 1, sizeof *items->items);
    host_target_item *it = &items->items[items->count++];
    it->section = host_xstrdup(strcmp(section, "target") == 0 ? "" : section + 7);
    it->key = host_xstrdup(key);
    it->value = host_xstrdup(value);
    it->where = host_xstrdup(where);
}

void host_target_items_free(host_target_items *items)
{
    for (size_t i = 0; i < items->count; i++) {
        free(items->items[i].section);
        free(items->items[i].key);
        free(items->items[i].value);
        free(items->items[i].where);
    }
    free(items->items);
    memset(items, 0, sizeof *items);
}

int host_config_read_profile(const char *path, host_target_items *items, ph_error *err)
{
    host_config *scratch = host_config_new();
    unsigned all = (1u << HOST_STAGE_COUNT) - 1;
    int target_line = 0;
    int rc = parse_file(scratch, path, 0, all, HOST_PRIO_FILE, NULL, items, &target_line, err);
    host_config_free(scratch);
    if (!rc && !target_line)
        rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: not a target profile (no [target] section)", path);
    return rc;
}

int host_config_load_text(host_config *cfg, const char *text, const char *name, ph_error *err)
{
    size_t n = strlen(text);
    if (n == 0)
        return 0;
    FILE *f = fmemopen((void *)text, n, "r");
    if (!f)
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s", name, strerror(errno));
    unsigned all = (1u << HOST_STAGE_COUNT) - 1;
    int rc = parse_stream(cfg, f, name, NULL, 0, all, HOST_PRIO_FILE, NULL, NULL, err);
    fclose(f);
    return rc;
}

int host_config_finish(host_config *cfg, ph_error *err)
{
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        const host_stage_config *st = &cfg->stage[s];
        if (!st->custom_config)
            continue;
        int rc = parse_file(cfg, st->custom_config, 1, 1u << s, HOST_PRIO_CUSTOM,
                            st->custom_config_where, NULL, NULL, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------- --set */

int host_config_assign(host_config *cfg, const char *section, const char *key,
                       const char *value, const char *where, unsigned stage_mask, ph_error *err)
{
    int rc = check_section(section, 0, where, err);
    return rc ? rc : assign(cfg, section, key, value, where, NULL, stage_mask, HOST_PRIO_SET, err);
}

int host_config_set(host_config *cfg, const char *assignment, ph_error *err)
{
    const char *eq = strchr(assignment, '=');
    const char *dot = NULL;
    for (const char *c = assignment; eq && c < eq; c++)
        if (*c == '.')
            dot = c;
    if (!eq || !dot || dot == assignment || dot + 1 == eq)
        return ph_error_set(err, HOST_EXIT_USAGE,
                            "--set %s: expected SECTION.KEY=VALUE (e.g. optimize.pass_off=NAME)",
                            assignment);
    char *section = host_xstrndup(assignment, (size_t)(dot - assignment));
    char *key_buf = host_xstrndup(dot + 1, (size_t)(eq - dot - 1));
    char *key = host_trim(key_buf);
    char *raw = host_xstrdup(eq + 1);
    char *value = unquote(host_trim(raw));
    char *where = host_xasprintf("--set %s.%s", section, key);
    unsigned all = (1u << HOST_STAGE_COUNT) - 1;
    int rc = check_section(section, 0, where, err);
    if (!rc && section_kind(section) == SEC_TARGET)
        rc = ph_error_set(err, HOST_EXIT_CONFIG,
                          "%s: profile keys are set in a profile file ([adapt] target, --target)", where);
    if (!rc && !value)
        rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: unterminated double quote", where);
    if (!rc)
        rc = assign(cfg, section, key, value, where, NULL, all, HOST_PRIO_SET, err);
    free(where);
    free(value);
    free(raw);
    free(key_buf);
    free(section);
    return rc;
}
