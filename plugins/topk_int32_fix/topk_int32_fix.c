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
 *   output), not all of their readers a Cast to int32 already (!all), and
 *   the parameter index_dtype (the profile's TopK.index_dtype) int32.
 * Changes:  TopK -> TopK, indices -> Cast(int32) -> Cast(int64) -> the
 *   old readers (a graph output keeps its name).  Main graph and every
 *   If/Loop/Scan body.
 * Exact:    yes; an index along one axis fits int32.
 */
#include <string.h>

#include <passhost/passhost.h>

/* The target's indices are int32. */
static int int32_target(const ph_match *m, const ph_params *params)
{
    const char *want = ph_params_string(params, "index_dtype");
    return want && !strcmp(want, "int32");
}

static const ph_rule rules[] = {
    {"topk_int32",
     "v, i = TopK(x, k)\n!all Cast(i) {to=6}\n"
     "=>\nv, n = TopK(x, k) like v\nn32 = Cast(n) {to=6}\ni = Cast(n32) {to=7}",
     int32_target, NULL},
    {0}};

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
