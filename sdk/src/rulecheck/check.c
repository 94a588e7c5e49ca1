/* sdk/src/rulecheck/check.c - run each rule of a pattern pass alone on the
 * instances gen.c builds and judge the outputs (passhost/rulecheck.h).
 *
 * An instance is checked as `passhost --verify` checks a model: the
 * original is evaluated in its own dtypes and in the evaluator's float64
 * reference mode, the rewritten model in its dtypes, on the same random
 * inputs.  PH_EXACT: every output bit-identical (a NaN against a NaN).
 * Otherwise each float output's error against the reference must stay
 * within 4 x the original's error + 4 ulp of its largest reference value
 * (of 1 at least: see judge),
 * and every other output equal; outputs that fail are judged again against
 * the instance rebuilt with the value tests' constants at their values
 * (judge_at_values).  A negative instance must also keep the node that
 * makes the root's output as it was. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rulecheck/rulecheck.h"
#include "passhost/constant.h"
#include "passhost/eval.h"
#include "passhost/testing.h"

#define DEFAULT_INSTANCES 40
#define BUDGET_FACTOR 4.0
#define BUDGET_ULPS 4.0
/* A double instance's reference (float64) is no more precise than the
 * original, whose error is then 0 whenever both sum in the same order: the
 * budget would be the floor alone, and a rewrite that sums a long
 * reduction (a 15x15 Conv as a MatMul) in another order rounds beyond 4
 * ulp.  64 ulp (1.4e-14 relative) still catches any wrong result. */
#define BUDGET_ULPS_F64 64.0

static void quiet(void *user, ph_log_level level, const char *pass, const char *message) {}

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void free_all(ph_tensor **t, size_t n)
{
    for (size_t i = 0; t && i < n; i++)
        ph_tensor_free(t[i]);
    free(t);
}

/* Evaluate g on inputs; outputs new (caller frees).  0 or an error. */
static int evaluate(const ph_graph *g, int f64, ph_tensor **in, ph_tensor ***out, ph_error *err)
{
    ph_eval_options o = {.size = sizeof o, .float64 = f64};
    ph_eval *e = NULL;
    size_t n = ph_graph_output_count(g);
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return PH_ENOMEM;
    int rc = ph_eval_new_with(g, &o, &e, err);
    if (rc == 0)
        rc = ph_eval_run(e, (const ph_tensor *const *)in, ph_graph_input_count(g), *out, n, err);
    ph_eval_free(e);
    return rc;
}

static double eps_of(int dt)
{
    return dt == PH_DT_DOUBLE ? 0x1p-52 : dt == PH_DT_FLOAT16 ? 0x1p-10 : dt == PH_DT_BFLOAT16 ? 0x1p-7 : 0x1p-23;
}

static int same_shape(const ph_tensor *a, const ph_tensor *b)
{
    if (ph_tensor_rank(a) != ph_tensor_rank(b))
        return 0;
    for (size_t i = 0; i < ph_tensor_rank(a); i++)
        if (ph_tensor_dim(a, i) != ph_tensor_dim(b, i))
            return 0;
    return 1;
}

static double *as_f64(const ph_tensor *t)
{
    int64_t n = ph_tensor_numel(t);
    double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    if (d && ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), d)) {
        free(d);
        return NULL;
    }
    return d;
}

/* Judge output i: 0 passes, 1 fails (msg says how). */
static int judge(const ph_tensor *orig, const ph_tensor *ref, const ph_tensor *opt, int exact, const char *name,
                 char *msg, size_t size)
{
    if (!orig || !opt || ph_tensor_dtype(orig) != ph_tensor_dtype(opt) || !same_shape(orig, opt)) {
        snprintf(msg, size, "output '%s': dtype or shape changed", name);
        return 1;
    }
    int dt = ph_tensor_dtype(orig);
    int64_t n = ph_tensor_numel(orig);
    if (exact || !ph_dtype_is_float(dt) || !ref) {
        if (ph_dtype_is_float(dt)) {
            double *a = as_f64(orig), *b = as_f64(opt);
            int bad = -1;
            for (int64_t k = 0; a && b && k < n && bad < 0; k++)
                if (!(isnan(a[k]) && isnan(b[k])) && memcmp(&a[k], &b[k], sizeof a[k]) != 0)
                    bad = (int)k;
            if (bad >= 0)
                snprintf(msg, size, "output '%s' element %d: %.9g before, %.9g after (the pass is exact)", name, bad,
                         a[bad], b[bad]);
            free(a);
            free(b);
            return bad >= 0;
        }
        if (ph_tensor_nbytes(orig) != ph_tensor_nbytes(opt) ||
            memcmp(ph_tensor_data(orig), ph_tensor_data(opt), ph_tensor_nbytes(orig)) != 0) {
            snprintf(msg, size, "output '%s': values changed", name);
            return 1;
        }
        return 0;
    }
    double *a = as_f64(orig), *r = as_f64(ref), *b = as_f64(opt);
    double oe = 0, xe = 0, top = 0;
    int64_t worst = -1;
    for (int64_t k = 0; a && r && b && k < n; k++) {
        if (isnan(r[k]) || (isnan(a[k]) && isnan(b[k])) || (isinf(a[k]) && a[k] == b[k]))
            continue;
        double e1 = fabs(a[k] - r[k]), e2 = isnan(b[k]) ? INFINITY : fabs(b[k] - r[k]);
        if (isnan(e1))
            e1 = INFINITY;
        if (e1 > oe)
            oe = e1;
        if (e2 > xe) {
            xe = e2;
            worst = k;
        }
        if (isfinite(r[k]) && fabs(r[k]) > top)
            top = fabs(r[k]);
    }
    /* The floor is in ulps of max(|reference|, 1), not of |reference| alone
     * as in --verify: the generated inputs and constants are of magnitude
     * about 1, and a rewrite that reassociates rounds at the ulp of its
     * intermediate values even where the output cancels to a small value
     * ((x + a) - b against x + (a - b)); an original that happens to
     * compute such an output exactly would leave no room at all. */
    double ulps = dt == PH_DT_DOUBLE ? BUDGET_ULPS_F64 : BUDGET_ULPS;
    double budget = BUDGET_FACTOR * oe + ulps * eps_of(dt) * (top > 1 ? top : 1);
    int bad = !(xe <= budget);
    if (bad && worst >= 0)
        snprintf(msg, size,
                 "output '%s' element %lld: %.9g before, %.9g after, reference %.9g: error %.3g beyond the budget "
                 "%.3g",
                 name, (long long)worst, a[worst], b[worst], r[worst], xe, budget);
    free(a);
    free(r);
    free(b);
    return bad;
}

/* A negative instance: 1 if the node making the root's output is still the
 * root (name, op, attributes); else 0 with msg.  Positives: 1. */
static int root_intact(const rc_spec *spec, const ph_graph *g, const rc_instance *inst, char *msg, size_t size)
{
    if (spec->kind == RC_POSITIVE || spec->example || spec->in_body)
        return 1; /* an example's root, or one in a body, is not named: judged by the outputs */
    ph_value *v = ph_graph_find_value((ph_graph *)g, inst->root_out);
    char sig[512] = "(gone)";
    if (v && ph_value_producer(v))
        rc_node_sig(ph_value_producer(v), sig, sizeof sig);
    if (strcmp(sig, inst->root_sig) == 0)
        return 1;
    static const char *what[] = {"", "an interior value has another reader", "an interior value is a graph output",
                                 "a constant is outside its value test"};
    snprintf(msg, size, "fired where it must not (%s): the root %s became %s", what[spec->kind], inst->root_sig, sig);
    return 0;
}

/* 1 if p matches at some node of g or of a subgraph in it. */
static int match_anywhere(const ph_pattern *p, const ph_graph *g, ph_match *m)
{
    for (ph_node *nd = ph_graph_first_node(g); nd; nd = ph_node_next(nd)) {
        if (ph_pattern_match_at(p, nd, m) == 1)
            return 1;
        for (size_t i = 0; i < ph_node_subgraph_count(nd); i++)
            if (match_anywhere(p, ph_node_subgraph(nd, i), m))
                return 1;
    }
    return 0;
}

typedef struct checker {
    const ph_pass_desc *desc; /* a copy holding one rule */
    const ph_rulecheck_options *o;
    ph_pattern *p;
    char avoid[1024];
} checker;

enum { CK_REJECTED = -1, CK_OK = 0, CK_FAILED = 1, CK_UNJUDGED = 2 };

/* Judge every output of the rewritten model g: 0 passes, 1 fails (msg). */
static int judge_all(const checker *c, const ph_graph *g, ph_tensor **orig, ph_tensor **ref, ph_tensor **opt,
                     char *msg, size_t size)
{
    for (size_t i = 0; i < ph_graph_output_count(g); i++) {
        const char *name = ph_value_name(ph_graph_output(g, i));
        if (c->desc->exactness == PH_APPROX) { /* by design: dtype and shape only */
            if (!opt[i] || ph_tensor_dtype(orig[i]) != ph_tensor_dtype(opt[i]) || !same_shape(orig[i], opt[i])) {
                snprintf(msg, size, "output '%s': dtype or shape changed", name);
                return 1;
            }
        } else if (judge(orig[i], ref[i], opt[i], c->desc->exactness == PH_EXACT, name, msg, size)) {
            return 1;
        }
    }
    return 0;
}

/* Judge the outputs opt again, against the instance of `built` rebuilt
 * with every value test's constants at their value V, on the same inputs:
 * 0 passes, 1 fails (msg says so). */
static int judge_at_values(const checker *c, const rc_spec *built, ph_tensor **in, ph_tensor **opt, char *msg,
                           size_t size)
{
    rc_spec s = *built;
    s.values_exact = 1;
    rc_instance twin;
    if (rc_build(&s, &twin) != 1)
        return 1;
    const ph_graph *g = ph_model_graph(twin.m);
    ph_tensor **orig = NULL, **ref = NULL;
    ph_error err = {0};
    char why[1024] = "";
    int bad = evaluate(g, 0, in, &orig, &err) != 0 || evaluate(g, 1, in, &ref, &err) != 0 ||
              judge_all(c, g, orig, ref, opt, why, sizeof why);
    if (bad) {
        size_t k = strlen(msg);
        if (k < size)
            snprintf(msg + k, size - k, "; against the original with the value tests' constants at their values: %s",
                     err.message[0] ? err.message : why);
    }
    free_all(orig, ph_graph_output_count(g));
    free_all(ref, ph_graph_output_count(g));
    ph_model_free(twin.m);
    return bad;
}

/* Build and check one instance.  *positive says whether it was judged as
 * one (a negative instance where another form of the rule matches at the
 * root is); *matched and *rewritten what happened (positives). */
static int check_one(checker *c, const rc_spec *spec, int *positive, int *matched, int *rewritten, char *msg,
                     size_t size)
{
    rc_instance inst;
    *matched = *rewritten = 0;
    *positive = spec->kind == RC_POSITIVE;
    int rc = rc_build(spec, &inst);
    if (rc != 1) {
        return CK_REJECTED;
    }
    ph_graph *g = ph_model_graph(inst.m);
    size_t n_in = ph_graph_input_count(g), n_out = ph_graph_output_count(g);
    ph_tensor **in = calloc(n_in ? n_in : 1, sizeof *in);
    ph_tensor **orig = NULL, **ref = NULL, **opt = NULL;
    ph_error err = {0};
    int verdict = CK_REJECTED;
    if (!in || ph_test_random_inputs(g, spec->seed, 1, in, &err) < 0)
        goto done;
    /* an original the evaluator cannot run (an operator it lacks) is still
     * rewritten and checked for a valid graph and, negative, an intact root */
    rc = evaluate(g, 0, in, &orig, &err);
    if (rc == 0)
        rc = evaluate(g, 1, in, &ref, &err);
    int judged = rc == 0;
    if (rc < 0 && rc != PH_EUNSUPPORTED)
        goto done;
    ph_value *root_v = ph_graph_find_value(g, inst.root_out);
    ph_match *m = ph_match_new(c->p);
    const rc_spec *built = spec;
    rc_spec as = *spec; /* a negative where another form matches is a positive */
    for (int fi = 0; m && root_v && spec->kind != RC_POSITIVE && fi < c->p->n_forms; fi++)
        if (fi != spec->form && pat_match_form(c->p, fi, ph_value_producer(root_v), m) == 1)
            as.kind = RC_POSITIVE;
    spec = &as;
    *positive = spec->kind == RC_POSITIVE;
    if (spec->kind == RC_POSITIVE)
        *matched = m && root_v && ph_value_producer(root_v) &&
                   ph_pattern_match_at(c->p, ph_value_producer(root_v), m) == 1;
    if (m && (spec->example || spec->in_body))
        *matched = match_anywhere(c->p, g, m); /* no root named: anywhere */
    ph_match_free(m);
    ph_test_options to = {.log = quiet, .params = spec->params};
    ph_test_result res;
    rc = ph_test_run(c->desc, inst.m, &to, &res, &err);
    verdict = CK_FAILED;
    if (rc < 0) {
        snprintf(msg, size, "the pass failed: %s", err.message);
        goto done;
    }
    *rewritten = rc > 0;
    if (ph_graph_input_count(g) != n_in || ph_graph_output_count(g) != n_out) {
        snprintf(msg, size, "the graph's inputs or outputs changed in number");
        goto done;
    }
    rc = judged ? evaluate(g, 0, in, &opt, &err) : PH_EUNSUPPORTED;
    if (rc == PH_EUNSUPPORTED) {
        verdict = root_intact(spec, g, &inst, msg, size) ? CK_UNJUDGED : CK_FAILED;
        goto done;
    }
    if (rc < 0) {
        snprintf(msg, size, "the rewritten model does not evaluate: %s", err.message);
        goto done;
    }
    if (judge_all(c, g, orig, ref, opt, msg, size)) {
        /* a rule may put a value test's V in place of a constant drawn
         * inside its tolerance (V is what the pattern says it means): judge
         * again against the original built with V there */
        if (!inst.near_values || judge_at_values(c, built, in, opt, msg, size))
            goto done;
    }
    if (!root_intact(spec, g, &inst, msg, size))
        goto done;
    verdict = CK_OK;
done:
    free_all(in, n_in);
    free_all(orig, n_out);
    free_all(ref, n_out);
    free_all(opt, n_out);
    ph_model_free(inst.m);
    return verdict;
}

/* Shrink a failing spec (smaller dims, optional inputs out) while it still
 * fails, then write its model and text. */
static void reproduce(checker *c, const rc_spec *failing, const char *rule, int index, char *msg, size_t size)
{
    rc_spec best = *failing;
    static const struct {
        int max_dim, drop;
    } tries[] = {{1, 1}, {1, 0}, {2, 1}, {2, 0}, {3, 1}, {3, 0}};
    char tmp[900];
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        rc_spec s = *failing;
        s.max_dim = tries[i].max_dim;
        s.drop_optional = tries[i].drop;
        int a, b, pos;
        if (check_one(c, &s, &pos, &a, &b, tmp, sizeof tmp) == CK_FAILED) {
            best = s;
            snprintf(msg, size, "%s", tmp);
            break;
        }
    }
    if (!c->o->repro_dir)
        return;
    rc_instance inst;
    if (rc_build(&best, &inst) != 1)
        return;
    char path[400], text[400], base[64];
    size_t b = 0;
    for (const char *q = rule; *q && b < sizeof base - 1; q++) /* a file name from the rule's name */
        base[b++] = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ? *q : '_';
    base[b] = 0;
    snprintf(path, sizeof path, "%.300s/%s.%d.onnx", c->o->repro_dir, base, index);
    snprintf(text, sizeof text, "%.300s/%s.%d.txt", c->o->repro_dir, base, index);
    ph_error err = {0};
    int ok = ph_model_save(inst.m, path, &err) == 0 && rc_write_text(inst.m, text) == 0;
    ph_model_free(inst.m);
    size_t k = strlen(msg);
    if (ok && k < size)
        snprintf(msg + k, size - k, " (reproducer: %s, %s; seed %llu, form %d)", path, text,
                 (unsigned long long)best.seed, best.form);
}

static void collect_ops(const ph_pattern *p, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, " ");
    for (int fi = 0; fi < p->n_forms; fi++)
        for (int s = 0; s < p->forms[fi].n_stmts; s++)
            for (int o = 0; o < p->forms[fi].stmts[s].n_ops && k < size; o++)
                k += (size_t)snprintf(buf + k, size - k, "%s ", p->forms[fi].stmts[s].ops[o].op_type);
}

/* The examples of the rule named `name` in desc's table; their count. */
static int rule_examples(const ph_pass_desc *desc, const char *name, const ph_rule_example **ex, int cap)
{
    int n = 0;
    for (const ph_rule_example *e = desc->struct_size > offsetof(ph_pass_desc, rule_examples)
                                         ? desc->rule_examples
                                         : NULL;
         e && e->rule; e++)
        if (!strcmp(e->rule, name) && n < cap)
            ex[n++] = e;
    return n;
}

/* "" when example tpl builds with its first choices, else why not. */
static void example_error(const char *tpl, char *msg, size_t size)
{
    char *text = rc_example_text(tpl, 0);
    ph_error err = {0};
    ph_model *m = text ? ph_test_model_text(text, &err) : NULL;
    if (!text)
        snprintf(msg, size, "an example graph is not a valid template (an unclosed '<' or an unknown <name>)");
    else if (!m)
        snprintf(msg, size, "an example graph does not build: %s", err.message);
    else
        msg[0] = 0;
    ph_model_free(m);
    free(text);
}

static void check_rule(const ph_pass_desc *desc, size_t r, const ph_rulecheck_options *o, ph_rulecheck_rule *out,
                       ph_pattern *p)
{
    const ph_rule_example *ex[16];
    int n_ex = rule_examples(desc, out->name, ex, 16);
    for (int k = 0; k < n_ex; k++) {
        char msg[1024];
        example_error(ex[k]->graph, msg, sizeof msg);
        if (msg[0] && !out->failures++)
            snprintf(out->failure, sizeof out->failure, "%s", msg);
    }
    ph_rule one[2] = {desc->rules[r], {0}};
    ph_pass_desc d1;
    memset(&d1, 0, sizeof d1);
    memcpy(&d1, desc, desc->struct_size < sizeof d1 ? desc->struct_size : sizeof d1);
    d1.struct_size = sizeof d1;
    d1.rules = one;
    checker c = {.desc = &d1, .o = o, .p = p};
    collect_ops(p, c.avoid, sizeof c.avoid);
    out->forms = (size_t)p->n_forms;
    int n = o->instances > 0 ? o->instances : DEFAULT_INSTANCES;
    for (int i = 0; i < n; i++) {
        uint64_t seed = mix(mix(o->seed, r), (uint64_t)i);
        int form = (int)(seed % (uint64_t)p->n_forms);
        static const int kinds[] = {RC_POSITIVE, RC_POSITIVE, RC_EXTRA_CONSUMER, RC_POSITIVE, RC_OUTPUT_MIDDLE,
                                    RC_POSITIVE, RC_VALUE_OUTSIDE, RC_POSITIVE};
        int kind = kinds[i % 8];
        if (!rc_has_kind(&p->forms[form], kind))
            kind = RC_POSITIVE;
        rc_spec spec = {.p = p, .form = form, .kind = kind, .seed = seed, .max_dim = 4, .avoid = c.avoid};
        if (n_ex && i % 2) { /* a rule with examples: every other instance is one */
            spec.example = ex[(i / 2) % n_ex]->graph;
            spec.params = ex[(i / 2) % n_ex]->params;
            spec.kind = kinds[(i / 2) % 8] == RC_OUTPUT_MIDDLE || kinds[(i / 2) % 8] == RC_EXTRA_CONSUMER
                            ? kinds[(i / 2) % 8]
                            : RC_POSITIVE;
        }
        spec.in_body = i % 16 == 7 ? 1 : i % 16 == 8 ? 2 : 0; /* one in 16 in an If, one in 16 in a Loop */
        int matched, rewritten, positive;
        char msg[1024] = "";
        out->tried++;
        int v = check_one(&c, &spec, &positive, &matched, &rewritten, msg, sizeof msg);
        if (v == CK_REJECTED) {
            out->rejected++;
            continue;
        }
        out->unjudged += v == CK_UNJUDGED;
        out->in_body += spec.in_body != 0;
        out->in_body_rewritten += spec.in_body && rewritten;
        if (positive) {
            out->positives++;
            out->matched += matched;
            out->rewritten += rewritten;
            out->refused += matched && !rewritten;
        } else {
            out->negatives++;
        }
        if (v == CK_FAILED) {
            if (!out->failures++) {
                reproduce(&c, &spec, out->name, i, msg, sizeof msg);
                snprintf(out->failure, sizeof out->failure, "%s", msg);
            }
        }
    }
}

PH_API int ph_rulecheck_run(const ph_pass_desc *desc, const ph_rulecheck_options *opts, ph_rulecheck_rule *out,
                            size_t cap, ph_error *err)
{
    if (!desc || !desc->rules || (!out && cap))
        return ph_error_set(err, PH_EINVAL, "ph_rulecheck_run: not a pattern pass (no rules)");
    ph_rulecheck_options o = {0};
    if (opts)
        memcpy(&o, opts, opts->size && opts->size < sizeof o ? opts->size : sizeof o);
    size_t n = 0;
    while (desc->rules[n].pattern)
        n++;
    for (size_t r = 0; r < n; r++) {
        const ph_rule *rule = &desc->rules[r];
        const char *name = rule->name ? rule->name : rule->pattern;
        if (o.only && strcmp(o.only, name) != 0) {
            if (r < cap) {
                memset(&out[r], 0, sizeof out[r]);
                snprintf(out[r].name, sizeof out[r].name, "%s", name);
            }
            continue;
        }
        ph_pattern *p = ph_pattern_parse(rule->pattern, err);
        if (!p)
            return err ? err->code : PH_EINVAL;
        if (r < cap) {
            memset(&out[r], 0, sizeof out[r]);
            snprintf(out[r].name, sizeof out[r].name, "%s", name);
            check_rule(desc, r, &o, &out[r], p);
        }
        ph_pattern_free(p);
    }
    return (int)n;
}
