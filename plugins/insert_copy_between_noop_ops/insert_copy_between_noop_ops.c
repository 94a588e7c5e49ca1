/* insert_copy_between_noop_ops - a copy (Identity) between two operators
 * the target compiles to no instruction.
 *
 * Icraft AddCopy2noInsOpPass (seed 004): "two connected operators that
 * produce no instruction, such as concat, split, reshape" need a copy
 * between them; the profile's noop_ops lists them.
 *
 * Requires: a default-domain Reshape, Flatten, Squeeze, Unsqueeze, Concat,
 *   Split, Slice, Transpose or Expand (the operators a target may compile to
 *   a view) in the parameter noop_ops (the profile's noop_ops), whose first
 *   input is made by a node whose op is in noop_ops too.  A Split is
 *   rewritten when it has at most 4 outputs (the pattern names each).
 * Changes:  an Identity between the two: the node is rebuilt reading
 *   Identity(first input).  Main graph and every If/Loop/Scan body.
 * Exact:    yes; Identity copies.
 */
#include <string.h>

#include <passhost/passhost.h>

static int after_noop(const ph_match *m, const ph_params *params)
{
    const char *list = ph_params_string(params, "noop_ops");
    const ph_node *n = ph_match_root(m);
    const ph_node *p = ph_value_producer(ph_match_value(m, "a"));
    return p && !*ph_node_domain(n) && ph_target_list_has(list, ph_node_op_type(n)) && !*ph_node_domain(p) &&
           ph_target_list_has(list, ph_node_op_type(p));
}

static int insert_copy(ph_rewriter *rw, const ph_match *m)
{
    ph_node *root = ph_match_root(m);
    size_t n_in = ph_node_input_count(root);
    ph_value **in = ph_rw_alloc(rw, (n_in ? n_in : 1) * sizeof *in);
    if (!in)
        return ph_rw_fail(rw, PH_ENOMEM);
    for (size_t i = 0; i < n_in; i++)
        in[i] = ph_node_input(root, i);
    in[0] = ph_rw_op(rw, "Identity", 1, in);
    ph_node *copy = in[0] ? ph_rw_clone(rw, root, NULL, n_in, in) : NULL;
    if (!copy)
        return ph_rw_fail(rw, PH_ENOMEM);
    for (size_t i = 0; i < ph_node_output_count(root); i++)
        ph_rw_replace(rw, ph_node_output(root, i), ph_node_output(copy, i));
    return ph_rw_done(rw);
}

#define VIEWS "Reshape|Flatten|Squeeze|Unsqueeze|Concat|Slice|Transpose|Expand"
static const ph_rule rules[] = {
    {"copy_after_noop",
     "( y = " VIEWS "|Split(a, qs*) | y0, y1 = Split(a, qs*) | y0, y1, y2 = Split(a, qs*)"
     " | y0, y1, y2, y3 = Split(a, qs*) )",
     after_noop, insert_copy},
    {0},
};

static const ph_param_def params[] = {
    {"noop_ops", PH_PARAM_STRING, "", "operators compiled to no instruction, ', '-separated"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"noop_ops", "noop_ops"}, {NULL, NULL}};

/* Examples for the rule checker: two views in a row. */
static const ph_rule_example examples[] = {
    {"copy_after_noop", "x: float[2,3,4]\nt = Transpose(x) {perm=[<0,2,1|2,1,0>]}\ns: int64[2] = [<4, 6|6, 4>]\n"
                        "y = Reshape(t, s)\nreturn y",
     (const char *const[]){"noop_ops=Transpose, Reshape", NULL}},
    {"copy_after_noop", "opset 13\nx: float[2,6]\ns: int64[3] = [2, 3, 2]\nr = Reshape(x, s)\n"
                        "a, b = Split(r) {axis=<1|2>}\nreturn a, b",
     (const char *const[]){"noop_ops=Reshape, Split", NULL}},
    {0}};

PH_PASS_DEFINE(
    .name = "insert_copy_between_noop_ops",
    .summary = "Identity between two consecutive no-instruction ops (the profile's noop_ops)",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_EXACT,
    .params = params,
    .rules = rules,
    .profile_keys = keys,
    .rule_examples = examples)
