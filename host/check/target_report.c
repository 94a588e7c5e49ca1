/* host/check/target_report.c - violations of a target profile (target_report.h). */
#include "target_report.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

int host_violations_hook(void *user, const ph_violation *v)
{
    host_violations *vs = user;
    host_xgrow(&vs->items, &vs->cap, vs->count + 1, sizeof *vs->items);
    host_violation *c = &vs->items[vs->count++];
    c->graph = host_xstrdup(v->graph ? v->graph : "");
    c->node = host_xstrdup(v->name ? v->name : "");
    c->op = host_xstrdup(v->op ? v->op : "");
    c->key = host_xstrdup(v->key ? v->key : "");
    c->value = host_xstrdup(v->value ? v->value : "");
    c->limit = host_xstrdup(v->limit ? v->limit : "");
    c->fix = host_xstrdup("");
    return 0;
}

void host_violations_clear(host_violations *vs)
{
    for (size_t i = 0; i < vs->count; i++) {
        host_violation *c = &vs->items[i];
        free(c->graph);
        free(c->node);
        free(c->op);
        free(c->key);
        free(c->value);
        free(c->limit);
        free(c->fix);
    }
    free(vs->items);
    vs->items = NULL;
    vs->count = vs->cap = 0;
}

/* 1 when the pass declares key, or the model-wide key of an operator's
 * max_rank / dtypes. */
static int declares(const ph_pass_desc *d, const char *key)
{
    const char *dot = strrchr(key, '.');
    const char *last = dot ? dot + 1 : key;
    int generic = dot && (!strcmp(last, "max_rank") || !strcmp(last, "dtypes"));
    for (const ph_profile_key *k = d->profile_keys; k && k->key; k++)
        if (!strcmp(k->key, key) || (generic && !strcmp(k->key, last)))
            return 1;
    return 0;
}

void host_violations_fixers(host_violations *vs, const host_registry *reg)
{
    for (size_t i = 0; i < vs->count; i++) {
        host_violation *c = &vs->items[i];
        for (size_t p = 0; reg && p < host_registry_count(reg); p++) {
            const ph_pass_desc *d = host_registry_at(reg, p)->desc;
            if (!(d->stages & PH_STAGE_ADAPT) || !declares(d, c->key))
                continue;
            char *joined = host_xasprintf("%s%s%s", c->fix, *c->fix ? ", " : "", d->name);
            free(c->fix);
            c->fix = joined;
        }
    }
}

void host_violations_print(FILE *out, const host_violations *vs)
{
    if (!vs->count) {
        fprintf(out, "target %s: no violations\n", vs->target ? vs->target : "");
        return;
    }
    fprintf(out, "target %s: %zu violation%s\n", vs->target ? vs->target : "", vs->count,
            vs->count == 1 ? "" : "s");
    fprintf(out, "  %-32s %-20s %-28s %-14s %-18s %s\n", "node", "op", "constraint", "value", "limit",
            "fixed by");
    for (size_t i = 0; i < vs->count; i++) {
        const host_violation *c = &vs->items[i];
        char node[600];
        snprintf(node, sizeof node, "%s%s%s", c->graph, *c->graph ? "/" : "", *c->node ? c->node : "(unnamed)");
        fprintf(out, "  %-32s %-20s %-28s %-14s %-18s %s\n", node, c->op, c->key, c->value, c->limit,
                *c->fix ? c->fix : "-");
    }
}
