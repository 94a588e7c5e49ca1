/* sdk/src/target/profile.c - the keys of a target profile (target.h): one
 * table of every section and key, checking and normalizing the values a
 * host sets, and reading them back.
 *
 * docs/targets.md is the user's reference of the same table; a key added
 * here goes there too (and, when ph_target_check measures it, to check.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "target/target_internal.h"

/* ------------------------------------------------------------- the keys */

#define CONV_OPS "Conv|ConvTranspose|ConvInteger|QLinearConv"
#define POOL_OPS "MaxPool|AveragePool|LpPool"

/* Section "": [target]; "opset": [target.opset] (any domain as key); "*":
 * every operator section; else the operators ('|'-separated) that have
 * the key. */
static const tgt_key key_table[] = {
    {"", "name", TGT_NAME, NULL},
    {"", "summary", TGT_TEXT, NULL},
    {"", "dtypes", TGT_DTYPES, NULL},
    {"", "max_rank", TGT_INT, NULL},
    {"", "broadcast", TGT_BROADCAST, NULL},
    {"", "static_shapes", TGT_BOOL, NULL},
    {"", "domains", TGT_DOMAINS, NULL},
    {"", "ops", TGT_OPS, NULL},
    {"", "ops_except", TGT_OPS, NULL},
    {"", "noop_ops", TGT_OPS, NULL},
    {"", "auto_pad", TGT_BOOL, NULL},
    {"*", "max_rank", TGT_INT, NULL},
    {"*", "dtypes", TGT_DTYPES, NULL},
    {CONV_OPS "|" POOL_OPS, "max_kernel", TGT_INT, NULL},
    {CONV_OPS "|" POOL_OPS, "max_kernel_area", TGT_INT, NULL},
    {CONV_OPS "|" POOL_OPS, "max_stride", TGT_INT, NULL},
    {CONV_OPS "|" POOL_OPS, "max_pad", TGT_INT, NULL},
    {CONV_OPS "|MaxPool", "max_dilation", TGT_INT, NULL},
    {"AveragePool", "count_include_pad", TGT_BOOL, NULL},
    {"Resize|Upsample", "max_scale", TGT_INT, NULL},
    {"Resize|Upsample", "modes", TGT_WORDS, "nearest,linear,cubic"},
    {"Resize", "coordinate_transformation_modes", TGT_WORDS,
     "half_pixel,half_pixel_symmetric,pytorch_half_pixel,align_corners,asymmetric,tf_crop_and_resize"},
    {"Split", "axes", TGT_INTS, NULL},
    {"Expand", "max_broadcast_dims", TGT_INT, NULL},
    {"TopK", "index_dtype", TGT_DTYPE, NULL},
};
enum { N_KEYS = sizeof key_table / sizeof key_table[0] };

/* 1 when op is one of the '|'-separated names of list. */
static int in_bar_list(const char *list, const char *op)
{
    size_t n = strlen(op);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, "|");
        if (len == n && strncmp(p, op, n) == 0)
            return 1;
        p += len + (p[len] == '|');
    }
    return 0;
}

/* The definition of key in an operator section op, or NULL. */
static const tgt_key *op_key(const char *op, const char *key)
{
    for (size_t i = 0; i < N_KEYS; i++) {
        const tgt_key *k = &key_table[i];
        if (strcmp(k->key, key) || !*k->section || !strcmp(k->section, "opset"))
            continue;
        if (!strcmp(k->section, "*") || in_bar_list(k->section, op))
            return k;
    }
    return NULL;
}

static const tgt_key *target_key(const char *key)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (!*key_table[i].section && !strcmp(key_table[i].key, key))
            return &key_table[i];
    return NULL;
}

static const tgt_key range_key = {"opset", "", TGT_RANGE, NULL};

/* The names a key of this section could have been, into names[] (at most
 * max); how many. */
static size_t keys_of(const char *op, const char **names, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < N_KEYS && n < max; i++) {
        const tgt_key *k = &key_table[i];
        int here = op ? *k->section && strcmp(k->section, "opset") &&
                            (!strcmp(k->section, "*") || in_bar_list(k->section, op))
                      : !*k->section;
        if (here)
            names[n++] = k->key;
    }
    return n;
}

/* "a, b or c" of the keys of a section, for messages. */
static void keys_text(const char *op, char *buf, size_t size)
{
    const char *names[N_KEYS];
    size_t n = keys_of(op, names, N_KEYS), len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++) {
        int w = snprintf(buf + len, size - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
        len += w > 0 ? (size_t)w : 0;
    }
}

/* ------------------------------------------------------------- op names */

static const char *const op_names[] = {
#define PH_X_NAME(name) #name,
    PH_OP_TABLE(PH_X_NAME)
#undef PH_X_NAME
};
enum { N_OP_NAMES = sizeof op_names / sizeof op_names[0] };

static int is_ident(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return 1;
}

static int is_domain(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '.' || s[i] == '_' ||
              s[i] == '-'))
            return 0;
    return 1;
}

/* Check an operator name "Op" or "Op@domain" (n bytes at s).  A
 * default-domain name passhost does not know is taken as written unless
 * it is close to one it knows (a typo). */
static int check_op_name(const char *s, size_t n, const char *what, ph_error *err)
{
    const char *at = memchr(s, '@', n);
    size_t op_len = at ? (size_t)(at - s) : n;
    if (!is_ident(s, op_len))
        return ph_error_set(err, PH_EINVAL, "%s: '%.*s' is not an operator name (Op or Op@domain)", what, (int)n,
                            s);
    if (at) {
        if (!is_domain(at + 1, n - op_len - 1))
            return ph_error_set(err, PH_EINVAL, "%s: '%.*s': '%.*s' is not a domain name", what, (int)n, s,
                                (int)(n - op_len - 1), at + 1);
        return 0;
    }
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)op_len, s);
    if (ir_op_lookup("", name) != PH_OP_UNKNOWN)
        return 0;
    char near[200];
    ph_close_names_text(name, op_names, N_OP_NAMES, near, sizeof near);
    if (*near)
        return ph_error_set(err, PH_EINVAL, "%s: '%s' is no ONNX operator (did you mean %s?)", what, name, near);
    return 0;
}

/* ------------------------------------------------------------- values */

static const struct {
    const char *name;
    int dtype;
} dtype_names[] = {
    {"float32", PH_DT_FLOAT},   {"float", PH_DT_FLOAT},       {"float16", PH_DT_FLOAT16},
    {"bfloat16", PH_DT_BFLOAT16}, {"float64", PH_DT_DOUBLE},  {"double", PH_DT_DOUBLE},
    {"int8", PH_DT_INT8},       {"int16", PH_DT_INT16},       {"int32", PH_DT_INT32},
    {"int64", PH_DT_INT64},     {"uint8", PH_DT_UINT8},       {"uint16", PH_DT_UINT16},
    {"uint32", PH_DT_UINT32},   {"uint64", PH_DT_UINT64},     {"bool", PH_DT_BOOL},
    {"string", PH_DT_STRING},   {"complex64", PH_DT_COMPLEX64}, {"complex128", PH_DT_COMPLEX128},
};
enum { N_DTYPE_NAMES = sizeof dtype_names / sizeof dtype_names[0] };

int tgt_dtype(const char *name, size_t n)
{
    for (size_t i = 0; i < N_DTYPE_NAMES; i++)
        if (strlen(dtype_names[i].name) == n && strncmp(dtype_names[i].name, name, n) == 0)
            return dtype_names[i].dtype;
    return PH_DT_UNDEFINED;
}

const char *tgt_dtype_name(int dtype)
{
    for (size_t i = 0; i < N_DTYPE_NAMES; i++)
        if (dtype_names[i].dtype == dtype)
            return dtype_names[i].name;
    return ph_dtype_name(dtype);
}

/* A growing output string. */
typedef struct out_text {
    char *s;
    size_t len, cap;
    int oom;
} out_text;

static void put(out_text *o, const char *s, size_t n)
{
    if (o->oom)
        return;
    if (ir_grow((void **)&o->s, &o->cap, o->len + n + 1, 1) < 0) {
        o->oom = 1;
        return;
    }
    memcpy(o->s + o->len, s, n);
    o->len += n;
    o->s[o->len] = '\0';
}

static void put_item(out_text *o, const char *s, size_t n)
{
    if (o->len)
        put(o, ", ", 2);
    put(o, s, n);
}

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i]))
            return *out = 1, 1;
        if (!strcasecmp(v, no[i]))
            return *out = 0, 1;
    }
    return 0;
}

/* A whole number in [lo, hi] at s (n bytes), into *out; 1 or 0. */
static int parse_int(const char *s, size_t n, long long lo, long long hi, long long *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end = NULL;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

/* Each item of a ','- or ';'-separated list, trimmed, empty ones skipped:
 * fn(user, item, len) returns 0 to go on or an error code. */
typedef int (*item_fn)(void *user, const char *s, size_t n);

static int each_item(const char *text, item_fn fn, void *user)
{
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",;");
        const char *a = p, *b = p + len;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        if (b > a) {
            int rc = fn(user, a, (size_t)(b - a));
            if (rc)
                return rc;
        }
        p += len + (p[len] != '\0');
    }
    return 0;
}

typedef struct norm {
    const tgt_key *k;
    const char *what; /* "[target] dtypes" for messages */
    out_text out;
    ph_error *err;
} norm;

static int norm_item(void *user, const char *s, size_t n)
{
    norm *nm = user;
    long long v = 0;
    switch (nm->k->kind) {
    case TGT_DTYPES: {
        int dt = tgt_dtype(s, n);
        if (!dt) {
            const char *names[N_DTYPE_NAMES];
            for (size_t i = 0; i < N_DTYPE_NAMES; i++)
                names[i] = dtype_names[i].name;
            char word[64], near[200];
            snprintf(word, sizeof word, "%.*s", (int)n, s);
            ph_close_names_text(word, names, N_DTYPE_NAMES, near, sizeof near);
            return ph_error_set(nm->err, PH_EINVAL, "%s: '%s' is no dtype%s%s%s", nm->what, word,
                                *near ? " (did you mean " : " (float32, float16, int8, int32, int64, ...)", near,
                                *near ? "?)" : "");
        }
        const char *name = tgt_dtype_name(dt);
        put_item(&nm->out, name, strlen(name));
        return 0;
    }
    case TGT_OPS:
        if (check_op_name(s, n, nm->what, nm->err))
            return PH_EINVAL;
        put_item(&nm->out, s, n);
        return 0;
    case TGT_DOMAINS:
        if (!is_domain(s, n))
            return ph_error_set(nm->err, PH_EINVAL, "%s: '%.*s' is not a domain name (ai.onnx, com.microsoft, ...)",
                                nm->what, (int)n, s);
        put_item(&nm->out, s, n);
        return 0;
    case TGT_INTS:
        if (!parse_int(s, n, -1000000, 1000000, &v))
            return ph_error_set(nm->err, PH_EINVAL, "%s: '%.*s' is not a whole number", nm->what, (int)n, s);
        char num[32];
        snprintf(num, sizeof num, "%lld", v);
        put_item(&nm->out, num, strlen(num));
        return 0;
    case TGT_WORDS: {
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)n, s);
        const char *names[16];
        size_t count = 0;
        for (const char *p = nm->k->words; *p && count < 16;) {
            size_t len = strcspn(p, ",");
            if (len == n && !strncmp(p, s, n)) {
                put_item(&nm->out, s, n);
                return 0;
            }
            p += len + (p[len] == ',');
            count++;
        }
        char *copy = ir_strdup(nm->k->words);
        if (!copy)
            return PH_ENOMEM;
        count = 0;
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && count < 16; tok = strtok_r(NULL, ",", &save))
            names[count++] = tok;
        char near[200];
        ph_close_names_text(word, names, count, near, sizeof near);
        int rc = ph_error_set(nm->err, PH_EINVAL, "%s: '%s' is not one of %s%s%s%s", nm->what, word,
                              nm->k->words, *near ? " (did you mean " : "", near, *near ? "?)" : "");
        free(copy);
        return rc;
    }
    default:
        return PH_EINVAL;
    }
}

/* The normalized text of value for key k (caller frees), or NULL with err. */
static char *normalize(const tgt_key *k, const char *what, const char *value, ph_error *err)
{
    long long v = 0, lo = 1, hi = 1000;
    int b = 0;
    char buf[64];
    switch (k->kind) {
    case TGT_TEXT:
        return ir_strdup(value);
    case TGT_NAME:
        if (!*value || !islower((unsigned char)value[0]))
            goto bad_name;
        for (const char *c = value; *c; c++)
            if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.'))
                goto bad_name;
        return ir_strdup(value);
    bad_name:
        ph_error_set(err, PH_EINVAL, "%s: '%s' is not a profile name (lowercase letters, digits, '_', '-', '.')",
                     what, value);
        return NULL;
    case TGT_INT:
        if (!parse_int(value, strlen(value), 0, 1000000000, &v)) {
            ph_error_set(err, PH_EINVAL, "%s: '%s' is not a whole number from 0 to 1000000000", what, value);
            return NULL;
        }
        snprintf(buf, sizeof buf, "%lld", v);
        return ir_strdup(buf);
    case TGT_BOOL:
        if (!parse_bool(value, &b)) {
            ph_error_set(err, PH_EINVAL, "%s: '%s' is not a bool (true/false, yes/no, on/off, 1/0)", what, value);
            return NULL;
        }
        return ir_strdup(b ? "true" : "false");
    case TGT_BROADCAST:
        if (!strcasecmp(value, "same_rank"))
            return ir_strdup("same_rank");
        if (!parse_bool(value, &b)) {
            ph_error_set(err, PH_EINVAL, "%s: '%s' is not yes, no or same_rank", what, value);
            return NULL;
        }
        return ir_strdup(b ? "yes" : "no");
    case TGT_DTYPE: {
        size_t n = strlen(value);
        while (n && isspace((unsigned char)value[n - 1]))
            n--;
        int dt = tgt_dtype(value, n);
        if (!dt) {
            ph_error_set(err, PH_EINVAL, "%s: '%s' is no dtype (int32, int64, float32, ...)", what, value);
            return NULL;
        }
        return ir_strdup(tgt_dtype_name(dt));
    }
    case TGT_RANGE: {
        const char *dots = strstr(value, "..");
        size_t n = strlen(value);
        int ok = 1;
        if (!dots) {
            ok = parse_int(value, n, 1, 1000, &lo);
            hi = lo;
        } else {
            const char *rhs = dots + 2;
            if (dots > value)
                ok = parse_int(value, (size_t)(dots - value), 1, 1000, &lo);
            else
                lo = 0;
            if (ok && *rhs)
                ok = parse_int(rhs, strlen(rhs), 1, 1000, &hi);
            else
                hi = 0;
            ok = ok && (lo || hi) && (!lo || !hi || lo <= hi);
        }
        if (!ok) {
            ph_error_set(err, PH_EINVAL, "%s: '%s' is not an opset range (13, 11..17, 11.. or ..17)", what, value);
            return NULL;
        }
        if (!dots)
            snprintf(buf, sizeof buf, "%lld..%lld", lo, hi);
        else if (!lo)
            snprintf(buf, sizeof buf, "..%lld", hi);
        else if (!hi)
            snprintf(buf, sizeof buf, "%lld..", lo);
        else
            snprintf(buf, sizeof buf, "%lld..%lld", lo, hi);
        return ir_strdup(buf);
    }
    default: {
        norm nm = {.k = k, .what = what, .err = err};
        int rc = each_item(value, norm_item, &nm);
        if (!rc && nm.out.oom)
            rc = ph_error_set(err, PH_ENOMEM, "out of memory");
        if (rc) {
            free(nm.out.s);
            return NULL;
        }
        if (!nm.out.s && k->kind != TGT_OPS) {
            ph_error_set(err, PH_EINVAL, "%s: an empty list", what);
            return NULL;
        }
        return nm.out.s ? nm.out.s : ir_strdup("");
    }
    }
}

/* ------------------------------------------------------------- the store */

struct ph_target {
    char **keys;   /* dotted, owned */
    char **values; /* normalized, owned */
    size_t count, cap;
};

PH_API ph_target *ph_target_new(void) { return calloc(1, sizeof(ph_target)); }

PH_API void ph_target_free(ph_target *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->count; i++) {
        free(t->keys[i]);
        free(t->values[i]);
    }
    free(t->keys);
    free(t->values);
    free(t);
}

static ptrdiff_t find(const ph_target *t, const char *key)
{
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->keys[i], key))
            return (ptrdiff_t)i;
    return -1;
}

/* Split a dotted key into section (into buf) and key; 0, or -1. */
static int split_key(const char *dotted, char *section, size_t size, const char **key)
{
    const char *dot = NULL;
    if (!strncmp(dotted, "opset.", 6))
        dot = dotted + 5;
    else
        dot = strrchr(dotted, '.');
    if (!dot) {
        section[0] = '\0';
        *key = dotted;
        return 0;
    }
    if ((size_t)(dot - dotted) >= size)
        return -1;
    memcpy(section, dotted, (size_t)(dot - dotted));
    section[dot - dotted] = '\0';
    *key = dot + 1;
    return 0;
}

/* The definition of key in section, or NULL with err (PH_ENOTFOUND). */
static const tgt_key *lookup(const char *section, const char *key, ph_error *err)
{
    if (!strcmp(section, "opset")) {
        if (!is_domain(key, strlen(key))) {
            ph_error_set(err, PH_ENOTFOUND, "[target.opset]: '%s' is not a domain (ai.onnx, com.microsoft, ...)",
                         key);
            return NULL;
        }
        return &range_key;
    }
    if (!*section) {
        const tgt_key *k = target_key(key);
        if (!k) {
            const char *names[N_KEYS];
            size_t n = keys_of(NULL, names, N_KEYS);
            char near[200], all[600];
            ph_close_names_text(key, names, n, near, sizeof near);
            keys_text(NULL, all, sizeof all);
            ph_error_set(err, PH_ENOTFOUND, "unknown key '%s' in [target] (%s%s%s)", key,
                         *near ? "did you mean " : "expected ", *near ? near : all, *near ? "?" : "");
        }
        return k;
    }
    ph_error e = {0};
    char what[160];
    snprintf(what, sizeof what, "[target.%.120s]", section);
    if (check_op_name(section, strlen(section), what, &e)) {
        const char *extra[] = {"opset", "passes"}, *near[1];
        if (ph_close_names(section, extra, 2, near, 1))
            ph_error_set(err, PH_ENOTFOUND, "unknown section [target.%s] (did you mean [target.%s]?)", section,
                         near[0]);
        else
            ph_error_set(err, PH_ENOTFOUND, "unknown section %s", e.message);
        return NULL;
    }
    const tgt_key *k = op_key(section, key);
    if (!k) {
        const char *names[N_KEYS];
        size_t n = keys_of(section, names, N_KEYS);
        char near[200], all[600];
        ph_close_names_text(key, names, n, near, sizeof near);
        keys_text(section, all, sizeof all);
        ph_error_set(err, PH_ENOTFOUND, "unknown key '%s' in [target.%s] (%s%s%s)", key, section,
                     *near ? "did you mean " : "its keys: ", *near ? near : all, *near ? "?" : "");
    }
    return k;
}

PH_API int ph_target_key_check(const char *dotted, ph_error *err)
{
    char section[128];
    const char *key;
    if (!dotted || split_key(dotted, section, sizeof section, &key))
        return ph_error_set(err, PH_ENOTFOUND, "'%s' is no profile key", dotted ? dotted : "(null)");
    return lookup(section, key, err) ? 0 : PH_ENOTFOUND;
}

PH_API int ph_target_set(ph_target *t, const char *section, const char *key, const char *value,
                         ph_error *err)
{
    if (!t || !section || !key || !value)
        return ph_error_set(err, PH_EINVAL, "ph_target_set: NULL argument");
    const tgt_key *k = lookup(section, key, err);
    if (!k)
        return PH_ENOTFOUND;
    char what[200];
    snprintf(what, sizeof what, "[target%s%s] %s", *section ? "." : "", section, key);
    char *norm_value = normalize(k, what, value, err);
    if (!norm_value)
        return err && err->code ? err->code : PH_EINVAL;
    char *dotted = NULL;
    size_t len = strlen(section) + strlen(key) + 2;
    if (!(dotted = malloc(len))) {
        free(norm_value);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    snprintf(dotted, len, "%s%s%s", section, *section ? "." : "", key);
    ptrdiff_t at = find(t, dotted);
    if (at >= 0) {
        free(dotted);
        free(t->values[at]);
        t->values[at] = norm_value;
        return 0;
    }
    size_t cap = t->cap;
    if (ir_grow((void **)&t->keys, &cap, t->count + 1, sizeof *t->keys) < 0 ||
        ir_grow((void **)&t->values, &t->cap, t->count + 1, sizeof *t->values) < 0) {
        free(dotted);
        free(norm_value);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    t->keys[t->count] = dotted;
    t->values[t->count++] = norm_value;
    return 0;
}

PH_API const char *ph_target_name(const ph_target *t)
{
    const char *n = t ? ph_target_value(t, "name") : NULL;
    return n ? n : "";
}

PH_API const char *ph_target_value(const ph_target *t, const char *key)
{
    if (!t || !key)
        return NULL;
    ptrdiff_t at = find(t, key);
    return at >= 0 ? t->values[at] : NULL;
}

PH_API size_t ph_target_count(const ph_target *t) { return t ? t->count : 0; }

PH_API const char *ph_target_key_at(const ph_target *t, size_t i)
{
    return t && i < t->count ? t->keys[i] : NULL;
}

PH_API int ph_target_constrains(const ph_target *t, const char *key)
{
    const char *v = ph_target_value(t, key);
    if (!v)
        return 0;
    const char *last = strrchr(key, '.');
    const char *name = last ? last + 1 : key;
    if (!strcmp(key, "broadcast"))
        return strcmp(v, "yes") != 0;
    if (!strcmp(key, "static_shapes"))
        return !strcmp(v, "true");
    if (!strcmp(key, "auto_pad"))
        return !strcmp(v, "false");
    if (!strcmp(name, "index_dtype"))
        return strcmp(v, "int64") != 0;
    if (!strcmp(key, "name") || !strcmp(key, "summary"))
        return 0;
    return *v != '\0';
}

/* 1 when the ", "-separated list has item (n bytes). */
int tgt_list_has(const char *list, const char *item, size_t n)
{
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, item, n))
            return 1;
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return 0;
}

PH_API int ph_target_list_has(const char *list, const char *item)
{
    return item ? tgt_list_has(list, item, strlen(item)) : 0;
}

PH_API int ph_target_supports_op(const ph_target *t, const char *domain, const char *op_type)
{
    if (!t || !op_type)
        return 1;
    const char *dom = domain && *domain && strcmp(domain, "ai.onnx") ? domain : "";
    char name[256];
    int n = snprintf(name, sizeof name, "%s%s%s", op_type, *dom ? "@" : "", dom);
    size_t len = n > 0 && (size_t)n < sizeof name ? (size_t)n : strlen(op_type);
    const char *domains = ph_target_value(t, "domains"), *ops = ph_target_value(t, "ops"),
               *except = ph_target_value(t, "ops_except");
    if (except && tgt_list_has(except, name, len))
        return 0;
    if (!domains && !ops)
        return 1;
    const char *dname = *dom ? dom : "ai.onnx";
    if (domains && tgt_list_has(domains, dname, strlen(dname)))
        return 1;
    return ops && tgt_list_has(ops, name, len);
}
