/* tests/plugins/tp_null_run.c - malformed: run is NULL. */
#include <passhost/passhost.h>

PH_PASS_DEFINE(.name = "tp_null_run", .summary = "no run function",
               .stages = PH_STAGE_OPTIMIZE, .run = NULL)
