/* host/io/model_io.h - loading and saving the model, timed, with the host's
 * exit codes: 3 when the input cannot be loaded, 6 when the output cannot be
 * written.  The SDK writes into a staging folder and commits with one
 * rename, so a failed save leaves no output; the input file is only ever
 * opened for reading.
 */
#ifndef PASSHOST_HOST_MODEL_IO_H
#define PASSHOST_HOST_MODEL_IO_H

#include "config/config.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

/* HOST_EXIT_OUTPUT when output names the input file (same path or the same
 * file through another name): passhost never overwrites its input. */
int host_check_output(const char *input, const char *output, ph_error *err);

/* Load path into *out (caller frees with ph_model_free); *ms gets the time.
 * With verify, the loaded graph must also pass ph_graph_verify.
 * 0 or HOST_EXIT_MODEL with "path: what" in err. */
int host_model_load(const char *path, int verify, ph_model **out, double *ms, ph_error *err);
/* The same from size bytes at data (copied: the caller keeps them);
 * name stands for the model in messages. */
int host_model_load_memory(const void *data, size_t size, const char *name, int verify,
                           ph_model **out, double *ms, ph_error *err);

/* Take the save settings of cfg ([model] external_data_threshold and
 * external_data_min_size) for every later host_model_save. */
void host_model_io_configure(const host_config *cfg);

/* 0 when m passes the structural verifier (ph_graph_verify: SSA and every
 * name resolving to its value, scopes, attributes and their types, each
 * operator's required inputs), else HOST_EXIT_PASS with a
 * message naming changed_by, the last pass that changed the graph (NULL:
 * none known). */
int host_model_check(ph_model *m, const char *changed_by, ph_error *err);

/* HOST_EXIT_OUTPUT when output is a file the loaded model m reads (the
 * input model or one of its external-data files, under any name). */
int host_model_check_output(ph_model *m, const char *output, ph_error *err);

/* Save m as folder/name (ph_model_save_staged: a staging folder the caller
 * made, committed later); *ms gets the time.  0 or HOST_EXIT_OUTPUT with a
 * message that names the file by name. */
int host_model_save_staged(ph_model *m, const char *folder, const char *name, double *ms, ph_error *err);

/* Save m to path; *ms gets the time.  Call host_model_check first (every
 * save of the program does: passhost never writes a model it would not
 * load).  Large models get external data as configured; the staging
 * folder is registered with cleanup.h so a signal removes it.  0 or
 * HOST_EXIT_OUTPUT. */
int host_model_save(ph_model *m, const char *path, double *ms, ph_error *err);

#endif
