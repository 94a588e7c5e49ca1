/* sdk/src/pattern/parse.c - the pattern language of passhost/pattern.h:
 * text to the compiled form, with errors that give the position. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

typedef struct parser {
    const char *text;
    const char *s;      /* cursor */
    int depth;          /* (), [], {} nesting: newlines inside are spaces */
    ph_pattern *p;
    ph_error *err;
    int failed;
} parser;

static int fail(parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return -1;
    ps->failed = 1;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t pos = (size_t)(ps->s - ps->text);
    int line = 1, col = 1;
    for (const char *c = ps->text; c < ps->s; c++, col++)
        if (*c == '\n')
            line++, col = 0;
    ph_error_set(ps->err, PH_EINVAL, "pattern '%.160s%s' at offset %zu (line %d, column %d): %s", ps->text,
                 strlen(ps->text) > 160 ? "..." : "", pos, line, col, what);
    return -1;
}

/* Skip blanks and comments; newlines too when nested or when nl is set. */
static void skip(parser *ps, int nl)
{
    for (;;) {
        char c = *ps->s;
        if (c == '#') {
            while (*ps->s && *ps->s != '\n')
                ps->s++;
        } else if (c == ' ' || c == '\t' || c == '\r' || (c == '\n' && (nl || ps->depth > 0))) {
            ps->s++;
        } else {
            return;
        }
    }
}

static int accept(parser *ps, char c)
{
    skip(ps, 0);
    if (*ps->s != c)
        return 0;
    ps->s++;
    if (c == '(' || c == '[' || c == '{')
        ps->depth++;
    else if (c == ')' || c == ']' || c == '}')
        ps->depth--;
    return 1;
}

static int expect(parser *ps, char c)
{
    if (accept(ps, c))
        return 0;
    return fail(ps, "expected '%c'", c);
}

static int is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static int is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

/* An identifier into buf; -1 (with error) if none. */
static int ident(parser *ps, char *buf, size_t size, const char *what)
{
    skip(ps, 0);
    if (!is_ident_start(*ps->s))
        return fail(ps, "expected %s", what);
    size_t n = 0;
    while (is_ident_char(*ps->s)) {
        if (n + 1 >= size)
            return fail(ps, "%s is too long", what);
        buf[n++] = *ps->s++;
    }
    buf[n] = 0;
    return 0;
}

static int integer(parser *ps, int64_t *out)
{
    skip(ps, 0);
    char *end;
    long long v = strtoll(ps->s, &end, 10);
    if (end == ps->s)
        return fail(ps, "expected an integer");
    ps->s = end;
    *out = v;
    return 0;
}

static void *grow1(parser *ps, void **arr, int *n, size_t elem)
{
    void *a = realloc(*arr, (size_t)(*n + 1) * elem);
    if (!a) {
        ps->failed = 1;
        ph_error_set(ps->err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    *arr = a;
    memset((char *)a + (size_t)*n * elem, 0, elem);
    return (char *)a + (size_t)(*n)++ * elem;
}

int pat_slot(const ph_pattern *p, const char *name)
{
    for (int i = 0; i < p->n_slots; i++)
        if (strcmp(p->names[i], name) == 0)
            return i;
    return -1;
}

static int slot_get(parser *ps, const char *name)
{
    int i = pat_slot(ps->p, name);
    if (i >= 0)
        return i;
    ph_pattern *p = ps->p;
    char *dup = ir_strdup(name);
    char **slot = dup ? grow1(ps, (void **)&p->names, &p->n_slots, sizeof *p->names) : NULL;
    if (!slot) {
        free(dup);
        return ps->failed ? -1 : fail(ps, "out of memory");
    }
    *slot = dup;
    int n = p->n_slots;
    int *ss = realloc(p->slot_stmt, (size_t)n * sizeof *ss);
    if (ss)
        p->slot_stmt = ss;
    int *sv = ss ? realloc(p->slot_variadic, (size_t)n * sizeof *sv) : NULL;
    if (sv)
        p->slot_variadic = sv;
    if (!ss || !sv) {
        ph_error_set(ps->err, PH_ENOMEM, "out of memory");
        ps->failed = 1;
        return -1;
    }
    ss[n - 1] = -1;
    sv[n - 1] = 0;
    return n - 1;
}

static const struct {
    const char *name;
    int dtype;
} dtype_names[] = {
    {"float", PH_DT_FLOAT},   {"float32", PH_DT_FLOAT}, {"uint8", PH_DT_UINT8},
    {"int8", PH_DT_INT8},     {"uint16", PH_DT_UINT16}, {"int16", PH_DT_INT16},
    {"int32", PH_DT_INT32},   {"int64", PH_DT_INT64},   {"string", PH_DT_STRING},
    {"bool", PH_DT_BOOL},     {"float16", PH_DT_FLOAT16}, {"double", PH_DT_DOUBLE},
    {"float64", PH_DT_DOUBLE}, {"uint32", PH_DT_UINT32}, {"uint64", PH_DT_UINT64},
    {"bfloat16", PH_DT_BFLOAT16},
};

static int constraint(parser *ps, pat_arg *a)
{
    char word[32];
    skip(ps, 0);
    const char *start = ps->s; /* errors point at the word */
    if (ident(ps, word, sizeof word, "a constraint (const, scalar, float, rank=, dtype=, shape=, perchannel=)"))
        return -1;
    pat_cons *c = grow1(ps, (void **)&a->cons, &a->n_cons, sizeof *a->cons);
    if (!c)
        return -1;
    if (strcmp(word, "const") == 0) {
        c->kind = PAT_CONST;
    } else if (strcmp(word, "scalar") == 0) {
        c->kind = PAT_SCALAR;
    } else if (strcmp(word, "float") == 0) {
        c->kind = PAT_FLOAT;
    } else if (strcmp(word, "rank") == 0 || strcmp(word, "perchannel") == 0) {
        c->kind = word[0] == 'r' ? PAT_RANK : PAT_PERCHANNEL;
        if (expect(ps, '=') || integer(ps, &c->n))
            return -1;
        if (c->kind == PAT_RANK && (c->n < 0 || c->n > 64))
            return fail(ps, "rank must be 0..64");
    } else if (strcmp(word, "dtype") == 0) {
        c->kind = PAT_DTYPE;
        if (expect(ps, '='))
            return -1;
        do {
            char dt[16];
            skip(ps, 0);
            const char *dt_start = ps->s;
            if (ident(ps, dt, sizeof dt, "a dtype name"))
                return -1;
            size_t k = 0, nn = sizeof dtype_names / sizeof dtype_names[0];
            while (k < nn && strcmp(dtype_names[k].name, dt) != 0)
                k++;
            if (k == nn) {
                ps->s = dt_start;
                return fail(ps, "unknown dtype '%s'", dt);
            }
            c->dtypes |= 1u << dtype_names[k].dtype;
        } while (accept(ps, '|'));
    } else if (strcmp(word, "shape") == 0) {
        c->kind = PAT_SHAPE;
        if (expect(ps, '=') || expect(ps, '['))
            return -1;
        int n = 0;
        if (!accept(ps, ']')) {
            do {
                int64_t d = 0;
                if (accept(ps, '*'))
                    d = PAT_ANY_DIM;
                else if (integer(ps, &d))
                    return -1;
                int64_t *slot = grow1(ps, (void **)&c->dims, &n, sizeof *c->dims);
                if (!slot)
                    return -1;
                *slot = d;
            } while (accept(ps, ','));
            if (expect(ps, ']'))
                return -1;
        }
        c->n = n;
    } else {
        ps->s = start;
        return fail(ps, "unknown constraint '%s'", word);
    }
    return 0;
}

static int literal(parser *ps, pat_attr *a)
{
    skip(ps, 0);
    if (*ps->s == '"') {
        const char *start = ++ps->s;
        while (*ps->s && *ps->s != '"' && *ps->s != '\n')
            ps->s++;
        if (*ps->s != '"')
            return fail(ps, "unterminated string");
        a->lit = PAT_LIT_STRING;
        a->s = strndup(start, (size_t)(ps->s - start));
        ps->s++;
        return a->s ? 0 : fail(ps, "out of memory");
    }
    if (accept(ps, '[')) {
        a->lit = PAT_LIT_INTS;
        int n = 0;
        if (!accept(ps, ']')) {
            do {
                int64_t *slot = grow1(ps, (void **)&a->ints, &n, sizeof *a->ints);
                if (!slot || integer(ps, slot))
                    return -1;
            } while (accept(ps, ','));
            if (expect(ps, ']'))
                return -1;
        }
        a->n_ints = (size_t)n;
        return 0;
    }
    char *end;
    strtoll(ps->s, &end, 10);
    char *fend;
    double f = strtod(ps->s, &fend);
    if (fend == ps->s)
        return fail(ps, "expected a value (integer, float, \"string\" or [integers])");
    if (fend > end) {
        a->lit = PAT_LIT_FLOAT;
        a->f = f;
        ps->s = fend;
        return 0;
    }
    a->lit = PAT_LIT_INT;
    return integer(ps, &a->i);
}

static int attribute(parser *ps, pat_stmt *st)
{
    pat_attr *a = grow1(ps, (void **)&st->attrs, &st->n_attrs, sizeof *st->attrs);
    if (!a)
        return -1;
    char key[64];
    if (accept(ps, '!')) {
        a->mode = PAT_ATTR_ABSENT;
    } else {
        a->mode = PAT_ATTR_EQ;
    }
    if (ident(ps, key, sizeof key, "an attribute name"))
        return -1;
    a->key = ir_strdup(key);
    if (!a->key)
        return fail(ps, "out of memory");
    if (a->mode == PAT_ATTR_ABSENT)
        return 0;
    if (accept(ps, '?'))
        a->mode = PAT_ATTR_OPT_EQ;
    if (expect(ps, '='))
        return -1;
    return literal(ps, a);
}

static int op_alternative(parser *ps, pat_stmt *st)
{
    char name[64], domain[128] = "";
    if (ident(ps, name, sizeof name, "an operator name"))
        return -1;
    if (accept(ps, '@') && ident(ps, domain, sizeof domain, "a domain"))
        return -1;
    if (strcmp(domain, "ai.onnx") == 0)
        domain[0] = 0;
    pat_op *o = grow1(ps, (void **)&st->ops, &st->n_ops, sizeof *st->ops);
    if (!o)
        return -1;
    o->op_type = ir_strdup(name);
    o->domain = ir_strdup(domain);
    if (!o->op_type || !o->domain)
        return fail(ps, "out of memory");
    o->op = ir_op_lookup(domain, name);
    return 0;
}

static int argument(parser *ps, pat_stmt *st, int stmt_index)
{
    char name[64];
    if (ident(ps, name, sizeof name, "an input name or '_'"))
        return -1;
    int wild = strcmp(name, "_") == 0;
    if (accept(ps, '*')) {
        if (wild)
            return fail(ps, "a variadic input needs a name");
        int slot = slot_get(ps, name);
        if (slot < 0)
            return -1;
        if (ps->p->slot_stmt[slot] >= 0 || ps->p->slot_variadic[slot])
            return fail(ps, "'%s' is already bound", name);
        ps->p->slot_variadic[slot] = 1;
        st->variadic_slot = slot;
        skip(ps, 0);
        if (*ps->s != ')')
            return fail(ps, "a variadic input must come last");
        return 0;
    }
    pat_arg *a = grow1(ps, (void **)&st->args, &st->n_args, sizeof *st->args);
    if (!a)
        return -1;
    a->slot = -1;
    if (!wild) {
        a->slot = slot_get(ps, name);
        if (a->slot < 0)
            return -1;
        if (ps->p->slot_variadic[a->slot])
            return fail(ps, "'%s' is a variadic list", name);
        int by = ps->p->slot_stmt[a->slot];
        if (by >= stmt_index)
            return fail(ps, "'%s' is used by the statement that binds it", name);
    }
    if (accept(ps, '?')) {
        if (a->slot >= 0 && ps->p->slot_stmt[a->slot] >= 0)
            return fail(ps, "'%s' is bound by a statement: it cannot be optional", name);
        a->optional = 1;
    }
    while (accept(ps, ':'))
        if (constraint(ps, a))
            return -1;
    return 0;
}

static int statement(parser *ps)
{
    ph_pattern *p = ps->p;
    pat_stmt *st = grow1(ps, (void **)&p->stmts, &p->n_stmts, sizeof *p->stmts);
    if (!st)
        return -1;
    int index = p->n_stmts - 1;
    st->variadic_slot = -1;
    /* outputs */
    do {
        char name[64];
        if (ident(ps, name, sizeof name, "an output name or '_'"))
            return -1;
        int *o = grow1(ps, (void **)&st->outs, &st->n_outs, sizeof *st->outs);
        int n_sh = st->n_outs - 1;
        int *sh = o ? grow1(ps, (void **)&st->shared, &n_sh, sizeof *st->shared) : NULL;
        if (!sh)
            return -1;
        *o = -1;
        if (strcmp(name, "_") != 0) {
            int slot = slot_get(ps, name);
            if (slot < 0)
                return -1;
            if (p->slot_stmt[slot] >= 0 || p->slot_variadic[slot])
                return fail(ps, "'%s' is bound twice", name);
            for (int k = 0; k < index; k++)
                for (int j = 0; j < p->stmts[k].n_args; j++)
                    if (p->stmts[k].args[j].slot == slot)
                        return fail(ps, "'%s' is used before the statement that binds it", name);
            p->slot_stmt[slot] = index;
            *o = slot;
        }
        if (accept(ps, ':')) {
            char word[16];
            if (ident(ps, word, sizeof word, "'shared'"))
                return -1;
            if (strcmp(word, "shared") != 0)
                return fail(ps, "an output takes only ':shared'");
            *sh = 1;
        }
    } while (accept(ps, ','));
    if (expect(ps, '='))
        return -1;
    do {
        if (op_alternative(ps, st))
            return -1;
    } while (accept(ps, '|'));
    if (expect(ps, '('))
        return -1;
    if (!accept(ps, ')')) {
        do {
            if (argument(ps, st, index))
                return -1;
        } while (st->variadic_slot < 0 && accept(ps, ','));
        if (expect(ps, ')'))
            return -1;
    }
    if (accept(ps, '{')) {
        if (!accept(ps, '}')) {
            do {
                if (attribute(ps, st))
                    return -1;
            } while (accept(ps, ','));
            if (expect(ps, '}'))
                return -1;
        }
    }
    return 0;
}

/* Every statement but the root feeds a later one; depth from the root. */
static int finish(parser *ps)
{
    ph_pattern *p = ps->p;
    if (p->n_stmts == 0)
        return fail(ps, "the pattern has no statement");
    int *depth = calloc((size_t)p->n_stmts, sizeof *depth);
    if (!depth)
        return fail(ps, "out of memory");
    depth[p->n_stmts - 1] = 1;
    p->depth = 1;
    for (int s = p->n_stmts - 1; s >= 0; s--) {
        if (!depth[s]) {
            free(depth);
            return fail(ps, "statement %d (%s) does not feed the root (the last statement)", s + 1,
                        p->stmts[s].ops[0].op_type);
        }
        for (int j = 0; j < p->stmts[s].n_args; j++) {
            int slot = p->stmts[s].args[j].slot;
            int by = slot >= 0 ? p->slot_stmt[slot] : -1;
            if (by >= 0 && depth[by] < depth[s] + 1)
                depth[by] = depth[s] + 1;
        }
    }
    for (int s = 0; s < p->n_stmts; s++)
        if (depth[s] > p->depth)
            p->depth = depth[s];
    free(depth);
    return 0;
}

PH_API ph_pattern *ph_pattern_parse(const char *text, ph_error *err)
{
    if (!text) {
        ph_error_set(err, PH_EINVAL, "pattern is NULL");
        return NULL;
    }
    ph_pattern *p = calloc(1, sizeof *p);
    if (!p || !(p->text = ir_strdup(text))) {
        free(p);
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    parser ps = {.text = text, .s = text, .p = p, .err = err};
    for (;;) {
        skip(&ps, 1);
        while (*ps.s == ';') {
            ps.s++;
            skip(&ps, 1);
        }
        if (!*ps.s)
            break;
        if (statement(&ps))
            break;
        skip(&ps, 0);
        if (*ps.s && *ps.s != ';' && *ps.s != '\n') {
            fail(&ps, "expected ';' or a new line after a statement");
            break;
        }
    }
    if (!ps.failed)
        finish(&ps);
    if (ps.failed) {
        ph_pattern_free(p);
        return NULL;
    }
    return p;
}

PH_API void ph_pattern_free(ph_pattern *p)
{
    if (!p)
        return;
    for (int s = 0; s < p->n_stmts; s++) {
        pat_stmt *st = &p->stmts[s];
        for (int i = 0; i < st->n_ops; i++) {
            free(st->ops[i].op_type);
            free(st->ops[i].domain);
        }
        for (int i = 0; i < st->n_args; i++) {
            for (int c = 0; c < st->args[i].n_cons; c++)
                free(st->args[i].cons[c].dims);
            free(st->args[i].cons);
        }
        for (int i = 0; i < st->n_attrs; i++) {
            free(st->attrs[i].key);
            free(st->attrs[i].s);
            free(st->attrs[i].ints);
        }
        free(st->ops);
        free(st->outs);
        free(st->shared);
        free(st->args);
        free(st->attrs);
    }
    free(p->stmts);
    for (int i = 0; i < p->n_slots; i++)
        free(p->names[i]);
    free(p->names);
    free(p->slot_stmt);
    free(p->slot_variadic);
    free(p->text);
    free(p);
}

PH_API const char *ph_pattern_text(const ph_pattern *p) { return p->text; }
PH_API int ph_pattern_depth(const ph_pattern *p) { return p->depth; }
