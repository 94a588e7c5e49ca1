/* host/shapes.c - parse input_shape / input_shape_range and run inference (shapes.h). */
#include "shapes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exit.h"
#include "util.h"

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
        if (!colon || colon == tok) {
            rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: '%s' is not NAME:DIMS", key, tok);
            break;
        }
        *colon = 0;
        char *name = host_trim(tok), *dims_text = host_trim(colon + 1);
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
            if (!rc && ph_graph_set_input_shape(g, name, rank, dims, &e) != 0)
                rc = ph_error_set(err, e.code == PH_ENOTFOUND ? HOST_EXIT_CONFIG : HOST_EXIT_MODEL,
                                  "%s: %.400s", key, e.message[0] ? e.message : "cannot set the shape");
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
