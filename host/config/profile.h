/* host/config/profile.h - target profiles (docs/targets.md): finding a
 * shipped one by name, reading a file and the profiles it extends (base),
 * listing the shipped ones.
 *
 * A profile is read with the config's INI parser (config.h:
 * host_config_read_profile), so its errors are the config's: "file:line:
 * what", with the closest names.  Its operator and model keys become a
 * ph_target (passhost/target.h) that the adapt stage's passes read; its
 * [target.passes] (PASS = on|off) and [target.pass.NAME] (PARAM = VALUE)
 * items are kept as written for the plan (plan.c), which checks them
 * against the loaded passes.
 *
 * Shipped profiles are the NAME.ini files of, in order: the folders of
 * PASSHOST_TARGET_PATH (':'-separated), <code dir>/../share/passhost/targets
 * (an install), <code dir>/../../configs/targets and
 * <code dir>/../../../configs/targets (the build trees), where <code dir>
 * is the folder of the passhost program or of libpasshost-pipeline.so.
 *
 * Ownership: a host_profile is the caller's (host_profile_free); its
 * strings are its own.
 */
#ifndef PASSHOST_HOST_PROFILE_H
#define PASSHOST_HOST_PROFILE_H

#include <stdio.h>

#include "config.h"
#include "passhost/target.h"

typedef struct host_profile {
    ph_target *target;        /* every key of the profile and of its bases */
    char *path;               /* its file */
    char *names;              /* its name then its bases', ';'-separated:
                                 what a pass's targets list is matched with */
    host_target_items passes; /* [target.passes] and [target.pass.NAME]
                                 items (section "passes" / "pass.NAME"),
                                 the bases' first */
} host_profile;

/* 1 when spec names a file (it has a '/' or ends in ".ini"), 0 when it is
 * the name of a shipped profile. */
int host_profile_is_path(const char *spec);

/* The folders searched for shipped profiles (see above), existing or not;
 * up to max, each owned by the caller. */
size_t host_target_dirs(char **out, size_t max);

/* Load the profile spec (a name or a file) and its bases into *out.  0, or
 * HOST_EXIT_CONFIG with one line in err: the file and line of a bad key
 * or value, an unknown name (with the closest shipped ones), a base that
 * extends itself. */
int host_profile_load(const char *spec, host_profile **out, ph_error *err);
void host_profile_free(host_profile *p);

/* --list-targets: each shipped profile, one line: name, summary, file (a
 * name met again in a later folder is shadowed and not listed).  Returns
 * 0, or HOST_EXIT_CONFIG when a shipped file does not load (err). */
int host_profile_list(FILE *out, ph_error *err);

#endif
