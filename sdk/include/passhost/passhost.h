/* passhost/passhost.h - the whole public SDK in one include. */
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
#include "passhost/target.h"

#endif
