/* passhost/rulecheck.h - check the rules of a pattern pass on graphs
 * generated from the rules themselves.
 *
 * For every rule of a pattern pass (a descriptor with .rules: ours or a
 * third party's), the checker builds small models that the rule's pattern
 * matches, form by form: random ranks and shapes (broadcast operands
 * included), the dtypes and attribute values the constraints allow,
 * constants drawn to pass the value tests, optional inputs present or
 * absent.  It keeps the instances that shape inference and the evaluator
 * accept, runs the rule alone on each (a descriptor whose table holds only
 * that rule, run as the host runs a pass: ph_test_run), and evaluates the
 * model before and after on random inputs: the outputs must be bit-identical
 * for a PH_EXACT pass and within the error budget of `passhost --verify`
 * otherwise (4 x the original's error against the evaluator's float64
 * reference + 4 ulp of the largest reference value, or of 1 when that is
 * smaller: the generated values are of magnitude 1); a PH_APPROX pass,
 * which changes results by design, only keeps every output's dtype and
 * shape.
 *
 * It also builds instances where the rule must NOT fire: an interior value
 * (not ':shared') read by an extra node or made a graph output, a value
 * test's constant just outside its tolerance.  There the root node must be
 * left as it was, and the outputs must still agree.
 *
 * A failing instance is shrunk (smaller dims, optional inputs left out)
 * while it still fails; the smallest is written, when a folder is given, as
 * an ONNX model and as text in the pattern language's statement form.
 *
 * Used by `make test-rules` (every pass of plugins/, a fixed seed) and by
 * `passhost --check-rules PLUGIN`.  Nothing here keeps global state; the
 * descriptor is borrowed.
 */
#ifndef PASSHOST_RULECHECK_H
#define PASSHOST_RULECHECK_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"
#include "passhost/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How to check; a zero field takes its default.  The caller owns the struct
 * and sets size = sizeof(ph_rulecheck_options). */
typedef struct ph_rulecheck_options {
    size_t size;
    uint64_t seed;          /* the same seed gives the same instances */
    int instances;          /* instances tried per rule (0: 40) */
    const char *repro_dir;  /* where reproducers are written (NULL: none) */
    const char *only;       /* check only the rule of this name (NULL: all) */
} ph_rulecheck_options;

/* What the checker did with one rule. */
typedef struct ph_rulecheck_rule {
    char name[128];
    size_t forms;       /* forms of its pattern */
    int tried;          /* instances generated */
    int rejected;       /* refused by shape inference or the evaluator */
    int positives;      /* kept instances where the rule may fire */
    int matched;        /* positives whose pattern matched at the root */
    int rewritten;      /* positives the rule rewrote */
    int refused;        /* matched but not rewritten (its condition declined) */
    int negatives;      /* kept instances where it must not fire */
    int unjudged;       /* instances the evaluator cannot run before or after
                           the rule (an operator it lacks, of another domain):
                           checked for a valid graph (and, negative, an
                           intact root) only */
    int failures;       /* instances that failed (wrong outputs, fired where
                           it must not, pass error, invalid graph) */
    char failure[1024]; /* the first failure, and where its reproducer is */
    int in_body;        /* kept instances built inside a body (one in 16
                           tried in both branches of an If, one in 16 in a
                           Loop's body: the rule meets its match there) */
    int in_body_rewritten; /* of those, the ones the rule rewrote */
} ph_rulecheck_rule;

/* Check every rule of desc (a pattern pass: .rules set) with opts (NULL:
 * defaults), filling out[0..min(n, cap)) for the n rules of the table in
 * order.  Returns n (failures are in out, not in the return value), or a
 * negative PH_E* code: PH_EINVAL for a descriptor without rules or a
 * malformed pattern (err says which). */
PH_API int ph_rulecheck_run(const ph_pass_desc *desc, const ph_rulecheck_options *opts, ph_rulecheck_rule *out,
                            size_t cap, ph_error *err);

#ifdef __cplusplus
}
#endif

#endif
