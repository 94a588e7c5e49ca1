/* host/io/model_io.c - timed model load/save with host exit codes (model_io.h). */
#include "model_io.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "base/exit.h"
#include "base/util.h"

/* How models are saved (host_model_io_configure); the defaults of [model]. */
static uint64_t save_threshold = PH_PROTOBUF_LIMIT, save_min_bytes = 1024;

int host_check_output(const char *input, const char *output, ph_error *err)
{
    struct stat a, b;
    int same = strcmp(input, output) == 0 ||
               (stat(input, &a) == 0 && stat(output, &b) == 0 && a.st_dev == b.st_dev &&
                a.st_ino == b.st_ino);
    if (same)
        return ph_error_set(err, HOST_EXIT_OUTPUT,
                            "%s: output is the input model; passhost never overwrites its "
                            "input", output);
    return 0;
}

/* The load's result (rc of ph_model_load*) with the host's exit code and
 * message, and the optional verification. */
static int loaded(int rc, const ph_error *e, const char *path, int verify, ph_model **out,
                  ph_error *err)
{
    if (rc < 0) {
        *out = NULL;
        /* The SDK's message usually names the file already. */
        if (e->message[0] && strstr(e->message, path))
            return ph_error_set(err, HOST_EXIT_MODEL, "%.500s", e->message);
        return ph_error_set(err, HOST_EXIT_MODEL, "%s: %.400s", path,
                            e->message[0] ? e->message : ph_strerror(rc));
    }
    ph_error v = {0};
    if (verify && ph_graph_verify(ph_model_graph(*out), &v) < 0) {
        ph_model_free(*out);
        *out = NULL;
        return ph_error_set(err, HOST_EXIT_MODEL, "%s: fails verification before any pass: %.400s",
                            path, v.message);
    }
    return 0;
}

int host_model_load(const char *path, int verify, ph_model **out, double *ms, ph_error *err)
{
    ph_error e = {0};
    double t0 = host_now_ms();
    *out = NULL;
    int rc = ph_model_load(path, out, &e);
    *ms = host_now_ms() - t0;
    return loaded(rc, &e, path, verify, out, err);
}

int host_model_load_memory(const void *data, size_t size, const char *name, int verify,
                           ph_model **out, double *ms, ph_error *err)
{
    ph_error e = {0};
    double t0 = host_now_ms();
    *out = NULL;
    int rc = ph_model_load_memory(data, size, name, out, &e);
    *ms = host_now_ms() - t0;
    return loaded(rc, &e, name, verify, out, err);
}

void host_model_io_configure(const host_config *cfg)
{
    /* 0 in the INI means "always" / "every tensor": the SDK's smallest values */
    save_threshold = cfg->external_data_threshold > 0 ? (uint64_t)cfg->external_data_threshold : 1;
    save_min_bytes = cfg->external_data_min_size > 0 ? (uint64_t)cfg->external_data_min_size : 1;
}

int host_model_check(ph_model *m, const char *changed_by, ph_error *err)
{
    ph_error e = {0};
    if (ph_graph_verify(ph_model_graph(m), &e) == 0) /* linear; names too: SSA */
        return 0;
    const char *why = e.message[0] ? e.message : ph_strerror(e.code);
    if (changed_by)
        return ph_error_set(err, HOST_EXIT_PASS, "pass %s (the last to change the graph) left a model that "
                            "fails verification; nothing written: %.400s", changed_by, why);
    return ph_error_set(err, HOST_EXIT_PASS, "the model fails verification; nothing written: %.400s", why);
}

int host_model_check_output(ph_model *m, const char *output, ph_error *err)
{
    /* (a data file the save writes has a new name: it never replaces one;
     * the commit never removes a file the model reads) */
    if (ph_model_reads_file(m, output))
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: output is a file the input model reads; passhost "
                            "never overwrites its input", output);
    return 0;
}

/* The save's options: [model] external data, temporary folders told to cleanup.h. */
static ph_save_options save_options(void)
{
    ph_save_options o = {.size = sizeof o, .external_threshold = save_threshold,
                         .external_min_bytes = save_min_bytes, .temp_file = host_cleanup_temp_file};
    return o;
}

int host_model_save_staged(ph_model *m, const char *folder, const char *name, double *ms, ph_error *err)
{
    ph_error e = {0};
    double t0 = host_now_ms();
    ph_save_options o = save_options();
    int rc = ph_model_save_staged(m, folder, name, &o, &e);
    *ms = host_now_ms() - t0;
    if (rc < 0)
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%.500s", e.message[0] ? e.message : ph_strerror(rc));
    return 0;
}

int host_model_save(ph_model *m, const char *path, double *ms, ph_error *err)
{
    ph_error e = {0};
    double t0 = host_now_ms();
    int rc;
    ph_save_options o = save_options();
    rc = ph_model_save_with(m, path, &o, &e);
    *ms = host_now_ms() - t0;
    if (rc < 0) {
        if (e.message[0] && strstr(e.message, path))
            return ph_error_set(err, HOST_EXIT_OUTPUT, "%.500s", e.message);
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %.400s", path,
                            e.message[0] ? e.message : ph_strerror(rc));
    }
    return 0;
}
