/* passhost/error.h - error codes and the error record of the passhost SDK.
 *
 * Every SDK function that can fail returns a negative PH_E* code (0 or a
 * positive count on success).  Functions that have more to say also fill a
 * caller-owned ph_error with a one-line message.  The library never calls
 * exit() and keeps no global error state.
 */
#ifndef PASSHOST_ERROR_H
#define PASSHOST_ERROR_H

#include <stddef.h>

#if defined(__GNUC__)
#define PH_API __attribute__((visibility("default")))
#define PH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PH_API
#define PH_PRINTF(f, a)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, description).  Values are part of the public ABI. */
#define PH_ERROR_TABLE(X)                                                      \
    X(PH_OK, 0, "success")                                                     \
    X(PH_ENOMEM, -1, "out of memory")                                          \
    X(PH_EIO, -2, "input/output error")                                        \
    X(PH_EPARSE, -3, "not a valid ONNX model")                                 \
    X(PH_EINVAL, -4, "invalid argument")                                       \
    X(PH_ENOTFOUND, -5, "not found")                                           \
    X(PH_EEXIST, -6, "already exists")                                         \
    X(PH_EVERIFY, -7, "graph verification failed")                             \
    X(PH_EBUSY, -8, "value is bound to a graph output or input")               \
    X(PH_EUNSUPPORTED, -9, "unsupported")                                      \
    X(PH_EPASS, -10, "pass failed")                                            \
    X(PH_ERANGE, -11, "value out of range")

typedef enum ph_status {
#define PH_X_ENUM(name, value, desc) name = value,
    PH_ERROR_TABLE(PH_X_ENUM)
#undef PH_X_ENUM
} ph_status;

/* A one-line error message filled by functions that take one.  Caller owns
 * the record (usually on the stack); code mirrors the returned status. */
typedef struct ph_error {
    int code;
    char message[512];
} ph_error;

/* Static description of a PH_E* code.  Never NULL; the string is static. */
PH_API const char *ph_strerror(int code);

/* Fill err (if not NULL) with code and a printf-style message; returns code
 * so callers can write `return ph_error_set(err, PH_EINVAL, "...")`. */
PH_API int ph_error_set(ph_error *err, int code, const char *fmt, ...) PH_PRINTF(3, 4);

/* For "did you mean" in messages: up to max of the n candidates closest to
 * name by edit distance (at most a third of name's length, at least 2),
 * nearest first (ties in candidate order), into out (borrowed from
 * cands).  Returns how many.  ph_close_names_text writes them as
 * "'a', 'b' or 'c'" into buf (size bytes, always NUL-terminated; "" when
 * none) and returns buf. */
PH_API size_t ph_close_names(const char *name, const char *const *cands, size_t n, const char **out,
                             size_t max);
PH_API char *ph_close_names_text(const char *name, const char *const *cands, size_t n, char *buf,
                                 size_t size);

#ifdef __cplusplus
}
#endif
#endif
