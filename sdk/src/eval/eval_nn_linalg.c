/* sdk/src/eval/eval_nn_linalg.c - Det (float, double; halves through
 * float): the determinant of each [..., M, M] matrix by LU decomposition
 * with partial pivoting, in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"

int eval_k_det(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need_float(a, 0, "X", &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x);
    if (r < 2 || ph_tensor_dim(x, r - 1) != ph_tensor_dim(x, r - 2))
        return eval_kfail(a, PH_EINVAL, "X must be [..., M, M]");
    int64_t m = ph_tensor_dim(x, r - 1), mats = eval_numel(r - 2, ph_tensor_dims(x));
    void *o;
    if ((rc = eval_out(a, 0, dt, r - 2, ph_tensor_dims(x), &o)) != 0 || !o)
        return rc;
    double *lu = malloc((size_t)(m > 0 ? m * m : 1) * sizeof *lu);
    if (!lu)
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    for (int64_t b = 0; b < mats; b++) {
        for (int64_t i = 0; i < m * m; i++)
            lu[i] = eval_load_f64(xd, dt, (size_t)(b * m * m + i));
        double det = 1;
        for (int64_t k = 0; k < m && det != 0; k++) {
            int64_t p = k;
            for (int64_t i = k + 1; i < m; i++)
                if (fabs(lu[i * m + k]) > fabs(lu[p * m + k]))
                    p = i;
            if (lu[p * m + k] == 0) {
                det = 0;
                break;
            }
            if (p != k) {
                for (int64_t j = 0; j < m; j++) {
                    double t = lu[k * m + j];
                    lu[k * m + j] = lu[p * m + j];
                    lu[p * m + j] = t;
                }
                det = -det;
            }
            det *= lu[k * m + k];
            for (int64_t i = k + 1; i < m; i++) {
                double f = lu[i * m + k] / lu[k * m + k];
                for (int64_t j = k; j < m; j++)
                    lu[i * m + j] -= f * lu[k * m + j];
            }
        }
        eval_store_f64(o, dt, (size_t)b, det);
    }
    free(lu);
    return 0;
}
