/* transpose_to_depth_to_space - a pixel shuffle written as Reshape +
 * Transpose + Reshape becomes DepthToSpace (or SpaceToDepth).
 *
 * Requires: s1 and s2 constant (initializer, Constant or shape constant), x
 *   [N, C, H, W] with C, H, W known numbers > 0, and the shapes (as inferred
 *   or declared) that go with the permutation, N provably the same dim:
 *     DCR: [N, b, b, C/b^2, H, W], perm [0,3,4,1,5,2], y [N, C/b^2, H*b, W*b]
 *     CRD: [N, C/b^2, b, b, H, W], perm [0,1,4,2,5,3], y likewise (opset 11)
 *     S2D: [N, C, H/b, b, W/b, b], perm [0,3,5,1,2,4], y [N, C*b^2, H/b, W/b]
 * Changes: the three nodes become DepthToSpace(x) {blocksize = b, mode (from
 *   opset 11)} or SpaceToDepth(x) {blocksize = b}, named as the last Reshape;
 *   s1 and s2 go when nothing else reads them.
 * Exact: yes; the same elements move to the same places.
 */
#include <passhost/passhost.h>

static int shuffle(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *r = ph_match_value(m, "r"), *y = ph_match_value(m, "y");
    int64_t C = ph_value_dim(x, 1), H = ph_value_dim(x, 2), W = ph_value_dim(x, 3), N = PH_DIM_OF(0), perm[6];
    if (ph_node_transpose_perm(ph_match_node(m, "t"), perm, 6) != 6)
        return 0;
    int s2d = perm[2] == 5, crd = perm[1] == 1; /* else DCR */
    int64_t b = ph_value_dim(r, s2d ? 3 : crd ? 2 : 1), c = b > 0 ? C / (b * b) : 0;
    if (C <= 0 || H <= 0 || W <= 0 || b < 1 || (s2d ? H % b || W % b : C % (b * b)) ||
        !ph_value_dims_are(r, 6, s2d  ? (int64_t[]){N, C, H / b, b, W / b, b}
                                 : crd ? (int64_t[]){N, c, b, b, H, W} : (int64_t[]){N, b, b, c, H, W}, x) ||
        !ph_value_dims_are(y, 4, s2d ? (int64_t[]){N, C * b * b, H / b, W / b} : (int64_t[]){N, c, H * b, W * b}, x))
        return 0;
    ph_rw_bind_int(rw, "b", b);
    if (!s2d && ph_rw_opset(rw) >= 11)
        ph_rw_bind_string(rw, "mode", crd ? "CRD" : "DCR");
    return 1;
}

static const ph_rule rules[] = {
    {"depth_to_space",
     "r = Reshape(x:rank=4, s1:ints)\n"
     "( t = Transpose(r:rank=6) {perm=[0,3,4,1,5,2]} | opset >= 11; t = Transpose(r:rank=6) {perm=[0,1,4,2,5,3]} )\n"
     "y = Reshape(t, s2:ints)\n=>\ny = DepthToSpace(x) {blocksize=$b, mode=$mode}",
     NULL, shuffle},
    {"space_to_depth",
     "r = Reshape(x:rank=4, s1:ints)\nt = Transpose(r:rank=6) {perm=[0,3,5,1,2,4]}\ny = Reshape(t, s2:ints)\n"
     "=>\ny = SpaceToDepth(x) {blocksize=$b}",
     NULL, shuffle},
    {0}};

/* Examples for the rule checker: pixel shuffles of blocksize 2 and 3. */
static const ph_rule_example examples[] = {
    {"depth_to_space", "x: <float|int64>[1,<C=8|18>,2,3]\ns1: int64[6] = [<C~1, 2, 2, 2, 2, 3|1, 3, 3, 2, 2, 3>]\n"
                       "r = Reshape(x, s1)\nt = Transpose(r) {perm=[0,3,4,1,5,2]}\n"
                       "s2: int64[4] = [<C~1, 2, 4, 6|1, 2, 6, 9>]\ny = Reshape(t, s2)\nreturn y", NULL},
    {"depth_to_space", "x: float[1,<C=8|18>,2,3]\ns1: int64[6] = [<C~1, 2, 2, 2, 2, 3|1, 2, 3, 3, 2, 3>]\n"
                       "r = Reshape(x, s1)\nt = Transpose(r) {perm=[0,1,4,2,5,3]}\n"
                       "s2: int64[4] = [<C~1, 2, 4, 6|1, 2, 6, 9>]\ny = Reshape(t, s2)\nreturn y", NULL},
    {"space_to_depth", "x: <float|int64>[1,2,<H=4|6>,6]\ns1: int64[6] = [<H~1, 2, 2, 2, 3, 2|1, 2, 3, 2, 3, 2>]\n"
                       "r = Reshape(x, s1)\nt = Transpose(r) {perm=[0,3,5,1,2,4]}\n"
                       "s2: int64[4] = [<H~1, 8, 2, 3|1, 8, 3, 3>]\ny = Reshape(t, s2)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "transpose_to_depth_to_space",
    .summary = "Reshape + Transpose + Reshape pixel shuffle -> DepthToSpace (DCR, CRD) or SpaceToDepth",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules,
    .rule_examples = examples)
