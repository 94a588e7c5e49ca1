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
 *   input is made by a node whose op is in noop_ops too.
 * Changes:  an Identity between the two: the node is rebuilt reading
 *   Identity(first input).  Main graph and every If/Loop/Scan body.
 * Exact:    yes; Identity copies.
 */
#include <passhost/passhost.h>

/* Both ops in noop_ops; the producer of the default domain. */
static int after_noop(const ph_match *m, const ph_params *params)
{
    const char *list = ph_params_string(params, "noop_ops");
    const ph_node *p = ph_value_producer(ph_match_value(m, "a"));
    return p && !*ph_node_domain(p) && ph_target_list_has(list, ph_node_op_type(p)) &&
           ph_target_list_has(list, ph_node_op_type(ph_match_root(m)));
}

static const ph_rule rules[] = {
    {"copy_after_noop",
     "ys* = Reshape|Flatten|Squeeze|Unsqueeze|Concat|Split|Slice|Transpose|Expand(a, qs*)\n"
     "=>\nc = Identity(a)\nys* = _(c, qs*) like ys",
     after_noop, NULL},
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
