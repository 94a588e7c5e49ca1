/* fold_constant_inputs - graph inputs given constant values in files become
 * initializers, so constant_folding folds what depends on them (seed 004
 * InputfoldPass: inputs that are the same for every run).
 *
 * Requires: the parameter `inputs`, "NAME=PATH" pairs separated by ';'
 *   (spaces around names and paths are ignored; in an INI file quote the
 *   value, since "; " after a space starts a comment).  Each NAME is a graph
 *   input of the main graph; PATH is
 *   - a NumPy .npy file (name ending in .npy: format 1 to 3, C order,
 *     little- or big-endian float16/float/double, (u)int8-64 or bool) whose
 *     dtype is the input's declared dtype and whose shape has the input's
 *     rank and every static dim of it (a symbolic or unknown dim takes the
 *     file's size); or
 *   - a raw file: the elements, little endian, row major, of the input's
 *     declared dtype and shape, which must be static; the size must match
 *     exactly.
 *   Relative paths are relative to the working directory (the host passes
 *   parameters to passes as text, without the folder of the file that set
 *   them).  The model's ir_version must be >= 4 (older versions list every
 *   initializer among the inputs).
 *   Every file is read and checked before anything changes: a missing input,
 *   an unreadable, truncated or malformed file, a Fortran-order array, another
 *   dtype or shape fail the pass with a message naming the input and the file.
 *   A NAME that is already an initializer and no input (folded by an earlier
 *   call) is skipped; within one run the pass acts once.
 * Changes: each input becomes an initializer of the same name holding the
 *   file's data (its uses unchanged) and leaves the graph's inputs: the
 *   model's interface changes by design.  One rewrite per input.
 * Exact: yes, for runs that feed the input exactly the file's values.
 * Hand-written (.run): it acts on graph inputs, which no node pattern can
 * anchor on, and must check every file before it changes anything.
 */
#include <stdio.h>
#include <string.h>

#include <passhost/passhost.h>


typedef struct entry {
    char *name, *path;
    ph_value *input;
    ph_tensor *t;
} entry;

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

/* Split spec (a copy the caller owns) into es[] (room for max); the count,
 * or a negative code after ph_ctx_error. */
static int parse_spec(char *spec, entry *es, int max, ph_ctx *ctx)
{
    int n = 0;
    for (char *item = spec, *next; item; item = next) {
        if ((next = strchr(item, ';')))
            *next++ = 0;
        item = trim(item);
        if (!*item)
            continue;
        char *eq = strchr(item, '=');
        if (!eq)
            return ph_ctx_error(ctx, PH_EINVAL, "parameter inputs: '%s' is not NAME=PATH", item);
        *eq = 0;
        if (n == max)
            return ph_ctx_error(ctx, PH_EINVAL, "parameter inputs: too many items");
        es[n] = (entry){trim(item), trim(eq + 1), NULL, NULL};
        if (!*es[n].name || !*es[n].path)
            return ph_ctx_error(ctx, PH_EINVAL, "parameter inputs: an item has an empty name or path");
        for (int k = 0; k < n; k++)
            if (strcmp(es[k].name, es[n].name) == 0)
                return ph_ctx_error(ctx, PH_EINVAL, "parameter inputs: input '%s' is named twice", es[n].name);
        n++;
    }
    return n;
}

static int is_npy(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && (strcmp(path + n - 4, ".npy") == 0 || strcmp(path + n - 4, ".NPY") == 0);
}

/* "float [1,batch,3]" for v, or "float [2,3]" for t (v NULL), into buf. */
static const char *type_text(char *buf, size_t size, const ph_value *v, const ph_tensor *t)
{
    int rank = v ? ph_value_rank(v) : (int)ph_tensor_rank(t);
    size_t k = (size_t)snprintf(buf, size, "%s [", ph_dtype_name(v ? ph_value_dtype(v) : ph_tensor_dtype(t)));
    for (int i = 0; i < rank && k < size; i++) {
        int64_t d = v ? ph_value_dim(v, i) : ph_tensor_dim(t, (size_t)i);
        const char *p = v ? ph_value_dim_param(v, i) : NULL;
        k += d >= 0 ? (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)d)
                    : (size_t)snprintf(buf + k, size - k, "%s%s", i ? "," : "", p && *p ? p : "?");
    }
    if (k < size)
        snprintf(buf + k, size - k, "%s", rank < 0 ? "any shape]" : "]");
    return buf;
}

/* Load e's file and check it against the input; 0, or a code after ph_ctx_error. */
static int load(entry *e, ph_ctx *ctx)
{
    const ph_value *v = e->input;
    int dt = ph_value_dtype(v), rank = ph_value_rank(v), ok = 1;
    char a[256], b[256];
    if (is_npy(e->path)) {
        ph_error nerr = {0};
        if (!(e->t = ph_tensor_load_npy(e->path, &nerr))) /* the message names the file */
            return ph_ctx_error(ctx, PH_EINVAL, "input '%s': %s", e->name, nerr.message);
    } else {
        int64_t dims[64];
        ok = rank >= 0 && rank <= 64 && dt != PH_DT_UNDEFINED;
        for (int i = 0; ok && i < rank; i++)
            ok = (dims[i] = ph_value_dim(v, i)) >= 0;
        if (!ok)
            return ph_ctx_error(ctx, PH_EINVAL, "input '%s', file '%s': a raw file needs a static shape, "
                                "and the input is %s (use a .npy file)", e->name, e->path,
                                type_text(a, sizeof a, v, NULL));
        ph_error rerr = {0};
        if (!(e->t = ph_tensor_load_raw(e->path, dt, (size_t)rank, dims, &rerr))) /* names the file */
            return ph_ctx_error(ctx, PH_EINVAL, "input '%s': %s", e->name, rerr.message);
    }
    ok = (dt == PH_DT_UNDEFINED || dt == ph_tensor_dtype(e->t)) && (rank < 0 || (size_t)rank == ph_tensor_rank(e->t));
    for (int i = 0; ok && rank >= 0 && i < rank; i++)
        ok = ph_value_dim(v, i) < 0 || ph_value_dim(v, i) == ph_tensor_dim(e->t, (size_t)i);
    if (!ok)
        return ph_ctx_error(ctx, PH_EINVAL, "input '%s', file '%s': the file holds %s, the input is %s", e->name,
                            e->path, type_text(a, sizeof a, NULL, e->t), type_text(b, sizeof b, v, NULL));
    return 0;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    uint64_t *memo = ph_ctx_pass_memo(ctx);
    const char *spec = ph_params_string(params, "inputs");
    if (!memo)
        return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
    if (*memo || !spec || !*spec)
        return 0;
    size_t len = strlen(spec);
    int max = (int)(len / 3 + 1);
    char *copy = ph_ctx_alloc(ctx, len + 1);
    entry *es = ph_ctx_alloc(ctx, (size_t)max * sizeof *es);
    if (!copy || !es)
        return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
    memcpy(copy, spec, len + 1);
    int n = parse_spec(copy, es, max, ctx);
    if (n <= 0)
        return n;
    int64_t ir = ph_model_ir_version(ph_graph_model(g));
    if (ir < 4)
        return ph_ctx_error(ctx, PH_EUNSUPPORTED, "the model's ir_version is %lld: before 4 every "
                            "initializer must also be a graph input, so inputs cannot be folded", (long long)ir);
    int rc = 0, done = 0;
    for (int i = 0; i < n && !rc; i++) {
        ph_value *v = ph_graph_find_value(g, es[i].name);
        if (v && ph_value_graph(v) == g && ph_value_is_graph_input(v))
            es[i].input = v;
        else if (!(v && ph_value_graph(v) == g && ph_value_is_initializer(v)))
            rc = ph_ctx_error(ctx, PH_ENOTFOUND, "input '%s', file '%s': the model has no graph input of "
                              "that name", es[i].name, es[i].path);
        if (es[i].input && !rc)
            rc = load(&es[i], ctx);
    }
    for (int i = 0; i < n; i++) {
        if (!rc && es[i].t && ph_ctx_rewrite_begin(ctx, es[i].name)) {
            rc = ph_graph_input_to_initializer(es[i].input, es[i].t);
            if (rc)
                rc = ph_ctx_error(ctx, rc, "input '%s': cannot make it an initializer", es[i].name);
            else
                done++;
        } else {
            ph_tensor_free(es[i].t);
        }
        es[i].t = NULL;
    }
    if (rc)
        return rc;
    *memo = 1;
    return done;
}

static const ph_param_def params[] = {
    {"inputs", PH_PARAM_STRING, "",
     "NAME=PATH pairs separated by ';': graph inputs and the .npy or raw files holding their values "
     "(relative paths: from the working directory)"},
    {NULL, 0, NULL, NULL},
};

static const char *const before[] = {"constant_folding", NULL};

PH_PASS_DEFINE(
    .name = "fold_constant_inputs",
    .summary = "graph inputs named in the config get constant values from files -> initializers, then folded",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_EXACT,
    .run_before = before,
    .params = params,
    .run = run)
