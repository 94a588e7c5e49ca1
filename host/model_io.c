/* host/model_io.c - timed model load/save with host exit codes (model_io.h). */
#include "model_io.h"

#include <string.h>
#include <sys/stat.h>

#include "exit.h"
#include "util.h"

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

int host_model_load(const char *path, int verify, ph_model **out, double *ms, ph_error *err)
{
    ph_error e = {0};
    double t0 = host_now_ms();
    *out = NULL;
    int rc = ph_model_load(path, out, &e);
    *ms = host_now_ms() - t0;
    if (rc < 0) {
        *out = NULL;
        /* The SDK's message usually names the file already. */
        if (e.message[0] && strstr(e.message, path))
            return ph_error_set(err, HOST_EXIT_MODEL, "%.500s", e.message);
        return ph_error_set(err, HOST_EXIT_MODEL, "%s: %.400s", path,
                            e.message[0] ? e.message : ph_strerror(rc));
    }
    if (verify && ph_graph_verify(ph_model_graph(*out), &e) < 0) {
        ph_model_free(*out);
        *out = NULL;
        return ph_error_set(err, HOST_EXIT_MODEL, "%s: fails verification before any pass: %.400s",
                            path, e.message);
    }
    return 0;
}

int host_model_save(ph_model *m, const char *path, double *ms, ph_error *err)
{
    ph_error e = {0};
    double t0 = host_now_ms();
    int rc = ph_model_save(m, path, &e);
    *ms = host_now_ms() - t0;
    if (rc < 0) {
        if (e.message[0] && strstr(e.message, path))
            return ph_error_set(err, HOST_EXIT_OUTPUT, "%.500s", e.message);
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %.400s", path,
                            e.message[0] ? e.message : ph_strerror(rc));
    }
    return 0;
}
