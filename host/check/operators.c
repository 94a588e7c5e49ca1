/* host/check/operators.c - operators ONNX does not define, named
 * (operators.h). */
#include "operators.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "passhost/host.h"

/* One unknown operator: its domain and name, first node, how many nodes. */
typedef struct unknown_op {
    const char *domain, *op;
    const char *first_node;
    size_t count;
} unknown_op;

typedef struct scan {
    ph_model *model;
    /* for the operators of passhost/ops.h: 1 known, 2 unknown, 0 not looked up */
    unsigned char by_op[PH_OP__COUNT];
    unknown_op *unknown;
    size_t n, cap;
} scan;

static int default_domain(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

/* 1 when ONNX defines op in domain at the model's opset, or cannot tell
 * (a domain it does not define, an opset newer than its schemas). */
static int known(const scan *s, const char *domain, const char *op)
{
    int64_t max = 0, opset = ph_model_opset(s->model, domain);
    if (!ph_schema_domain_known(domain, NULL, &max) || opset < 1 || opset > max)
        return 1;
    return ph_schema_find(domain, op, opset) != NULL;
}

static int visit(ph_node *n, void *user)
{
    scan *s = user;
    const char *domain = ph_node_domain(n), *op = ph_node_op_type(n);
    ph_op k = ph_node_op(n);
    if (k > PH_OP_UNKNOWN && k < PH_OP__COUNT) { /* one lookup per operator of the table */
        if (!s->by_op[k])
            s->by_op[k] = known(s, "", op) ? 1 : 2;
        if (s->by_op[k] == 1)
            return 0;
    } else if (!*op || known(s, domain, op)) { /* no op_type: the verifier's business */
        return 0;
    }
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->unknown[i].op, op) == 0 && default_domain(s->unknown[i].domain) == default_domain(domain) &&
            (default_domain(domain) || strcmp(s->unknown[i].domain, domain) == 0)) {
            s->unknown[i].count++;
            return 0;
        }
    host_xgrow(&s->unknown, &s->cap, s->n + 1, sizeof *s->unknown);
    s->unknown[s->n++] = (unknown_op){domain, op, ph_node_name(n), 1};
    return 0;
}

/* Stops a walk at its first node, kept in *user. */
static int first_node(ph_node *n, void *user)
{
    *(ph_node **)user = n;
    return PH_EINVAL;
}

/* 1 when every node of m is of an operator of the table that ONNX defines,
 * found without walking the nodes: through the op-type index, one look per
 * operator.  0 when that cannot tell (bodies holding nodes, which the
 * index of the main graph does not reach; nodes of other domains; an
 * operator that is unknown; an index an allocation failure may have left
 * out): then the walk below decides. */
static int all_known(scan *s)
{
    ph_graph *g = ph_model_graph(s->model);
    if (ph_model_node_count(s->model) != ph_graph_node_count(g) || ph_model_alloc_failures(s->model))
        return 0;
    for (int k = PH_OP_UNKNOWN; k < PH_OP__COUNT; k++) {
        ph_op op = (ph_op)k;
        ph_node *n = NULL;
        if (ph_graph_walk_ops(g, &op, 1, first_node, &n) >= 0 || !n)
            continue; /* no node of op */
        if (op == PH_OP_UNKNOWN || !*ph_node_op_type(n))
            return 0;
        if (!s->by_op[k])
            s->by_op[k] = known(s, "", ph_node_op_type(n)) ? 1 : 2;
        if (s->by_op[k] != 1)
            return 0;
    }
    return 1;
}

size_t host_warn_unknown_operators(ph_model *m, void (*warn)(void *user, const char *message), void *user)
{
    scan s = {.model = m};
    if (!all_known(&s))
        ph_graph_walk(ph_model_graph(m), visit, &s);
    for (size_t i = 0; i < s.n; i++) {
        const unknown_op *u = &s.unknown[i];
        const char *domain = default_domain(u->domain) ? "ai.onnx" : u->domain;
        char more[48] = "";
        if (u->count > 1)
            snprintf(more, sizeof more, " and %zu more node%s", u->count - 1, u->count > 2 ? "s" : "");
        char *msg = host_xasprintf("node '%s'%s: operator %s is not defined by ONNX %s in domain %s at opset "
                                   "%lld; it is kept as it is, but other tools will refuse the model",
                                   u->first_node, more, u->op, ph_schema_onnx_version(), domain,
                                   (long long)ph_model_opset(m, u->domain));
        warn(user, msg);
        free(msg);
    }
    size_t n = s.n;
    free(s.unknown);
    return n;
}
