/* host/io/cleanup.h - no temporary file outlives the process, and a mapped
 * input that shrinks is an error, not a crash.
 *
 * The save (ph_model_save_with, host_supervise_stage) tells
 * host_cleanup_temp_file of every staging folder it makes and of its end;
 * those alive are kept in a fixed table that a signal handler may read.
 * host_cleanup_install sets handlers for:
 *   SIGINT, SIGTERM, SIGHUP: remove the staging folders and the files in
 *     them (getdents64, unlinkat, rmdir: system calls only,
 *     async-signal-safe), then die of the same signal (default action,
 *     re-raised), so the parent sees what killed the run;
 *   SIGBUS: when the faulting address lies in a mapping of a file (the
 *     input model or its external data, mapped read-only, were truncated
 *     by someone else while passhost read them), print one line
 *     `passhost: FILE: the file changed while it was being read (was it
 *     truncated?); nothing written`, remove the temporary files and exit
 *     with HOST_EXIT_MODEL; any other SIGBUS removes them and goes on to
 *     the handler installed before (the sanitizers') or the default.
 * The table and handlers are process state of the passhost program (the
 * SDK keeps none).  Nothing here allocates.
 */
#ifndef PASSHOST_HOST_CLEANUP_H
#define PASSHOST_HOST_CLEANUP_H

#include <stddef.h>

/* Install the handlers above (once, before the model is loaded).
 * on_exit_code, if not NULL, is told the exit code just before the SIGBUS
 * handler ends the process (from the handler: it must be
 * async-signal-safe; passhost gives host_supervise_finished). */
void host_cleanup_install(void (*on_exit_code)(int code));

/* ph_save_options.temp_file: remember path, a file or a folder of files
 * (created = 1), or forget it (created = 0).  path is copied; user is unused.  At most
 * HOST_CLEANUP_MAX_TEMPS files are remembered at a time. */
#define HOST_CLEANUP_MAX_TEMPS 4
void host_cleanup_temp_file(void *user, const char *path, int created);

/* Remove every remembered file and folder now (async-signal-safe). */
void host_cleanup_remove_temps(void);

#endif
