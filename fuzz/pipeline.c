/* fuzz/pipeline.c - libFuzzer target: load -> default stages -> save, as
 * `passhost -i IN -o OUT` runs them.
 *
 * The plugins of the build tree are loaded once per process and the plan is
 * the program's default one (every pass on by default, in each stage, no
 * config file).  Each input is a model file; it goes through the same steps
 * as a run: load, shape inference (host_apply_shapes), every stage through
 * the real runner (host_run_all, with the structural check after each pass
 * that changed the graph, as --verify-each does it), save.  Then:
 *   - a failure of any step has a message (the program's one line);
 *   - a pass never leaves a graph that does not verify;
 *   - a model that saves loads back, and a failed save leaves no file;
 *   - the input file is never written.
 * Seeds: fuzz/corpus/pipeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "support/fuzz_support.h"
#include "config/plan.h"
#include "report/report.h"
#include "run/runner.h"
#include "io/shapes.h"

static host_config *pl_cfg;
static host_plan pl_plan;
static host_log pl_log; /* no stream, no file: messages are dropped */

static void pl_free(void)
{
    host_plan_free(&pl_plan);
    host_config_free(pl_cfg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    ph_error e = {0};
    pl_cfg = host_config_new();
    if (host_plan_build(&pl_plan, pl_cfg, fz_plugins(), &e) != 0) {
        fprintf(stderr, "fuzz: default plan: %s\n", e.message);
        exit(2);
    }
    atexit(pl_free);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = fz_path("model.onnx"), *out = fz_path("out.onnx");
    fz_write(in, data, size);
    ph_model *m = NULL;
    ph_error e = {0};
    if (ph_model_load(in, &m, &e) != 0)
        return 0; /* the loader has its own fuzzer */
    int rc = host_apply_shapes(m, pl_cfg, 0, &e);
    if (!rc) {
        host_run_opts opts = {.verify_each = 1, .update_shapes = pl_cfg->infer_shapes, .log = &pl_log};
        host_stage_stats stats[HOST_STAGE_COUNT];
        rc = host_run_all(m, &pl_plan, -1, &opts, stats, NULL, &e);
        for (int s = 0; s < HOST_STAGE_COUNT; s++)
            host_stage_stats_free(&stats[s]);
        if (!rc && ph_graph_verify(ph_model_graph(m), &e) != 0)
            fz_fail("the stages left a graph that does not verify: %s", e.message);
    }
    if (rc && !e.message[0])
        fz_fail("a step failed (exit code %d) without a message", rc);
    if (!rc) {
        if (ph_model_save(m, out, &e) == 0) {
            ph_model *again = NULL;
            if (ph_model_load(out, &again, &e) != 0)
                fz_fail("the saved model does not load back: %s", e.message);
            ph_model_free(again);
            unlink(out);
        } else if (fz_exists(out)) {
            fz_fail("a failed save left the output behind: %s", e.message);
        }
    }
    ph_model_free(m);
    return 0;
}
