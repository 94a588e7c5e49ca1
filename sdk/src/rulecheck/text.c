/* sdk/src/rulecheck/text.c - a model as text in the statement form of the
 * pattern language ("y = Op(a, b) {key=value}"), its inputs and constants
 * as comments above: how a reproducer is shown to a pass's author. */
#include <stdio.h>
#include <stdlib.h>

#include "rulecheck/rulecheck.h"
#include "passhost/constant.h"

static void type_of(FILE *f, const ph_value *v)
{
    fprintf(f, "%s[", ph_dtype_name(ph_value_dtype(v)));
    for (int i = 0; i < ph_value_rank(v); i++)
        fprintf(f, "%s%lld", i ? "," : "", (long long)ph_value_dim(v, i));
    fprintf(f, "]");
}

static void values_of(FILE *f, const ph_tensor *t)
{
    int64_t n = ph_tensor_numel(t);
    double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    if (d && ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), d) == 0) {
        fprintf(f, " = [");
        for (int64_t k = 0; k < n && k < 64; k++)
            fprintf(f, "%s%.9g", k ? ", " : "", d[k]);
        fprintf(f, "%s]", n > 64 ? ", ..." : "");
    }
    free(d);
}

static void attr_of(FILE *f, const ph_node *n, const char *key)
{
    fprintf(f, "%s=", key);
    switch (ph_node_attr_type(n, key)) {
    case PH_ATTR_INT: fprintf(f, "%lld", (long long)ph_node_attr_int(n, key, 0)); break;
    case PH_ATTR_FLOAT: fprintf(f, "%.9g", ph_node_attr_float(n, key, 0)); break;
    case PH_ATTR_STRING: fprintf(f, "\"%s\"", ph_node_attr_string(n, key, "")); break;
    case PH_ATTR_INTS: {
        const int64_t *v;
        ptrdiff_t k = ph_node_attr_ints(n, key, &v);
        fprintf(f, "[");
        for (ptrdiff_t i = 0; i < k; i++)
            fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
        fprintf(f, "]");
        break;
    }
    case PH_ATTR_FLOATS: {
        const float *v;
        ptrdiff_t k = ph_node_attr_floats(n, key, &v);
        fprintf(f, "[");
        for (ptrdiff_t i = 0; i < k; i++)
            fprintf(f, "%s%.9g", i ? ", " : "", v[i]);
        fprintf(f, "]");
        break;
    }
    case PH_ATTR_TENSOR: {
        const ph_tensor *t = ph_node_attr_tensor(n, key);
        fprintf(f, "tensor");
        if (t)
            values_of(f, t);
        break;
    }
    default: fprintf(f, "?"); break;
    }
}

int rc_write_text(const ph_model *m, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const ph_graph *g = ph_model_graph((ph_model *)m);
    fprintf(f, "# opset %lld\n", (long long)ph_model_opset(m, ""));
    for (size_t i = 0; i < ph_graph_input_count(g); i++) {
        const ph_value *v = ph_graph_input(g, i);
        fprintf(f, "# input %s: ", ph_value_name(v));
        type_of(f, v);
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++) {
        const ph_value *v = ph_graph_initializer(g, i);
        fprintf(f, "# const %s: ", ph_value_name(v));
        type_of(f, v);
        values_of(f, ph_value_const(v));
        fprintf(f, "\n");
    }
    for (const ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        for (size_t o = 0; o < ph_node_output_count(n); o++)
            fprintf(f, "%s%s", o ? ", " : "", ph_value_name(ph_node_output(n, o)));
        const char *d = ph_node_domain(n);
        fprintf(f, " = %s%s%s(", ph_node_op_type(n), *d ? "@" : "", d);
        for (size_t i = 0; i < ph_node_input_count(n); i++) {
            const ph_value *v = ph_node_input(n, i);
            fprintf(f, "%s%s", i ? ", " : "", v ? ph_value_name(v) : "_");
        }
        fprintf(f, ")");
        size_t na = ph_node_attr_count(n);
        for (size_t a = 0; a < na; a++) {
            fprintf(f, "%s", a ? ", " : " {");
            attr_of(f, n, ph_node_attr_name(n, a));
        }
        fprintf(f, "%s\n", na ? "}" : "");
    }
    for (size_t i = 0; i < ph_graph_output_count(g); i++)
        fprintf(f, "# output %s\n", ph_value_name(ph_graph_output(g, i)));
    return fclose(f) == 0 ? 0 : -1;
}
