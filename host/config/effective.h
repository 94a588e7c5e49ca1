/* host/config/effective.h - the effective configuration of a run as INI text:
 * every key, so that `passhost config.ini` runs the same passes in the same
 * order with the same parameters.
 *
 * [model] names the input by its absolute path; [optimize] and [adapt] say
 * no_integral = true, keep_order = true and pass_on in run order (the plan's
 * order, not re-derived from the catalogue), max_iterations,
 * allow_approximate and the target; [verify] the settings given; one
 * [pass.NAME] section per pass that ran, with every parameter, as in the
 * first stage that ran it.  A later stage that ran the same pass with other
 * values gets a custom_config file of its own (STAGE_params.ini).
 *
 * Used by --bisect-out (config.ini of the reproducer) and the reports
 * (--report-json, --report-html).  Ownership: a host_effective owns its
 * strings (host_effective_free).
 */
#ifndef PASSHOST_HOST_EFFECTIVE_H
#define PASSHOST_HOST_EFFECTIVE_H

#include "config.h"
#include "plan.h"

typedef struct host_effective {
    char *config;                         /* the main INI file's text */
    char *custom_name[HOST_STAGE_COUNT];  /* "adapt_params.ini", or NULL when not needed */
    char *custom_text[HOST_STAGE_COUNT];
} host_effective;

/* output: written as given; header: comment lines put first (may be ""). */
void host_effective_make(host_effective *e, const host_config *cfg, const host_plan *plan,
                         const host_verify_config *vcfg, const char *output, const char *header);
void host_effective_free(host_effective *e);

/* The value of parameter def in params as INI text, without quotes: the
 * shortest float that reads back the same, "true"/"false" (caller frees). */
char *host_param_text(const ph_params *params, const ph_param_def *def);

/* Write the custom_config files and the main file (as `name`) into dir.
 * 0 or HOST_EXIT_OUTPUT. */
int host_effective_write(const host_effective *e, const char *dir, const char *name,
                         ph_error *err);

#endif
