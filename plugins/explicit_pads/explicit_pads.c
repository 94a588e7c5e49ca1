/* explicit_pads - auto_pad replaced by explicit pads; unread trailing pads
 * trimmed.
 *
 * Icraft TuningPadPass (seed 004) asks for pads that agree with the shapes:
 *   out = (in + pad_begin + pad_end - ((k - 1) * dilation + 1)) / stride + 1
 * with exact division.  Of the corrections it describes, only one keeps the
 * results identical, and it is the only one done here: when the division
 * leaves a remainder r, the last r padded rows are read by no window, so up
 * to r of the END padding can go.  Adding padding, or touching the begin
 * padding, moves every window and changes the results: never done.
 *
 * Requires: a default-domain Conv, ConvTranspose, AveragePool, MaxPool or
 *   LpPool with valid kernel (kernel_shape, or the weight's known dims for
 *   Conv/ConvTranspose), strides, dilations and pads (lengths matching the
 *   spatial rank, strides and dilations >= 1, pads >= 0), and
 *   1. auto_pad SAME_UPPER / SAME_LOWER / VALID -> pads written, auto_pad
 *      removed.  Conv and pools: VALID is pads 0 (no shape needed);
 *      SAME needs every spatial input dim known: out = ceil(in / s),
 *      total = (out - 1) * s + (k - 1) * d + 1 - in, SAME_UPPER puts
 *      total / 2 at the begin and the rest at the end, SAME_LOWER the
 *      reverse.  Skipped where runtimes disagree, so that the rewrite is
 *      exact under all of them: a total below -1 (negative padding), a pool
 *      with SAME and a dilation != 1 (ONNX Runtime pads pools as if
 *      undilated), a pool with ceil_mode whose padded span is not a
 *      multiple of the stride (the spec ignores ceil_mode under auto_pad,
 *      ONNX Runtime does not).  A total of -1 becomes 0 (same windows).
 *      ConvTranspose (no output_shape attribute): VALID is pads 0; SAME
 *      needs the spatial dims: total = s * (in - 1) + output_padding +
 *      (k - 1) * d + 1 - in * s, only when total >= 0 and even (the spec and
 *      ONNX Runtime put the odd element on opposite sides).
 *   2. explicit pads (auto_pad absent or NOTSET) on a Conv or a pool with
 *      ceil_mode 0, every spatial input dim known: per axis with r =
 *      (in + begin + end - (k - 1) * d - 1) mod s > 0, end -= min(r, end).
 *      ConvTranspose pads crop the output and are left alone.
 * Changes:  the node's pads (and auto_pad) attributes; one rewrite per node
 *   changed.  Output shapes never change.  Main graph and every
 *   If/Loop/Scan body.  On by default in the optimize stage; in the adapt
 *   stage when the target profile says auto_pad = no (a target that takes
 *   explicit pads only: Icraft's, seed 004).
 * Exact:    yes; every output element reads the same input elements.
 */
#include <stdint.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_SP 16

typedef struct window {
    int nsp, pool, transpose, ceil_mode;
    int64_t k[MAX_SP], s[MAX_SP], d[MAX_SP], pads[2 * MAX_SP], in[MAX_SP];
} window;

/* An ints attribute of nsp entries (or 2*nsp for pads) into out, or the
 * default dflt when absent; 0, or -1 when malformed or below `min`. */
static int ints_attr(const ph_node *n, const char *name, int len, int64_t dflt, int64_t min, int64_t *out)
{
    const int64_t *v;
    ph_attr_type t = ph_node_attr_type(n, name);
    if (t == PH_ATTR_NONE) {
        for (int i = 0; i < len; i++)
            out[i] = dflt;
        return 0;
    }
    if (t != PH_ATTR_INTS || ph_node_attr_ints(n, name, &v) != len)
        return -1;
    for (int i = 0; i < len; i++)
        if ((out[i] = v[i]) < min)
            return -1;
    return 0;
}

/* Read the window of n; 0, or -1 when something is missing or invalid. */
static int read_window(const ph_node *n, window *w)
{
    const ph_value *x = ph_node_input(n, 0);
    const ph_value *wt = w->pool ? NULL : ph_node_input(n, 1);
    const int64_t *k;
    ptrdiff_t nk = ph_node_attr_type(n, "kernel_shape") == PH_ATTR_INTS ? ph_node_attr_ints(n, "kernel_shape", &k)
                                                                        : -1;
    int r = ph_value_rank(x);
    if (nk >= 0)
        w->nsp = (int)nk;
    else if (!w->pool && wt && ph_value_rank(wt) >= 3)
        w->nsp = ph_value_rank(wt) - 2;
    else if (r >= 3)
        w->nsp = r - 2;
    else
        return -1;
    if (w->nsp < 1 || w->nsp > MAX_SP || (r >= 0 && r != w->nsp + 2))
        return -1;
    for (int i = 0; i < w->nsp; i++) {
        w->k[i] = nk >= 0 ? k[i] : (wt && ph_value_rank(wt) == w->nsp + 2 ? ph_value_dim(wt, i + 2) : -1);
        if (w->k[i] < 1)
            return -1;
        w->in[i] = r >= 0 ? ph_value_dim(x, i + 2) : -1;
    }
    if (ints_attr(n, "strides", w->nsp, 1, 1, w->s) || ints_attr(n, "dilations", w->nsp, 1, 1, w->d) ||
        ints_attr(n, "pads", 2 * w->nsp, 0, 0, w->pads))
        return -1;
    w->ceil_mode = w->pool && ph_node_attr_int(n, "ceil_mode", 0) != 0;
    return 0;
}

static int64_t eff_k(const window *w, int i) { return (w->k[i] - 1) * w->d[i] + 1; }

static int all_in_known(const window *w)
{
    for (int i = 0; i < w->nsp; i++)
        if (w->in[i] < 1)
            return 0;
    return 1;
}

/* With ceil_mode, the padded span of every axis must be a multiple of the
 * stride, where floor and ceil agree. */
static int ceil_mode_safe(const window *w, const int64_t *pads)
{
    if (!w->ceil_mode)
        return 1;
    if (!all_in_known(w))
        return 0;
    for (int i = 0; i < w->nsp; i++) {
        int64_t span = w->in[i] + pads[i] + pads[w->nsp + i] - eff_k(w, i);
        if (span < 0 || span % w->s[i])
            return 0;
    }
    return 1;
}

/* Pads for auto_pad `ap` into pads; 0, or -1 when not exactly expressible. */
static int auto_pads(const ph_node *n, const window *w, const char *ap, int64_t *pads)
{
    int nsp = w->nsp, valid = !strcmp(ap, "VALID"), upper = !strcmp(ap, "SAME_UPPER");
    if (!valid && !upper && strcmp(ap, "SAME_LOWER"))
        return -1;
    if (w->transpose && ph_node_attr_type(n, "output_shape") != PH_ATTR_NONE)
        return -1;
    memset(pads, 0, 2 * (size_t)nsp * sizeof *pads);
    if (valid)
        return ceil_mode_safe(w, pads) ? 0 : -1;
    if (!all_in_known(w))
        return -1;
    int64_t opad[MAX_SP];
    if (w->transpose && ints_attr(n, "output_padding", nsp, 0, 0, opad))
        return -1;
    for (int i = 0; i < nsp; i++) {
        int64_t in = w->in[i], s = w->s[i], total;
        if (w->transpose) {
            total = s * (in - 1) + opad[i] + eff_k(w, i) - in * s;
            if (total < 0 || total % 2)
                return -1;
        } else {
            if (w->pool && w->d[i] != 1)
                return -1;
            total = ((in + s - 1) / s - 1) * s + eff_k(w, i) - in;
            if (total < -1)
                return -1;
            if (total < 0)
                total = 0;
        }
        pads[i] = upper ? total / 2 : total - total / 2;
        pads[nsp + i] = total - pads[i];
    }
    return ceil_mode_safe(w, pads) ? 0 : -1;
}

/* Trim end pads no window reads; 1 if some were trimmed. */
static int trim_pads(const window *w, int64_t *pads)
{
    if (w->transpose || w->ceil_mode || !all_in_known(w))
        return 0;
    int changed = 0;
    for (int i = 0; i < w->nsp; i++) {
        int64_t span = w->in[i] + pads[i] + pads[w->nsp + i] - eff_k(w, i);
        if (span < 0)
            return 0; /* invalid node: leave it to the verifier */
        int64_t r = span % w->s[i], cut = r < pads[w->nsp + i] ? r : pads[w->nsp + i];
        if (cut > 0) {
            pads[w->nsp + i] -= cut;
            changed = 1;
        }
    }
    return changed;
}

static int is_windowed(const ph_node *n, window *w)
{
    memset(w, 0, sizeof *w);
    switch (ph_node_op(n)) {
    case PH_OP_Conv:
        break;
    case PH_OP_ConvTranspose:
        w->transpose = 1;
        break;
    case PH_OP_AveragePool:
    case PH_OP_MaxPool:
    case PH_OP_LpPool:
        w->pool = 1;
        break;
    default:
        return 0;
    }
    return ph_node_domain(n)[0] == '\0' && ph_node_input_count(n) >= (w->pool ? 1u : 2u) &&
           ph_node_input(n, 0) && (w->pool || ph_node_input(n, 1));
}

/* One node of the walk. */
static int visit(ph_node *n, void *user)
{
    ph_ctx *ctx = user;
    window w;
    if (!is_windowed(n, &w))
        return 0;
    ph_attr_type apt = ph_node_attr_type(n, "auto_pad");
    const char *ap = apt == PH_ATTR_STRING ? ph_node_attr_string(n, "auto_pad", "NOTSET") : "NOTSET";
    if ((apt != PH_ATTR_NONE && apt != PH_ATTR_STRING) || read_window(n, &w))
        return 0;
    int64_t pads[2 * MAX_SP];
    int is_auto = strcmp(ap, "NOTSET") != 0;
    if (is_auto) {
        if (auto_pads(n, &w, ap, pads))
            return 0;
    } else {
        memcpy(pads, w.pads, sizeof pads);
        if (!trim_pads(&w, pads))
            return 0;
    }
    char label[200];
    if (!ph_ctx_rewrite_begin(ctx, ph_node_label(n, label, sizeof label)))
        return 0;
    int rc = ph_node_set_attr_ints(n, "pads", 2 * (size_t)w.nsp, pads);
    if (rc == 0 && is_auto)
        ph_node_remove_attr(n, "auto_pad");
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "cannot set pads of %s '%s': %s", ph_node_op_type(n), ph_node_name(n),
                            ph_strerror(rc));
    return 1;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    static const ph_op windowed[] = {PH_OP_AveragePool, PH_OP_Conv, PH_OP_ConvTranspose, PH_OP_LpPool,
                                     PH_OP_MaxPool};
    return ph_graph_walk_ops(g, windowed, sizeof windowed / sizeof *windowed, visit, ctx);
}

/* A profile with auto_pad = no switches the pass on in the adapt stage. */
static const ph_profile_key keys[] = {{"auto_pad", NULL}, {NULL, NULL}};

PH_PASS_DEFINE(
    .name = "explicit_pads",
    .summary = "auto_pad SAME_*/VALID -> explicit pads; end pads no window reads trimmed",
    .stages = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT,
    .default_stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run,
    .profile_keys = keys)
