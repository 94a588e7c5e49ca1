/* topk_int32_fix - TopK's indices through a Cast to the target's index
 * dtype.
 *
 * msit's KnowledgeTopkFix (seed 000): Ascend's TopK produces int32 indices,
 * not ONNX's int64, and ATC may fail on the mismatch; the knowledge base
 * casts k and the indices (leaving a non-standard model).  Here the model
 * stays standard ONNX: the indices go through Cast(to = int32), then back
 * to int64 for their readers, so the target sees its own index dtype at
 * the TopK (the profile's TopK.index_dtype) and a runtime the same values.
 *
 * Requires: a default-domain TopK whose indices are read (or are a graph
 *   output), not all of their readers a Cast to int32 already, and the
 *   parameter index_dtype (the profile's TopK.index_dtype) int32.
 * Changes:  TopK -> TopK, indices -> Cast(int32) -> Cast(int64) -> the
 *   old readers (a graph output keeps its name).  Main graph and every
 *   If/Loop/Scan body.
 * Exact:    yes; an index along one axis fits int32.
 */
#include <string.h>

#include <passhost/passhost.h>

static int needs_cast(const ph_match *m, const ph_params *params)
{
    const char *want = ph_params_string(params, "index_dtype");
    if (!want || strcmp(want, "int32"))
        return 0;
    const ph_value *idx = ph_match_value(m, "i");
    size_t uses = ph_value_use_count(idx);
    if (!uses && !ph_value_graph_output_count(idx))
        return 0;
    int all_cast = ph_value_graph_output_count(idx) == 0;
    for (size_t u = 0; u < uses && all_cast; u++) {
        const ph_node *n = ph_value_use(idx, u, NULL);
        all_cast = ph_node_op(n) == PH_OP_Cast && ph_node_attr_int(n, "to", 0) == PH_DT_INT32;
    }
    return !all_cast;
}

static int cast_indices(ph_rewriter *rw, const ph_match *m)
{
    ph_node *root = ph_match_root(m);
    ph_value *in[2] = {ph_match_value(m, "x"), ph_match_value(m, "k")};
    ph_node *copy = ph_rw_clone(rw, root, NULL, 2, in);
    if (!copy)
        return ph_rw_fail(rw, PH_ENOMEM);
    ph_value *n32 = ph_rw_cast(rw, ph_node_output(copy, 1), PH_DT_INT32);
    ph_value *wide = n32 ? ph_rw_cast(rw, n32, PH_DT_INT64) : NULL;
    if (!wide)
        return ph_rw_done(rw);
    ph_rw_replace(rw, ph_match_value(m, "v"), ph_node_output(copy, 0));
    ph_rw_replace(rw, ph_match_value(m, "i"), wide);
    return ph_rw_done(rw);
}

static const ph_rule rules[] = {{"topk_int32", "v, i = TopK(x, k)", needs_cast, cast_indices}, {0}};

static const ph_param_def params[] = {
    {"index_dtype", PH_PARAM_STRING, "int32", "the dtype of the target's TopK indices"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"TopK.index_dtype", "index_dtype"}, {NULL, NULL}};

/* Examples for the rule checker: TopK indices read or returned. */
static const ph_rule_example examples[] = {
    {"topk_int32", "x: <float|int32>[<3|2>,<5|6>]\nk: int64[1] = [<2|3>]\nv, i = TopK(x, k) {axis=<1|-1>}\n"
                   "<return v, i|c = Cast(i) {to=1}\nreturn c>", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "topk_int32_fix",
    .summary = "TopK's indices through Cast(int32) (the target's index dtype) and back to int64",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_EXACT,
    .params = params,
    .rules = rules,
    .profile_keys = keys,
    .rule_examples = examples)
