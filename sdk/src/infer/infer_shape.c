/* sdk/src/infer/infer_shape.c - shape inference of operators that move data around.
 *
 * Shape, Size, Gather, GatherElements, GatherND, Concat, Split, Slice,
 * Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Tile, Pad,
 * DepthToSpace, SpaceToDepth, NonZero, OneHot, Compress.
 *
 * Opset differences handled: Slice (attributes before 10), Split sizes
 * (attribute before 13, input from 13, num_outputs from 18), Squeeze and
 * Unsqueeze axes (input from 13), Pad pads (input from 11, axes from 18),
 * Reshape allowzero (14), Shape start/end (15).  Shape constants (infer.h)
 * flow through Shape, Gather, Concat, Slice, Split, Squeeze, Unsqueeze and
 * Reshape, so a Reshape fed by Shape -> Gather -> Concat gets its target.
 */
#include <stdlib.h>
#include <string.h>

#include "infer.h"


static int out_pc_copy(infer_ictx *c, size_t out, const infer_pc *src)
{
    infer_pc *o = src ? infer_out_pc(c, out) : NULL;
    if (o)
        *o = *src;
    return 0;
}

static int infer_shape_op(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = PH_DT_INT64;
    c->out[0].rank = 1;
    c->out[0].d[0] = INFER_DIM_UNK;
    if (x->rank < 0)
        return 0;
    int64_t r = x->rank;
    int64_t s = ph_node_attr_int(c->n, "start", 0), e = ph_node_attr_int(c->n, "end", r);
    if (s < 0)
        s += r;
    if (e < 0)
        e += r;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    int64_t len = e > s ? e - s : 0;
    c->out[0].d[0] = len;
    infer_pc *o = infer_out_pc(c, 0);
    if (o) {
        o->n = (int)len;
        for (int64_t k = 0; k < len; k++)
            infer_pc_put_dim(o, (int)k, x->d[s + k]);
    }
    return 0;
}

static int infer_size(infer_ictx *c)
{
    infer_shape_set(&c->out[0], PH_DT_INT64, 0, NULL);
    int64_t n = infer_shape_numel(infer_in(c, 0));
    const infer_shape *x = infer_in(c, 0);
    infer_pc *o = infer_out_pc(c, 0);
    if (o) {
        o->n = 1;
        o->k[0] = INFER_PC_UNK;
        o->v[0] = 0;
        if (n >= 0)
            o->v[0] = n, o->k[0] = INFER_PC_NUM;
        else if (x->rank == 1 && infer_is_sym(x->d[0]))
            infer_pc_put_dim(o, 0, x->d[0]);
    }
    return 0;
}

static int infer_gather(infer_ictx *c)
{
    const infer_shape *data = infer_in(c, 0), *idx = infer_in(c, 1);
    c->out[0].dtype = data->dtype;
    if (data->rank < 0 || idx->rank < 0)
        return 0;
    int axis = infer_inf_axis(ph_node_attr_int(c->n, "axis", 0), data->rank);
    if (axis < 0)
        return infer_fail(c, "axis out of range for rank %d", data->rank);
    int r = data->rank - 1 + idx->rank;
    if (r > INFER_MAXRANK)
        return 0;
    int k = 0;
    for (int i = 0; i < axis; i++)
        c->out[0].d[k++] = data->d[i];
    for (int i = 0; i < idx->rank; i++)
        c->out[0].d[k++] = idx->d[i];
    for (int i = axis + 1; i < data->rank; i++)
        c->out[0].d[k++] = data->d[i];
    c->out[0].rank = r;
    /* shape constants: gather entries of a tracked vector */
    const infer_pc *dp = data->rank == 1 ? infer_in_pc(c, 0) : NULL;
    if (!dp)
        return 0;
    infer_pc dcopy = *dp;
    int64_t iv[INFER_PC_MAX];
    int ni = infer_in_ints(c, 1, iv, INFER_PC_MAX);
    if (ni < 0 || idx->rank > 1)
        return 0;
    infer_pc *o = infer_out_pc(c, 0);
    if (!o)
        return 0;
    o->n = ni;
    for (int j = 0; j < ni; j++) {
        int64_t at = iv[j] < 0 ? iv[j] + dcopy.n : iv[j];
        if (at < 0 || at >= dcopy.n)
            return infer_fail(c, "index %lld out of range for %d elements", (long long)iv[j], dcopy.n);
        o->v[j] = dcopy.v[at];
        o->k[j] = dcopy.k[at];
    }
    return 0;
}

static int infer_gather_elements(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 1);
    c->out[0].dtype = infer_in(c, 0)->dtype;
    return 0;
}

static int infer_gather_nd(infer_ictx *c)
{
    const infer_shape *data = infer_in(c, 0), *idx = infer_in(c, 1);
    c->out[0].dtype = data->dtype;
    int64_t b = ph_node_attr_int(c->n, "batch_dims", 0);
    if (data->rank < 0 || idx->rank < 1 || idx->d[idx->rank - 1] < 0)
        return 0;
    int64_t last = idx->d[idx->rank - 1];
    int r = idx->rank - 1 + data->rank - (int)b - (int)last;
    if (r < 0 || r > INFER_MAXRANK || b + last > data->rank)
        return infer_fail(c, "indices last dim %lld too large for data rank %d", (long long)last, data->rank);
    int k = 0;
    for (int i = 0; i < idx->rank - 1; i++)
        c->out[0].d[k++] = idx->d[i];
    for (int i = (int)(b + last); i < data->rank; i++)
        c->out[0].d[k++] = data->d[i];
    c->out[0].rank = r;
    return 0;
}

static int infer_concat(infer_ictx *c)
{
    infer_shape *o = &c->out[0];
    int rank = -1;
    for (size_t i = 0; i < c->nin; i++) {
        if (!o->dtype)
            o->dtype = infer_in(c, i)->dtype;
        if (infer_in(c, i)->rank >= 0) {
            if (rank >= 0 && infer_in(c, i)->rank != rank)
                return infer_fail(c, "inputs have ranks %d and %d", rank, infer_in(c, i)->rank);
            rank = infer_in(c, i)->rank;
        }
    }
    if (rank < 0)
        return 0;
    int axis = infer_inf_axis(ph_node_attr_int(c->n, "axis", 0), rank);
    if (axis < 0)
        return infer_fail(c, "axis out of range for rank %d", rank);
    o->rank = rank;
    for (int k = 0; k < rank; k++)
        o->d[k] = k == axis ? 0 : INFER_DIM_UNK;
    int first = 1;
    for (size_t i = 0; i < c->nin; i++) {
        const infer_shape *s = infer_in(c, i);
        if (s->rank < 0) {
            o->d[axis] = INFER_DIM_UNK;
            continue;
        }
        for (int k = 0; k < rank; k++) {
            if (k == axis) {
                o->d[k] = first ? s->d[k] : infer_dim_add(o->d[k], s->d[k]);
                continue;
            }
            int clash = 0;
            o->d[k] = first ? s->d[k] : infer_dim_merge(o->d[k], s->d[k], &clash);
            if (clash)
                return infer_fail(c, "input %zu has dim %d = %lld, an earlier input %lld", i, k, (long long)s->d[k],
                                (long long)o->d[k]);
        }
        first = 0;
    }
    /* shape constants */
    if (rank != 1)
        return 0;
    infer_pc acc;
    acc.n = 0;
    for (size_t i = 0; i < c->nin; i++) {
        const infer_pc *p = infer_in_pc(c, i);
        if (!p || acc.n + p->n > INFER_PC_MAX)
            return 0;
        memcpy(acc.v + acc.n, p->v, (size_t)p->n * sizeof *p->v);
        memcpy(acc.k + acc.n, p->k, (size_t)p->n);
        acc.n += p->n;
    }
    return out_pc_copy(c, 0, &acc);
}

static int infer_split(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    size_t nout = c->nout;
    for (size_t i = 0; i < nout; i++) {
        c->out[i] = *x;
    }
    if (x->rank < 0 || !nout)
        return 0;
    int axis = infer_inf_axis(ph_node_attr_int(c->n, "axis", 0), x->rank);
    if (axis < 0)
        return infer_fail(c, "axis out of range for rank %d", x->rank);
    int64_t sizes[256];
    int ns = nout <= 256 ? infer_ints_attr_or_input(c, "split", 1, 13, sizes, 256) : -2;
    infer_dim d = x->d[axis];
    if (ns == -1) {
        if (d >= 0) {
            int64_t chunk = (d + (int64_t)nout - 1) / (int64_t)nout;
            for (size_t i = 0; i < nout; i++) {
                int64_t left = d - chunk * (int64_t)i;
                sizes[i] = left < chunk ? (left > 0 ? left : 0) : chunk;
            }
            ns = (int)nout;
        }
    } else if (ns >= 0 && (size_t)ns != nout) {
        return infer_fail(c, "split has %d sizes for %zu outputs", ns, nout);
    }
    int64_t total = 0;
    for (size_t i = 0; i < nout; i++) {
        c->out[i].d[axis] = ns >= 0 ? sizes[i] : (nout == 1 ? d : INFER_DIM_UNK);
        if (ns >= 0)
            total += sizes[i];
    }
    if (ns >= 0 && d >= 0 && total != d)
        return infer_fail(c, "split sizes sum to %lld, the axis has %lld", (long long)total, (long long)d);
    /* shape constants */
    const infer_pc *p = x->rank == 1 && ns >= 0 ? infer_in_pc(c, 0) : NULL;
    if (p && total == p->n) {
        infer_pc src = *p;
        int at = 0;
        for (size_t i = 0; i < nout; i++) {
            infer_pc *o = infer_out_pc(c, i);
            if (!o)
                return 0;
            o->n = (int)sizes[i];
            memcpy(o->v, src.v + at, (size_t)sizes[i] * sizeof *o->v);
            memcpy(o->k, src.k + at, (size_t)sizes[i]);
            at += (int)sizes[i];
        }
    }
    return 0;
}

/* Length of one sliced axis of static length d. */
static int64_t slice_len(int64_t d, int64_t s, int64_t e, int64_t st, int64_t *start_out)
{
    return ph_slice_length(d, s, e, st, start_out); /* the one copy of the Slice rules */
}

static int infer_slice(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0] = *x;
    if (x->rank < 0)
        return 0;
    int64_t starts[INFER_MAXRANK], ends[INFER_MAXRANK], axes[INFER_MAXRANK], steps[INFER_MAXRANK];
    int ns, ne, na, nst;
    int r = x->rank;
    /* symbolic ends equal to the dim count as "to the end" */
    int end_is_dim[INFER_MAXRANK] = {0};
    if (c->opset < 10) {
        ns = infer_ints_attr_or_input(c, "starts", (size_t)-1, 0, starts, INFER_MAXRANK);
        ne = infer_ints_attr_or_input(c, "ends", (size_t)-1, 0, ends, INFER_MAXRANK);
        na = infer_ints_attr_or_input(c, "axes", (size_t)-1, 0, axes, INFER_MAXRANK);
        nst = -1;
    } else {
        ns = infer_in_ints(c, 1, starts, INFER_MAXRANK);
        ne = infer_in_ints(c, 2, ends, INFER_MAXRANK);
        if (ne < 0) {
            const infer_pc *pe = infer_in_pc(c, 2);
            if (pe && pe->n <= INFER_MAXRANK) {
                ne = pe->n;
                for (int k = 0; k < ne; k++) {
                    ends[k] = pe->v[k];
                    if (pe->k[k] == INFER_PC_SYM)
                        end_is_dim[k] = 1;
                    else if (pe->k[k] != INFER_PC_NUM)
                        end_is_dim[k] = -1;
                }
            }
        }
        na = infer_has_in(c, 3) ? infer_in_ints(c, 3, axes, INFER_MAXRANK) : -1;
        nst = infer_has_in(c, 4) ? infer_in_ints(c, 4, steps, INFER_MAXRANK) : -1;
        if (infer_has_in(c, 3) && na < 0)
            na = -2;
        if (infer_has_in(c, 4) && nst < 0)
            nst = -2;
    }
    if (na == -2 || ns < 0) {
        for (int k = 0; k < r; k++)
            c->out[0].d[k] = INFER_DIM_UNK;
        return 0;
    }
    int cnt = ns;
    if (na < 0)
        for (int k = 0; k < cnt; k++)
            axes[k] = k;
    else if (na != cnt)
        return infer_fail(c, "%d starts but %d axes", cnt, na);
    for (int k = 0; k < cnt; k++) {
        int ax = infer_inf_axis(axes[k], r);
        if (ax < 0)
            return infer_fail(c, "axis %lld out of range for rank %d", (long long)axes[k], r);
        int64_t st = nst >= 0 && k < nst ? steps[k] : (nst == -2 ? 0 : 1);
        if (nst >= 0 && st == 0)
            return infer_fail(c, "step is 0");
        infer_dim d = x->d[ax];
        if (ne < 0 || k >= ne || st == 0 || end_is_dim[k] == -1) {
            c->out[0].d[ax] = INFER_DIM_UNK;
            continue;
        }
        int64_t e = ends[k];
        if (end_is_dim[k]) {
            if (ends[k] != d) {
                c->out[0].d[ax] = INFER_DIM_UNK;
                continue;
            }
            e = INT64_MAX;
        }
        if (d >= 0) {
            int64_t s0;
            c->out[0].d[ax] = slice_len(d, starts[k], e, st, &s0);
        } else if (starts[k] == 0 && st == 1 && e >= (int64_t)INT32_MAX) {
            c->out[0].d[ax] = d; /* the whole axis */
        } else {
            c->out[0].d[ax] = INFER_DIM_UNK;
        }
    }
    /* shape constants: slicing a tracked vector */
    const infer_pc *p = r == 1 && cnt == 1 && ne == 1 && !end_is_dim[0] ? infer_in_pc(c, 0) : NULL;
    if (p) {
        infer_pc src = *p;
        int64_t st = nst >= 1 ? steps[0] : 1, s0;
        int64_t len = slice_len(src.n, starts[0], ends[0], st, &s0);
        infer_pc *o = infer_out_pc(c, 0);
        if (o) {
            o->n = (int)len;
            for (int64_t j = 0; j < len; j++) {
                o->v[j] = src.v[s0 + j * st];
                o->k[j] = src.k[s0 + j * st];
            }
        }
    }
    return 0;
}

/* Product of dims as (known factor, symbols, unknown count). */
typedef struct prodinfo {
    int64_t known;
    infer_dim syms[INFER_MAXRANK];
    int nsyms, unknown;
    int overflow; /* the known factor does not fit in int64 */
} prodinfo;

static void prod_add(prodinfo *p, infer_dim d)
{
    if (d >= 0)
        p->overflow |= ir_mul_ovf(p->known, d, &p->known);
    else if (infer_is_sym(d))
        p->syms[p->nsyms++] = d;
    else
        p->unknown++;
}

static int infer_reshape(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    infer_shape *o = &c->out[0];
    o->dtype = x->dtype;
    infer_shape tgt;
    int64_t attr_shape[INFER_MAXRANK];
    int na = c->opset < 5 ? infer_ints_attr_or_input(c, "shape", (size_t)-1, 0, attr_shape, INFER_MAXRANK) : -1;
    infer_pc pc;
    if (na >= 0) {
        pc.n = na;
        for (int k = 0; k < na; k++)
            pc.v[k] = attr_shape[k], pc.k[k] = INFER_PC_NUM;
    } else {
        const infer_pc *p = infer_in_pc(c, 1);
        if (p)
            pc = *p;
        else
            pc.n = -1;
    }
    if (pc.n < 0 || pc.n > INFER_MAXRANK) {
        infer_dims_from_shape_input(c, 1, &tgt);
        o->rank = tgt.rank;
        for (int k = 0; k < o->rank; k++)
            o->d[k] = INFER_DIM_UNK;
        return 0;
    }
    int allowzero = (int)ph_node_attr_int(c->n, "allowzero", 0);
    int minus = -1;
    o->rank = pc.n;
    for (int k = 0; k < pc.n; k++) {
        if (pc.k[k] == INFER_PC_SYM) {
            o->d[k] = pc.v[k];
        } else if (pc.k[k] != INFER_PC_NUM) {
            o->d[k] = INFER_DIM_UNK;
        } else if (pc.v[k] == -1) {
            if (minus >= 0)
                return infer_fail(c, "more than one -1 in the target shape");
            minus = k;
            o->d[k] = INFER_DIM_UNK;
        } else if (pc.v[k] == 0 && !allowzero) {
            if (x->rank >= 0 && k >= x->rank)
                return infer_fail(c, "target dim %d is 0 (copy) but the input has rank %d", k, x->rank);
            o->d[k] = x->rank >= 0 ? x->d[k] : INFER_DIM_UNK;
        } else if (pc.v[k] < 0) {
            return infer_fail(c, "invalid target dim %lld", (long long)pc.v[k]);
        } else {
            o->d[k] = pc.v[k];
        }
    }
    if (x->rank < 0)
        return out_pc_copy(c, 0, NULL);
    prodinfo in = {1, {0}, 0, 0, 0}, out = {1, {0}, 0, 0, 0};
    for (int k = 0; k < x->rank; k++)
        prod_add(&in, x->d[k]);
    for (int k = 0; k < pc.n; k++)
        if (k != minus)
            prod_add(&out, o->d[k]);
    if (in.overflow || out.overflow)
        return infer_fail(c, "the %s shape has more elements than int64 counts", in.overflow ? "input" : "target");
    if (!in.unknown && !out.unknown) {
        /* cancel common symbols */
        for (int i = 0; i < out.nsyms; i++)
            for (int j = 0; j < in.nsyms; j++)
                if (in.syms[j] == out.syms[i]) {
                    in.syms[j] = in.syms[--in.nsyms];
                    out.syms[i] = out.syms[--out.nsyms];
                    i--;
                    break;
                }
        if (!out.nsyms && minus >= 0) {
            if (!in.nsyms) {
                if (out.known == 0 || in.known % out.known)
                    return infer_fail(c, "cannot reshape %lld elements into a shape with %lld per -1 step",
                                    (long long)in.known, (long long)out.known);
                o->d[minus] = in.known / out.known;
            } else if (in.nsyms == 1 && in.known == out.known) {
                o->d[minus] = in.syms[0];
            }
        } else if (!out.nsyms && !in.nsyms && minus < 0 && in.known != out.known) {
            return infer_fail(c, "cannot reshape %lld elements into %lld", (long long)in.known,
                            (long long)out.known);
        }
    }
    /* a tracked vector keeps its entries through a reshape to [n] or [] */
    const infer_pc *xp = x->rank <= 1 ? infer_in_pc(c, 0) : NULL;
    if (xp && o->rank <= 1 && infer_shape_numel(o) == xp->n)
        out_pc_copy(c, 0, xp);
    return 0;
}

static int infer_flatten(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = x->dtype;
    c->out[0].rank = 2;
    c->out[0].d[0] = c->out[0].d[1] = INFER_DIM_UNK;
    if (x->rank < 0)
        return 0;
    int64_t a = ph_node_attr_int(c->n, "axis", 1);
    if (a < 0)
        a += x->rank;
    if (a < 0 || a > x->rank)
        return infer_fail(c, "axis out of range for rank %d", x->rank);
    infer_dim p0 = 1, p1 = 1;
    for (int k = 0; k < x->rank; k++) {
        if (k < a)
            p0 = infer_dim_mul(p0, x->d[k]);
        else
            p1 = infer_dim_mul(p1, x->d[k]);
    }
    c->out[0].d[0] = p0;
    c->out[0].d[1] = p1;
    return 0;
}

static int infer_squeeze(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = x->dtype;
    int64_t axes[INFER_MAXRANK];
    int na = infer_ints_attr_or_input(c, "axes", 1, 13, axes, INFER_MAXRANK);
    if (x->rank < 0 || na == -2)
        return 0;
    int drop[INFER_MAXRANK] = {0};
    if (na < 0) {
        for (int k = 0; k < x->rank; k++) {
            if (x->d[k] < 0)
                return 0; /* cannot tell which dims are 1 */
            drop[k] = x->d[k] == 1;
        }
    } else {
        for (int i = 0; i < na; i++) {
            int ax = infer_inf_axis(axes[i], x->rank);
            if (ax < 0)
                return infer_fail(c, "axis %lld out of range for rank %d", (long long)axes[i], x->rank);
            if (x->d[ax] >= 0 && x->d[ax] != 1)
                return infer_fail(c, "cannot squeeze dim %d of size %lld", ax, (long long)x->d[ax]);
            drop[ax] = 1;
        }
    }
    int k = 0;
    for (int i = 0; i < x->rank; i++)
        if (!drop[i])
            c->out[0].d[k++] = x->d[i];
    c->out[0].rank = k;
    return out_pc_copy(c, 0, k <= 1 ? infer_in_pc(c, 0) : NULL);
}

static int infer_unsqueeze(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = x->dtype;
    int64_t axes[INFER_MAXRANK];
    int na = infer_ints_attr_or_input(c, "axes", 1, 13, axes, INFER_MAXRANK);
    if (x->rank < 0 || na < 0)
        return 0;
    int r = x->rank + na;
    if (r > INFER_MAXRANK)
        return 0;
    int ins[INFER_MAXRANK] = {0};
    for (int i = 0; i < na; i++) {
        int ax = infer_inf_axis(axes[i], r);
        if (ax < 0 || ins[ax])
            return infer_fail(c, "bad axis %lld for output rank %d", (long long)axes[i], r);
        ins[ax] = 1;
    }
    int k = 0;
    for (int i = 0; i < r; i++)
        c->out[0].d[i] = ins[i] ? 1 : x->d[k++];
    c->out[0].rank = r;
    return out_pc_copy(c, 0, r <= 1 ? infer_in_pc(c, 0) : NULL);
}

static int infer_transpose(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = x->dtype;
    if (x->rank < 0)
        return 0;
    const int64_t *perm;
    ptrdiff_t np = ph_node_attr_ints(c->n, "perm", &perm);
    if (np >= 0 && np != x->rank)
        return infer_fail(c, "perm has %td entries for rank %d", np, x->rank);
    int seen[INFER_MAXRANK] = {0};
    for (int i = 0; i < x->rank; i++) {
        int64_t p = np >= 0 ? perm[i] : x->rank - 1 - i;
        if (p < 0 || p >= x->rank || seen[p])
            return infer_fail(c, "perm is not a permutation of 0..%d", x->rank - 1);
        seen[p] = 1;
        c->out[0].d[i] = x->d[p];
    }
    c->out[0].rank = x->rank;
    return 0;
}

static int infer_expand(infer_ictx *c)
{
    infer_shape tgt;
    infer_dims_from_shape_input(c, 1, &tgt);
    c->out[0].dtype = infer_in(c, 0)->dtype;
    int rc = infer_broadcast(c, infer_in(c, 0), &tgt, &c->out[0]);
    return rc;
}

static int infer_tile(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0] = *x;
    if (x->rank < 0)
        return 0;
    int64_t rep[INFER_MAXRANK];
    int nr = infer_in_ints(c, 1, rep, INFER_MAXRANK);
    if (nr >= 0 && nr != x->rank)
        return infer_fail(c, "repeats has %d entries for rank %d", nr, x->rank);
    for (int k = 0; k < x->rank; k++)
        c->out[0].d[k] = nr >= 0 ? infer_dim_mul(x->d[k], rep[k]) : INFER_DIM_UNK;
    return 0;
}

static int infer_pad(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0] = *x;
    if (x->rank < 0)
        return 0;
    int r = x->rank;
    int64_t pads[2 * INFER_MAXRANK], axes[INFER_MAXRANK];
    int np = infer_ints_attr_or_input(c, c->opset < 11 ? "pads" : NULL, 1, 11, pads, 2 * INFER_MAXRANK);
    int na = infer_has_in(c, 3) ? infer_in_ints(c, 3, axes, INFER_MAXRANK) : -1;
    if (np < 0 || (infer_has_in(c, 3) && na < 0)) {
        for (int k = 0; k < r; k++)
            c->out[0].d[k] = INFER_DIM_UNK;
        return 0;
    }
    if (na < 0) {
        na = r;
        for (int k = 0; k < r; k++)
            axes[k] = k;
    }
    if (np != 2 * na)
        return infer_fail(c, "%d pads for %d axes", np, na);
    for (int i = 0; i < na; i++) {
        int ax = infer_inf_axis(axes[i], r);
        if (ax < 0)
            return infer_fail(c, "axis out of range");
        /* pads may be negative (cropping): add them as integers to a known
         * dim; a symbolic dim stays itself only when they cancel */
        int64_t both, d;
        int ovf = __builtin_add_overflow(pads[i], pads[i + na], &both);
        if (x->d[ax] >= 0) {
            if (ovf || __builtin_add_overflow(x->d[ax], both, &d))
                c->out[0].d[ax] = INFER_DIM_UNK;
            else if (d < 0)
                return infer_fail(c, "pads make dim %d negative", ax);
            else
                c->out[0].d[ax] = d;
        } else
            c->out[0].d[ax] = !ovf && both == 0 ? x->d[ax] : INFER_DIM_UNK;
    }
    return 0;
}

static int infer_depth_space(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = x->dtype;
    if (x->rank < 0)
        return 0;
    if (x->rank != 4)
        return infer_fail(c, "input must have rank 4, has %d", x->rank);
    int64_t b = ph_node_attr_int(c->n, "blocksize", 0);
    if (b <= 0 || b > ((int64_t)1 << 30)) /* b * b must not overflow */
        return infer_fail(c, "blocksize must be positive and at most 2^30");
    infer_shape *o = &c->out[0];
    o->rank = 4;
    o->d[0] = x->d[0];
    if (c->n->op == PH_OP_DepthToSpace) {
        if (x->d[1] >= 0 && x->d[1] % (b * b))
            return infer_fail(c, "channels %lld not divisible by blocksize^2", (long long)x->d[1]);
        o->d[1] = x->d[1] >= 0 ? x->d[1] / (b * b) : INFER_DIM_UNK;
        o->d[2] = infer_dim_mul(x->d[2], b);
        o->d[3] = infer_dim_mul(x->d[3], b);
    } else {
        o->d[1] = infer_dim_mul(x->d[1], b * b);
        for (int k = 2; k < 4; k++) {
            if (x->d[k] >= 0 && x->d[k] % b)
                return infer_fail(c, "dim %d (%lld) not divisible by blocksize", k, (long long)x->d[k]);
            o->d[k] = x->d[k] >= 0 ? x->d[k] / b : (b == 1 ? x->d[k] : INFER_DIM_UNK);
        }
    }
    return 0;
}

static int infer_nonzero(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    infer_dim d[2] = {x->rank >= 0 ? x->rank : INFER_DIM_UNK, INFER_DIM_UNK};
    infer_shape_set(&c->out[0], PH_DT_INT64, 2, d);
    return 0;
}

static int infer_onehot(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = infer_in(c, 2)->dtype;
    if (x->rank < 0 || x->rank + 1 > INFER_MAXRANK)
        return 0;
    int r = x->rank + 1;
    int axis = infer_inf_axis(ph_node_attr_int(c->n, "axis", -1), r);
    if (axis < 0)
        return infer_fail(c, "axis out of range for rank %d", r);
    double depth;
    infer_dim dd = infer_in_doubles(c, 1, &depth, 1) == 1 ? (infer_dim)depth : INFER_DIM_UNK;
    int k = 0;
    for (int i = 0; i < r; i++)
        c->out[0].d[i] = i == axis ? dd : x->d[k++];
    c->out[0].rank = r;
    return 0;
}

static int infer_compress(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0] = *x;
    if (ph_node_attr_type(c->n, "axis") != PH_ATTR_INT || x->rank < 0) {
        c->out[0].rank = 1;
        c->out[0].d[0] = INFER_DIM_UNK;
        return 0;
    }
    int ax = infer_inf_axis(ph_node_attr_int(c->n, "axis", 0), x->rank);
    if (ax < 0)
        return infer_fail(c, "axis out of range");
    c->out[0].d[ax] = INFER_DIM_UNK;
    return 0;
}

infer_fn infer_shape_fn(ph_op op)
{
    switch (op) {
    case PH_OP_Shape: return infer_shape_op;
    case PH_OP_Size: return infer_size;
    case PH_OP_Gather: return infer_gather;
    case PH_OP_GatherElements: return infer_gather_elements;
    case PH_OP_GatherND: return infer_gather_nd;
    case PH_OP_Concat: return infer_concat;
    case PH_OP_Split: return infer_split;
    case PH_OP_Slice: return infer_slice;
    case PH_OP_Reshape: return infer_reshape;
    case PH_OP_Flatten: return infer_flatten;
    case PH_OP_Squeeze: return infer_squeeze;
    case PH_OP_Unsqueeze: return infer_unsqueeze;
    case PH_OP_Transpose: return infer_transpose;
    case PH_OP_Expand: return infer_expand;
    case PH_OP_Tile: return infer_tile;
    case PH_OP_Pad: return infer_pad;
    case PH_OP_DepthToSpace: case PH_OP_SpaceToDepth: return infer_depth_space;
    case PH_OP_NonZero: return infer_nonzero;
    case PH_OP_OneHot: return infer_onehot;
    case PH_OP_Compress: return infer_compress;
    default: return NULL;
    }
}
