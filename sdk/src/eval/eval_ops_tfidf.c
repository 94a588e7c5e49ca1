/* sdk/src/eval/eval_ops_tfidf.c - TfIdfVectorizer on integer input (int32,
 * int64; string input is not supported).
 *
 * For every row ([C] is one row, [N, C] N rows), every n-gram length from
 * min_gram_length to max_gram_length and every skip from 0 to
 * max_skip_count (unigrams once), the n items x[i], x[i + skip + 1], ...
 * are looked up in the pool (pool_int64s, n-grams of length k + 1 starting
 * at ngram_counts[k]); a match counts one for its ngram_indexes entry.  The
 * output, float, of width max(ngram_indexes) + 1, is the count (TF), the
 * weight of the n-grams seen (IDF) or count times weight (TFIDF); weights
 * default to 1.
 */
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"

int eval_k_tfidf_vectorizer(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    if (dt != PH_DT_INT32 && dt != PH_DT_INT64)
        return eval_kbad_dtype(a, "X", dt);
    size_t r = ph_tensor_rank(x);
    if (r != 1 && r != 2)
        return eval_kfail(a, PH_EINVAL, "X must be [C] or [N, C]");
    const int64_t *pool, *counts, *idx;
    const float *weights = NULL;
    ptrdiff_t np = ph_node_attr_ints(a->node, "pool_int64s", &pool), nc = ph_node_attr_ints(a->node, "ngram_counts", &counts);
    ptrdiff_t ni = ph_node_attr_ints(a->node, "ngram_indexes", &idx), nw = ph_node_attr_floats(a->node, "weights", &weights);
    if (np < 0)
        return eval_kfail(a, PH_EUNSUPPORTED, "only pool_int64s is supported (pool_strings is not)");
    int64_t minn = ph_node_attr_int(a->node, "min_gram_length", 1), maxn = ph_node_attr_int(a->node, "max_gram_length", 1);
    int64_t maxskip = ph_node_attr_int(a->node, "max_skip_count", 0);
    const char *mode = ph_node_attr_string(a->node, "mode", "TF");
    int m = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : !strcmp(mode, "TFIDF") ? 2 : -1;
    if (m < 0 || nc < 1 || ni < 1 || minn < 1 || maxn < minn || maxskip < 0 || (nw >= 0 && nw != ni))
        return eval_kfail(a, PH_EINVAL, "bad mode, ngram_counts, ngram_indexes, weights or gram lengths");
    int64_t width = 0;
    for (ptrdiff_t i = 0; i < ni; i++) {
        if (idx[i] < 0)
            return eval_kfail(a, PH_EINVAL, "negative ngram index");
        width = idx[i] + 1 > width ? idx[i] + 1 : width;
    }
    int64_t rows = r == 2 ? ph_tensor_dim(x, 0) : 1, C = ph_tensor_dim(x, r - 1), od[2] = {rows, width};
    float *o;
    if ((rc = eval_out(a, 0, PH_DT_FLOAT, r, r == 2 ? od : od + 1, (void **)&o)) != 0 || !o)
        return rc;
    memset(o, 0, (size_t)(rows * width) * sizeof *o);
    for (int64_t row = 0; row < rows; row++) {
        float *out = o + row * width;
        for (int64_t n = minn; n <= maxn && n <= nc; n++) {
            int64_t start = counts[n - 1], end = n < nc ? counts[n] : np, first = 0; /* first: its index in ngram_indexes */
            for (int64_t k = 0; k < n - 1 && k < nc; k++)
                first += ((k + 1 < nc ? counts[k + 1] : np) - counts[k]) / (k + 1);
            if (start < 0 || end > np || start > end)
                return eval_kfail(a, PH_EINVAL, "ngram_counts do not fit pool_int64s");
            for (int64_t skip = 0; skip <= (n == 1 ? 0 : maxskip); skip++)
                for (int64_t i = 0; i + (n - 1) * (skip + 1) < C; i++)
                    for (int64_t g = 0; start + (g + 1) * n <= end; g++) {
                        int64_t k = 0;
                        while (k < n && pool[start + g * n + k] ==
                                            eval_load_i64(xd, dt, (size_t)(row * C + i + k * (skip + 1))))
                            k++;
                        if (k == n && first + g < ni) {
                            out[idx[first + g]] += 1;
                            break;
                        }
                    }
        }
        for (ptrdiff_t j = 0; j < ni && m; j++) {
            float w = weights ? weights[j] : 1;
            float *v = &out[idx[j]];
            *v = m == 1 ? (*v > 0 ? w : 0) : *v * w;
        }
    }
    return 0;
}
