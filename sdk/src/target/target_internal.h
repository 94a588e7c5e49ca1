/* sdk/src/target/target_internal.h - what profile.c and check.c share: the
 * kinds of profile keys and the dtype names of the format. */
#ifndef PASSHOST_SDK_TARGET_INTERNAL_H
#define PASSHOST_SDK_TARGET_INTERNAL_H

#include <stddef.h>

typedef enum tgt_kind {
    TGT_INT,       /* a whole number >= 0 */
    TGT_BOOL,
    TGT_TEXT,
    TGT_NAME,      /* a profile name */
    TGT_DTYPES,    /* a list of dtype names */
    TGT_DTYPE,
    TGT_OPS,       /* a list of "Op" / "Op@domain" */
    TGT_DOMAINS,
    TGT_INTS,      /* a list of whole numbers */
    TGT_WORDS,     /* a list of words from tgt_key.words */
    TGT_RANGE,     /* an opset range */
    TGT_BROADCAST  /* yes, same_rank, no */
} tgt_kind;

typedef struct tgt_key {
    const char *section; /* "": [target]; "opset"; "*": any operator; else "Op|Op2" */
    const char *key;
    tgt_kind kind;
    const char *words;   /* TGT_WORDS: the words allowed, ','-separated */
} tgt_key;

/* The ph_dtype of a dtype name of the format (n bytes: float32, float,
 * float16, int64, ...), PH_DT_UNDEFINED when none; the format's name of a
 * dtype (float32 rather than ONNX's "float"). */
int tgt_dtype(const char *name, size_t n);
const char *tgt_dtype_name(int dtype);
/* 1 when the ", "-separated list has item (n bytes). */
int tgt_list_has(const char *list, const char *item, size_t n);

#endif
