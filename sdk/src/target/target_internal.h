/* sdk/src/target/target_internal.h - what profile.c and check.c share: the
 * kinds of profile keys and the dtype names of the format. */
#ifndef PASSHOST_SDK_TARGET_INTERNAL_H
#define PASSHOST_SDK_TARGET_INTERNAL_H

#include <stddef.h>

typedef enum phi_target_kind {
    PHI_TK_INT,       /* a whole number >= 0 */
    PHI_TK_BOOL,
    PHI_TK_TEXT,
    PHI_TK_NAME,      /* a profile name */
    PHI_TK_DTYPES,    /* a list of dtype names */
    PHI_TK_DTYPE,
    PHI_TK_OPS,       /* a list of "Op" / "Op@domain" */
    PHI_TK_DOMAINS,
    PHI_TK_INTS,      /* a list of whole numbers */
    PHI_TK_WORDS,     /* a list of words from phi_target_key.words */
    PHI_TK_RANGE,     /* an opset range */
    PHI_TK_BROADCAST  /* yes, same_rank, no */
} phi_target_kind;

typedef struct phi_target_key {
    const char *section; /* "": [target]; "opset"; "*": any operator; else "Op|Op2" */
    const char *key;
    phi_target_kind kind;
    const char *words;   /* PHI_TK_WORDS: the words allowed, ','-separated */
} phi_target_key;

/* The ph_dtype of a dtype name of the format (n bytes: float32, float,
 * float16, int64, ...), PH_DT_UNDEFINED when none; the format's name of a
 * dtype (float32 rather than ONNX's "float"). */
int phi_target_dtype(const char *name, size_t n);
const char *phi_target_dtype_name(int dtype);
/* 1 when the ", "-separated list has item (n bytes). */
int phi_target_list_has(const char *list, const char *item, size_t n);

#endif
