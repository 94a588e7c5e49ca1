/* sdk/src/eval/eval_budget.c - the error budget of --verify and of the
 * pass test harness (docs/verify.md, "Error budgets"), written once. */
#include <float.h>
#include <math.h>

#include "passhost/eval.h"
#include "passhost/ir.h"

double ph_dtype_epsilon(int dtype)
{
    switch (dtype) {
    case PH_DT_DOUBLE: return DBL_EPSILON;
    case PH_DT_FLOAT16: return 0x1p-10;
    case PH_DT_BFLOAT16: return 0x1p-7;
    default: return FLT_EPSILON;
    }
}

double ph_dtype_smallest_normal(int dtype)
{
    switch (dtype) {
    case PH_DT_DOUBLE: return DBL_MIN;
    case PH_DT_FLOAT16: return 0x1p-14;
    case PH_DT_BFLOAT16: return FLT_MIN; /* bfloat16 has float's exponent */
    default: return FLT_MIN;
    }
}

double ph_error_budget(double factor, double ulps, double orig_error, double scale, int dtype, int precision)
{
    double eps = ph_dtype_epsilon(dtype), unit = eps;
    if (precision && ph_dtype_epsilon(precision) > eps)
        unit = ph_dtype_epsilon(precision);
    return factor * orig_error * (unit / eps) + ulps * unit * fmax(scale, ph_dtype_smallest_normal(dtype));
}
