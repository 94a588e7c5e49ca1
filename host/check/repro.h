/* host/check/repro.h - the reproducer folder, written the same way by
 * --bisect-out (run/bisect.c: the model before and after the first bad
 * rewrite) and by --crash-out (supervise/supervise.c: a copy of the input
 * of a run whose pass crashed).
 *
 * A reproducer is a folder with the model files of the finding, config.ini
 * (the effective configuration of the run, every key: effective.h) and
 * README.txt (what was found, the files, the commands that reproduce it
 * and the original command line).  The caller writes its model files and
 * the finding; this module makes the folder, writes config.ini, and gives
 * README.txt its shape:
 *
 *     host_repro r;
 *     rc = host_repro_open(&r, dir, "--bisect-out", err);        folder made
 *     rc = host_repro_config(&r, cfg, plan, &vcfg, err);         config.ini
 *     FILE *f = host_repro_readme(&r, err);                      README.txt
 *     fprintf(f, ...);  host_repro_command(&r, NULL, "--max-rewrites 7", "verifies");
 *     host_repro_argv(&r, argc, argv);
 *     rc = host_repro_close(&r, rc, err);                        closes, frees
 *
 * Every function returns 0 or HOST_EXIT_OUTPUT with a message naming the
 * file; host_repro_close is called in any case.
 */
#ifndef PASSHOST_HOST_REPRO_H
#define PASSHOST_HOST_REPRO_H

#include <stdio.h>

#include "config/config.h"
#include "config/plan.h"
#include "check/verify.h"

typedef struct host_repro {
    const char *dir;    /* borrowed: the folder */
    const char *option; /* borrowed: the option that asked for it, for messages */
    char *config;       /* owned: DIR/config.ini, absolute once the folder exists */
    char *readme_path;  /* owned */
    FILE *readme;       /* open between host_repro_readme and host_repro_close */
} host_repro;

/* Make the folder dir (it may exist; it must be a folder).  option names
 * it in messages ("--bisect-out DIR: not a folder"). */
int host_repro_open(host_repro *r, const char *dir, const char *option, ph_error *err);

/* DIR/config.ini: the effective configuration of cfg and plan, with vcfg's
 * [verify] settings, output out.onnx, and a comment naming the option. */
int host_repro_config(host_repro *r, const host_config *cfg, const host_plan *plan,
                      const host_verify_config *vcfg, ph_error *err);

/* Copy the file from into DIR/name. */
int host_repro_copy(host_repro *r, const char *from, const char *name, ph_error *err);

/* Open DIR/README.txt for the caller's text (NULL with err on failure). */
FILE *host_repro_readme(host_repro *r, ph_error *err);
/* One command line of the README: "  PROGRAM CONFIG ARGS   # COMMENT",
 * PROGRAM "passhost" when NULL (args may be "", comment NULL). */
void host_repro_command(host_repro *r, const char *program, const char *args, const char *comment);
/* The README's last section: the original command line, as shell words. */
void host_repro_argv(host_repro *r, int argc, char *const *argv);

/* Close the README (an error closing it is HOST_EXIT_OUTPUT unless rc is
 * already an error) and free r.  Returns rc, or that error. */
int host_repro_close(host_repro *r, int rc, ph_error *err);

#endif
