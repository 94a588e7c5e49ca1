/* passhost/passhost.h - what a pass includes: the IR and the plugin ABI
 * (error.h, ops.h, ir.h, plugin.h, pattern.h), the analyses a pass reads
 * (shape.h, constant.h, eval.h), the operator schemas (schema.h), a hash
 * map (hashmap.h) and the operator helpers built on them (op_helpers.h).
 * The calls of hosts are in passhost/host.h, the pass test harness in
 * passhost/testing.h; docs/sdk.md lists each header's audience. */
#ifndef PASSHOST_PASSHOST_H
#define PASSHOST_PASSHOST_H

#include "passhost/error.h"
#include "passhost/ops.h"
#include "passhost/ir.h"
#include "passhost/pattern.h"
#include "passhost/plugin.h"
#include "passhost/eval.h"
#include "passhost/shape.h"
#include "passhost/constant.h"
#include "passhost/hashmap.h"
#include "passhost/schema.h"
#include "passhost/op_helpers.h"
#include "passhost/target.h"

#endif
