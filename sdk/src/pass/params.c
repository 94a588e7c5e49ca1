/* sdk/src/pass/params.c - validated pass parameters (ph_params) for hosts and passes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

typedef struct param_value {
    const ph_param_def *def; /* borrowed from the pass's table */
    int64_t i;
    double f;
    char *s; /* owned, for strings */
} param_value;

struct ph_params {
    param_value *vals;
    size_t n;
};

static int parse_value(param_value *pv, const char *text, ph_error *err)
{
    const ph_param_def *d = pv->def;
    char *end;
    switch (d->type) {
    case PH_PARAM_INT: {
        errno = 0;
        long long v = strtoll(text, &end, 0);
        if (errno || end == text || *end)
            return ph_error_set(err, PH_EINVAL, "parameter '%s' wants an integer, got '%s'", d->name, text);
        pv->i = v;
        return 0;
    }
    case PH_PARAM_FLOAT: {
        errno = 0;
        double v = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(v))
            return ph_error_set(err, PH_EINVAL, "parameter '%s' wants a number, got '%s'", d->name, text);
        pv->f = v;
        return 0;
    }
    case PH_PARAM_BOOL: {
        static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
        for (size_t k = 0; k < 4; k++) {
            if (strcasecmp(text, yes[k]) == 0) {
                pv->i = 1;
                return 0;
            }
            if (strcasecmp(text, no[k]) == 0) {
                pv->i = 0;
                return 0;
            }
        }
        return ph_error_set(err, PH_EINVAL, "parameter '%s' wants true or false, got '%s'", d->name, text);
    }
    case PH_PARAM_STRING: {
        char *s = ir_strdup(text);
        if (!s)
            return ph_error_set(err, PH_ENOMEM, "out of memory");
        free(pv->s);
        pv->s = s;
        return 0;
    }
    }
    return ph_error_set(err, PH_EINVAL, "parameter '%s' has an unknown type %d", d->name ? d->name : "", (int)d->type);
}

PH_API ph_params *ph_params_new(const ph_param_def *table, ph_error *err)
{
    ph_params *p = calloc(1, sizeof *p);
    if (!p) {
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    size_t n = 0;
    while (table && table[n].name)
        n++;
    p->vals = calloc(n ? n : 1, sizeof *p->vals);
    if (!p->vals) {
        free(p);
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        p->vals[i].def = &table[i];
        p->n = i + 1;
        const char *dflt = table[i].default_value;
        if (!dflt)
            dflt = table[i].type == PH_PARAM_STRING ? "" : table[i].type == PH_PARAM_BOOL ? "false" : "0";
        if (parse_value(&p->vals[i], dflt, err)) {
            ph_params_free(p);
            return NULL;
        }
    }
    return p;
}

PH_API void ph_params_free(ph_params *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->vals[i].s);
    free(p->vals);
    free(p);
}

static param_value *find(const ph_params *p, const char *name, ph_param_type type)
{
    if (!p)
        return NULL;
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->vals[i].def->name, name) == 0)
            return type == 0 || p->vals[i].def->type == type ? &p->vals[i] : NULL;
    return NULL;
}

PH_API int ph_params_set(ph_params *p, const char *name, const char *text, ph_error *err)
{
    param_value *pv = find(p, name, 0);
    if (!pv)
        return ph_error_set(err, PH_ENOTFOUND, "unknown parameter '%s'", name);
    param_value tmp = *pv;
    tmp.s = NULL;
    int rc = parse_value(&tmp, text, err);
    if (rc)
        return rc;
    if (tmp.s) {
        free(pv->s);
        pv->s = tmp.s;
    }
    pv->i = tmp.i;
    pv->f = tmp.f;
    return 0;
}

PH_API int64_t ph_params_int(const ph_params *p, const char *name)
{
    const param_value *pv = find(p, name, PH_PARAM_INT);
    return pv ? pv->i : 0;
}

PH_API double ph_params_float(const ph_params *p, const char *name)
{
    const param_value *pv = find(p, name, PH_PARAM_FLOAT);
    return pv ? pv->f : 0.0;
}

PH_API int ph_params_bool(const ph_params *p, const char *name)
{
    const param_value *pv = find(p, name, PH_PARAM_BOOL);
    return pv ? (int)pv->i : 0;
}

PH_API const char *ph_params_string(const ph_params *p, const char *name)
{
    const param_value *pv = find(p, name, PH_PARAM_STRING);
    return pv && pv->s ? pv->s : "";
}
