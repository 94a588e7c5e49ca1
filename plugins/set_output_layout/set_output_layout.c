/* set_output_layout - give graph outputs the layouts the config asks for.
 *
 * Seed 004 SetNetworkOutputLayoutPass: a deployment may need an output in
 * another layout than the network computes (NHWC instead of NCHW); the
 * pass appends the Transpose, so the output keeps its name and its users
 * get the layout they want.
 *
 * Parameter `layouts`: entries OUTPUT:LAYOUT separated by ';', e.g.
 *   "output0:NHWC;output1:NCHW".  OUTPUT is a main-graph output's name (the
 *   part before the last ':', so TensorFlow names like "out:0" work), or,
 *   when no output has that name, a decimal index into the outputs (the
 *   seed's form).  LAYOUT is
 *   - letters: the wanted order of the output's dims, named by the ONNX
 *     layout of its rank: NC (2), NCW (3), NCHW (4), NCDHW (5);
 *   - SRC>DST: both named explicitly ("NTC>NCT"), for other ranks or
 *     meanings;
 *   - a permutation of dim numbers, "0,2,3,1".
 *   Letters are case-insensitive; DST must be a permutation of SRC, and the
 *   length must be the output's rank.
 * Requires: every entry valid and its output of known rank, produced by a
 *   node (a graph input or initializer that is also an output cannot keep
 *   its name behind a Transpose).  Any error - a malformed entry, an
 *   unknown output (the message names the real outputs), a rank that does
 *   not match - fails the pass before anything changes.
 * Changes:  for each entry whose permutation is not the identity, a
 *   Transpose named "set_output_layout/OUTPUT" is inserted after the
 *   output's producer; it takes the output's name, the producer's value is
 *   renamed, and every other reader keeps reading the producer's value.
 *   The settings are a state, not a step: when the output already comes
 *   from a Transpose of that name, its perm is set to the one wanted (the
 *   Transpose is removed for the identity), so running the pass again
 *   changes nothing.  Main graph outputs only.
 * Hand-written (.run): driven by the config's list of outputs, not by a
 *   pattern in the graph.  Runs its edits once per run (the pass memo), so
 *   a stage's fixpoint rounds do not repeat them.
 * Exact:    yes for the values; the outputs' layout changes by request.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 16
#define MARK "set_output_layout/"

typedef struct request {
    ph_value *out;
    int rank;
    int64_t perm[MAX_RANK];
} request;

/* s[0..n) with blanks trimmed, into buf (size >= n + 1). */
static char *trimmed(const char *s, size_t n, char *buf)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    memcpy(buf, s, n);
    buf[n] = 0;
    return buf;
}

static const char *default_layout(int rank)
{
    static const char *const names[] = {NULL, NULL, "NC", "NCW", "NCHW", "NCDHW"};
    return rank >= 0 && rank <= 5 ? names[rank] : NULL;
}

/* The permutation that LAYOUT asks for an output of `rank` dims, into perm;
 * 0, or -1 with why in msg. */
static int parse_layout(const char *layout, int rank, int64_t *perm, char *msg, size_t size)
{
    if (isdigit((unsigned char)layout[0])) {
        int k = 0;
        for (const char *p = layout; *p; k++) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p || k >= MAX_RANK || v < 0 || v >= rank)
                return snprintf(msg, size, "'%s' is not a permutation of 0..%d", layout, rank - 1), -1;
            perm[k] = v;
            p = end;
            while (isspace((unsigned char)*p))
                p++;
            if (*p == ',')
                p++;
            else if (*p)
                return snprintf(msg, size, "'%s': expected numbers separated by ','", layout), -1;
        }
        if (k != rank)
            return snprintf(msg, size, "'%s' has %d entries, the output has rank %d", layout, k, rank), -1;
        for (int i = 0; i < rank; i++)
            for (int j = 0; j < i; j++)
                if (perm[i] == perm[j])
                    return snprintf(msg, size, "'%s' repeats %lld", layout, (long long)perm[i]), -1;
        return 0;
    }
    const char *gt = strchr(layout, '>'), *src = gt ? layout : default_layout(rank), *dst = gt ? gt + 1 : layout;
    size_t src_len = gt ? (size_t)(gt - layout) : src ? strlen(src) : 0;
    if (!src)
        return snprintf(msg, size, "no default layout for rank %d: write SRC>DST or a permutation", rank), -1;
    if (src_len != (size_t)rank || strlen(dst) != (size_t)rank)
        return snprintf(msg, size, "'%s' does not name the %d dims of the output (layout %.*s)", layout, rank,
                        (int)src_len, src),
               -1;
    for (int i = 0; i < rank; i++) {
        int found = -1;
        for (int j = 0; j < rank; j++) {
            if (!isalpha((unsigned char)src[j]))
                return snprintf(msg, size, "'%s': dims are named by letters", layout), -1;
            if (toupper((unsigned char)src[j]) == toupper((unsigned char)dst[i]))
                found = found < 0 ? j : -2;
        }
        for (int k = 0; k < i && found >= 0; k++)
            if (perm[k] == found)
                found = -2;
        if (found < 0)
            return snprintf(msg, size, "'%s' is not a reordering of %.*s", layout, (int)src_len, src), -1;
        perm[i] = found;
    }
    return 0;
}

/* "a, b, c": the main graph's output names, into buf. */
static const char *output_names(const ph_graph *g, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < ph_graph_output_count(g) && len + 1 < size; i++) {
        int w = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", ph_value_name(ph_graph_output(g, i)));
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}

/* The output an entry's key names, or NULL. */
static ph_value *find_output(const ph_graph *g, const char *key)
{
    size_t n = ph_graph_output_count(g);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(ph_value_name(ph_graph_output(g, i)), key))
            return ph_graph_output(g, i);
    char *end;
    unsigned long idx = strtoul(key, &end, 10);
    return isdigit((unsigned char)key[0]) && !*end && idx < n ? ph_graph_output(g, idx) : NULL;
}

/* The Transpose this pass put before output v, or NULL. */
static ph_node *marked(const ph_value *v)
{
    ph_node *t = ph_value_producer(v);
    if (!t || ph_node_op(t) != PH_OP_Transpose)
        return NULL;
    const char *nm = ph_node_name(t), *out = ph_value_name(v);
    size_t lm = strlen(MARK), lo = strlen(out);
    return !strncmp(nm, MARK, lm) && !strncmp(nm + lm, out, lo) &&
                   (nm[lm + lo] == 0 || !strncmp(nm + lm + lo, "__", 2))
               ? t
               : NULL;
}

static int is_identity(const int64_t *p, int r)
{
    for (int i = 0; i < r; i++)
        if (p[i] != i)
            return 0;
    return 1;
}

/* y's type: x's transposed by r->perm (when x's rank is r->rank). */
static int set_type(ph_value *y, const ph_value *x, const request *r)
{
    if (ph_value_rank(x) != r->rank)
        return ph_value_set_type(y, ph_value_dtype(x), -1, NULL);
    return ph_value_set_type_transposed(y, x, r->rank, r->perm) < 0 ? PH_ENOMEM : 0;
}

/* Give output v the permutation r->perm of its untransposed value: 1 if
 * something changed, 0 if not, or a PH_E* code. */
static int apply(ph_graph *g, const request *r, ph_ctx *ctx)
{
    ph_value *v = r->out;
    ph_node *t = marked(v);
    int64_t have[MAX_RANK];
    if (t) { /* set before: change its perm */
        if (ph_node_transpose_perm(t, have, MAX_RANK) == r->rank &&
            !memcmp(have, r->perm, (size_t)r->rank * sizeof *have))
            return 0;
        ph_value *base = ph_node_input(t, 0);
        if (is_identity(r->perm, r->rank) && !ph_value_can_replace(v, base))
            return ph_ctx_error(ctx, PH_EBUSY, "output '%s': cannot take back its layout", ph_value_name(v));
        if (!ph_ctx_rewrite_begin(ctx, ph_node_name(t)))
            return 0;
        if (is_identity(r->perm, r->rank)) {
            int rc = ph_value_replace(v, base);
            if (rc < 0)
                return rc;
            ph_value_prune(v);
            return 1;
        }
        return ph_node_set_attr_ints(t, "perm", (size_t)r->rank, r->perm) < 0 || set_type(v, base, r) < 0
                   ? PH_ENOMEM
                   : 1;
    }
    if (is_identity(r->perm, r->rank))
        return 0;
    if (!ph_ctx_rewrite_begin(ctx, ph_node_name(ph_value_producer(v))))
        return 0;
    /* the readers of v other than the output slots keep reading it */
    size_t n_uses = ph_value_use_count(v);
    ph_node **users = ph_ctx_alloc(ctx, (n_uses + 1) * sizeof *users);
    size_t *slots = ph_ctx_alloc(ctx, (n_uses + 1) * sizeof *slots);
    char name[512];
    snprintf(name, sizeof name, MARK "%s", ph_value_name(v));
    const char *unique = ph_graph_unique_name(g, name);
    if (!users || !slots || !unique)
        return PH_ENOMEM;
    for (size_t i = 0; i < n_uses; i++)
        users[i] = ph_value_use(v, i, &slots[i]);
    ph_node *tr = ph_node_create(g, ph_node_next(ph_value_producer(v)), "Transpose", 1, &v, 1);
    if (!tr)
        return PH_ENOMEM;
    ph_value *y = ph_node_output(tr, 0);
    if (ph_node_set_attr_ints(tr, "perm", (size_t)r->rank, r->perm) < 0 || ph_node_set_name(tr, unique) < 0 ||
        set_type(y, v, r) < 0)
        return PH_ENOMEM;
    /* every use of v and the output slots now read y, which takes v's name;
     * then the Transpose and the other readers go back to v */
    int rc = ph_value_replace(v, y);
    if (rc < 0)
        return rc;
    if (ph_node_set_input(tr, 0, v) < 0)
        return PH_ENOMEM;
    for (size_t i = 0; i < n_uses; i++)
        if (ph_node_set_input(users[i], slots[i], v) < 0)
            return PH_ENOMEM;
    return 1;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    uint64_t *memo = ph_ctx_pass_memo(ctx);
    const char *spec = ph_params_string(params, "layouts");
    if (!memo || *memo || !spec || !*spec)
        return 0;
    *memo = 1;
    size_t len = strlen(spec), n = 0;
    request *req = ph_ctx_alloc(ctx, (len / 2 + 1) * sizeof *req);
    char *entry = ph_ctx_alloc(ctx, len + 1), *key = ph_ctx_alloc(ctx, len + 1), *layout = ph_ctx_alloc(ctx, len + 1);
    char msg[256], names[512];
    if (!req || !entry || !key || !layout)
        return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
    for (const char *p = spec; *p;) {
        const char *semi = strchr(p, ';');
        size_t elen = semi ? (size_t)(semi - p) : strlen(p);
        trimmed(p, elen, entry);
        p += elen + (semi != NULL);
        if (!*entry)
            continue;
        char *colon = strrchr(entry, ':');
        if (!colon || colon == entry)
            return ph_ctx_error(ctx, PH_EINVAL, "layouts: entry '%s' is not OUTPUT:LAYOUT", entry);
        trimmed(entry, (size_t)(colon - entry), key);
        trimmed(colon + 1, strlen(colon + 1), layout);
        request *r = &req[n];
        r->out = find_output(g, key);
        if (!r->out)
            return ph_ctx_error(ctx, PH_ENOTFOUND, "layouts: the graph has no output '%s' (its outputs: %s)", key,
                                output_names(g, names, sizeof names));
        for (size_t i = 0; i < n; i++)
            if (req[i].out == r->out)
                return ph_ctx_error(ctx, PH_EINVAL, "layouts: output '%s' is given twice", ph_value_name(r->out));
        ph_node *t = marked(r->out);
        r->rank = ph_value_rank(t ? ph_node_input(t, 0) : r->out);
        if (r->rank < 0 || r->rank > MAX_RANK)
            return ph_ctx_error(ctx, PH_EINVAL, "layouts: output '%s' has an unknown rank", ph_value_name(r->out));
        if (!*layout || parse_layout(layout, r->rank, r->perm, msg, sizeof msg))
            return ph_ctx_error(ctx, PH_EINVAL, "layouts: output '%s': %s", ph_value_name(r->out),
                                *layout ? msg : "no layout given");
        ph_node *prod = ph_value_producer(r->out);
        if (!t && !is_identity(r->perm, r->rank) && (!prod || ph_node_graph(prod) != g))
            return ph_ctx_error(ctx, PH_EINVAL,
                                "layouts: output '%s' is a graph input or initializer: it cannot keep its name "
                                "behind a Transpose",
                                ph_value_name(r->out));
        n++;
    }
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = apply(g, &req[i], ctx);
        if (rc < 0)
            return ph_ctx_error(ctx, rc, "layouts: output '%s': %s", ph_value_name(req[i].out), ph_strerror(rc));
        count += rc;
    }
    return count;
}

static const ph_param_def params[] = {
    {"layouts", PH_PARAM_STRING, "",
     "OUTPUT:LAYOUT entries separated by ';' (e.g. \"out0:NHWC;out1:NCHW\"); LAYOUT is letters over the ONNX "
     "layout of the output's rank (NC, NCW, NCHW, NCDHW), SRC>DST, or a permutation \"0,2,3,1\"; OUTPUT is a "
     "name or an index"},
    {NULL, 0, NULL, NULL}};

PH_PASS_DEFINE(
    .name = "set_output_layout",
    .summary = "per graph output, the layout the config asks for (e.g. NHWC) -> a Transpose appended, name kept",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_EXACT,
    .params = params,
    .run = run)
