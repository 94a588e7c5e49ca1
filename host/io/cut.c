/* host/io/cut.c - --inputs / --outputs (cut.h). */
#include "cut.h"

#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/util.h"

/* Every ','-separated name of values[0..n) into *names (owned strings in
 * an owned array); returns the count. */
static size_t split_names(const char *const *values, size_t n, char ***names)
{
    size_t count = 0, cap = 0;
    *names = NULL;
    for (size_t i = 0; i < n; i++) {
        for (const char *p = values[i]; *p;) {
            size_t len = strcspn(p, ",");
            char *raw = host_xstrndup(p, len), *name = host_trim(raw);
            if (*name) {
                host_xgrow(names, &cap, count + 1, sizeof **names);
                (*names)[count++] = host_xstrdup(name);
            }
            free(raw);
            p += len + (p[len] == ',');
        }
    }
    return count;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int host_cut_model(ph_model *m, const host_cut *cut, size_t *nodes_before, size_t *nodes_after,
                   ph_error *err)
{
    if (!cut->input_count && !cut->output_count)
        return 0;
    ph_graph *g = ph_model_graph(m);
    char **in = NULL, **out = NULL;
    size_t n_in = split_names(cut->inputs, cut->input_count, &in);
    size_t n_out = split_names(cut->outputs, cut->output_count, &out);
    int rc = 0;
    if ((cut->input_count && !n_in) || (cut->output_count && !n_out))
        rc = ph_error_set(err, HOST_EXIT_USAGE, "--%s: no value named (--%s=A,B,...)",
                          cut->input_count && !n_in ? "inputs" : "outputs",
                          cut->input_count && !n_in ? "inputs" : "outputs");
    if (!rc && !n_out) { /* --inputs alone: the model's own outputs */
        size_t cap = 0;
        for (size_t i = 0; i < ph_graph_output_count(g); i++) {
            host_xgrow(&out, &cap, n_out + 1, sizeof *out);
            out[n_out++] = host_xstrdup(ph_value_name(ph_graph_output(g, i)));
        }
    }
    if (nodes_before)
        *nodes_before = ph_model_node_count(m);
    ph_error e = {0};
    if (!rc && n_in) /* the types of computed values that become inputs */
        ph_graph_infer_shapes(g, &e);
    e = (ph_error){0};
    if (!rc && ph_graph_extract(g, (const char *const *)in, n_in, (const char *const *)out, n_out, &e))
        rc = ph_error_set(err, HOST_EXIT_CONFIG, "--inputs/--outputs: %.400s", e.message);
    if (nodes_after)
        *nodes_after = ph_model_node_count(m);
    free_names(in, n_in);
    free_names(out, n_out);
    return rc;
}
