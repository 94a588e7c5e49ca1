/* host/base/streams.h - what passhost prints, and where.
 *
 * Text: every line passhost prints on stdout and stderr (messages, the
 * report, --inspect, --list-passes) goes through a stream that escapes
 * control characters, so a model's names cannot drive the terminal
 * (ESC]0;... retitling it, ESC[2J clearing it): C0 controls other than
 * newline and tab, DEL, and C1 controls (U+0080..U+009F, in UTF-8) are
 * printed as \u001b, \u007f, \u009b: the notation of the JSON report.
 * host_streams_init replaces the stdio streams stdout and stderr by such
 * streams (glibc lets a program assign them), so also what a plugin prints
 * with printf is escaped.  The progress line (log/trace.c) writes its own
 * terminal codes: it uses host_raw_stderr().
 *
 * The model on stdout (-o -, or an output that is passhost's own standard
 * output): host_streams_init keeps a descriptor of the standard output as
 * it was (host_stdout_fd), and host_streams_protect_stdout (called in the
 * process that loads plugins, before any is loaded) points descriptor 1 at
 * standard error, so nothing a plugin writes to its stdout (printf,
 * write(1, ...)) reaches the stream that carries the model or a report.
 * passhost's own stdout text goes through host_stdout(), a stream on the
 * kept descriptor.
 *
 * Process state of the passhost program; a host embedded in another
 * program (libpasshost-pipeline.so) never calls host_streams_init, and
 * host_stdout() is then plain stdout.
 */
#ifndef PASSHOST_HOST_STREAMS_H
#define PASSHOST_HOST_STREAMS_H

#include <stdio.h>

/* Set up the streams above (once, first thing in main). */
void host_streams_init(void);

/* Point descriptor 1 at standard error (see above).  Idempotent. */
void host_streams_protect_stdout(void);

/* passhost's own standard output: a stream that escapes control
 * characters, on the descriptor kept by host_streams_init (stdout when it
 * was not called). */
FILE *host_stdout(void);
/* That descriptor (STDOUT_FILENO when host_streams_init was not called),
 * for the model's bytes (-o -). */
int host_stdout_fd(void);
/* Standard error without escaping, for the terminal codes of the progress
 * line. */
FILE *host_raw_stderr(void);

/* A stream that escapes control characters (as above) and writes to fd,
 * which it does not close.  Line-buffered.  At most 8 at a time; NULL on
 * failure. */
FILE *host_escaping_stream(int fd);
/* The descriptor f writes to (fileno, or an escaping stream's fd): for
 * isatty and the terminal's width. */
int host_stream_fd(FILE *f);

#endif
