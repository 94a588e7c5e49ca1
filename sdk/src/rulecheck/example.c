/* sdk/src/rulecheck/example.c - build an instance from a rule's example
 * graph (ph_rule_example, plugin.h): a template in the text form of
 * testing.h whose `<a|b>` choices, `<name=a|b>` named choices, `<name>`
 * repeats and `<name~a|b>` choices tied to name's (the alternative of the
 * same index) are drawn from the spec's seed; initializers declared `const`
 * get new random values.  Negative kinds: an interior value made a graph
 * output, or read by an extra Identity that is one.  Used for rules whose
 * conditions lie outside the pattern (callbacks testing shapes, values or
 * the graph around the match), which the pattern-driven generator meets
 * only by chance. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rulecheck/rulecheck.h"
#include "passhost/constant.h"
#include "passhost/testing.h"

#define MAX_NAMED 32

typedef struct named {
    char name[32];
    const char *alt; /* the chosen alternative, in the template */
    size_t len;
    int pick;        /* its index among the alternatives */
} named;

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef struct buf {
    char *s;
    size_t n, cap;
    int failed;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 256) + n;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->s = p, b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

/* The template with its choices made; malloc'd text (caller frees), or NULL
 * (out of memory, or a malformed template: an unclosed '<', a repeat of a
 * name not chosen before). */
char *rc_example_text(const char *tpl, uint64_t seed)
{
    named nm[MAX_NAMED];
    int n_named = 0;
    uint64_t rng = seed;
    buf b = {0};
    for (const char *p = tpl; *p;) {
        if (*p != '<') {
            const char *q = strchr(p, '<');
            size_t k = q ? (size_t)(q - p) : strlen(p);
            put(&b, p, k);
            p += k;
            continue;
        }
        const char *end = strchr(p, '>');
        if (!end)
            goto bad;
        const char *body = p + 1, *eq = NULL, *q = body;
        while (q < end && (isalnum((unsigned char)*q) || *q == '_'))
            q++;
        if (q > body && q < end && (*q == '=' || *q == '~'))
            eq = q;
        const char *alts = eq ? eq + 1 : body;
        int k = 0;
        size_t nlen = eq ? (size_t)(eq - body) : (size_t)(end - body);
        while (k < n_named && (strlen(nm[k].name) != nlen || strncmp(nm[k].name, body, nlen)))
            k++;
        if (!eq && !memchr(body, '|', (size_t)(end - body))) { /* a repeat: <name> */
            if (k == n_named)
                goto bad;
            put(&b, nm[k].alt, nm[k].len);
            p = end + 1;
            continue;
        }
        int count = 1;
        for (q = alts; q < end; q++)
            count += *q == '|';
        int pick;
        if (eq && *eq == '~') { /* <name~a|b>: the alternative of name's index */
            if (k == n_named || nm[k].pick >= count)
                goto bad;
            pick = nm[k].pick;
        } else {
            pick = (int)(next(&rng) % (uint64_t)count);
        }
        const char *a = alts;
        for (int i = 0; i < pick; i++)
            a = strchr(a, '|') + 1;
        const char *ae = memchr(a, '|', (size_t)(end - a));
        size_t len = ae ? (size_t)(ae - a) : (size_t)(end - a);
        put(&b, a, len);
        if (eq && *eq == '=') {
            if (n_named == MAX_NAMED || nlen >= sizeof nm[0].name)
                goto bad;
            snprintf(nm[n_named].name, sizeof nm[0].name, "%.*s", (int)nlen, body);
            nm[n_named].alt = a, nm[n_named].len = len, nm[n_named].pick = pick;
            n_named++;
        }
        p = end + 1;
    }
    if (b.failed)
        goto bad;
    if (!b.s)
        put(&b, "", 0);
    return b.s;
bad:
    free(b.s);
    return NULL;
}

/* 1 if the text declares `name` an initializer of random values: a line
 * "name: const ...". */
static int declared_random(const char *text, const char *name)
{
    size_t k = strlen(name);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        while (*l == ' ' || *l == '\t')
            l++;
        if (strncmp(l, name, k) || l[k] != ':')
            continue;
        const char *q = l + k + 1;
        while (*q == ' ')
            q++;
        return strncmp(q, "const ", 6) == 0;
    }
    return 0;
}

/* New values, uniform in [-1, 1) away from 0, for the float initializers
 * the text declares random.  0 or PH_ENOMEM. */
static int redraw(ph_graph *g, const char *text, uint64_t seed)
{
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++) {
        ph_value *v = ph_graph_initializer(g, i);
        const ph_tensor *t = ph_value_const(v);
        if (!t || !ph_dtype_is_float(ph_tensor_dtype(t)) || !declared_random(text, ph_value_name(v)))
            continue;
        int64_t n = ph_tensor_numel(t);
        double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
        if (!d)
            return PH_ENOMEM;
        for (int64_t k = 0; k < n; k++) {
            double x = 0.25 + 0.75 * (double)(next(&seed) >> 11) * 0x1p-53;
            d[k] = next(&seed) & 1 ? -x : x;
        }
        ph_tensor *nt = ph_tensor_from_f64(ph_tensor_dtype(t), ph_tensor_rank(t), ph_tensor_dims(t), d);
        free(d);
        if (!nt || ph_value_set_const(v, nt))
            return PH_ENOMEM;
    }
    return 0;
}

/* An interior value: made by a node, read by one, no graph output. */
static ph_value *pick_interior(ph_graph *g, uint64_t *rng)
{
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t want = pass ? (size_t)(next(rng) % (uint64_t)n) : 0, k = 0;
        for (ph_node *nd = ph_graph_first_node(g); nd; nd = ph_node_next(nd))
            for (size_t o = 0; o < ph_node_output_count(nd); o++) {
                ph_value *v = ph_node_output(nd, o);
                if (!v || !ph_value_use_count(v) || ph_value_graph_output_count(v))
                    continue;
                if (pass && k == want)
                    return v;
                k++;
            }
        n = k;
        if (!n)
            return NULL;
    }
    return NULL;
}

int rc_build_example(const rc_spec *spec, rc_instance *inst)
{
    memset(inst, 0, sizeof *inst);
    char *text = rc_example_text(spec->example, spec->seed);
    if (!text)
        return 0;
    ph_error err = {0};
    ph_model *m = ph_test_model_text(text, &err);
    int rc = m ? 1 : 0;
    ph_graph *g = m ? ph_model_graph(m) : NULL;
    uint64_t rng = spec->seed ^ 0x5bd1e995u;
    if (rc == 1 && redraw(g, text, rng))
        rc = PH_ENOMEM;
    if (rc == 1 && (spec->kind == RC_OUTPUT_MIDDLE || spec->kind == RC_EXTRA_CONSUMER)) {
        ph_value *v = pick_interior(g, &rng);
        if (!v) {
            rc = 0;
        } else if (spec->kind == RC_OUTPUT_MIDDLE) {
            rc = ph_graph_add_output(g, v) < 0 ? PH_ENOMEM : 1;
        } else {
            ph_node *r = ph_node_create(g, NULL, "Identity", 1, &v, 1);
            rc = r && ph_graph_add_output(g, ph_node_output(r, 0)) == 0 ? 1 : 0;
        }
    }
    if (rc == 1 && (ph_graph_update_shapes(g, &err) < 0 || ph_graph_verify(g, &err) < 0))
        rc = 0;
    free(text);
    if (rc != 1) {
        ph_model_free(m);
        return rc;
    }
    inst->m = m;
    return 1;
}
