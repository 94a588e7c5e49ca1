/* fuzz/support/fuzz_support.h - what the libFuzzer targets in fuzz/ share.
 *
 * The loader and the config parser read files, so every input is written to
 * a file in a private scratch folder first (under /dev/shm when it exists,
 * else $TMPDIR or /tmp), made once per process and removed at exit.  The
 * folder also holds "external_data.bin", so a model of the corpus whose
 * initializers live in external data finds its data file beside it.
 *
 * A broken invariant (a crash-free failure that should not happen, e.g. a
 * saved model that does not load back) is reported with fz_fail, which
 * prints the reason and aborts: libFuzzer then keeps the input as a crash.
 *
 * Ownership: returned paths are static buffers, valid until the process
 * ends; the registry of fz_plugins is owned by this module.
 */
#ifndef PASSHOST_FUZZ_SUPPORT_H
#define PASSHOST_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "config/loader.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

/* The scratch folder (made on first call; exits the process if it cannot). */
const char *fz_dir(void);

/* fz_dir()/name in a static ring of 8 buffers. */
const char *fz_path(const char *name);

/* Replace the file at path with size bytes of data (exits on I/O errors:
 * those are the machine's, not the code's under test). */
void fz_write(const char *path, const uint8_t *data, size_t size);

/* Every pass plugin of the build tree, loaded once per process the way the
 * passhost program finds them (PASSHOST_PLUGIN_PATH, then <exe>/../plugins).
 * Exits when none can be loaded. */
const host_registry *fz_plugins(void);

/* A ph_log_fn that drops every message. */
void fz_quiet_log(void *user, ph_log_level level, const char *pass, const char *message);

/* The input being run, when the caller wants it named on failure (the
 * corpus replay test sets it; libFuzzer names its inputs itself). */
extern const char *fz_current_input;

/* Print "fuzz: <what>" (and fz_current_input) to stderr and abort. */
void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* 1 when path exists (as anything), else 0. */
int fz_exists(const char *path);

#endif
