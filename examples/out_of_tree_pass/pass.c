/* example_double_neg - an out-of-tree passhost pass: Neg(Neg(x)) -> x.
 *
 * Built against the installed SDK only (see Makefile and README.md): a
 * pattern pass, one rule of a pattern and a rewrite.
 *
 * Requires: a default-domain Neg whose input is produced by another
 *   default-domain Neg (which may have other readers: `a:shared`), and the
 *   outer Neg's output redirectable to x (a graph output keeps its name only
 *   when x can take it over; otherwise the rewrite rolls back).
 * Changes:  users of the outer Neg read x; the outer Neg is removed, and the
 *   inner one too when nothing else reads it.  Main graph and every
 *   If/Loop/Scan body.
 * Exact:    yes: negating twice flips the sign bit twice (and two's
 *   complement wraps back for integers).
 */
#include <passhost/passhost.h>

static int drop_both(ph_rewriter *rw, const ph_match *m)
{
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_match_value(m, "x")) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"double_neg", "a:shared = Neg(x); y = Neg(a)", NULL, drop_both}, {0}};

PH_PASS_DEFINE(
    .name = "example_double_neg",
    .summary = "example out-of-tree pass: Neg(Neg(x)) -> x",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_EXACT,
    .rules = rules)
