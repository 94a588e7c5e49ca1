/* sdk/src/pass/pass_internal.h - what the pass context's files share. */
#ifndef PASSHOST_PASS_INTERNAL_H
#define PASSHOST_PASS_INTERNAL_H

#include <passhost/passhost.h>

/* The running pass's slot for its change-log reader (pattern/changes.c): a block
 * the context frees with free() in ph_ctx_free; NULL in the slot until
 * first set.  NULL when out of memory. */
void **ctx_pass_changes_slot(ph_ctx *ctx);

#endif
