/* host/model_io.h - loading and saving the model, timed, with the host's
 * exit codes: 3 when the input cannot be loaded, 6 when the output cannot be
 * written.  The SDK writes a temporary file and renames it, so a failed save
 * leaves no output; the input file is only ever opened for reading.
 */
#ifndef PASSHOST_HOST_MODEL_IO_H
#define PASSHOST_HOST_MODEL_IO_H

#include "passhost/passhost.h"

/* HOST_EXIT_OUTPUT when output names the input file (same path or the same
 * file through another name): passhost never overwrites its input. */
int host_check_output(const char *input, const char *output, ph_error *err);

/* Load path into *out (caller frees with ph_model_free); *ms gets the time.
 * With verify, the loaded graph must also pass ph_graph_verify.
 * 0 or HOST_EXIT_MODEL with "path: what" in err. */
int host_model_load(const char *path, int verify, ph_model **out, double *ms, ph_error *err);

/* Save m to path; *ms gets the time.  0 or HOST_EXIT_OUTPUT. */
int host_model_save(ph_model *m, const char *path, double *ms, ph_error *err);

#endif
