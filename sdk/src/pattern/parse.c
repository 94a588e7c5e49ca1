/* sdk/src/pattern/parse.c - the pattern language of passhost/pattern.h:
 * text to the compiled form, with errors that give the position.
 *
 * Two steps.  A scan finds the statements and the groups of alternatives
 * "( ... | ... )" and expands them into forms: each form is a list of
 * statement ranges of the text, one branch taken in every group.  Then each
 * form's statements are parsed from their ranges, so an error points into
 * the text as written. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

#define MAX_FORMS 256

typedef struct parser {
    const char *text;
    const char *s;      /* cursor */
    const char *end;    /* end of the range being parsed */
    pat_form *f;        /* the form being built */
    ph_error *err;
    int failed;
    int in_result;      /* after '=>' */
} parser;

static int fail_at(parser *ps, const char *at, const char *fmt, ...) PH_PRINTF(3, 4);

static int fail_at(parser *ps, const char *at, const char *fmt, ...)
{
    if (ps->failed)
        return -1;
    ps->failed = 1;
    char what[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t pos = (size_t)(at - ps->text);
    int line = 1, col = 1;
    for (const char *c = ps->text; c < at; c++, col++)
        if (*c == '\n')
            line++, col = 0;
    ph_error_set(ps->err, PH_EINVAL, "pattern '%.160s%s' at offset %zu (line %d, column %d): %s", ps->text,
                 strlen(ps->text) > 160 ? "..." : "", pos, line, col, what);
    return -1;
}

#define fail(ps, ...) fail_at((ps), (ps)->s, __VA_ARGS__)

static int oom(parser *ps)
{
    if (!ps->failed) {
        ps->failed = 1;
        ph_error_set(ps->err, PH_ENOMEM, "out of memory");
    }
    return -1;
}

static char peek(const parser *ps) { return ps->s < ps->end ? *ps->s : 0; }
static char peek2(const parser *ps) { return ps->s + 1 < ps->end ? ps->s[1] : 0; }

/* Skip blanks and comments (newlines too: a range is one statement). */
static void skip(parser *ps)
{
    for (;;) {
        char c = peek(ps);
        if (c == '#') {
            while (peek(ps) && peek(ps) != '\n')
                ps->s++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            ps->s++;
        } else {
            return;
        }
    }
}

static int accept(parser *ps, char c)
{
    skip(ps);
    if (peek(ps) != c)
        return 0;
    ps->s++;
    return 1;
}

/* Accept a two-character token. */
static int accept2(parser *ps, const char *tok)
{
    skip(ps);
    if (peek(ps) != tok[0] || peek2(ps) != tok[1])
        return 0;
    ps->s += 2;
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
    skip(ps);
    if (!is_ident_start(peek(ps)))
        return fail(ps, "expected %s", what);
    size_t n = 0;
    while (is_ident_char(peek(ps))) {
        if (n + 1 >= size)
            return fail(ps, "%s is too long", what);
        buf[n++] = *ps->s++;
    }
    buf[n] = 0;
    return 0;
}

/* The range at p starts with the word `benefit` or `opset` not followed by
 * what makes it a statement's output name ('=', ',', ':'). */
static int is_directive(const char *p, const char *limit)
{
    size_t n = !strncmp(p, "benefit", 7) ? 7 : !strncmp(p, "opset", 5) ? 5 : 0;
    if (!n || (p + n < limit && is_ident_char(p[n])))
        return 0;
    for (p += n; p < limit && (*p == ' ' || *p == '\t'); p++)
        ;
    if (p >= limit)
        return 1;
    return !(*p == ',' || *p == ':' || (*p == '=' && (p + 1 >= limit || p[1] != '=')));
}

/* The next word is `w` (not a prefix of a longer identifier); consumed. */
static int keyword(parser *ps, const char *w)
{
    skip(ps);
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->s) < n || strncmp(ps->s, w, n) != 0 ||
        (ps->s + n < ps->end && is_ident_char(ps->s[n])))
        return 0;
    ps->s += n;
    return 1;
}

/* strto* stop at the range's end: copy the number out first. */
static size_t number_span(const parser *ps, char *buf, size_t size)
{
    size_t n = 0;
    const char *c = ps->s;
    while (c < ps->end && n + 1 < size && (isalnum((unsigned char)*c) || *c == '.' || *c == '-' || *c == '+')) {
        if ((*c == '-' || *c == '+') && n > 0 && buf[n - 1] != 'e' && buf[n - 1] != 'E')
            break;
        buf[n++] = *c++;
    }
    buf[n] = 0;
    return n;
}

static int integer(parser *ps, int64_t *out)
{
    skip(ps);
    char buf[64], *end;
    number_span(ps, buf, sizeof buf);
    long long v = strtoll(buf, &end, 10);
    if (end == buf)
        return fail(ps, "expected an integer");
    ps->s += end - buf;
    *out = v;
    return 0;
}

/* A number: *is_int tells an integer from a float. */
static int number(parser *ps, double *f, int64_t *i, int *is_int)
{
    skip(ps);
    char buf[64], *iend, *fend;
    number_span(ps, buf, sizeof buf);
    long long iv = strtoll(buf, &iend, 10);
    double fv = strtod(buf, &fend);
    if (fend == buf || !isfinite(fv))
        return fail(ps, "expected a number");
    *is_int = iend >= fend;
    *i = iv;
    *f = *is_int ? (double)iv : fv;
    ps->s += (*is_int ? iend : fend) - buf;
    return 0;
}

static void *grow1(parser *ps, void **arr, int *n, size_t elem)
{
    void *a = realloc(*arr, (size_t)(*n + 1) * elem);
    if (!a) {
        oom(ps);
        return NULL;
    }
    *arr = a;
    memset((char *)a + (size_t)*n * elem, 0, elem);
    return (char *)a + (size_t)(*n)++ * elem;
}

/* ------------------------------------------------------------- names */

int pat_slot(const pat_form *f, const char *name)
{
    for (int i = 0; i < f->n_slots; i++)
        if (strcmp(f->names[i], name) == 0)
            return i;
    return -1;
}

int pat_var(const pat_form *f, const char *name)
{
    if (name[0] == '$')
        name++;
    for (int i = 0; i < f->n_vars; i++)
        if (strcmp(f->vars[i], name) == 0)
            return i;
    return -1;
}

static int slot_get(parser *ps, const char *name)
{
    pat_form *f = ps->f;
    int i = pat_slot(f, name);
    if (i >= 0)
        return i;
    char *dup = ir_strdup(name);
    int n = f->n_slots;
    char **slot = dup ? grow1(ps, (void **)&f->names, &f->n_slots, sizeof *f->names) : NULL;
    if (!slot) {
        free(dup);
        return oom(ps);
    }
    *slot = dup;
    int *a = realloc(f->slot_stmt, (size_t)(n + 1) * sizeof *a);
    if (a)
        f->slot_stmt = a;
    int *b = a ? realloc(f->slot_variadic, (size_t)(n + 1) * sizeof *b) : NULL;
    if (b)
        f->slot_variadic = b;
    int *c = b ? realloc(f->slot_kind, (size_t)(n + 1) * sizeof *c) : NULL;
    if (c)
        f->slot_kind = c;
    int *d = c ? realloc(f->slot_rstmt, (size_t)(n + 1) * sizeof *d) : NULL;
    if (d)
        f->slot_rstmt = d;
    if (!d)
        return oom(ps);
    f->slot_stmt[n] = -1;
    f->slot_variadic[n] = 0;
    f->slot_kind[n] = PAT_SLOT_LEAF;
    f->slot_rstmt[n] = -1;
    return n;
}

/* '$name' (the '$' already read): its variable, created when new. */
static int var_get(parser *ps)
{
    char name[64];
    if (ident(ps, name, sizeof name, "a variable name after '$'"))
        return -1;
    pat_form *f = ps->f;
    int i = pat_var(f, name);
    if (i >= 0)
        return i;
    char *dup = ir_strdup(name);
    char **v = dup ? grow1(ps, (void **)&f->vars, &f->n_vars, sizeof *f->vars) : NULL;
    if (!v) {
        free(dup);
        return oom(ps);
    }
    *v = dup;
    return f->n_vars - 1;
}

/* 1 if the slot is read or bound by a pattern statement. */
static int slot_in_pattern(const pat_form *f, int slot)
{
    if (f->slot_stmt[slot] >= 0 || f->slot_variadic[slot])
        return 1;
    for (int s = 0; s < f->n_stmts; s++)
        for (int j = 0; j < f->stmts[s].n_args; j++)
            if (f->stmts[s].args[j].slot == slot)
                return 1;
    return 0;
}

/* ------------------------------------------------------------- literals */

void pat_lit_free(pat_lit *l)
{
    free(l->s);
    free(l->ints);
    free(l->floats);
    for (size_t i = 0; l->strs && i < l->n; i++)
        free(l->strs[i]);
    free(l->strs);
    memset(l, 0, sizeof *l);
}

static char *string_lit(parser *ps)
{
    const char *start = ++ps->s;
    while (peek(ps) && peek(ps) != '"' && peek(ps) != '\n')
        ps->s++;
    if (peek(ps) != '"') {
        fail(ps, "unterminated string");
        return NULL;
    }
    char *s = strndup(start, (size_t)(ps->s - start));
    ps->s++;
    if (!s)
        oom(ps);
    return s;
}

static int literal(parser *ps, pat_lit *a)
{
    skip(ps);
    if (peek(ps) == '"') {
        a->kind = PAT_LIT_STRING;
        return (a->s = string_lit(ps)) ? 0 : -1;
    }
    if (accept(ps, '[')) {
        int nf = 0, ni = 0, ns = 0, any_float = 0, strings = -1;
        if (!accept(ps, ']')) {
            do {
                skip(ps);
                int is_str = peek(ps) == '"';
                if (strings >= 0 && is_str != strings)
                    return fail(ps, "a list holds numbers or strings, not both");
                strings = is_str;
                if (is_str) {
                    char **slot = grow1(ps, (void **)&a->strs, &ns, sizeof *a->strs);
                    if (!slot || !(*slot = string_lit(ps)))
                        return -1;
                    a->n = (size_t)ns;
                } else {
                    double f;
                    int64_t i;
                    int is_int;
                    double *fs = grow1(ps, (void **)&a->floats, &nf, sizeof *a->floats);
                    int64_t *is = fs ? grow1(ps, (void **)&a->ints, &ni, sizeof *a->ints) : NULL;
                    if (!is || number(ps, &f, &i, &is_int))
                        return -1;
                    *fs = f;
                    *is = i;
                    any_float |= !is_int;
                    a->n = (size_t)nf;
                }
            } while (accept(ps, ','));
            if (expect(ps, ']'))
                return -1;
        }
        /* the caller frees a literal that failed: its lists are owned */
        if (strings > 0) {
            a->kind = PAT_LIT_STRINGS;
        } else if (any_float) {
            a->kind = PAT_LIT_FLOATS;
            free(a->ints);
            a->ints = NULL;
        } else {
            a->kind = PAT_LIT_INTS;
            free(a->floats);
            a->floats = NULL;
        }
        return 0;
    }
    double f;
    int64_t i;
    int is_int;
    skip(ps);
    const char *at = ps->s;
    if (!(isdigit((unsigned char)peek(ps)) || peek(ps) == '-' || peek(ps) == '+' || peek(ps) == '.'))
        return fail(ps, "expected a value (a number, \"string\" or [list])");
    if (number(ps, &f, &i, &is_int)) {
        ps->failed = 0;
        return fail_at(ps, at, "expected a value (a number, \"string\" or [list])");
    }
    a->kind = is_int ? PAT_LIT_INT : PAT_LIT_FLOAT;
    a->i = i;
    a->f = f;
    return 0;
}

/* ----------------------------------------------------------- constraints */

static const struct {
    const char *name;
    int dtype;
} dtype_names[] = {
    {"float32", PH_DT_FLOAT},  {"uint8", PH_DT_UINT8},     {"int8", PH_DT_INT8},       {"uint16", PH_DT_UINT16},
    {"int16", PH_DT_INT16},    {"int32", PH_DT_INT32},     {"int64", PH_DT_INT64},     {"string", PH_DT_STRING},
    {"bool", PH_DT_BOOL},      {"float16", PH_DT_FLOAT16}, {"double", PH_DT_DOUBLE},   {"float64", PH_DT_DOUBLE},
    {"uint32", PH_DT_UINT32},  {"uint64", PH_DT_UINT64},   {"bfloat16", PH_DT_BFLOAT16},
};

static int dtype_of(const char *name)
{
    for (size_t k = 0; k < sizeof dtype_names / sizeof dtype_names[0]; k++)
        if (!strcmp(dtype_names[k].name, name))
            return dtype_names[k].dtype;
    return -1;
}

#define FLOAT_AMBIGUOUS                                                                                    \
    "'float' is ambiguous in a pattern: write 'float32' for the ONNX dtype float, or 'floating' for any "  \
    "floating-point dtype (float16, bfloat16, float32, double)"

/* dtype names separated by '|', the first in `first` (already read). */
static int dtype_list(parser *ps, pat_cons *c, const char *first, const char *first_at)
{
    char dt[16];
    const char *at = first_at;
    snprintf(dt, sizeof dt, "%s", first);
    for (;;) {
        if (!strcmp(dt, "float"))
            return fail_at(ps, at, FLOAT_AMBIGUOUS);
        if (!strcmp(dt, "floating")) {
            c->dtypes |= 1u << PH_DT_FLOAT | 1u << PH_DT_FLOAT16 | 1u << PH_DT_BFLOAT16 | 1u << PH_DT_DOUBLE;
        } else {
            int d = dtype_of(dt);
            if (d < 0)
                return fail_at(ps, at, "unknown dtype '%s'", dt);
            c->dtypes |= 1u << d;
        }
        skip(ps);
        /* '|' then a dtype name; a '|' before anything else is not ours */
        if (peek(ps) != '|')
            return 0;
        const char *save = ps->s++;
        skip(ps);
        at = ps->s;
        if (!is_ident_start(peek(ps)) || ident(ps, dt, sizeof dt, "a dtype name")) {
            ps->s = save;
            ps->failed = 0;
            return 0;
        }
    }
}

/* '=V', '~V' or '~V+-T' after scalar/all. */
static int value_test(parser *ps, pat_cons *c)
{
    int64_t i;
    int is_int;
    if (accept(ps, '=')) {
        c->tol = -1;
        return number(ps, &c->v, &i, &is_int);
    }
    if (!accept(ps, '~'))
        return 1; /* none */
    if (number(ps, &c->v, &i, &is_int))
        return -1;
    c->tol = 1e-4;
    c->rel = 1;
    if (accept2(ps, "+-")) {
        c->rel = 0;
        if (number(ps, &c->tol, &i, &is_int))
            return -1;
        if (c->tol < 0)
            return fail(ps, "a tolerance is >= 0");
    }
    return 0;
}

static int constraint(parser *ps, pat_arg *a)
{
    char word[32];
    skip(ps);
    const char *start = ps->s; /* errors point at the word */
    if (ident(ps, word, sizeof word,
              "a constraint (const, ints, scalar, all, a dtype such as float32 or floating, rank=, dtype=, shape=, "
              "perchannel=, fits())"))
        return -1;
    pat_cons *c = grow1(ps, (void **)&a->cons, &a->n_cons, sizeof *a->cons);
    if (!c)
        return -1;
    if (strcmp(word, "const") == 0) {
        c->kind = PAT_CONST;
    } else if (strcmp(word, "ints") == 0) {
        c->kind = PAT_INTS;
    } else if (strcmp(word, "scalar") == 0 || strcmp(word, "all") == 0) {
        int all = word[0] == 'a';
        skip(ps);
        if (!all && peek(ps) == '=' && ps->s + 1 < ps->end && ps->s[1] == '$') {
            ps->s += 2;
            c->kind = PAT_SCALAR_VAR;
            return (c->ref = var_get(ps)) < 0 ? -1 : 0;
        }
        int r = value_test(ps, c);
        if (r < 0)
            return -1;
        if (r > 0 && all)
            return fail(ps, "expected '=' or '~' after 'all' (all=V: every element is V)");
        if (r == 0) {
            c->kind = PAT_VALUE;
            c->n = all;
        } else {
            c->kind = PAT_SCALAR;
        }
    } else if (strcmp(word, "rank") == 0 || strcmp(word, "perchannel") == 0) {
        c->kind = word[0] == 'r' ? PAT_RANK : PAT_PERCHANNEL;
        if (expect(ps, '=') || integer(ps, &c->n))
            return -1;
        if (c->kind == PAT_RANK && (c->n < 0 || c->n > 64))
            return fail(ps, "rank must be 0..64");
    } else if (strcmp(word, "dtype") == 0) {
        if (expect(ps, '='))
            return -1;
        if (accept(ps, '$')) {
            c->kind = PAT_DTYPE_VAR;
            return (c->ref = var_get(ps)) < 0 ? -1 : 0;
        }
        c->kind = PAT_DTYPE;
        char dt[16];
        skip(ps);
        const char *at = ps->s;
        if (ident(ps, dt, sizeof dt, "a dtype name or '$variable'"))
            return -1;
        return dtype_list(ps, c, dt, at);
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
    } else if (strcmp(word, "fits") == 0) {
        char name[64];
        c->kind = PAT_FITS;
        if (expect(ps, '(') || ident(ps, name, sizeof name, "the name of a value") || expect(ps, ')'))
            return -1;
        if ((c->ref = slot_get(ps, name)) < 0)
            return -1;
        ps->f->deferred = 1;
    } else if (strcmp(word, "float") == 0 || strcmp(word, "floating") == 0 || dtype_of(word) >= 0) {
        c->kind = PAT_DTYPE;
        return dtype_list(ps, c, word, start);
    } else {
        return fail_at(ps, start, "unknown constraint '%s'", word);
    }
    return 0;
}

/* ------------------------------------------------------------ attributes */

static int attr_op(parser *ps, int *op)
{
    skip(ps);
    if (accept2(ps, "!="))
        *op = PAT_OP_NE;
    else if (accept2(ps, "<="))
        *op = PAT_OP_LE;
    else if (accept2(ps, ">="))
        *op = PAT_OP_GE;
    else if (accept(ps, '<'))
        *op = PAT_OP_LT;
    else if (accept(ps, '>'))
        *op = PAT_OP_GT;
    else if (accept(ps, '='))
        *op = PAT_OP_EQ;
    else if (keyword(ps, "in"))
        *op = PAT_OP_IN;
    else
        return 0;
    return 1;
}

static int attribute_test(parser *ps, pat_attr *a);

/* A statement's attribute test, its literals also as the matcher's values
 * (pointing into the literals, which the form owns). */
static int attribute(parser *ps, pat_stmt *st)
{
    pat_attr *a = grow1(ps, (void **)&st->attrs, &st->n_attrs, sizeof *st->attrs);
    if (!a || attribute_test(ps, a))
        return -1;
    pat_lit_val(&a->rhs, &a->rhs_val);
    pat_lit_val(&a->dflt, &a->dflt_val);
    return 0;
}

static int attribute_test(parser *ps, pat_attr *a)
{
    char key[64];
    a->var = -1;
    int absent = accept(ps, '!');
    if (ident(ps, key, sizeof key, "an attribute name"))
        return -1;
    if (!(a->key = ir_strdup(key)))
        return oom(ps);
    if (absent) {
        a->op = PAT_OP_ABSENT;
        return 0;
    }
    if (accept(ps, '?')) {
        a->absent_ok = 1;
    } else if (accept(ps, '(')) {
        a->has_default = 1;
        if (literal(ps, &a->dflt) || expect(ps, ')'))
            return -1;
    }
    a->all = keyword(ps, "all");
    if (!attr_op(ps, &a->op)) {
        if (a->all || a->absent_ok || a->has_default)
            return fail(ps, "expected a comparison (=, !=, <, <=, >, >=, in) after attribute '%s'", key);
        a->op = PAT_OP_PRESENT;
        return 0;
    }
    skip(ps);
    if (accept(ps, '$')) {
        if (a->op != PAT_OP_EQ || a->all)
            return fail_at(ps, ps->s - 1, "a variable binds with '=' only");
        return (a->var = var_get(ps)) < 0 ? -1 : 0;
    }
    const char *at = ps->s;
    if (literal(ps, &a->rhs))
        return -1;
    int list = a->rhs.kind == PAT_LIT_INTS || a->rhs.kind == PAT_LIT_FLOATS || a->rhs.kind == PAT_LIT_STRINGS;
    if (a->op == PAT_OP_IN && !list)
        return fail_at(ps, at, "'in' takes a list: [a, b, ...]");
    if (a->op >= PAT_OP_LT && a->op <= PAT_OP_GE && a->rhs.kind != PAT_LIT_INT && a->rhs.kind != PAT_LIT_FLOAT)
        return fail_at(ps, at, "<, <=, > and >= compare numbers");
    if (a->all && (list || a->rhs.kind == PAT_LIT_STRING))
        return fail_at(ps, at, "'all' compares every element of a list with one number");
    return 0;
}

/* -------------------------------------------------------------- statements */

/* After a list 'name*': only `close` may follow. */
static int list_is_last(parser *ps, char close, const char *what)
{
    skip(ps);
    return peek(ps) == close ? 0 : fail(ps, "a variadic %s must come last", what);
}

static int op_name(parser *ps, char *name, size_t nsize, char *domain, size_t dsize)
{
    domain[0] = 0;
    if (ident(ps, name, nsize, "an operator name"))
        return -1;
    if (accept(ps, '@') && ident(ps, domain, dsize, "a domain"))
        return -1;
    if (strcmp(domain, "ai.onnx") == 0)
        domain[0] = 0;
    return 0;
}

static int op_alternative(parser *ps, pat_stmt *st)
{
    char name[64], domain[128];
    if (op_name(ps, name, sizeof name, domain, sizeof domain))
        return -1;
    pat_op *o = grow1(ps, (void **)&st->ops, &st->n_ops, sizeof *st->ops);
    if (!o)
        return -1;
    o->op_type = ir_strdup(name);
    o->domain = ir_strdup(domain);
    if (!o->op_type || !o->domain)
        return oom(ps);
    o->op = ir_op_lookup(domain, name);
    if (o->op == PH_OP_UNKNOWN)
        st->n_named_ops++;
    else
        st->op_bits[(unsigned)o->op / 64] |= (uint64_t)1 << ((unsigned)o->op % 64);
    return 0;
}

static int argument(parser *ps, pat_stmt *st, int stmt_index)
{
    char name[64];
    skip(ps);
    const char *at = ps->s;
    if (ident(ps, name, sizeof name, "an input name or '_'"))
        return -1;
    int wild = strcmp(name, "_") == 0;
    pat_form *f = ps->f;
    if (accept(ps, '*')) {
        if (wild)
            return fail(ps, "a variadic input needs a name");
        int slot = slot_get(ps, name);
        if (slot < 0)
            return -1;
        if (f->slot_stmt[slot] >= 0 || f->slot_variadic[slot])
            return fail(ps, "'%s' is already bound", name);
        f->slot_variadic[slot] = 1;
        st->variadic_slot = slot;
        return list_is_last(ps, ')', "input");
    }
    pat_arg *a = grow1(ps, (void **)&st->args, &st->n_args, sizeof *st->args);
    if (!a)
        return -1;
    a->slot = -1;
    a->at = (size_t)(at - ps->text);
    if (!wild) {
        a->slot = slot_get(ps, name);
        if (a->slot < 0)
            return -1;
        if (f->slot_variadic[a->slot])
            return fail(ps, "'%s' is a variadic list", name);
        if (f->slot_stmt[a->slot] >= stmt_index)
            return fail(ps, "'%s' is used by the statement that binds it", name);
    }
    if (accept(ps, '?')) {
        if (a->slot >= 0 && f->slot_stmt[a->slot] >= 0)
            return fail(ps, "'%s' is bound by a statement: it cannot be optional", name);
        a->optional = 1;
    }
    while (accept(ps, ':'))
        if (constraint(ps, a))
            return -1;
    return 0;
}

/* outputs '=': names into slots (pattern) */
static int pattern_statement(parser *ps)
{
    pat_form *f = ps->f;
    pat_stmt *st = grow1(ps, (void **)&f->stmts, &f->n_stmts, sizeof *f->stmts);
    if (!st)
        return -1;
    int index = f->n_stmts - 1;
    st->variadic_slot = -1;
    st->variadic_out = -1;
    do {
        char name[64];
        if (ident(ps, name, sizeof name, "an output name or '_'"))
            return -1;
        if (accept(ps, '*')) { /* 'ys*': the remaining outputs */
            int slot = strcmp(name, "_") ? slot_get(ps, name) : fail(ps, "a variadic output needs a name");
            if (slot < 0)
                return -1;
            if (f->slot_stmt[slot] >= 0 || f->slot_variadic[slot])
                return fail(ps, "'%s' is bound twice", name);
            f->slot_variadic[slot] = 1;
            f->slot_stmt[slot] = index;
            st->variadic_out = slot;
            if (list_is_last(ps, '=', "output"))
                return -1;
            break;
        }
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
            if (f->slot_stmt[slot] >= 0 || f->slot_variadic[slot])
                return fail(ps, "'%s' is bound twice", name);
            for (int k = 0; k < index; k++)
                for (int j = 0; j < f->stmts[k].n_args; j++)
                    if (f->stmts[k].args[j].slot == slot)
                        return fail(ps, "'%s' is used before the statement that binds it", name);
            f->slot_stmt[slot] = index;
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
    if (accept(ps, '{') && !accept(ps, '}')) {
        do {
            if (attribute(ps, st))
                return -1;
        } while (accept(ps, ','));
        if (expect(ps, '}'))
            return -1;
    }
    return 0;
}

/* '!' ['all'] ops '(' args ')' ['{' attrs '}']: a negative statement.  The
 * form matches only when no node outside the match that reads the value its
 * first named argument binds matches the statement; with 'all', only when
 * not every such reader does (the value is a graph output, or some reader
 * does not match; a value nothing reads is refused).  Its arguments are '_'
 * or values of the pattern (bound before it). */
static int negative_statement(parser *ps)
{
    pat_form *f = ps->f;
    pat_stmt *st = grow1(ps, (void **)&f->nacs, &f->n_nacs, sizeof *f->nacs);
    if (!st)
        return -1;
    st->variadic_slot = -1;
    st->variadic_out = -1;
    st->every = keyword(ps, "all");
    do {
        if (op_alternative(ps, st))
            return -1;
    } while (accept(ps, '|'));
    if (expect(ps, '('))
        return -1;
    int named = 0;
    if (!accept(ps, ')')) {
        do {
            skip(ps);
            const char *at = ps->s;
            if (argument(ps, st, f->n_stmts + 1))
                return -1;
            if (st->variadic_slot >= 0)
                return fail_at(ps, at, "a negative statement takes no variadic input");
            const pat_arg *a = &st->args[st->n_args - 1];
            if (a->slot >= 0 && !slot_in_pattern(f, a->slot))
                return fail_at(ps, at, "a negative statement reads values the statements before it bind, or '_'");
            if (a->optional)
                return fail_at(ps, at, "a negative statement has no optional input");
            named |= a->slot >= 0;
        } while (accept(ps, ','));
        if (expect(ps, ')'))
            return -1;
    }
    if (!named)
        return fail(ps, "a negative statement reads at least one value of the pattern");
    if (accept(ps, '{') && !accept(ps, '}')) {
        do {
            if (attribute(ps, st))
                return -1;
        } while (accept(ps, ','));
        if (expect(ps, '}'))
            return -1;
    }
    return 0;
}

/* A value name a result statement reads: a value of the pattern, a result
 * statement's output, or one the rewrite callback binds (ph_rw_bind). */
static int result_read(parser *ps, const char *name)
{
    int slot = slot_get(ps, name);
    if (slot < 0)
        return -1;
    pat_form *f = ps->f;
    if (f->slot_variadic[slot])
        return fail(ps, "'%s' is a variadic list: a result reads single values", name);
    return slot;
}

static int result_statement(parser *ps)
{
    pat_form *f = ps->f;
    pat_rstmt *r = grow1(ps, (void **)&f->result, &f->n_result, sizeof *f->result);
    if (!r)
        return -1;
    int index = f->n_result - 1;
    r->like = -1;
    r->variadic_out = r->variadic_arg = -1;
    do {
        char name[64];
        skip(ps);
        const char *at = ps->s;
        if (ident(ps, name, sizeof name, "an output name or '_'"))
            return -1;
        if (accept(ps, '*')) { /* 'ys*': replaces the pattern's output list ys */
            int slot = pat_slot(f, name);
            if (slot < 0 || !f->slot_variadic[slot] || f->slot_stmt[slot] < 0)
                return fail_at(ps, at, "'%s*': %s is not an output list 'ys*' of the pattern", name, name);
            if (f->slot_rstmt[slot] >= 0)
                return fail_at(ps, at, "'%s' is made twice by the result", name);
            f->slot_rstmt[slot] = index;
            r->variadic_out = slot;
            if (list_is_last(ps, '=', "output"))
                return -1;
            break;
        }
        int *o = grow1(ps, (void **)&r->outs, &r->n_outs, sizeof *r->outs);
        if (!o)
            return -1;
        *o = -1;
        if (strcmp(name, "_") == 0)
            continue;
        int slot = slot_get(ps, name);
        if (slot < 0)
            return -1;
        if (f->slot_variadic[slot])
            return fail_at(ps, at, "'%s' is a variadic list", name);
        if (f->slot_rstmt[slot] >= 0)
            return fail_at(ps, at, "'%s' is made twice by the result", name);
        if (f->slot_stmt[slot] < 0) {
            if (slot_in_pattern(f, slot))
                return fail_at(ps, at, "'%s' is an input of the match: a result replaces only values the "
                                       "matched nodes make", name);
            for (int k = 0; k < index; k++)
                for (int j = 0; j < f->result[k].n_args; j++)
                    if (f->result[k].args[j] == slot)
                        return fail_at(ps, at, "'%s' is read before the result statement that makes it", name);
            f->slot_kind[slot] = PAT_SLOT_RESULT;
        }
        f->slot_rstmt[slot] = index;
        *o = slot;
    } while (accept(ps, ','));
    if (expect(ps, '='))
        return -1;
    char name[64], domain[128];
    skip(ps);
    const char *at = ps->s;
    if (op_name(ps, name, sizeof name, domain, sizeof domain))
        return -1;
    if (!accept(ps, '(')) { /* an alias: y = x */
        if (*domain)
            return fail(ps, "expected '('");
        if (r->n_outs != 1 || r->outs[0] < 0 || r->variadic_out >= 0)
            return fail_at(ps, at, "an alias 'y = x' names one value on each side");
        int *a = grow1(ps, (void **)&r->args, &r->n_args, sizeof *r->args);
        int n2 = 0, n3 = 0;
        size_t *aa = a ? grow1(ps, (void **)&r->arg_at, &n2, sizeof *r->arg_at) : NULL;
        int *ao = aa ? grow1(ps, (void **)&r->arg_optional, &n3, sizeof *r->arg_optional) : NULL;
        if (!ao || (*a = result_read(ps, name)) < 0)
            return -1;
        *aa = (size_t)(at - ps->text);
        return 0;
    }
    r->same_op = strcmp(name, "_") == 0; /* the op of the node 'like' copies */
    size_t len = strlen(name) + (*domain ? strlen(domain) + 1 : 0) + 1;
    if (r->same_op && *domain)
        return fail_at(ps, at, "'_' (the op of the node 'like' copies) takes no domain");
    if (!r->same_op && !(r->op = malloc(len)))
        return oom(ps);
    if (r->op)
        snprintf(r->op, len, "%s%s%s", name, *domain ? "@" : "", domain);
    if (!accept(ps, ')')) {
        do {
            char arg[64];
            skip(ps);
            const char *aat = ps->s;
            if (ident(ps, arg, sizeof arg, "an input name or '_'"))
                return -1;
            if (accept(ps, '*')) { /* 'xs*': the values of the pattern's list xs */
                int slot = pat_slot(f, arg);
                if (slot < 0 || !f->slot_variadic[slot])
                    return fail_at(ps, aat, "'%s*': %s is not a list 'xs*' of the pattern", arg, arg);
                r->variadic_arg = slot;
                if (list_is_last(ps, ')', "input"))
                    return -1;
                break;
            }
            int n1 = r->n_args, n2 = r->n_args;
            int *a = grow1(ps, (void **)&r->args, &r->n_args, sizeof *r->args);
            size_t *aa = a ? grow1(ps, (void **)&r->arg_at, &n1, sizeof *r->arg_at) : NULL;
            int *ao = aa ? grow1(ps, (void **)&r->arg_optional, &n2, sizeof *r->arg_optional) : NULL;
            if (!ao)
                return -1;
            *aa = (size_t)(aat - ps->text);
            *a = -1;
            if (strcmp(arg, "_") != 0 && (*a = result_read(ps, arg)) < 0)
                return -1;
            if (*a >= 0 && f->slot_rstmt[*a] >= index)
                return fail_at(ps, aat, "'%s' is made by this result statement or a later one", arg);
            *ao = accept(ps, '?');
        } while (accept(ps, ','));
        if (expect(ps, ')'))
            return -1;
    }
    if (keyword(ps, "like")) {
        char like[64];
        skip(ps);
        const char *lat = ps->s;
        if (ident(ps, like, sizeof like, "the name of a matched node's output"))
            return -1;
        int slot = pat_slot(f, like);
        if (slot < 0 || f->slot_stmt[slot] < 0)
            return fail_at(ps, lat, "'like %s': %s is not made by a statement of the pattern", like, like);
        r->like = slot;
    }
    if (r->same_op && r->like < 0)
        return fail_at(ps, at, "'_' as the op is the op of the node 'like' copies: the statement needs 'like'");
    if (accept(ps, '{') && !accept(ps, '}')) {
        do {
            pat_rattr *a = grow1(ps, (void **)&r->attrs, &r->n_attrs, sizeof *r->attrs);
            if (!a)
                return -1;
            a->var = -1;
            a->spread = -1;
            if (accept(ps, '.')) {
                char from[64];
                if (expect(ps, '.') || expect(ps, '.'))
                    return -1;
                skip(ps);
                const char *fat = ps->s;
                if (ident(ps, from, sizeof from, "the name of a matched node's output"))
                    return -1;
                int slot = pat_slot(f, from);
                if (slot < 0 || f->slot_stmt[slot] < 0)
                    return fail_at(ps, fat, "'...%s': %s is not made by a statement of the pattern", from, from);
                a->spread = slot;
                continue;
            }
            char key[64];
            if (ident(ps, key, sizeof key, "an attribute name or '...name'") || expect(ps, '='))
                return -1;
            if (!(a->key = ir_strdup(key)))
                return oom(ps);
            if (accept(ps, '$')) {
                if ((a->var = var_get(ps)) < 0)
                    return -1;
            } else if (literal(ps, &a->lit)) {
                return -1;
            }
        } while (accept(ps, ','));
        if (expect(ps, '}'))
            return -1;
    }
    return 0;
}

/* `benefit N` or `opset[@domain] CMP N`, or 0 when the range is no
 * directive (a statement binding a value called benefit or opset). */
static int directive(parser *ps)
{
    pat_form *f = ps->f;
    skip(ps);
    if (!is_directive(ps->s, ps->end))
        return 0;
    if (keyword(ps, "benefit")) {
        int64_t b;
        skip(ps);
        const char *at = ps->s;
        if (integer(ps, &b))
            return -1;
        if (b < 0 || b > 1000000)
            return fail_at(ps, at, "a benefit is 0..1000000");
        f->benefit = (int)b;
        f->has_benefit = 1;
        return 1;
    }
    if (!keyword(ps, "opset"))
        return 0;
    char domain[128] = "";
    if (accept(ps, '@') && ident(ps, domain, sizeof domain, "a domain"))
        return -1;
    int op;
    if (accept2(ps, "=="))
        op = PAT_OP_EQ;
    else if (!attr_op(ps, &op) || op == PAT_OP_IN || op == PAT_OP_EQ)
        return fail(ps, "expected a comparison (>=, >, <=, <, ==, !=) after 'opset'");
    pat_guard *g = grow1(ps, (void **)&f->guards, &f->n_guards, sizeof *f->guards);
    if (!g)
        return -1;
    g->op = op;
    if (integer(ps, &g->version))
        return -1;
    if (!strcmp(domain, "ai.onnx"))
        domain[0] = 0;
    return (g->domain = ir_strdup(domain)) ? 1 : oom(ps);
}

/* One range: a directive, '=>' or a statement. */
static int item(parser *ps)
{
    skip(ps);
    if (accept2(ps, "=>")) {
        if (ps->in_result)
            return fail_at(ps, ps->s - 2, "a second '=>'");
        ps->in_result = 1;
        ps->f->has_result = 1;
        return 0;
    }
    int d = directive(ps);
    if (d < 0)
        return -1;
    if (!d && !ps->in_result && accept(ps, '!')) {
        if (negative_statement(ps))
            return -1;
    } else if (!d && (ps->in_result ? result_statement(ps) : pattern_statement(ps))) {
        return -1;
    }
    skip(ps);
    if (peek(ps))
        return fail(ps, "expected ';' or a new line after a statement");
    return 0;
}

/* Every statement but the root feeds a later one; depth from the root;
 * every value a constraint names is one of the pattern's. */
static int finish(parser *ps)
{
    pat_form *f = ps->f;
    if (f->n_stmts == 0)
        return fail(ps, "the pattern has no statement");
    int *depth = calloc((size_t)f->n_stmts, sizeof *depth);
    if (!depth)
        return oom(ps);
    depth[f->n_stmts - 1] = 1;
    f->depth = 1;
    for (int s = f->n_stmts - 1; s >= 0; s--) {
        if (!depth[s]) {
            free(depth);
            return fail(ps, "statement %d (%s) does not feed the root (the last statement)", s + 1,
                        f->stmts[s].ops[0].op_type);
        }
        for (int j = 0; j < f->stmts[s].n_args; j++) {
            int slot = f->stmts[s].args[j].slot;
            int by = slot >= 0 ? f->slot_stmt[slot] : -1;
            if (by >= 0 && depth[by] < depth[s] + 1)
                depth[by] = depth[s] + 1;
        }
    }
    for (int s = 0; s < f->n_stmts; s++)
        if (depth[s] > f->depth)
            f->depth = depth[s];
    free(depth);
    for (int s = 0; s < f->n_stmts; s++)
        for (int j = 0; j < f->stmts[s].n_args; j++)
            for (int c = 0; c < f->stmts[s].args[j].n_cons; c++) {
                const pat_cons *k = &f->stmts[s].args[j].cons[c];
                if (k->kind == PAT_FITS && !slot_in_pattern(f, k->ref))
                    return fail_at(ps, ps->text + f->stmts[s].args[j].at, "fits(%s): %s is not a value of the pattern",
                                   f->names[k->ref], f->names[k->ref]);
            }
    if (!f->has_benefit)
        f->benefit = f->n_stmts;
    return 0;
}

/* --------------------------------------------------- alternatives: scan */

typedef struct sblk sblk;
typedef struct sitem {
    const char *start, *end; /* a statement; or a group: */
    sblk *br;                /* owned branches */
    int n_br;
} sitem;
struct sblk {
    sitem *items;
    int n;
};

static void sblk_free(sblk *b)
{
    for (int i = 0; i < b->n; i++) {
        for (int k = 0; k < b->items[i].n_br; k++)
            sblk_free(&b->items[i].br[k]);
        free(b->items[i].br);
    }
    free(b->items);
}

/* The end of the statement starting at s (before limit). */
static const char *stmt_end(const char *s, const char *limit)
{
    int depth = 0, called = 0;
    const char *p = s;
    int directive = is_directive(p, limit);
    if (!strncmp(p, "=>", 2))
        return p + 2;
    while (p < limit) {
        char c = *p;
        if (c == '"') {
            for (p++; p < limit && *p != '"' && *p != '\n'; p++)
                ;
            if (p < limit && *p == '"')
                p++;
            continue;
        }
        if (c == '#') {
            while (p < limit && *p != '\n')
                p++;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0)
                break; /* closes a group */
            depth--;
            if (depth == 0 && c == ')')
                called = 1;
        } else if (depth == 0 && (c == '\n' || c == ';')) {
            break;
        } else if (depth == 0 && c == '|' && (called || directive)) {
            break; /* the next alternative */
        }
        p++;
    }
    return p;
}

/* Statements and groups up to the end, or (in a group) up to its '|' or ')'. */
static int scan_block(parser *ps, sblk *b, int in_group)
{
    const char *limit = ps->end;
    for (;;) {
        while (ps->s < limit && (isspace((unsigned char)*ps->s) || *ps->s == ';' || *ps->s == '#')) {
            if (*ps->s == '#')
                while (ps->s < limit && *ps->s != '\n')
                    ps->s++;
            else
                ps->s++;
        }
        if (ps->s >= limit || (in_group && (*ps->s == '|' || *ps->s == ')')))
            return 0;
        if (*ps->s == ')')
            return fail(ps, "')' closes no group of alternatives");
        if (*ps->s == '|')
            return fail(ps, "'|' outside a group of alternatives '( ... | ... )'");
        sitem *it = grow1(ps, (void **)&b->items, &b->n, sizeof *b->items);
        if (!it)
            return -1;
        if (*ps->s == '(') {
            const char *open = ps->s++;
            for (;;) {
                sblk *br = grow1(ps, (void **)&it->br, &it->n_br, sizeof *it->br);
                if (!br || scan_block(ps, br, 1))
                    return -1;
                if (br->n == 0)
                    return fail(ps, "an empty alternative");
                if (ps->s >= limit)
                    return fail_at(ps, open, "the group of alternatives opened here is not closed with ')'");
                if (*ps->s++ == ')')
                    break;
            }
            it->start = open;
            continue;
        }
        it->start = ps->s;
        it->end = stmt_end(ps->s, limit);
        ps->s = it->end;
    }
}

/* A form: the statement ranges it is made of. */
typedef struct seq {
    const char **at; /* pairs: start, end */
    int n;
} seq;

typedef struct seqs {
    seq *v;
    int n;
} seqs;

static void seqs_free(seqs *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i].at);
    free(s->v);
    s->n = 0;
    s->v = NULL;
}

/* out = every form of block b, each appended to a copy of prefix. */
static int expand(parser *ps, const sblk *b, seqs *out)
{
    seqs cur = {0};
    if (!grow1(ps, (void **)&cur.v, &cur.n, sizeof *cur.v))
        return -1;
    for (int i = 0; i < b->n; i++) {
        const sitem *it = &b->items[i];
        if (!it->n_br) {
            for (int k = 0; k < cur.n; k++) {
                int n = cur.v[k].n;
                const char **a = realloc(cur.v[k].at, (size_t)(n + 2) * sizeof *a);
                if (!a) {
                    seqs_free(&cur);
                    return oom(ps);
                }
                a[n] = it->start;
                a[n + 1] = it->end;
                cur.v[k].at = a;
                cur.v[k].n = n + 2;
            }
            continue;
        }
        seqs next = {0}, *subs = calloc((size_t)it->n_br, sizeof *subs);
        if (!subs) {
            seqs_free(&cur);
            return oom(ps);
        }
        int bad = 0;
        for (int br = 0; br < it->n_br && !bad; br++)
            bad = expand(ps, &it->br[br], &subs[br]);
        for (int k = 0; k < cur.n && !bad; k++)
            for (int br = 0; br < it->n_br && !bad; br++) {
                seqs *sub = &subs[br];
                for (int j = 0; j < sub->n && !bad; j++) {
                    if (next.n >= MAX_FORMS) {
                        bad = fail_at(ps, it->start, "the alternatives make more than %d forms", MAX_FORMS);
                        break;
                    }
                    seq *sq = grow1(ps, (void **)&next.v, &next.n, sizeof *next.v);
                    int n = cur.v[k].n + sub->v[j].n;
                    if (!sq || !(sq->at = malloc((size_t)(n ? n : 1) * sizeof *sq->at))) {
                        bad = oom(ps);
                        break;
                    }
                    if (cur.v[k].n)
                        memcpy(sq->at, cur.v[k].at, (size_t)cur.v[k].n * sizeof *sq->at);
                    if (sub->v[j].n)
                        memcpy(sq->at + cur.v[k].n, sub->v[j].at, (size_t)sub->v[j].n * sizeof *sq->at);
                    sq->n = n;
                }
            }
        for (int br = 0; br < it->n_br; br++)
            seqs_free(&subs[br]);
        free(subs);
        seqs_free(&cur);
        if (bad) {
            seqs_free(&next);
            return -1;
        }
        cur = next;
    }
    *out = cur;
    return 0;
}

/* A '=>' inside a group: results are one for the whole rule. */
static int check_groups(parser *ps, const sblk *b, int in_group)
{
    for (int i = 0; i < b->n; i++) {
        const sitem *it = &b->items[i];
        if (!it->n_br && in_group && it->end - it->start == 2 && !strncmp(it->start, "=>", 2))
            return fail_at(ps, it->start, "'=>' inside alternatives: a rule has one result, after them");
        for (int k = 0; k < it->n_br; k++)
            if (check_groups(ps, &it->br[k], 1))
                return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ parse */

static void stmt_free(pat_stmt *st)
{
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
        pat_lit_free(&st->attrs[i].dflt);
        pat_lit_free(&st->attrs[i].rhs);
    }
    free(st->ops);
    free(st->outs);
    free(st->shared);
    free(st->args);
    free(st->attrs);
}

static void form_free(pat_form *f)
{
    for (int s = 0; s < f->n_nacs; s++)
        stmt_free(&f->nacs[s]);
    free(f->nacs);
    for (int s = 0; s < f->n_stmts; s++)
        stmt_free(&f->stmts[s]);
    free(f->stmts);
    for (int r = 0; r < f->n_result; r++) {
        pat_rstmt *rs = &f->result[r];
        for (int i = 0; i < rs->n_attrs; i++) {
            free(rs->attrs[i].key);
            pat_lit_free(&rs->attrs[i].lit);
        }
        free(rs->attrs);
        free(rs->outs);
        free(rs->op);
        free(rs->args);
        free(rs->arg_optional);
        free(rs->arg_at);
    }
    free(f->result);
    for (int i = 0; i < f->n_guards; i++)
        free(f->guards[i].domain);
    free(f->guards);
    for (int i = 0; i < f->n_slots; i++)
        free(f->names[i]);
    free(f->names);
    for (int i = 0; i < f->n_vars; i++)
        free(f->vars[i]);
    free(f->vars);
    free(f->slot_stmt);
    free(f->slot_variadic);
    free(f->slot_kind);
    free(f->slot_rstmt);
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
    parser ps = {.text = text, .s = text, .end = text + strlen(text), .err = err};
    sblk top = {0};
    seqs forms = {0};
    if (!scan_block(&ps, &top, 0) && !check_groups(&ps, &top, 0) && !expand(&ps, &top, &forms)) {
        if (!(p->forms = calloc((size_t)forms.n, sizeof *p->forms)) ||
            !(p->order = calloc((size_t)forms.n, sizeof *p->order)))
            oom(&ps);
        for (int i = 0; i < forms.n && !ps.failed; i++) {
            ps.f = &p->forms[p->n_forms++];
            ps.in_result = 0;
            for (int k = 0; k < forms.v[i].n && !ps.failed; k += 2) {
                ps.s = forms.v[i].at[k];
                ps.end = forms.v[i].at[k + 1];
                item(&ps);
            }
            ps.s = ps.end = text + strlen(text);
            if (!ps.failed)
                finish(&ps);
        }
    }
    seqs_free(&forms);
    sblk_free(&top);
    if (ps.failed) {
        ph_pattern_free(p);
        return NULL;
    }
    /* stable: by benefit, greatest first, then as written */
    p->has_result = 1;
    for (int i = 0; i < p->n_forms; i++) {
        int k = i;
        while (k > 0 && p->forms[p->order[k - 1]].benefit < p->forms[i].benefit) {
            p->order[k] = p->order[k - 1];
            k--;
        }
        p->order[k] = i;
        if (p->forms[i].depth > p->depth)
            p->depth = p->forms[i].depth;
        p->has_result &= p->forms[i].has_result;
    }
    return p;
}

PH_API void ph_pattern_free(ph_pattern *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_forms; i++)
        form_free(&p->forms[i]);
    free(p->forms);
    free(p->order);
    free(p->text);
    free(p);
}

PH_API const char *ph_pattern_text(const ph_pattern *p) { return p->text; }
PH_API int ph_pattern_depth(const ph_pattern *p) { return p->depth; }
PH_API size_t ph_pattern_form_count(const ph_pattern *p) { return (size_t)p->n_forms; }
PH_API int ph_pattern_benefit(const ph_pattern *p, size_t form)
{
    return form < (size_t)p->n_forms ? p->forms[form].benefit : -1;
}
