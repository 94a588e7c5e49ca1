/* host/check/operators.h - operators ONNX does not define, named.
 *
 * A node whose operator the default domain (or another domain ONNX
 * defines, such as ai.onnx.ml) does not have at the model's opset loads
 * and is kept as it is, but other tools refuse the model: passhost says so
 * once per operator, naming its first node and how many there are (the
 * caller logs it as a WARNING).  An operator of a domain ONNX does not define
 * (com.microsoft...) is nobody's business here, and a model whose opset is
 * newer than passhost's schemas (passhost/schema.h) is not judged.  (A
 * node of a domain the model does not import at all is an invalid model:
 * the loader refuses it.)
 */
#ifndef PASSHOST_HOST_CHECK_OPERATORS_H
#define PASSHOST_HOST_CHECK_OPERATORS_H

#include <stddef.h>

#include "passhost/passhost.h"

/* Walk every node of m (bodies too) and call warn once per unknown
 * operator with the warning's text (without "WARNING").  Returns how many
 * distinct unknown operators it found.  m is borrowed; message is only
 * valid during the call. */
size_t host_warn_unknown_operators(ph_model *m, void (*warn)(void *user, const char *message), void *user);

#endif
