/* sdk/src/const/dtype_holds.c - which dtype holds every value of another
 * (see ph_dtype_holds in constant.h). */
#include "internal.h"
#include "passhost/constant.h"

/* Bits of an integer dtype (BOOL as 1) and whether it is signed; 0 for
 * other dtypes. */
static int int_bits(int dt, int *is_signed)
{
    *is_signed = dt == PH_DT_INT8 || dt == PH_DT_INT16 || dt == PH_DT_INT32 || dt == PH_DT_INT64;
    switch (dt) {
    case PH_DT_BOOL: return 1;
    case PH_DT_INT8: case PH_DT_UINT8: return 8;
    case PH_DT_INT16: case PH_DT_UINT16: return 16;
    case PH_DT_INT32: case PH_DT_UINT32: return 32;
    case PH_DT_INT64: case PH_DT_UINT64: return 64;
    default: return 0;
    }
}

/* Significand bits of a float dtype (the implicit bit included): every
 * integer of magnitude up to 2^bits is exact.  0 for other dtypes. */
static int significand_bits(int dt)
{
    switch (dt) {
    case PH_DT_BFLOAT16: return 8;
    case PH_DT_FLOAT16: return 11;
    case PH_DT_FLOAT: return 24;
    case PH_DT_DOUBLE: return 53;
    default: return 0;
    }
}

PH_API int ph_dtype_holds(int a, int b)
{
    int as, bs, ab = int_bits(a, &as), bb = int_bits(b, &bs);
    int af = significand_bits(a), bf = significand_bits(b);
    if ((!ab && !af) || (!bb && !bf))
        return 0; /* not numeric nor BOOL */
    if (a == b || a == PH_DT_BOOL)
        return b != PH_DT_BOOL || a == PH_DT_BOOL;
    if (ab) {
        if (bb) /* integer into integer: b's range holds a's */
            return b != PH_DT_BOOL && (as ? bs && bb >= ab : (bs ? bb > ab : bb >= ab));
        return ab - as <= bf; /* magnitudes below 2^(bits - sign) */
    }
    /* float into float: FLOAT16 and BFLOAT16 only into FLOAT and DOUBLE */
    return !bb && bf > af && (b == PH_DT_FLOAT || b == PH_DT_DOUBLE);
}
