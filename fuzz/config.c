/* fuzz/config.c - libFuzzer target: the INI/config parser, from bytes.
 *
 * An input is an INI file, optionally followed by a NUL byte and then
 * `--set` overrides, one SECTION.KEY=VALUE a line.  It goes through what
 * the program does with a config: host_config_load_file, host_config_set
 * for each override, host_config_finish (custom_config files), the plan
 * against every built pass (pass names, parameters and their types), and,
 * when the config gives input shapes, their parsing and application to a
 * small model.  Every failure must come with a one-line message.  Seeds:
 * fuzz/corpus/config; fuzz/config.dict holds the section and key names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "support/fuzz_support.h"
#include "config/plan.h"
#include "io/shapes.h"

/* A model with two inputs for the input_shape keys: x float[N,3,8,8] and
 * ids int64[N,S], through Relu and Identity. */
static void cf_write_model(const char *path)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = m ? ph_model_graph(m) : NULL;
    ph_error e = {0};
    if (!g)
        fz_fail("out of memory");
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 4, (const int64_t[]){-1, 3, 8, 8});
    ph_value *ids = ph_graph_add_input(g, "ids", PH_DT_INT64, 2, (const int64_t[]){-1, -1});
    ph_node *relu = x ? ph_node_create(g, NULL, "Relu", 1, &x, 1) : NULL;
    ph_node *idn = ids ? ph_node_create(g, NULL, "Identity", 1, &ids, 1) : NULL;
    if (!x || !ids || !relu || !idn || ph_graph_add_output(g, ph_node_output(relu, 0)) ||
        ph_graph_add_output(g, ph_node_output(idn, 0)) || ph_model_save(m, path, &e))
        fz_fail("cannot build the shapes model: %s", e.message);
    ph_model_free(m);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fz_plugins();
    cf_write_model(fz_path("shapes.onnx"));
    return 0;
}

static int cf_apply_sets(host_config *cfg, const char *sets, ph_error *e)
{
    int rc = 0;
    char *copy = strdup(sets);
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line && !rc;
         line = strtok_r(NULL, "\n", &save))
        rc = host_config_set(cfg, line, e);
    free(copy);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t ini_len = nul ? (size_t)(nul - data) : size;
    char *sets = NULL;
    if (nul) {
        size_t n = size - ini_len - 1;
        sets = malloc(n + 1);
        memcpy(sets, nul + 1, n);
        sets[n] = 0; /* a NUL inside ends the overrides */
    }
    const char *path = fz_path("config.ini");
    fz_write(path, data, ini_len);
    host_config *cfg = host_config_new();
    ph_error e = {0};
    int rc = host_config_load_file(cfg, path, &e);
    if (!rc && sets)
        rc = cf_apply_sets(cfg, sets, &e);
    if (!rc)
        rc = host_config_finish(cfg, &e);
    if (!rc) {
        host_plan plan = {0};
        rc = host_plan_build(&plan, cfg, fz_plugins(), &e);
        host_plan_free(&plan);
    }
    if (!rc && (cfg->input_shape || cfg->input_shape_range)) {
        ph_model *m = NULL;
        if (ph_model_load(fz_path("shapes.onnx"), &m, &e) != 0)
            fz_fail("the shapes model does not load: %s", e.message);
        rc = host_apply_shapes(m, cfg, 0, &e);
        ph_model_free(m);
    }
    if (rc && !e.message[0])
        fz_fail("config refused (exit code %d) without a message", rc);
    host_config_free(cfg);
    free(sets);
    return 0;
}
