/* host/check/rule_trace.c - --trace-rule (rule_trace.h). */
#include "rule_trace.h"

#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/util.h"
#include "config/plan.h"

typedef struct rule_tally {
    const ph_rule *rule;
    const ph_pattern *pat;
    ph_match *m;
    const ph_params *params;
    FILE *out;
    size_t candidates, matched, accepted, shown;
    int rc;
    ph_error *err;
} rule_tally;

static void try_node(rule_tally *t, ph_node *n)
{
    char why[600], label[200];
    int r = ph_pattern_explain(t->pat, n, t->m, why, sizeof why);
    if (r < 0)
        return; /* not of the root's op */
    t->candidates++;
    const char *outcome = "no match: ";
    if (r == 1) {
        t->matched++;
        int ok = t->rule->check ? t->rule->check(t->m, t->params) : 1;
        if (ok < 0) {
            t->rc = ph_error_set(t->err, HOST_EXIT_PASS, "rule '%s': its check failed at node '%s': %s",
                                 t->rule->name ? t->rule->name : t->rule->pattern,
                                 ph_node_label(n, label, sizeof label), ph_strerror(ok));
            return;
        }
        t->accepted += ok == 1;
        outcome = ok == 1 ? "match" : "match, but the rule's check refuses it";
        why[0] = 0;
    }
    if (t->shown++ < HOST_TRACE_RULE_SHOWN)
        fprintf(t->out, "  %s '%s': %s%s\n", ph_node_op_type(n), ph_node_label(n, label, sizeof label),
                outcome, why);
}

/* A pattern text on one line: its lines without their indentation, joined
 * by "; " where a statement ends and by a space inside a group of
 * alternatives or after "=>". */
static void print_one_line(FILE *out, const char *text)
{
    char prev = 0; /* the last character printed */
    while (*text) {
        const char *b = text + strspn(text, " \t"), *e = b + strcspn(b, "\n");
        text = *e ? e + 1 : e;
        const char *end = e;
        while (end > b && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            end--;
        if (end == b)
            continue;
        if (prev)
            fputs(strchr("(|;>", prev) || *b == ')' || *b == '|' ? " " : "; ", out);
        fwrite(b, 1, (size_t)(end - b), out);
        prev = end[-1];
    }
    fputc('\n', out);
}

/* Every node of g and its bodies, bodies first (as the driver). */
static void walk(rule_tally *t, ph_graph *g)
{
    for (ph_node *n = ph_graph_first_node(g); n && !t->rc; n = ph_node_next(n)) {
        for (size_t s = 0; s < ph_node_subgraph_count(n) && !t->rc; s++)
            walk(t, ph_node_subgraph(n, s));
        if (!t->rc)
            try_node(t, n);
    }
}

/* The rule of the table that `which` names (a name or a 1-based index);
 * NULL which: all (returns the table). */
static const ph_rule *find_rule(const ph_rule *rules, const char *which, size_t *count)
{
    size_t n = 0;
    while (rules[n].pattern)
        n++;
    *count = n;
    if (!which)
        return rules;
    char *end = NULL;
    long k = strtol(which, &end, 10);
    if (end != which && !*end && k >= 1 && (size_t)k <= n) {
        *count = 1;
        return &rules[k - 1];
    }
    for (size_t i = 0; i < n; i++)
        if (rules[i].name && strcmp(rules[i].name, which) == 0) {
            *count = 1;
            return &rules[i];
        }
    return NULL;
}

int host_trace_rule(FILE *out, const host_registry *reg, const char *spec, const ph_params *params,
                    ph_model *m, const char *model_name, ph_error *err)
{
    char *pass = host_xstrdup(spec), *which = strchr(pass, ':');
    if (which)
        *which++ = 0;
    const host_plugin *pl = host_registry_find(reg, pass);
    int rc = 0;
    if (!pl) {
        const char *near = host_closest_pass(reg, pass);
        rc = ph_error_set(err, HOST_EXIT_CONFIG, "--trace-rule: unknown pass '%s'%s%s%s", pass,
                          near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    } else if (!pl->desc->rules) {
        rc = ph_error_set(err, HOST_EXIT_CONFIG, "--trace-rule: pass %s is not written as rules (it "
                          "has a run function of its own): there is no rule to trace", pass);
    }
    size_t count = 0;
    const ph_rule *rules = rc ? NULL : find_rule(pl->desc->rules, which, &count);
    if (!rc && !rules) {
        char names[400] = "";
        for (size_t i = 0; pl->desc->rules[i].pattern; i++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%zu%s%s", i ? ", " : "", i + 1,
                     pl->desc->rules[i].name ? " " : "", pl->desc->rules[i].name ? pl->desc->rules[i].name : "");
        }
        rc = ph_error_set(err, HOST_EXIT_CONFIG, "--trace-rule: pass %s has no rule '%s' (its rules: %s)",
                          pass, which, names);
    }
    ph_params *own = NULL;
    if (!rc && !params) {
        static const ph_param_def none[] = {{NULL, 0, NULL, NULL}};
        params = own = ph_params_new(pl->desc->params ? pl->desc->params : none, NULL);
    }
    if (!rc)
        fprintf(out, "trace of pass %s on %s, as loaded (shapes inferred; no pass has run):\n", pass,
                model_name);
    for (size_t i = 0; i < count && !rc; i++) {
        const ph_rule *r = &rules[i];
        ph_error perr = {0};
        ph_pattern *pat = ph_pattern_parse(r->pattern, &perr);
        if (!pat) {
            rc = ph_error_set(err, HOST_EXIT_CONFIG, "--trace-rule: rule %s: %s", r->name ? r->name : "",
                              perr.message);
            break;
        }
        rule_tally t = {.rule = r, .pat = pat, .m = ph_match_new(pat), .params = params, .out = out,
                        .err = err};
        fprintf(out, "rule %s: ", r->name ? r->name : "(unnamed)");
        print_one_line(out, r->pattern);
        if (t.m)
            walk(&t, ph_model_graph(m));
        else
            t.rc = ph_error_set(err, HOST_EXIT_PASS, "out of memory");
        if (t.shown > HOST_TRACE_RULE_SHOWN)
            fprintf(out, "  ... %zu more candidates not shown\n", t.shown - HOST_TRACE_RULE_SHOWN);
        if (!t.rc)
            fprintf(out, "  %zu candidate%s, %zu matched, %zu accepted by the rule's check%s\n",
                    t.candidates, t.candidates == 1 ? "" : "s", t.matched, t.accepted,
                    r->check ? "" : " (it has none)");
        rc = t.rc;
        ph_match_free(t.m);
        ph_pattern_free(pat);
    }
    ph_params_free(own);
    free(pass);
    return rc;
}
