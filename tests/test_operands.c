/* tests/test_operands.c - constant operands, the Slice rules (shape.h), a
 * value's dtype alone (ph_value_set_dtype) and typed Casts (op_helpers.h). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

START_TEST(slice_length_follows_the_spec)
{
    int64_t first;
    ck_assert_int_eq(ph_slice_length(10, 0, INT64_MAX, 1, &first), 10);
    ck_assert_int_eq(first, 0);
    ck_assert_int_eq(ph_slice_length(10, 2, 8, 3, &first), 2); /* 2, 5 */
    ck_assert_int_eq(first, 2);
    ck_assert_int_eq(ph_slice_length(10, -3, -1, 1, &first), 2); /* 7, 8 */
    ck_assert_int_eq(first, 7);
    ck_assert_int_eq(ph_slice_length(10, 5, 2, 1, NULL), 0);
    ck_assert_int_eq(ph_slice_length(10, -1, INT64_MIN, -1, &first), 10); /* reversed */
    ck_assert_int_eq(first, 9);
    ck_assert_int_eq(ph_slice_length(3, -10, INT64_MIN, -1, &first), 1); /* start clamps to 0 */
    ck_assert_int_eq(first, 0);
    ck_assert_int_eq(ph_slice_length(10, 20, 0, -2, &first), 5); /* 9, 7, 5, 3, 1 */
    ck_assert_int_eq(first, 9);
    ck_assert_int_eq(ph_slice_length(0, 0, 5, 1, NULL), 0);
    ck_assert_int_eq(ph_slice_length(0, 0, -5, -1, NULL), 0);
}
END_TEST

START_TEST(const_ints_from_every_kind_of_constant)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t d1[] = {3}, out[8];
    const char *sym[8];
    int64_t v64[] = {4, -1, 7};
    int32_t v32[] = {1, 2, 3};
    ph_value *a = ph_graph_add_initializer(g, "a", ph_tensor_new(PH_DT_INT64, 1, d1, v64));
    ph_value *b = ph_graph_add_initializer(g, "b", ph_tensor_new(PH_DT_INT32, 1, d1, v32));
    ph_value *f = ph_graph_add_initializer(g, "f", ph_tensor_new(PH_DT_FLOAT, 1, d1, NULL));
    ck_assert_int_eq(ph_value_const_ints(a, out, NULL, 8), 3);
    ck_assert_int_eq(out[1], -1);
    ck_assert_int_eq(ph_value_const_ints(b, out, sym, 8), 3);
    ck_assert_int_eq(out[2], 3);
    ck_assert_ptr_null(sym[0]);
    ck_assert_int_eq(ph_value_const_ints(f, out, NULL, 8), PH_ENOTFOUND); /* not integers */
    ck_assert_int_eq(ph_value_const_ints(a, out, NULL, 2), PH_ERANGE);    /* too many */
    /* a Constant node */
    ph_node *c = ph_node_create(g, NULL, "Constant", 0, NULL, 1);
    ph_node_set_attr_tensor(c, "value", ph_tensor_new(PH_DT_INT64, 1, d1, v64));
    ck_assert_int_eq(ph_value_const_ints(ph_node_output(c, 0), out, NULL, 8), 3);
    ck_assert_int_eq(out[2], 7);
    /* a shape constant with a symbolic entry: Shape(x) of x[batch, 5] */
    int64_t xd[] = {-1, 5};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, xd);
    ph_value_set_dim_param(x, 0, "batch");
    ph_value *shp = ph_node_output(ph_node_create(g, NULL, "Shape", 1, &x, 1), 0);
    ph_graph_add_output(g, shp);
    ph_error e = {0};
    ck_assert_int_eq(ph_graph_infer_shapes(g, &e), 0);
    ck_assert_int_eq(ph_value_const_ints(shp, out, sym, 8), 2);
    ck_assert_str_eq(sym[0], "batch");
    ck_assert_int_eq(out[1], 5);
    ck_assert_int_eq(ph_value_const_ints(shp, out, NULL, 8), PH_ENOTFOUND); /* numbers only: no */
    ck_assert_int_eq(ph_value_const_ints(shp, out, sym, 1), PH_ERANGE);
    /* a graph input is never a constant */
    ck_assert_int_eq(ph_value_const_ints(x, out, sym, 8), PH_ENOTFOUND);
    ph_model_free(m);
}
END_TEST

/* The op helpers' one convention (op_helpers.h): a yes/no question answers
 * 1 or 0, "not such a node" is PH_ENOTFOUND, too many for the caller's
 * array PH_ERANGE, a bad argument PH_EINVAL: never -1, which is PH_ENOMEM. */
/* Whole axes: a known dim by its clamped range, a symbolic one by the
 * "to the end" sentinels or its own name; never a negative step. */
START_TEST(slice_axis_whole)
{
    ph_model *m = ph_model_new(13);
    ph_value *x = ph_graph_add_input(ph_model_graph(m), "x", PH_DT_FLOAT, 3, (int64_t[]){4, -1, 1});
    ph_value_set_dim_param(x, 1, "batch");
    static const struct {
        int64_t axis, start, end, step;
        const char *sym;
        int whole;
    } cases[] = {
        {0, 0, INT64_MAX, 1, NULL, 1}, {0, -4, 4, 1, NULL, 1},         {0, 0, 3, 1, NULL, 0},
        {0, 1, 4, 1, NULL, 0},         {0, -1, INT64_MIN, -1, NULL, 0}, {0, 0, 0, 1, "batch", 0},
        {1, 0, INT32_MAX, 1, NULL, 1}, {1, INT32_MIN, INT64_MAX, 1, NULL, 1}, {1, 0, 100, 1, NULL, 0},
        {1, 0, 0, 1, "batch", 1},      {1, 0, 0, 1, "other", 0},        {1, 0, INT64_MAX, 2, NULL, 0},
        {2, 0, 1, 5, NULL, 1},         {2, 0, 1, -1, NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ph_slice_params s = {.n = 1};
        s.axis[0] = cases[i].axis, s.start[0] = cases[i].start, s.end[0] = cases[i].end;
        s.step[0] = cases[i].step, s.end_sym[0] = cases[i].sym;
        ck_assert_msg(ph_slice_axis_whole(x, &s, 0) == cases[i].whole, "case %zu", i);
    }
    ph_model_free(m);
}
END_TEST

/* Every form of a Constant's value as a tensor; the forms it cannot give. */
START_TEST(constant_node_tensor_of_every_form)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    ph_node *c[7];
    for (int i = 0; i < 7; i++)
        c[i] = ph_node_create(g, NULL, "Constant", 0, NULL, 1);
    int64_t iv[] = {4, -5}, two[] = {2};
    ph_node_set_attr_tensor(c[0], "value", ph_tensor_new(PH_DT_INT64, 1, two, iv));
    ph_node_set_attr_float(c[1], "value_float", 0.5f);
    ph_node_set_attr_int(c[2], "value_int", 7);
    ph_node_set_attr_floats(c[3], "value_floats", 2, (float[]){1.5f, -2});
    ph_node_set_attr_ints(c[4], "value_ints", 2, iv);
    ph_node_set_attr_string(c[5], "value_string", "s");
    ph_node_set_attr_int(c[6], "value_int", 1);
    ph_node_set_attr_float(c[6], "value_float", 1); /* two values: malformed */
    int dts[] = {PH_DT_INT64, PH_DT_FLOAT, PH_DT_INT64, PH_DT_FLOAT, PH_DT_INT64};
    size_t ranks[] = {1, 0, 0, 1, 1};
    double first[] = {4, 0.5, 7, 1.5, 4};
    for (int i = 0; i < 5; i++) {
        ph_tensor *t;
        ck_assert_int_eq(ph_constant_node_tensor(c[i], &t), 0);
        ck_assert_int_eq(ph_tensor_dtype(t), dts[i]);
        ck_assert_uint_eq(ph_tensor_rank(t), ranks[i]);
        ck_assert_int_eq(ph_tensor_numel(t), ranks[i] ? 2 : 1);
        double all[2];
        ck_assert_int_eq(ph_tensor_read_f64(t, ranks[i], ranks[i] ? two : NULL, all), 0);
        ck_assert(all[0] == first[i]);
        ph_tensor_free(t);
    }
    for (int i = 5; i < 7; i++) {
        ph_tensor *t = (ph_tensor *)1;
        ck_assert_int_eq(ph_constant_node_tensor(c[i], &t), PH_ENOTFOUND);
        ck_assert_ptr_null(t);
    }
    ph_model_free(m);
}
END_TEST

START_TEST(helpers_answer_no_without_minus_one)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t xd[] = {2, 3, 4}, perm[8], ax[8], swap[] = {0, 2, 1}, three[] = {3}, one[] = {1};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 3, xd);
    ph_node *t = ph_node_create(g, NULL, "Transpose", 1, &x, 1);
    ph_node_set_attr_ints(t, "perm", 3, swap);
    ck_assert_int_eq(ph_node_transpose_perm(t, perm, 8), 3);
    ck_assert_int_eq(ph_node_transpose_perm(t, perm, 2), PH_ERANGE);
    ck_assert_int_eq(ph_node_transpose_swap_rank(t), 3);
    ph_node *relu = ph_node_create(g, NULL, "Relu", 1, &x, 1);
    ck_assert_int_eq(ph_node_transpose_perm(relu, perm, 8), PH_ENOTFOUND);
    ck_assert_int_eq(ph_node_transpose_swap_rank(relu), 0);
    int64_t bad[] = {0, 0, 1};
    ph_node_set_attr_ints(t, "perm", 3, bad);
    ck_assert_int_eq(ph_node_transpose_perm(t, perm, 8), PH_ENOTFOUND);
    ck_assert_int_eq(ph_node_transpose_swap_rank(t), 0);
    /* axes: an attribute at opset 11, an input from 13; any other op asks wrongly */
    ck_assert_int_eq(ph_op_axes_is_input(PH_OP_Squeeze, 11), 0);
    ck_assert_int_eq(ph_op_axes_is_input(PH_OP_Squeeze, 13), 1);
    ck_assert_int_eq(ph_op_axes_is_input(PH_OP_Relu, 13), PH_EINVAL);
    int64_t axes[] = {0, -1, 1};
    ph_value *va = ph_graph_add_initializer(g, "axes", ph_tensor_new(PH_DT_INT64, 1, three, axes));
    ph_node *rs = ph_node_create(g, NULL, "ReduceSum", 2, (ph_value *[]){x, va}, 1);
    ck_assert_int_eq(ph_node_axes(rs, 3, ax, 8), 3);
    ck_assert_int_eq(ph_node_axes(rs, 3, ax, 2), PH_ERANGE);
    ck_assert_int_eq(ph_node_axes(rs, 2, ax, 8), PH_EINVAL); /* 1 and -1 are one axis at rank 2 */
    ph_value *dyn = ph_graph_add_input(g, "dyn", PH_DT_INT64, 1, one);
    ph_node_set_input(rs, 1, dyn);
    ck_assert_int_eq(ph_node_axes(rs, 3, ax, 8), PH_ENOTFOUND);
    ph_model_free(m);
}
END_TEST

/* The type of a transposed value: dims and their symbolic names move with
 * the perm; a rank that does not fit leaves the value as it is. */
START_TEST(type_of_a_transposed_value)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t xd[] = {2, -1, 4}, perm[] = {2, 0, 1};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT16, 3, xd);
    ck_assert_int_eq(ph_value_set_dim_param(x, 1, "seq"), 0);
    ph_node *t = ph_node_create(g, NULL, "Transpose", 1, &x, 1);
    ph_value *y = ph_node_output(t, 0);
    ck_assert_int_eq(ph_value_set_type_transposed(y, x, 3, perm), 0);
    ck_assert_int_eq(ph_value_dtype(y), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_rank(y), 3);
    ck_assert_int_eq(ph_value_dim(y, 0), 4);
    ck_assert_int_eq(ph_value_dim(y, 1), 2);
    ck_assert_int_eq(ph_value_dim(y, 2), -1);
    ck_assert_str_eq(ph_value_dim_param(y, 2), "seq");
    ck_assert_ptr_null(ph_value_dim_param(y, 0));
    ph_node *t2 = ph_node_create(g, NULL, "Transpose", 1, &x, 1);
    ph_value *z = ph_node_output(t2, 0);
    ck_assert_int_eq(ph_value_set_type_transposed(z, x, 2, perm), 0); /* x has rank 3: z keeps no type */
    ck_assert_int_eq(ph_value_rank(z), -1);
    ck_assert_int_eq(ph_value_set_type_transposed(NULL, x, 3, perm), PH_EINVAL);
    ck_assert_int_eq(ph_value_set_type_transposed(z, x, 3, NULL), PH_EINVAL);
    ph_model_free(m);
}
END_TEST

START_TEST(slice_params)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t xd[] = {4, 6, 8}, one[] = {2};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 3, xd);
    int64_t st[] = {1, 0}, en[] = {3, INT64_MAX}, ax[] = {-1, 0};
    ph_value *vs = ph_graph_add_initializer(g, "s", ph_tensor_new(PH_DT_INT64, 1, one, st));
    ph_value *ve = ph_graph_add_initializer(g, "e", ph_tensor_new(PH_DT_INT64, 1, one, en));
    ph_value *va = ph_graph_add_initializer(g, "a", ph_tensor_new(PH_DT_INT64, 1, one, ax));
    ph_node *sl = ph_node_create(g, NULL, "Slice", 4, (ph_value *[]){x, vs, ve, va}, 1);
    ph_slice_params p;
    ck_assert_int_eq(ph_node_slice_params(sl, 3, &p), 0);
    ck_assert_int_eq(p.n, 2);
    ck_assert_int_eq(p.axis[0], 2); /* -1 normalized */
    ck_assert_int_eq(p.step[1], 1); /* defaulted */
    ck_assert_int_eq(p.end[1], INT64_MAX);
    /* a repeated axis is refused */
    int64_t ax2[] = {0, -3};
    ph_node_set_input(sl, 3, ph_graph_add_initializer(g, "a2", ph_tensor_new(PH_DT_INT64, 1, one, ax2)));
    ck_assert_int_eq(ph_node_slice_params(sl, 3, &p), PH_EINVAL);
    /* a non-constant start is refused */
    ph_node_set_input(sl, 3, va);
    ph_value *dyn = ph_graph_add_input(g, "dyn", PH_DT_INT64, 1, one);
    ph_node_set_input(sl, 1, dyn);
    ck_assert_int_eq(ph_node_slice_params(sl, 3, &p), PH_ENOTFOUND);
    /* not a Slice */
    ph_node *relu = ph_node_create(g, NULL, "Relu", 1, &x, 1);
    ck_assert_int_eq(ph_node_slice_params(relu, 3, &p), PH_ENOTFOUND);
    ph_model_free(m);
}
END_TEST

/* ph_value_set_dtype changes the dtype alone: dims and their names stay
 * (also above rank 64), an unknown shape stays unknown. */
START_TEST(set_dtype_keeps_the_shape)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t xd[] = {2, -1, 4};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 3, xd);
    ck_assert_int_eq(ph_value_set_dim_param(x, 1, "seq"), 0);
    ck_assert_int_eq(ph_value_set_dtype(x, PH_DT_FLOAT16), 0);
    ck_assert_int_eq(ph_value_dtype(x), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_rank(x), 3);
    ck_assert_int_eq(ph_value_dim(x, 0), 2);
    ck_assert_int_eq(ph_value_dim(x, 1), -1);
    ck_assert_str_eq(ph_value_dim_param(x, 1), "seq");
    ck_assert_int_eq(ph_value_dim(x, 2), 4);
    int64_t big[70];
    for (int i = 0; i < 70; i++)
        big[i] = 1 + i % 3;
    ph_value *b = ph_graph_add_input(g, "b", PH_DT_INT64, 70, big);
    ck_assert_int_eq(ph_value_set_dtype(b, PH_DT_INT32), 0);
    ck_assert_int_eq(ph_value_rank(b), 70);
    ck_assert_int_eq(ph_value_dim(b, 69), 1 + 69 % 3);
    ph_node *r = ph_node_create(g, NULL, "Relu", 1, &x, 1);
    ph_value *y = ph_node_output(r, 0); /* no type yet */
    ck_assert_int_eq(ph_value_set_dtype(y, PH_DT_FLOAT16), 0);
    ck_assert_int_eq(ph_value_dtype(y), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_rank(y), -1);
    ck_assert_int_eq(ph_value_set_dtype(NULL, PH_DT_FLOAT), PH_EINVAL);
    ph_model_free(m);
}
END_TEST

/* x: float [n, 3] -> Neg (typed like x), no graph output yet. */
static ph_model *neg_model(void)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t xd[] = {-1, 3};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, xd);
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "n"), 0);
    ph_node *neg = ph_node_create(g, NULL, "Neg", 1, &x, 1);
    ck_assert_int_eq(ph_value_copy_type(ph_node_output(neg, 0), x), 0);
    return m;
}

/* ph_cast_create: a Cast placed before the node given (or last), its
 * output typed like its input with the new dtype; nothing made for a NULL
 * argument.  The model still verifies. */
START_TEST(cast_create_types_its_output)
{
    ph_model *m = neg_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *neg = ph_graph_first_node(g);
    ph_value *x = ph_node_input(neg, 0);
    ph_value *h = ph_cast_create(g, neg, x, PH_DT_FLOAT16);
    ck_assert_ptr_nonnull(h);
    ph_node *c = ph_value_producer(h);
    ck_assert_ptr_eq(ph_graph_first_node(g), c); /* before neg */
    ck_assert_ptr_eq(ph_node_next(c), neg);
    ck_assert_int_eq(ph_node_op(c), PH_OP_Cast);
    ck_assert_int_eq(ph_node_attr_int(c, "to", 0), PH_DT_FLOAT16);
    ck_assert_ptr_eq(ph_node_input(c, 0), x);
    ck_assert_int_eq(ph_value_dtype(h), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_rank(h), 2);
    ck_assert_str_eq(ph_value_dim_param(h, 0), "n");
    ck_assert_int_eq(ph_value_dim(h, 1), 3);
    ck_assert_int_eq(ph_value_dtype(x), PH_DT_FLOAT); /* x itself keeps its type */
    ph_value *back = ph_cast_create(g, NULL, h, PH_DT_FLOAT);
    ck_assert_ptr_nonnull(back);
    ck_assert_ptr_null(ph_node_next(ph_value_producer(back))); /* last */
    ck_assert_int_eq(ph_value_dtype(back), PH_DT_FLOAT);
    ck_assert_str_eq(ph_value_dim_param(back, 0), "n");
    ck_assert_int_eq(ph_graph_add_output(g, back), 0);
    ck_assert_int_eq(ph_graph_add_output(g, ph_node_output(neg, 0)), 0);
    size_t nodes = ph_model_node_count(m);
    ck_assert_ptr_null(ph_cast_create(g, NULL, NULL, PH_DT_FLOAT));
    ck_assert_ptr_null(ph_cast_create(NULL, NULL, x, PH_DT_FLOAT));
    ck_assert_uint_eq(ph_model_node_count(m), nodes);
    ph_error err = {0};
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_model_free(m);
}
END_TEST

static int cast_round_trip(ph_rewriter *rw, const ph_match *mt)
{
    ph_value *h = ph_rw_cast(rw, ph_match_value(mt, "x"), PH_DT_FLOAT16);
    ph_value *back = ph_rw_cast(rw, h, PH_DT_FLOAT);
    ph_value *y = ph_rw_op(rw, "Abs", 1, &back);
    return ph_rw_replace_root(rw, y);
}

static int cast_of_nothing(ph_rewriter *rw, const ph_match *mt)
{
    (void)mt;
    ph_value *bad = ph_rw_cast(rw, NULL, PH_DT_FLOAT16);
    ck_assert_ptr_null(bad);
    return 1; /* the sticky failure makes the rewrite fail: nothing changes */
}

/* ph_rw_cast: Casts made through the rewriter, typed; a NULL input fails
 * the rewrite. */
START_TEST(rw_cast_types_its_output)
{
    static const ph_rule rules[] = {{"round_trip", "y = Neg(x)", NULL, cast_round_trip}, {0}};
    static const ph_rule bad_rules[] = {{"nothing", "y = Neg(x)", NULL, cast_of_nothing}, {0}};
    ph_model *m = neg_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *neg = ph_graph_first_node(g);
    ck_assert_int_eq(ph_graph_add_output(g, ph_node_output(neg, 0)), 0);
    ph_error err = {0};
    ph_ruleset *bad = ph_ruleset_new(bad_rules, &err);
    ck_assert_ptr_nonnull(bad);
    ck_assert_int_le(ph_ruleset_run(bad, g, NULL, NULL), 0);
    ck_assert_uint_eq(ph_model_node_count(m), 1);
    ck_assert_int_eq(ph_node_op(ph_graph_first_node(g)), PH_OP_Neg);
    ph_ruleset_free(bad);
    ph_ruleset *rs = ph_ruleset_new(rules, &err);
    ck_assert_ptr_nonnull(rs);
    ck_assert_int_eq(ph_ruleset_run(rs, g, NULL, NULL), 1);
    ph_node *c16 = ph_graph_first_node(g), *c32 = ph_node_next(c16);
    ck_assert_int_eq(ph_node_op(c16), PH_OP_Cast);
    ck_assert_int_eq(ph_node_attr_int(c16, "to", 0), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_value_dtype(ph_node_output(c16, 0)), PH_DT_FLOAT16);
    ck_assert_str_eq(ph_value_dim_param(ph_node_output(c16, 0), 0), "n");
    ck_assert_int_eq(ph_node_op(c32), PH_OP_Cast);
    ck_assert_int_eq(ph_node_attr_int(c32, "to", 0), PH_DT_FLOAT);
    ck_assert_int_eq(ph_value_dtype(ph_node_output(c32, 0)), PH_DT_FLOAT);
    ck_assert_int_eq(ph_value_dim(ph_node_output(c32, 0), 1), 3);
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_ruleset_free(rs);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("operands");
    TCase *tc = tcase_create("operands");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, slice_length_follows_the_spec);
    tcase_add_test(tc, const_ints_from_every_kind_of_constant);
    tcase_add_test(tc, slice_params);
    tcase_add_test(tc, type_of_a_transposed_value);
    tcase_add_test(tc, slice_axis_whole);
    tcase_add_test(tc, constant_node_tensor_of_every_form);
    tcase_add_test(tc, helpers_answer_no_without_minus_one);
    tcase_add_test(tc, set_dtype_keeps_the_shape);
    tcase_add_test(tc, cast_create_types_its_output);
    tcase_add_test(tc, rw_cast_types_its_output);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
