/* transpose_to_depth_to_space - a pixel shuffle written as Reshape +
 * Transpose + Reshape becomes DepthToSpace (or SpaceToDepth) (seed 004
 * table 4-2, ConvertTranspose2PixelShufflePass).
 *
 * Requires: Reshape(x, s1) -> Transpose -> Reshape(., s2), the middle
 *   values read by nothing else and no graph outputs, s1 and s2 constant
 *   (initializer, Constant or shape constant), x [N, C, H, W] with C, H, W
 *   known numbers > 0, and the shapes (as inferred or declared) and the
 *   exact permutation of one of these, N provably the same dim throughout:
 *     DCR: [N, b, b, C/b^2, H, W], perm [0,3,4,1,5,2], y [N, C/b^2, H*b, W*b]
 *     CRD: [N, C/b^2, b, b, H, W], perm [0,1,4,2,5,3], y likewise
 *          (DepthToSpace has mode CRD only from opset 11)
 *     S2D: [N, C, H/b, b, W/b, b], perm [0,3,5,1,2,4], y [N, C*b^2, H/b, W/b]
 *   Any other permutation or shape is another operator: left alone.
 * Changes: the three nodes become DepthToSpace(x) {blocksize = b, mode}
 *   or SpaceToDepth(x) {blocksize = b}; s1 and s2 go when nothing else
 *   reads them.  Main graph and every If/Loop/Scan body.
 * Exact: yes; the same elements move to the same places.
 */
#include <string.h>

#include <passhost/passhost.h>

enum { DCR, CRD, S2D, KINDS };

static const int64_t perms[KINDS][6] = {{0, 3, 4, 1, 5, 2}, {0, 1, 4, 2, 5, 3}, {0, 3, 5, 1, 2, 4}};
static const int b_at[KINDS] = {1, 2, 3}; /* where the view has the block size */

/* 1 if dims 1.. of v are want[1..n) and dim 0 is x's dim 0. */
static int dims_are(const ph_value *v, const ph_value *x, int n, const int64_t *want)
{
    if (ph_value_rank(v) != n || !ph_value_dim_equal(v, 0, x, 0))
        return 0;
    for (int i = 1; i < n; i++)
        if (ph_value_dim(v, i) != want[i])
            return 0;
    return 1;
}

static int to_depth_to_space(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *r = ph_match_value(m, "r"), *y = ph_match_value(m, "y");
    int64_t opset = ph_rw_opset(rw), perm[6], tmp[8];
    const char *sym[8];
    int64_t C = ph_value_dim(x, 1), H = ph_value_dim(x, 2), W = ph_value_dim(x, 3);
    if (ph_value_rank(x) != 4 || C <= 0 || H <= 0 || W <= 0 || ph_value_rank(r) != 6 ||
        ph_node_transpose_perm(ph_match_node(m, "t"), perm, 6) != 6 ||
        ph_value_const_ints(ph_match_value(m, "s1"), tmp, sym, 8) < 0 ||
        ph_value_const_ints(ph_match_value(m, "s2"), tmp, sym, 8) < 0)
        return 0;
    int kind = 0;
    while (kind < KINDS && memcmp(perm, perms[kind], sizeof perm))
        kind++;
    if (kind == KINDS)
        return 0;
    int64_t b = ph_value_dim(r, b_at[kind]), c = C / (b > 0 ? b * b : 1);
    if (b < 1 || (kind == CRD && opset < 11))
        return 0;
    int ok;
    if (kind == S2D)
        ok = H % b == 0 && W % b == 0 && dims_are(r, x, 6, (int64_t[]){0, C, H / b, b, W / b, b}) &&
             dims_are(y, x, 4, (int64_t[]){0, C * b * b, H / b, W / b});
    else
        ok = C % (b * b) == 0 &&
             dims_are(r, x, 6, kind == DCR ? (int64_t[]){0, b, b, c, H, W} : (int64_t[]){0, c, b, b, H, W}) &&
             dims_are(y, x, 4, (int64_t[]){0, c, H * b, W * b});
    if (!ok)
        return 0;
    ph_node *n = ph_rw_node(rw, kind == S2D ? "SpaceToDepth" : "DepthToSpace", 1, &x, 1);
    if (!n || ph_node_set_attr_int(n, "blocksize", b) < 0 ||
        (kind != S2D && opset >= 11 && ph_node_set_attr_string(n, "mode", kind == DCR ? "DCR" : "CRD") < 0) ||
        ph_value_copy_type(ph_node_output(n, 0), y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"pixel_shuffle",
                                 "r = Reshape(x, s1)\n"
                                 "t = Transpose(r)\n"
                                 "y = Reshape(t, s2)",
                                 NULL, to_depth_to_space},
                                {0}};

PH_PASS_DEFINE(
    .name = "transpose_to_depth_to_space",
    .summary = "Reshape + Transpose + Reshape pixel shuffle -> DepthToSpace (DCR, CRD) or SpaceToDepth",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
