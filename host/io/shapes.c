/* host/io/shapes.c - parse input_shape / input_shape_range and run inference (shapes.h). */
#include "shapes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/util.h"

#define MAX_RANK 64

/* Parse "1x3x?x224" (ranges: "1~32x3") into dims; -1 keeps the model's dim. */
static int parse_dims(const char *text, int ranges, int64_t *dims, int *rank, const char *key,
                      ph_error *err)
{
    const char *p = text;
    *rank = 0;
    while (*p) {
        if (*rank == MAX_RANK)
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: more than %d dims in '%s'", key, MAX_RANK, text);
        int64_t lo, hi;
        char *end;
        if (*p == '?') {
            lo = hi = -1;
            end = (char *)p + 1;
        } else {
            errno = 0;
            lo = strtoll(p, &end, 10);
            if (errno || end == p || lo < 0)
                return ph_error_set(err, HOST_EXIT_CONFIG, "%s: bad dim in '%s' (want e.g. 1x3x224x224)", key, text);
            hi = lo;
            if (*end == '~') {
                if (!ranges)
                    return ph_error_set(err, HOST_EXIT_CONFIG, "%s: '%s': ranges (a~b) belong in input_shape_range", key, text);
                const char *q = end + 1;
                hi = strtoll(q, &end, 10);
                if (errno || end == q || hi < lo)
                    return ph_error_set(err, HOST_EXIT_CONFIG, "%s: bad range in '%s' (want lo~hi, lo <= hi)", key, text);
            }
        }
        dims[(*rank)++] = lo == hi ? lo : -1;
        if (*end == 'x' || *end == 'X')
            end++;
        else if (*end)
            return ph_error_set(err, HOST_EXIT_CONFIG, "%s: unexpected '%c' in '%s'", key, *end, text);
        p = end;
    }
    if (*rank == 0)
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: empty shape", key);
    return 0;
}

/* "name float[1,3,?]" of each graph input that is no initializer (caller frees). */
static char *input_list(const ph_graph *g, size_t *count)
{
    char *list = host_xstrdup("");
    *count = 0;
    for (size_t i = 0; i < ph_graph_input_count(g); i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (ph_value_is_initializer(v))
            continue;
        char dims[300] = "";
        int rank = ph_value_rank(v);
        for (int d = 0; d < rank && strlen(dims) < sizeof dims - 40; d++) {
            size_t len = strlen(dims);
            const char *param = ph_value_dim_param(v, d);
            if (ph_value_dim(v, d) >= 0)
                snprintf(dims + len, sizeof dims - len, "%s%lld", d ? "," : "", (long long)ph_value_dim(v, d));
            else
                snprintf(dims + len, sizeof dims - len, "%s%s", d ? "," : "", param && *param ? param : "?");
        }
        char *grown = host_xasprintf("%s%s%s %s[%s]", list, *count ? ", " : "", ph_value_name(v),
                                     ph_dtype_name(ph_value_dtype(v)), rank < 0 ? "?" : dims);
        free(list);
        list = grown;
        ++*count;
    }
    return list;
}

/* The name of the graph's only input that is no initializer, or NULL. */
static const char *only_input(const ph_graph *g)
{
    const char *name = NULL;
    for (size_t i = 0; i < ph_graph_input_count(g); i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (ph_value_is_initializer(v))
            continue;
        if (name)
            return NULL;
        name = ph_value_name(v);
    }
    return name;
}

/* Apply every "name:dims" entry of spec. */
static int apply_spec(ph_graph *g, const char *spec, int ranges, const char *key, ph_error *err)
{
    char *copy = host_xstrdup(spec), *save = NULL;
    char *seen = host_xstrdup("\n");
    int rc = 0;
    for (char *tok = strtok_r(copy, ";", &save); tok && !rc; tok = strtok_r(NULL, ";", &save)) {
        tok = host_trim(tok);
        if (!*tok)
            continue;
        char *colon = strrchr(tok, ':');
        const char *sole = colon ? NULL : only_input(g); /* "1x3x224x224": the only input */
        if ((!colon && !sole) || colon == tok) {
            size_t n;
            char *inputs = input_list(g, &n);
            rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: '%s' is not NAME:DIMS (the inputs: %.300s)",
                              key, tok, n ? inputs : "none");
            free(inputs);
            break;
        }
        if (colon)
            *colon = 0;
        char *name = colon ? host_trim(tok) : (char *)sole;
        char *dims_text = host_trim(colon ? colon + 1 : tok);
        char *marker = host_xasprintf("\n%s\n", name);
        if (strstr(seen, marker)) {
            rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: input '%s' given twice", key, name);
        } else {
            char *grown = host_xasprintf("%s%s\n", seen, name);
            free(seen);
            seen = grown;
            int64_t dims[MAX_RANK];
            int rank;
            ph_error e = {0};
            rc = parse_dims(dims_text, ranges, dims, &rank, key, err);
            if (!rc && ph_graph_set_input_shape(g, name, rank, dims, &e) != 0) {
                /* no such input, or dims that contradict the model: the
                 * configuration is wrong, not the model */
                size_t n;
                char *inputs = input_list(g, &n);
                if (e.code == PH_ENOTFOUND)
                    rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: the model has no input '%s' (its inputs: %.300s)",
                                      key, name, n ? inputs : "none");
                else
                    rc = ph_error_set(err, e.code == PH_EINVAL ? HOST_EXIT_CONFIG : HOST_EXIT_MODEL,
                                      "%s: %.300s (the model's inputs: %.200s)", key,
                                      e.message[0] ? e.message : "cannot set the shape", inputs);
                free(inputs);
            }
        }
        free(marker);
    }
    free(seen);
    free(copy);
    return rc;
}

int host_apply_shapes(ph_model *m, const host_config *cfg, int force, ph_error *err)
{
    ph_graph *g = ph_model_graph(m);
    int rc = 0;
    if (cfg->input_shape)
        rc = apply_spec(g, cfg->input_shape, 0, "input_shape", err);
    if (!rc && cfg->input_shape_range)
        rc = apply_spec(g, cfg->input_shape_range, 1, "input_shape_range", err);
    if (rc || (!cfg->infer_shapes && !force))
        return rc;
    ph_error e = {0};
    if (ph_graph_infer_shapes(g, &e) != 0)
        return ph_error_set(err, HOST_EXIT_MODEL, "%s: shape inference: %.400s", cfg->input,
                            e.message[0] ? e.message : ph_strerror(e.code));
    return 0;
}
