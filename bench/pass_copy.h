/* bench/pass_copy.h - compiled in front of a pass's source (cc -include) to
 * build a copy of the pass under another name, PASS_COPY_NAME: the same
 * rules, stages and defaults, no ordering hints.  For bench/stage_passes.sh
 * (a stage with twice the passes). */
#include <passhost/passhost.h>
#undef PH_PASS_DEFINE
#define PH_PASS_DEFINE(...)                                                    \
    static const ph_pass_desc ph_pass_descriptor_ = {                          \
        .abi_major = PH_ABI_MAJOR,                                             \
        .abi_minor = PH_ABI_MINOR,                                             \
        .struct_size = (uint32_t)sizeof(ph_pass_desc),                         \
        __VA_ARGS__,                                                           \
        .name = PASS_COPY_NAME,                                                \
        .run_after = NULL,                                                     \
        .run_before = NULL};                                                   \
    PH_PLUGIN_EXPORT const ph_pass_desc *passhost_pass_descriptor(void);       \
    PH_PLUGIN_EXPORT const ph_pass_desc *passhost_pass_descriptor(void)        \
    {                                                                          \
        return &ph_pass_descriptor_;                                           \
    }
