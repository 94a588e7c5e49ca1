/* depth_to_space_to_transpose - DepthToSpace / SpaceToDepth become Reshape +
 * Transpose + Reshape, for a backend with Transpose but no pixel shuffle.
 *
 * Requires: a default-domain DepthToSpace (mode DCR or CRD; the mode
 *   attribute only from opset 11) or SpaceToDepth, opset >= 5 (Reshape's
 *   shape input), blocksize b >= 1, input [N, C, H, W] with C, H and W known
 *   numbers > 0 (N may be unknown: the Reshapes copy it with 0), C a
 *   multiple of b*b (DepthToSpace) or H and W multiples of b (SpaceToDepth).
 * Changes: y = DepthToSpace(x) becomes
 *     DCR: Reshape [N, b, b, C/b^2, H, W] -> Transpose [0,3,4,1,5,2]
 *     CRD: Reshape [N, C/b^2, b, b, H, W] -> Transpose [0,1,4,2,5,3]
 *   -> Reshape [N, C/b^2, H*b, W*b]; y = SpaceToDepth(x) becomes
 *   Reshape [N, C, H/b, b, W/b, b] -> Transpose [0,3,5,1,2,4] ->
 *   Reshape [N, C*b^2, H/b, W/b], named as the original node.
 * Exact: yes; elements only move, as the ONNX definitions move them.
 */

#include <string.h>

#include <passhost/passhost.h>

static int to_transpose(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    int64_t b = ph_match_int(m, "b", 0), C = ph_value_dim(x, 1), H = ph_value_dim(x, 2), W = ph_value_dim(x, 3), c;
    const char *mode = ph_match_string(m, "mode", "DCR");
    int64_t v[6], out[4], perm[6];
    if (b < 1 || C <= 0 || H <= 0 || W <= 0 || (ph_rw_opset(rw) < 11 && ph_match_has(m, "mode")))
        return 0;
    int s2d = ph_node_op(ph_match_root(m)) == PH_OP_SpaceToDepth, dcr = !strcmp(mode, "DCR");
    if (s2d && H % b == 0 && W % b == 0) {
        memcpy(v, (int64_t[]){0, C, H / b, b, W / b, b}, sizeof v);
        memcpy(perm, (int64_t[]){0, 3, 5, 1, 2, 4}, sizeof perm);
        memcpy(out, (int64_t[]){0, C * b * b, H / b, W / b}, sizeof out);
    } else if (!s2d && C % (b * b) == 0 && (dcr || !strcmp(mode, "CRD"))) {
        c = C / (b * b);
        memcpy(v, dcr ? (int64_t[]){0, b, b, c, H, W} : (int64_t[]){0, c, b, b, H, W}, sizeof v);
        memcpy(perm, dcr ? (int64_t[]){0, 3, 4, 1, 5, 2} : (int64_t[]){0, 1, 4, 2, 5, 3}, sizeof perm);
        memcpy(out, (int64_t[]){0, c, H * b, W * b}, sizeof out);
    } else {
        return 0;
    }
    ph_value *r = ph_rw_reshape(rw, x, 6, v);
    ph_node *t = ph_rw_node(rw, "Transpose", 1, &r, 1);
    ph_node_set_attr_ints(t, "perm", 6, perm);
    return ph_rw_replace_root(rw, ph_rw_reshape(rw, ph_node_output(t, 0), 4, out));
}

static const ph_rule rules[] = {
    {"depth_to_space", "opset >= 5\ny = DepthToSpace|SpaceToDepth(x:rank=4) {blocksize=$b, mode?=$mode}", NULL,
     to_transpose},
    {0}};

PH_PASS_DEFINE(
    .name = "depth_to_space_to_transpose",
    .summary = "DepthToSpace/SpaceToDepth -> Reshape + Transpose + Reshape",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_EXACT,
    .rules = rules)
