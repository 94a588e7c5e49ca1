/* sdk/src/testing/graph_text.c - graphs written as text for pass tests
 * (testing.h, "Graphs as text"): ph_test_model_text builds a model from
 * lines in the pattern language's statement syntax, ph_test_graph_is checks
 * a graph against patterns (ph_pattern_parse, ph_pattern_match_at), and
 * ph_test_case is one test case: build, run checked, count the rewrites,
 * check the result. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/passhost.h"
#include "passhost/testing.h"
#include "testing_internal.h"

/* ------------------------------------------------------------- the reader */

#define MAX_NAMES 512
#define MAX_LIST 4096

typedef struct reader {
    const char *text, *s;
    int line;
    ph_model *m;
    ph_graph *g;
    char *names[MAX_NAMES]; /* owned: the text's value names */
    ph_value *vals[MAX_NAMES];
    int n;
    uint64_t seed;
    ph_error *err;
} reader;

static int fail(reader *r, const char *fmt, const char *what)
{
    char buf[200];
    snprintf(buf, sizeof buf, fmt, what);
    const char *ls = r->s;
    while (ls > r->text && ls[-1] != '\n')
        ls--;
    return ph_error_set(r->err, PH_EINVAL, "graph text line %d, column %d: %s", r->line,
                        (int)(r->s - ls) + 1, buf);
}

static void blanks(reader *r)
{
    for (;;) {
        while (*r->s == ' ' || *r->s == '\t' || *r->s == '\r')
            r->s++;
        if (*r->s != '#')
            return;
        while (*r->s && *r->s != '\n')
            r->s++;
    }
}

static int accept(reader *r, char c)
{
    blanks(r);
    if (*r->s != c)
        return 0;
    r->s++;
    return 1;
}

/* Blanks and newlines (inside () [] {}). */
static void skip_nl(reader *r)
{
    for (;;) {
        blanks(r);
        if (*r->s != '\n')
            return;
        r->s++;
        r->line++;
    }
}

static int accept_nl(reader *r, char c)
{
    skip_nl(r);
    return accept(r, c);
}

static int ident(reader *r, char *buf, size_t size)
{
    blanks(r);
    size_t k = 0;
    if (!(isalpha((unsigned char)*r->s) || *r->s == '_'))
        return fail(r, "expected %s", "a name");
    while (isalnum((unsigned char)*r->s) || *r->s == '_' || *r->s == '.') {
        if (k + 1 >= size)
            return fail(r, "%s", "name too long");
        buf[k++] = *r->s++;
    }
    buf[k] = 0;
    return 0;
}

/* A number into *out; *is_int when written as an integer, which then also
 * goes exactly into *iout (when not NULL): int64 values beyond 2^53, such
 * as INT64_MAX, are not doubles. */
static int number(reader *r, double *out, int *is_int, int64_t *iout)
{
    blanks(r);
    char *end;
    double v = strtod(r->s, &end);
    if (end == r->s)
        return fail(r, "expected %s", "a number");
    *is_int = 1;
    for (const char *c = r->s; c < end; c++)
        if (*c == '.' || *c == 'e' || *c == 'E' || isalpha((unsigned char)*c))
            *is_int = 0;
    if (*is_int && iout) {
        char *iend;
        errno = 0;
        long long iv = strtoll(r->s, &iend, 10);
        if (errno == ERANGE || iend != end)
            return fail(r, "%s", "an integer out of the int64 range");
        *iout = (int64_t)iv;
    }
    r->s = end;
    *out = v;
    return 0;
}

/* '[' numbers ']' into vals (at most MAX_LIST), and the integers exactly
 * into ivals when not NULL; *n their count. */
static int number_list(reader *r, double *vals, int64_t *ivals, size_t *n, int *all_int)
{
    *n = 0;
    *all_int = 1;
    if (!accept_nl(r, '['))
        return fail(r, "expected %s", "'['");
    if (accept_nl(r, ']'))
        return 0;
    do {
        int is_int;
        if (*n >= MAX_LIST)
            return fail(r, "%s", "list too long");
        if (number(r, &vals[*n], &is_int, ivals ? &ivals[*n] : NULL))
            return -1;
        *all_int &= is_int;
        (*n)++;
    } while (accept_nl(r, ','));
    return accept_nl(r, ']') ? 0 : fail(r, "expected %s", "']'");
}

static ph_value *lookup(reader *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0)
            return r->vals[i];
    return NULL;
}

static int bind(reader *r, const char *name, ph_value *v)
{
    if (lookup(r, name))
        return fail(r, "'%s' is bound twice", name);
    if (r->n >= MAX_NAMES)
        return fail(r, "%s", "too many names");
    size_t len = strlen(name) + 1;
    if (!(r->names[r->n] = malloc(len)))
        return ph_error_set(r->err, PH_ENOMEM, "out of memory");
    memcpy(r->names[r->n], name, len);
    r->vals[r->n++] = v;
    return 0;
}

static int dtype_of(const char *name)
{
    for (int dt = 1; dt <= PH_DT_BFLOAT16; dt++)
        if (strcmp(ph_dtype_name(dt), name) == 0)
            return dt;
    return -1;
}

/* NAME ':' ['const'] DTYPE '[' dims ']' ['=' '[' values ']']: a graph input,
 * or an initializer (random values in [-1, 1) for 'const', or the values
 * given; one value fills the tensor). */
static int declaration(reader *r, const char *name)
{
    char word[32];
    if (ident(r, word, sizeof word))
        return -1;
    int is_const = strcmp(word, "const") == 0;
    if (is_const && ident(r, word, sizeof word))
        return -1;
    int dt = dtype_of(word);
    if (dt < 0)
        return fail(r, "unknown dtype '%s'", word);
    int64_t dims[8];
    const char *params[8] = {0};
    char syms[8][32];
    int rank = 0, unknown_rank = 0;
    if (!accept(r, '['))
        return fail(r, "expected %s", "'[' after the dtype");
    if (accept(r, '*')) {
        unknown_rank = 1;
        if (!accept(r, ']'))
            return fail(r, "expected %s", "']'");
    } else if (!accept(r, ']')) {
        do {
            if (rank >= 8)
                return fail(r, "%s", "rank above 8");
            blanks(r);
            if (accept(r, '?')) {
                dims[rank] = -1;
            } else if (isalpha((unsigned char)*r->s) || *r->s == '_') {
                if (ident(r, syms[rank], sizeof syms[rank]))
                    return -1;
                dims[rank] = -1;
                params[rank] = syms[rank];
            } else {
                double v;
                int is_int;
                if (number(r, &v, &is_int, NULL))
                    return -1;
                if (!is_int || v < 0)
                    return fail(r, "%s", "a dim is a non-negative integer, '?' or a name");
                dims[rank] = (int64_t)v;
            }
            rank++;
        } while (accept(r, ','));
        if (!accept(r, ']'))
            return fail(r, "expected %s", "']'");
    }
    double *vals = NULL;
    int64_t *ivals = NULL; /* the integers exactly, for an int64 initializer */
    size_t nv = 0;
    int all_int = 0;
    int given = accept(r, '=');
    if (given) {
        vals = malloc(MAX_LIST * sizeof *vals);
        ivals = malloc(MAX_LIST * sizeof *ivals);
        if (!vals || !ivals) {
            free(vals);
            free(ivals);
            return ph_error_set(r->err, PH_ENOMEM, "out of memory");
        }
        if (number_list(r, vals, ivals, &nv, &all_int)) {
            free(vals);
            free(ivals);
            return -1;
        }
    }
    if (!is_const && !given) {
        ph_value *v = ph_graph_add_input(r->g, name, dt, unknown_rank ? -1 : rank, rank ? dims : NULL);
        if (!v)
            return fail(r, "cannot add input '%s'", name);
        for (int d = 0; d < rank; d++)
            if (params[d] && ph_value_set_dim_param(v, d, params[d]) < 0)
                return fail(r, "cannot name a dim of '%s'", name);
        return bind(r, name, v);
    }
    int64_t numel = 1;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 0 || unknown_rank) {
            free(vals);
            free(ivals);
            return fail(r, "initializer '%s' needs every dim", name);
        }
        numel *= dims[d];
    }
    if (given && nv != 1 && (int64_t)nv != numel) {
        free(vals);
        free(ivals);
        return fail(r, "initializer '%s': the values do not fill its shape", name);
    }
    double *all = malloc((size_t)(numel ? numel : 1) * sizeof *all);
    int64_t *exact = malloc((size_t)(numel ? numel : 1) * sizeof *exact);
    if (!all || !exact) {
        free(vals);
        free(ivals);
        free(all);
        free(exact);
        return ph_error_set(r->err, PH_ENOMEM, "out of memory");
    }
    uint64_t state = r->seed++ * 0x100000001B3ull;
    for (int64_t k = 0; k < numel; k++) {
        all[k] = given ? vals[nv == 1 ? 0 : k] : test_random_value(dt, &state);
        exact[k] = given && all_int ? ivals[nv == 1 ? 0 : k] : 0;
    }
    /* int64 integers exactly: INT64_MAX is no double */
    ph_tensor *t = dt == PH_DT_INT64 && given && all_int ? ph_tensor_new(PH_DT_INT64, (size_t)rank, dims, exact)
                                                         : ph_tensor_from_f64(dt, (size_t)rank, dims, all);
    free(vals);
    free(ivals);
    free(all);
    free(exact);
    if (!t)
        return fail(r, "cannot make the values of '%s'", name);
    ph_value *v = ph_graph_add_initializer(r->g, name, t);
    if (!v)
        return fail(r, "cannot add initializer '%s'", name);
    return bind(r, name, v);
}

/* key '=' literal: an int, a float, a "string", or a list of numbers. */
static int attribute(reader *r, ph_node *n)
{
    char key[64];
    if (ident(r, key, sizeof key))
        return -1;
    if (!accept_nl(r, '='))
        return fail(r, "expected %s", "'=' after the attribute's name");
    blanks(r);
    int rc;
    if (*r->s == '"') {
        const char *end = strchr(r->s + 1, '"');
        if (!end)
            return fail(r, "%s", "unterminated string");
        char str[256];
        snprintf(str, sizeof str, "%.*s", (int)(end - r->s - 1), r->s + 1);
        r->s = end + 1;
        rc = ph_node_set_attr_string(n, key, str);
    } else if (*r->s == '[') {
        double vals[64];
        size_t nv;
        int all_int;
        double *big = malloc(MAX_LIST * sizeof *big);
        int64_t *ibig = malloc(MAX_LIST * sizeof *ibig);
        if (!big || !ibig) {
            free(big);
            free(ibig);
            return ph_error_set(r->err, PH_ENOMEM, "out of memory");
        }
        if (number_list(r, big, ibig, &nv, &all_int) || nv > 64) {
            free(big);
            free(ibig);
            return nv > 64 ? fail(r, "%s", "attribute list longer than 64") : -1;
        }
        memcpy(vals, big, nv * sizeof *vals);
        int64_t iv[64];
        float fv[64];
        for (size_t k = 0; k < nv; k++) {
            iv[k] = all_int ? ibig[k] : 0;
            fv[k] = (float)vals[k];
        }
        free(big);
        free(ibig);
        rc = all_int ? ph_node_set_attr_ints(n, key, nv, iv) : ph_node_set_attr_floats(n, key, nv, fv);
    } else {
        double v;
        int64_t iv = 0;
        int is_int;
        if (number(r, &v, &is_int, &iv))
            return -1;
        rc = is_int ? ph_node_set_attr_int(n, key, iv) : ph_node_set_attr_float(n, key, (float)v);
    }
    return rc < 0 ? fail(r, "cannot set attribute '%s'", key) : 0;
}

/* outs '=' Op['@' domain] '(' args ')' ['{' attrs '}'] */
static int statement(reader *r, const char *first)
{
    char outs[16][64], op[64], domain[64] = "";
    int n_out = 1;
    snprintf(outs[0], sizeof outs[0], "%s", first);
    while (accept(r, ',')) {
        if (n_out >= 16)
            return fail(r, "%s", "more than 16 outputs");
        if (ident(r, outs[n_out++], sizeof outs[0]))
            return -1;
    }
    if (!accept(r, '='))
        return fail(r, "expected %s", "'=' or ':' after a name");
    if (ident(r, op, sizeof op))
        return -1;
    if (accept(r, '@') && ident(r, domain, sizeof domain))
        return -1;
    if (!accept(r, '('))
        return fail(r, "expected %s", "'('");
    ph_value *in[64];
    size_t n_in = 0;
    if (!accept_nl(r, ')')) {
        do {
            char arg[64];
            skip_nl(r);
            if (ident(r, arg, sizeof arg))
                return -1;
            if (n_in >= 64)
                return fail(r, "%s", "more than 64 inputs");
            if (strcmp(arg, "_") == 0) {
                in[n_in++] = NULL;
                continue;
            }
            ph_value *v = lookup(r, arg);
            if (!v)
                return fail(r, "'%s' is not defined above", arg);
            in[n_in++] = v;
        } while (accept_nl(r, ','));
        if (!accept_nl(r, ')'))
            return fail(r, "expected %s", "')'");
    }
    ph_node *n = ph_node_create(r->g, NULL, op, n_in, in, (size_t)n_out);
    if (!n)
        return fail(r, "cannot create a %s node", op);
    if (*domain) {
        if (ph_model_opset(r->m, domain) < 0 && ph_model_set_opset(r->m, domain, 1) < 0)
            return fail(r, "cannot import domain %s", domain);
        if (ph_node_set_domain(n, domain) < 0)
            return fail(r, "cannot set domain %s", domain);
    }
    if (accept(r, '{') && !accept_nl(r, '}')) {
        do {
            skip_nl(r);
            if (attribute(r, n))
                return -1;
        } while (accept_nl(r, ','));
        if (!accept_nl(r, '}'))
            return fail(r, "expected %s", "'}'");
    }
    for (int k = 0; k < n_out; k++)
        if (strcmp(outs[k], "_") != 0 && bind(r, outs[k], ph_node_output(n, (size_t)k)))
            return -1;
    return 0;
}

/* 'return' name {',' name}: graph outputs, in order. */
static int returns(reader *r)
{
    do {
        char name[64];
        if (ident(r, name, sizeof name))
            return -1;
        ph_value *v = lookup(r, name);
        if (!v)
            return fail(r, "'%s' is not defined above", name);
        if (ph_graph_add_output(r->g, v) < 0)
            return fail(r, "cannot make '%s' a graph output", name);
    } while (accept(r, ','));
    return 0;
}

static int line(reader *r)
{
    char word[64];
    if (ident(r, word, sizeof word))
        return -1;
    if (strcmp(word, "return") == 0)
        return returns(r);
    if (strcmp(word, "opset") == 0) {
        char domain[64] = "";
        if (accept(r, '@') && ident(r, domain, sizeof domain))
            return -1;
        double v;
        int is_int;
        if (number(r, &v, &is_int, NULL))
            return -1;
        return ph_model_set_opset(r->m, domain, (int64_t)v) < 0 ? fail(r, "%s", "cannot set the opset") : 0;
    }
    if (accept(r, ':'))
        return declaration(r, word);
    return statement(r, word);
}

PH_API ph_model *ph_test_model_text(const char *text, ph_error *err)
{
    if (!text) {
        ph_error_set(err, PH_EINVAL, "ph_test_model_text: no text");
        return NULL;
    }
    reader r = {.text = text, .s = text, .line = 1, .err = err, .seed = 1};
    r.m = ph_model_new(17);
    if (!r.m) {
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    r.g = ph_model_graph(r.m);
    int rc = 0;
    for (;;) {
        blanks(&r);
        if (*r.s == '\n' || *r.s == ';') {
            r.line += *r.s == '\n';
            r.s++;
            continue;
        }
        if (!*r.s)
            break;
        if ((rc = line(&r)))
            break;
        blanks(&r);
        if (*r.s && *r.s != '\n' && *r.s != ';') {
            rc = fail(&r, "expected %s", "the end of the line");
            break;
        }
    }
    for (int i = 0; i < r.n; i++)
        free(r.names[i]);
    if (!rc && ph_graph_output_count(r.g) == 0)
        rc = ph_error_set(err, PH_EINVAL, "graph text: no 'return' line, the graph has no output");
    if (rc) {
        ph_model_free(r.m);
        return NULL;
    }
    return r.m;
}

/* ---------------------------------------------------------- the checker */

static size_t live_nodes(const ph_graph *g)
{
    size_t n = 0;
    for (ph_node *x = ph_graph_first_node(g); x; x = ph_node_next(x))
        n += !ph_node_is_removed(x);
    return n;
}

/* Names bound so far: the graph's inputs and initializers, then every
 * name of the patterns matched before. */
typedef struct bindings {
    char **names; /* owned */
    const ph_value **vals;
    size_t n, cap;
    const ph_node **nodes; /* matched so far */
    size_t n_nodes, cap_nodes;
} bindings;

static int bind_name(bindings *b, const char *name, size_t len, const ph_value *v)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 32;
        char **nn = realloc(b->names, cap * sizeof *nn);
        if (nn)
            b->names = nn;
        const ph_value **nv = nn ? realloc(b->vals, cap * sizeof *nv) : NULL;
        if (!nv)
            return PH_ENOMEM;
        b->vals = nv;
        b->cap = cap;
    }
    if (!(b->names[b->n] = malloc(len + 1)))
        return PH_ENOMEM;
    memcpy(b->names[b->n], name, len);
    b->names[b->n][len] = 0;
    b->vals[b->n++] = v;
    return 0;
}

static const ph_value *bound(const bindings *b, const char *name)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->names[i], name) == 0)
            return b->vals[i];
    return NULL;
}

static void bindings_free(bindings *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->names[i]);
    free(b->names);
    free(b->vals);
    free(b->nodes);
}

/* Each identifier of a pattern text in turn (op names and attribute keys
 * too: the match knows none of them as values).  *s advances. */
static int next_ident(const char **s, char *buf, size_t size)
{
    const char *c = *s;
    for (;;) {
        while (*c && !(isalpha((unsigned char)*c) || *c == '_')) {
            if (*c == '"') { /* skip strings */
                c++;
                while (*c && *c != '"')
                    c++;
                if (*c)
                    c++;
                continue;
            }
            if (*c == '#') {
                while (*c && *c != '\n')
                    c++;
                continue;
            }
            if (isdigit((unsigned char)*c)) { /* 1e5, 0x1 */
                while (isalnum((unsigned char)*c) || *c == '.')
                    c++;
                continue;
            }
            c++;
        }
        if (!*c) {
            *s = c;
            return 0;
        }
        size_t k = 0;
        while (isalnum((unsigned char)*c) || *c == '_' || *c == '.') {
            if (k + 1 < size)
                buf[k++] = *c;
            c++;
        }
        buf[k] = 0;
        *s = c;
        return 1;
    }
}

/* 1 if the match agrees with the names bound before and reuses no node
 * matched before. */
static int agrees(const bindings *b, const char *text, const ph_match *mt)
{
    for (size_t i = 0; i < ph_match_node_count(mt); i++)
        for (size_t k = 0; k < b->n_nodes; k++)
            if (b->nodes[k] == ph_match_node_at(mt, i))
                return 0;
    char name[64];
    const char *s = text;
    while (next_ident(&s, name, sizeof name)) {
        const ph_value *v = ph_match_value(mt, name), *was = v ? bound(b, name) : NULL;
        if (was && was != v)
            return 0;
    }
    return 1;
}

/* Record the match's names and nodes.  0 or PH_ENOMEM. */
static int keep(bindings *b, const char *text, const ph_match *mt)
{
    char name[64];
    const char *s = text;
    while (next_ident(&s, name, sizeof name)) {
        const ph_value *v = ph_match_value(mt, name);
        if (v && !bound(b, name) && bind_name(b, name, strlen(name), v))
            return PH_ENOMEM;
    }
    size_t n = ph_match_node_count(mt);
    if (b->n_nodes + n > b->cap_nodes) {
        size_t cap = 2 * (b->n_nodes + n);
        const ph_node **nn = realloc(b->nodes, cap * sizeof *nn);
        if (!nn)
            return PH_ENOMEM;
        b->nodes = nn;
        b->cap_nodes = cap;
    }
    for (size_t i = 0; i < n; i++)
        b->nodes[b->n_nodes++] = ph_match_node_at(mt, i);
    return 0;
}

/* Append "Op, Op, ..." of g's live nodes to buf. */
static void ops_of(const ph_graph *g, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (ph_node *x = ph_graph_first_node(g); x && len + 1 < size; x = ph_node_next(x)) {
        if (ph_node_is_removed(x))
            continue;
        int k = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", ph_node_op_type(x));
        if (k < 0)
            break;
        len += (size_t)k;
    }
}

/* The matcher takes the two inputs of a commutative op in either order and
 * stops at the first order that fits; the names of the expected result may
 * want the other.  Variants of a pattern text: variant bit k set swaps the
 * two arguments of the k-th two-input commutative statement (as
 * pattern.h lists them).  Returns the number of such statements (at most
 * 8); with out not NULL writes the variant there (same length as text). */
static int commutative_swap(const char *text, unsigned variant, char *out)
{
    static const char *const comm[] = {"Add", "Mul", "Max", "Min", "Sum", "And", "Or", "Xor", "Equal",
                                       "BitwiseAnd", "BitwiseOr", "BitwiseXor", NULL};
    if (out)
        strcpy(out, text);
    int k = 0;
    for (const char *c = text; *c && k < 8; c++) {
        if (!(isalpha((unsigned char)*c)) || (c > text && (isalnum((unsigned char)c[-1]) || c[-1] == '_')))
            continue;
        size_t len = 0;
        while (isalnum((unsigned char)c[len]) || c[len] == '_')
            len++;
        int is_comm = 0;
        for (int i = 0; comm[i]; i++)
            is_comm |= strlen(comm[i]) == len && strncmp(c, comm[i], len) == 0;
        const char *open = c + len;
        while (*open == ' ')
            open++;
        if (!is_comm || *open != '(') {
            c += len - 1;
            continue;
        }
        /* the two top-level arguments: open+1 .. comma, comma+1 .. close */
        const char *comma = NULL, *close = NULL;
        int depth = 0, commas = 0;
        for (const char *d = open + 1; *d; d++) {
            if (*d == '(' || *d == '[')
                depth++;
            else if ((*d == ')' || *d == ']') && depth)
                depth--;
            else if (*d == ')') {
                close = d;
                break;
            } else if (*d == ',' && !depth && commas++ == 0)
                comma = d;
        }
        if (!close || !comma || commas != 1) {
            c += len - 1;
            continue;
        }
        if (out && (variant >> k & 1)) {
            size_t a = (size_t)(comma - open - 1), b = (size_t)(close - comma - 1);
            char *o = out + (open + 1 - text);
            memcpy(o, comma + 1, b);
            o[b] = ',';
            memcpy(o + b + 1, open + 1, a);
        }
        k++;
        c = close;
    }
    return k;
}

PH_API int ph_test_graph_is(const ph_graph *g, const char *expect, ph_error *err)
{
    if (!g || !expect)
        return ph_error_set(err, PH_EINVAL, "ph_test_graph_is: no graph or no pattern");
    size_t want = live_nodes(g);
    char ops[400];
    ops_of(g, ops, sizeof ops);
    bindings b = {0};
    int rc = 0;
    for (size_t i = 0; i < ph_graph_input_count(g) && !rc; i++) {
        const char *nm = ph_value_name(ph_graph_input(g, i));
        rc = bind_name(&b, nm, strlen(nm), ph_graph_input(g, i));
    }
    for (size_t i = 0; i < ph_graph_initializer_count(g) && !rc; i++) {
        const char *nm = ph_value_name(ph_graph_initializer(g, i));
        rc = bind_name(&b, nm, strlen(nm), ph_graph_initializer(g, i));
    }
    if (rc) {
        bindings_free(&b);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    const char *s = expect;
    while (!rc) {
        /* one pattern: up to a line holding only "--" */
        const char *end = strstr(s, "\n--");
        while (end && end[3] && end[3] != '\n' && end[3] != ' ' && end[3] != '\t')
            end = strstr(end + 3, "\n--");
        size_t len = end ? (size_t)(end - s) : strlen(s);
        char *text = malloc(len + 1);
        if (!text) {
            rc = ph_error_set(err, PH_ENOMEM, "out of memory");
            break;
        }
        memcpy(text, s, len);
        text[len] = 0;
        int blank = 1;
        for (const char *c = text; *c; c++)
            blank &= isspace((unsigned char)*c) != 0;
        if (!blank) {
            unsigned n_var = 1u << commutative_swap(text, 0, NULL);
            char *vt = malloc(len + 1);
            int found = 0;
            for (unsigned v = 0; v < n_var && !found && !rc; v++) {
                if (!vt) {
                    rc = ph_error_set(err, PH_ENOMEM, "out of memory");
                    break;
                }
                commutative_swap(text, v, vt);
                ph_pattern *p = ph_pattern_parse(vt, err);
                ph_match *mt = p ? ph_match_new(p) : NULL;
                if (!p) {
                    rc = PH_EINVAL;
                } else if (!mt) {
                    rc = ph_error_set(err, PH_ENOMEM, "out of memory");
                } else {
                    for (ph_node *x = ph_graph_first_node(g); x && !found; x = ph_node_next(x))
                        if (!ph_node_is_removed(x) && ph_pattern_match_at(p, x, mt) == 1 && agrees(&b, vt, mt))
                            found = 1;
                    if (found && keep(&b, vt, mt))
                        rc = ph_error_set(err, PH_ENOMEM, "out of memory");
                }
                ph_match_free(mt);
                ph_pattern_free(p);
            }
            free(vt);
            if (!rc && !found)
                rc = ph_error_set(err, PH_EVERIFY, "the graph (%s) does not match the pattern '%s'", ops, text);
        }
        free(text);
        if (!end)
            break;
        s = end + 3;
    }
    if (!rc && b.n_nodes != want)
        rc = ph_error_set(err, PH_EVERIFY, "the graph has %zu nodes (%s), the expected patterns match %zu", want,
                          ops, b.n_nodes);
    bindings_free(&b);
    return rc;
}

/* ------------------------------------------------------------- one case */

/* A text signature of g: every live node's op, domain, input and output
 * names and attributes.  Caller frees; NULL on OOM. */
static char *signature(const ph_graph *g)
{
    size_t cap = 1024, len = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    b[0] = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(b + len, cap - len, __VA_ARGS__);                                        \
        if (k_ < 0)                                                                                \
            break;                                                                                 \
        while (len + (size_t)k_ + 1 > cap) {                                                       \
            char *nb = realloc(b, cap *= 2);                                                       \
            if (!nb) {                                                                             \
                free(b);                                                                           \
                return NULL;                                                                       \
            }                                                                                      \
            b = nb;                                                                                \
            k_ = snprintf(b + len, cap - len, __VA_ARGS__);                                        \
        }                                                                                          \
        len += (size_t)k_;                                                                         \
    } while (0)
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_is_removed(n))
            continue;
        PUT("%s@%s(", ph_node_op_type(n), ph_node_domain(n));
        for (size_t i = 0; i < ph_node_input_count(n); i++) {
            const ph_value *v = ph_node_input(n, i);
            PUT("%s,", v ? ph_value_name(v) : "_");
        }
        PUT(")->");
        for (size_t i = 0; i < ph_node_output_count(n); i++)
            PUT("%s,", ph_value_name(ph_node_output(n, i)));
        for (size_t i = 0; i < ph_node_attr_count(n); i++) {
            const char *a = ph_node_attr_name(n, i);
            const int64_t *iv;
            const float *fv;
            ptrdiff_t k;
            PUT(" %s:%d", a, (int)ph_node_attr_type(n, a));
            switch (ph_node_attr_type(n, a)) {
            case PH_ATTR_INT: PUT("=%lld", (long long)ph_node_attr_int(n, a, 0)); break;
            case PH_ATTR_FLOAT: PUT("=%.9g", (double)ph_node_attr_float(n, a, 0)); break;
            case PH_ATTR_STRING: PUT("=%s", ph_node_attr_string(n, a, "")); break;
            case PH_ATTR_INTS:
                k = ph_node_attr_ints(n, a, &iv);
                for (ptrdiff_t j = 0; j < k; j++)
                    PUT(",%lld", (long long)iv[j]);
                break;
            case PH_ATTR_FLOATS:
                k = ph_node_attr_floats(n, a, &fv);
                for (ptrdiff_t j = 0; j < k; j++)
                    PUT(",%.9g", (double)fv[j]);
                break;
            default: break;
            }
        }
        PUT(";\n");
    }
    PUT("return");
    for (size_t i = 0; i < ph_graph_output_count(g); i++)
        PUT(" %s", ph_value_name(ph_graph_output(g, i)));
#undef PUT
    return b;
}

PH_API int ph_test_case(const ph_pass_desc *desc, const char *graph, const ph_test_options *opts, int rewrites,
                        const char *expect, ph_error *err)
{
    ph_model *m = ph_test_model_text(graph, err);
    if (!m)
        return err && err->code ? err->code : PH_EINVAL;
    char *before = expect ? NULL : signature(ph_model_graph(m));
    if (!expect && !before) {
        ph_model_free(m);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    ph_test_result res;
    int rc = opts && opts->unchecked ? ph_test_run(desc, m, opts, &res, err)
                                     : ph_test_run_checked(desc, m, opts, &res, err);
    if (rc >= 0 && rewrites >= 0 && rc != rewrites)
        rc = ph_error_set(err, PH_EVERIFY, "%d rewrites, expected %d", rc, rewrites);
    else if (rc >= 0 && expect)
        rc = ph_test_graph_is(ph_model_graph(m), expect, err);
    else if (rc >= 0) {
        char *after = signature(ph_model_graph(m));
        if (!after)
            rc = ph_error_set(err, PH_ENOMEM, "out of memory");
        else if (strcmp(before, after) != 0)
            rc = ph_error_set(err, PH_EVERIFY, "the graph changed, expected it untouched:\n%.300s\nbecame\n%.300s",
                              before, after);
        else
            rc = 0;
        free(after);
    } else {
        /* the run's own error */
    }
    if (rc > 0)
        rc = 0;
    free(before);
    ph_model_free(m);
    return rc;
}
