/* host/io/output.h - the output, checked before anything is loaded.
 *
 * host_output_check looks at the output path before the plugins and the
 * model are loaded, so a run that cannot write its result fails at once
 * (not after minutes of work):
 *   - a folder: refused, "the output is a folder";
 *   - a character device (/dev/null) or a FIFO, or the very file passhost's
 *     standard output is (/dev/stdout, /proc/self/fd/1, whatever it is):
 *     a stream.  The model is saved and checked as usual, then written
 *     into it in place at the end (a device is never replaced by a file;
 *     /dev/null discards the model; a FIFO's reader gets it), as `-o -`
 *     writes standard output (cli.h);
 *   - a block device, a socket, a symbolic link to nothing: refused;
 *   - a regular file or nothing yet: its folder must let a staging folder
 *     be made (ph_staging_make, made and removed again; it also removes
 *     the staging folders of processes that are gone).
 */
#ifndef PASSHOST_HOST_OUTPUT_H
#define PASSHOST_HOST_OUTPUT_H

#include "passhost/passhost.h"

typedef enum host_output_kind {
    HOST_OUTPUT_FILE = 0,   /* staged beside it, committed by one rename */
    HOST_OUTPUT_STREAM = 1, /* written into in place (a device, a FIFO) */
    HOST_OUTPUT_STDOUT = 2  /* passhost's own standard output */
} host_output_kind;

/* 1 when a save of path wrote an external-data file beside it (NAME.*.data,
 * NAME the file name of path), else 0: one stream or buffer cannot carry
 * both. */
int host_output_has_data_file(const char *path);

/* 0 with *kind, or HOST_EXIT_OUTPUT with a one-line message naming path.
 * stdout_fd is the descriptor of passhost's standard output (base/streams.h)
 * or -1. */
int host_output_check(const char *path, int stdout_fd, host_output_kind *kind, ph_error *err);

#endif
