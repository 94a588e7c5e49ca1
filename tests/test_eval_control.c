/* tests/test_eval_control.c - the evaluator's control flow, sequences,
 * optionals and random ops (eval_ops_control.c, eval_ops_sequence.c,
 * eval_ops_random.c) and the core's support for them: If/Loop/Scan bodies
 * reading values of the graphs around them (also two levels up, also
 * values no node of their own graph reads after them), loop-carried
 * sequences, Scan at opsets 8 and 9+, SequenceMap, every sequence and
 * optional op with its errors, ph_eval_output_is_random, and a body the
 * node-alone entry point cannot give outer values to. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalcase.h"
#include "passhost/passhost.h"

/* ------------------------------------------------------------ graph helpers */

static ph_value *in_f(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    ph_value *v = ph_graph_add_input(g, name, PH_DT_FLOAT, rank, dims);
    ck_assert_ptr_nonnull(v);
    return v;
}

static ph_value *op(ph_graph *g, const char *type, size_t n, ph_value *const *ins)
{
    ph_node *nd = ph_node_create(g, NULL, type, n, ins, 1);
    ck_assert_ptr_nonnull(nd);
    return ph_node_output(nd, 0);
}
#define OP(g, type, ...) op(g, type, sizeof((ph_value *[]){__VA_ARGS__}) / sizeof(ph_value *), (ph_value *[]){__VA_ARGS__})

/* Evaluate m's main graph on inputs (n of them); outputs into out[]. */
static void eval_graph(ph_model *m, const ph_tensor *const *in, size_t n, ph_tensor **out, size_t n_out)
{
    ph_eval *e = NULL;
    ph_error err = {0, ""};
    ck_assert_msg(ph_eval_new(ph_model_graph(m), &e, &err) == 0, "prepare: %s", err.message);
    ck_assert_msg(ph_eval_run(e, in, n, out, n_out, &err) == 0, "run: %s", err.message);
    ph_eval_free(e);
}

static void free_all(ph_tensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ph_tensor_free(t[i]);
}

/* ------------------------------------------------------------ float64 mode */

/* The float64 reference mode reaches into bodies: an If branch and a Loop
 * body add a Constant 1e-8 to x = 1 (float32 rounds it away, double keeps
 * it), the body of the Loop inherits the mode of the graph around it; a
 * sequence fed as a graph input with float items takes a double item (its
 * items are promoted where it enters the run); DynamicQuantizeLinear
 * computes in double (x = -2.5, scale 5/255: exactly -127.5, which rounds
 * to even: 25 where float32 gives 26). */
static ph_value *tiny_const(ph_graph *g)
{
    ph_node *c = ph_node_create(g, NULL, "Constant", 0, NULL, 1);
    const float v = 1e-8f;
    ck_assert_int_eq(ph_node_set_attr_tensor(c, "value", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &v)), 0);
    return ph_node_output(c, 0);
}

static void eval_mode(ph_model *m, int float64, const ph_tensor *const *in, size_t n, ph_tensor **out,
                      size_t n_out)
{
    ph_eval *e = NULL;
    ph_error err = {0, ""};
    ph_eval_options o = {.size = sizeof o, .float64 = float64};
    ck_assert_msg(ph_eval_new_with(ph_model_graph(m), &o, &e, &err) == 0, "prepare: %s", err.message);
    ck_assert_msg(ph_eval_run(e, in, n, out, n_out, &err) == 0, "run: %s", err.message);
    ph_eval_free(e);
}

START_TEST(float64_mode_reaches_bodies_sequences_and_quantizing)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = in_f(g, "x", 1, D(1)), *c = ph_graph_add_input(g, "c", PH_DT_BOOL, 0, NULL);
    ph_value *M = ph_graph_add_input(g, "M", PH_DT_INT64, 0, NULL);
    ph_value *s = ph_graph_add_input(g, "s", PH_DT_UNDEFINED, -1, NULL);
    ph_node *iff = ph_node_create(g, NULL, "If", 1, &c, 1);
    ph_graph *tb = ph_node_add_subgraph(iff, "then_branch"), *eb = ph_node_add_subgraph(iff, "else_branch");
    ph_graph_add_output(tb, OP(tb, "Add", x, tiny_const(tb)));
    ph_graph_add_output(eb, OP(eb, "Neg", x));
    ph_node *loop = ph_node_create(g, NULL, "Loop", 3, (ph_value *[]){M, NULL, x}, 1);
    ph_graph *b = ph_node_add_subgraph(loop, "body");
    ph_graph_add_input(b, "it", PH_DT_INT64, 0, NULL);
    ph_value *cond = ph_graph_add_input(b, "cond_in", PH_DT_BOOL, 0, NULL);
    ph_value *acc = ph_graph_add_input(b, "acc", PH_DT_FLOAT, 1, D(1));
    ph_graph_add_output(b, OP(b, "Identity", cond));
    ph_graph_add_output(b, OP(b, "Add", acc, tiny_const(b)));
    ph_value *pos = ph_graph_add_initializer(g, "last", TL(0, NULL, -1));
    ph_value *item = OP(g, "SequenceAt", OP(g, "SequenceInsert", s, OP(g, "Add", x, x)), pos);
    ph_node *dq = ph_node_create(g, NULL, "DynamicQuantizeLinear", 1, (ph_value *[]){in_f(g, "q", 1, D(6))}, 3);
    ph_graph_add_output(g, ph_node_output(iff, 0));
    ph_graph_add_output(g, ph_node_output(loop, 0));
    ph_graph_add_output(g, item);
    ph_graph_add_output(g, ph_node_output(dq, 0));
    ph_graph_add_output(g, ph_node_output(dq, 1));
    ph_error err = {0, ""};
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_tensor *tx = TF(1, D(1), 1), *yes = T(PH_DT_BOOL, 0, NULL, V(1)), *tm = TL(0, NULL, 3);
    ph_tensor *items[1] = {TF(1, D(1), 5)};
    ph_tensor *seq = ph_sequence_new(PH_DT_FLOAT, 1, items);
    ph_tensor *tq = TF(1, D(6), 0, 2, -3, -2.5, 1.34, 0.5);
    const ph_tensor *in[5] = {tx, yes, tm, seq, tq};
    ph_tensor *out[5] = {NULL};
    double tiny = (double)1e-8f;
    eval_mode(m, 0, in, 5, out, 5);
    expect(out[0], PH_DT_FLOAT, 1, D(1), V(1), 0); /* float32 rounds 1 + 1e-8 to 1 */
    expect(out[1], PH_DT_FLOAT, 1, D(1), V(1), 0);
    expect(out[2], PH_DT_FLOAT, 1, D(1), V(2), 0);
    expect(out[3], PH_DT_UINT8, 1, D(6), V(153, 255, 0, 26, 221, 179), 0);
    expect(out[4], PH_DT_FLOAT, 0, NULL, V(5.0 / 255), 1e-8);
    free_all(out, 5);
    eval_mode(m, 1, in, 5, out, 5);
    expect(out[0], PH_DT_DOUBLE, 1, D(1), V(1 + tiny), 1e-17);
    expect(out[1], PH_DT_DOUBLE, 1, D(1), V(1 + 3 * tiny), 1e-16);
    ck_assert(((const double *)ph_tensor_data(out[0]))[0] > 1);
    expect(out[2], PH_DT_DOUBLE, 1, D(1), V(2), 0);
    expect(out[3], PH_DT_UINT8, 1, D(6), V(153, 255, 0, 25, 221, 179), 0);
    expect(out[4], PH_DT_DOUBLE, 0, NULL, V(5.0 / 255), 1e-17);
    free_all(out, 5);
    ph_tensor_free(tx);
    ph_tensor_free(yes);
    ph_tensor_free(tm);
    ph_tensor_free(seq);
    ph_tensor_free(tq);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ If */

/* k = x * x is read only inside the branches (no node of the main graph
 * reads it after the If), so its lifetime must reach the If; the then
 * branch adds x to it, the else branch negates it. */
START_TEST(if_reads_outer_values)
{
    ph_model *m = ph_model_new(16);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = in_f(g, "x", 1, D(3));
    ph_value *c = ph_graph_add_input(g, "c", PH_DT_BOOL, 0, NULL);
    ph_value *k = OP(g, "Mul", x, x);
    ph_node *iff = ph_node_create(g, NULL, "If", 1, &c, 1);
    ph_graph *tb = ph_node_add_subgraph(iff, "then_branch"), *eb = ph_node_add_subgraph(iff, "else_branch");
    ph_graph_add_output(tb, OP(tb, "Add", k, x));
    ph_graph_add_output(eb, OP(eb, "Neg", k));
    ph_graph_add_output(g, ph_node_output(iff, 0));
    ph_error err = {0, ""};
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_tensor *tx = TF(1, D(3), 1, -2, 3), *yes = T(PH_DT_BOOL, 0, NULL, V(1)), *no = T(PH_DT_BOOL, 0, NULL, V(0));
    ph_tensor *y = NULL;
    eval_graph(m, (const ph_tensor *[]){tx, yes}, 2, &y, 1);
    expect(y, PH_DT_FLOAT, 1, D(3), V(2, 2, 12), 0);
    ph_tensor_free(y);
    eval_graph(m, (const ph_tensor *[]){tx, no}, 2, &y, 1);
    expect(y, PH_DT_FLOAT, 1, D(3), V(-1, -4, -9), 0);
    ph_tensor_free(y);

    /* evaluated alone, the node has no enclosing run to read k from */
    ph_tensor *outs[1] = {NULL};
    int rc = ph_eval_node(iff, 16, (const ph_tensor *[]){yes}, outs, &err);
    ck_assert_int_eq(rc, PH_EUNSUPPORTED);
    ck_assert_msg(strstr(err.message, "enclosing graph"), "%s", err.message);
    ph_tensor_free(tx);
    ph_tensor_free(yes);
    ph_tensor_free(no);
    ph_model_free(m);
}
END_TEST

/* A branch that reads nothing from outside evaluates alone too; float16
 * values pass through the If unchanged. */
START_TEST(if_self_contained_and_halves)
{
    ph_model *m = ph_model_new(16);
    ph_graph *g = ph_model_graph(m);
    ph_value *c = ph_graph_add_input(g, "c", PH_DT_BOOL, 0, NULL);
    ph_node *iff = ph_node_create(g, NULL, "If", 1, &c, 1);
    ph_graph *tb = ph_node_add_subgraph(iff, "then_branch"), *eb = ph_node_add_subgraph(iff, "else_branch");
    ph_node *k1 = ph_node_create(tb, NULL, "Constant", 0, NULL, 1);
    ph_node_set_attr_tensor(k1, "value", T(PH_DT_FLOAT16, 1, D(2), V(1.5, -2)));
    ph_graph_add_output(tb, ph_node_output(k1, 0));
    ph_node *k2 = ph_node_create(eb, NULL, "Constant", 0, NULL, 1);
    ph_node_set_attr_tensor(k2, "value", T(PH_DT_FLOAT16, 1, D(2), V(0.25, 4)));
    ph_graph_add_output(eb, ph_node_output(k2, 0));
    ph_tensor *yes = T(PH_DT_BOOL, 0, NULL, V(1)), *outs[1] = {NULL};
    ph_error err = {0, ""};
    ck_assert_msg(ph_eval_node(iff, 16, (const ph_tensor *[]){yes}, outs, &err) == 0, "%s", err.message);
    expect(outs[0], PH_DT_FLOAT16, 1, D(2), V(1.5, -2), 0);
    ph_tensor_free(outs[0]);
    /* a condition that is not one element */
    ph_tensor *two = T(PH_DT_BOOL, 1, D(2), V(1, 0));
    ck_assert_int_eq(ph_eval_node(iff, 16, (const ph_tensor *[]){two}, outs, &err), PH_EINVAL);
    ph_tensor_free(two);
    ph_tensor_free(yes);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ Loop */

/* acc += x each iteration (x from the main graph), a scan output of acc,
 * and a condition that stops after iteration 2 although M is 5. */
START_TEST(loop_carried_scan_and_condition)
{
    ph_model *m = ph_model_new(16);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = in_f(g, "x", 1, D(2)), *acc0 = in_f(g, "acc0", 1, D(2));
    ph_value *M = ph_graph_add_input(g, "M", PH_DT_INT64, 0, NULL);
    ph_value *two = ph_graph_add_input(g, "two", PH_DT_INT64, 0, NULL);
    ph_node *loop = ph_node_create(g, NULL, "Loop", 3, (ph_value *[]){M, NULL, acc0}, 2);
    ph_graph *b = ph_node_add_subgraph(loop, "body");
    ph_value *it = ph_graph_add_input(b, "it", PH_DT_INT64, 0, NULL);
    ph_graph_add_input(b, "cond_in", PH_DT_BOOL, 0, NULL);
    ph_value *acc = ph_graph_add_input(b, "acc", PH_DT_FLOAT, 1, D(2));
    ph_value *next = OP(b, "Add", acc, x);
    ph_graph_add_output(b, OP(b, "Less", it, two));
    ph_graph_add_output(b, next);
    ph_value *snap = OP(b, "Identity", next);
    ph_value_set_type(snap, PH_DT_FLOAT, 1, D(2)); /* the element type of an empty scan output */
    ph_graph_add_output(b, snap);
    ph_graph_add_output(g, ph_node_output(loop, 0));
    ph_graph_add_output(g, ph_node_output(loop, 1));
    ph_tensor *tx = TF(1, D(2), 1, 10), *ta = TF(1, D(2), 0, 0.5), *tm = TL(0, NULL, 5), *t2 = TL(0, NULL, 2);
    ph_tensor *out[2] = {NULL, NULL};
    eval_graph(m, (const ph_tensor *[]){tx, ta, tm, t2}, 4, out, 2);
    expect(out[0], PH_DT_FLOAT, 1, D(2), V(3, 30.5), 0);
    expect(out[1], PH_DT_FLOAT, 2, D(3, 2), V(1, 10.5, 2, 20.5, 3, 30.5), 0);
    free_all(out, 2);
    /* M = 0: no iteration; the carried value is the initial one, the scan
       output empty with the body's declared element shape */
    ph_tensor_free(tm);
    tm = TL(0, NULL, 0);
    eval_graph(m, (const ph_tensor *[]){tx, ta, tm, t2}, 4, out, 2);
    expect(out[0], PH_DT_FLOAT, 1, D(2), V(0, 0.5), 0);
    ck_assert_int_eq(ph_tensor_dim(out[1], 0), 0);
    free_all(out, 2);
    ph_tensor_free(tx);
    ph_tensor_free(ta);
    ph_tensor_free(tm);
    ph_tensor_free(t2);
    ph_model_free(m);
}
END_TEST

/* A sequence as the loop-carried value (SequenceEmpty, SequenceInsert of
 * the iteration number in the body, ConcatFromSequence after), and an If
 * inside the body that reads a value of the main graph: two levels out. */
START_TEST(loop_sequence_and_nested_if)
{
    ph_model *m = ph_model_new(16);
    ph_graph *g = ph_model_graph(m);
    ph_value *M = ph_graph_add_input(g, "M", PH_DT_INT64, 0, NULL);
    ph_value *big = ph_graph_add_input(g, "big", PH_DT_INT64, 1, D(1));
    ph_node *se = ph_node_create(g, NULL, "SequenceEmpty", 0, NULL, 1);
    ph_node_set_attr_int(se, "dtype", PH_DT_INT64);
    ph_node *loop = ph_node_create(g, NULL, "Loop", 3, (ph_value *[]){M, NULL, ph_node_output(se, 0)}, 1);
    ph_graph *b = ph_node_add_subgraph(loop, "body");
    ph_value *it = ph_graph_add_input(b, "it", PH_DT_INT64, 0, NULL);
    ph_value *cin = ph_graph_add_input(b, "cond_in", PH_DT_BOOL, 0, NULL);
    ph_value *seq = ph_graph_add_input(b, "seq", PH_DT_UNDEFINED, -1, NULL);
    /* even iterations insert [it], odd ones the main graph's `big` */
    ph_node *axes = ph_node_create(b, NULL, "Constant", 0, NULL, 1);
    ph_node_set_attr_tensor(axes, "value", TL(1, D(1), 0));
    ph_value *one = OP(b, "Unsqueeze", it, ph_node_output(axes, 0));
    ph_node *k2 = ph_node_create(b, NULL, "Constant", 0, NULL, 1);
    ph_node_set_attr_tensor(k2, "value", TL(0, NULL, 2));
    ph_value *odd = OP(b, "Cast", OP(b, "Mod", it, ph_node_output(k2, 0)));
    ph_node_set_attr_int(ph_value_producer(odd), "to", PH_DT_BOOL);
    ph_node *iff = ph_node_create(b, NULL, "If", 1, &odd, 1);
    ph_graph *tb = ph_node_add_subgraph(iff, "then_branch"), *eb = ph_node_add_subgraph(iff, "else_branch");
    ph_graph_add_output(tb, OP(tb, "Identity", big));
    ph_graph_add_output(eb, OP(eb, "Identity", one));
    ph_graph_add_output(b, OP(b, "Identity", cin));
    ph_graph_add_output(b, OP(b, "SequenceInsert", seq, ph_node_output(iff, 0)));
    ph_node *cat = ph_node_create(g, NULL, "ConcatFromSequence", 1, (ph_value *[]){ph_node_output(loop, 0)}, 1);
    ph_node_set_attr_int(cat, "axis", 0);
    ph_graph_add_output(g, ph_node_output(cat, 0));
    ph_graph_add_output(g, OP(g, "SequenceLength", ph_node_output(loop, 0)));
    ph_error err = {0, ""};
    ck_assert_msg(ph_graph_verify(g, &err) == 0, "%s", err.message);
    ph_tensor *tm = TL(0, NULL, 4), *tb2 = TL(1, D(1), 99), *out[2] = {NULL, NULL};
    eval_graph(m, (const ph_tensor *[]){tm, tb2}, 2, out, 2);
    expect(out[0], PH_DT_INT64, 1, D(4), V(0, 99, 2, 99), 0);
    expect(out[1], PH_DT_INT64, 0, NULL, V(4), 0);
    free_all(out, 2);
    ph_tensor_free(tm);
    ph_tensor_free(tb2);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ Scan */

/* opset 9+: a running sum over axis 1 of x [2, 3] read in reverse
 * (scan_input_axes 1, scan_input_directions 1), its steps stacked at
 * scan_output_axes 1. */
START_TEST(scan_axes_and_directions)
{
    ph_model *m = ph_model_new(16);
    ph_graph *g = ph_model_graph(m);
    ph_value *s0 = in_f(g, "s0", 1, D(2)), *x = in_f(g, "x", 2, D(2, 3));
    ph_node *scan = ph_node_create(g, NULL, "Scan", 2, (ph_value *[]){s0, x}, 2);
    ph_node_set_attr_int(scan, "num_scan_inputs", 1);
    ph_node_set_attr_ints(scan, "scan_input_axes", 1, D(1));
    ph_node_set_attr_ints(scan, "scan_input_directions", 1, D(1));
    ph_node_set_attr_ints(scan, "scan_output_axes", 1, D(1));
    ph_graph *b = ph_node_add_subgraph(scan, "body");
    ph_value *s = in_f(b, "s", 1, D(2)), *xi = in_f(b, "xi", 1, D(2));
    ph_value *sum = OP(b, "Add", s, xi);
    ph_graph_add_output(b, sum);
    ph_graph_add_output(b, OP(b, "Identity", sum));
    ph_graph_add_output(g, ph_node_output(scan, 0));
    ph_graph_add_output(g, ph_node_output(scan, 1));
    ph_tensor *ts = TF(1, D(2), 0, 100), *tx = TF(2, D(2, 3), 1, 2, 3, 4, 5, 6), *out[2] = {NULL, NULL};
    eval_graph(m, (const ph_tensor *[]){ts, tx}, 2, out, 2);
    expect(out[0], PH_DT_FLOAT, 1, D(2), V(6, 115), 0);
    /* steps: [3, 106], [5, 111], [6, 115], stacked along axis 1 */
    expect(out[1], PH_DT_FLOAT, 2, D(2, 3), V(3, 5, 6, 106, 111, 115), 0);
    free_all(out, 2);
    ph_tensor_free(ts);
    ph_tensor_free(tx);
    ph_model_free(m);
}
END_TEST

/* opset 8: a batch axis 0 on every input and output, and the
 * sequence_lens input first (omitted here). */
START_TEST(scan_opset8_batches)
{
    ph_model *m = ph_model_new(8);
    ph_graph *g = ph_model_graph(m);
    ph_value *s0 = in_f(g, "s0", 2, D(2, 1)), *x = in_f(g, "x", 3, D(2, 3, 1));
    ph_node *scan = ph_node_create(g, NULL, "Scan", 3, (ph_value *[]){NULL, s0, x}, 2);
    ph_node_set_attr_int(scan, "num_scan_inputs", 1);
    ph_graph *b = ph_node_add_subgraph(scan, "body");
    ph_value *s = in_f(b, "s", 1, D(1)), *xi = in_f(b, "xi", 1, D(1));
    ph_value *sum = OP(b, "Add", s, xi);
    ph_graph_add_output(b, sum);
    ph_graph_add_output(b, OP(b, "Identity", sum));
    ph_graph_add_output(g, ph_node_output(scan, 0));
    ph_graph_add_output(g, ph_node_output(scan, 1));
    ph_tensor *ts = TF(2, D(2, 1), 0, 10), *tx = TF(3, D(2, 3, 1), 1, 2, 3, 4, 5, 6), *out[2] = {NULL, NULL};
    eval_graph(m, (const ph_tensor *[]){ts, tx}, 2, out, 2);
    expect(out[0], PH_DT_FLOAT, 2, D(2, 1), V(6, 25), 0);
    expect(out[1], PH_DT_FLOAT, 3, D(2, 3, 1), V(1, 3, 6, 14, 19, 25), 0);
    free_all(out, 2);
    ph_tensor_free(ts);
    ph_tensor_free(tx);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ SequenceMap */

/* body(elem, t) = elem + t over a sequence of two tensors of different
 * shapes, with a tensor as the additional input. */
START_TEST(sequence_map)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_value *a = in_f(g, "a", 1, D(2)), *bb = in_f(g, "b", 1, D(3)), *t = in_f(g, "t", 1, D(1));
    ph_value *seq = OP(g, "SequenceConstruct", a, bb);
    ph_node *map = ph_node_create(g, NULL, "SequenceMap", 2, (ph_value *[]){seq, t}, 1);
    ph_graph *body = ph_node_add_subgraph(map, "body");
    ph_value *e = ph_graph_add_input(body, "e", PH_DT_FLOAT, -1, NULL), *tt = in_f(body, "tt", 1, D(1));
    ph_graph_add_output(body, OP(body, "Add", e, tt));
    ph_graph_add_output(g, ph_node_output(map, 0));
    ph_tensor *ta = TF(1, D(2), 1, 2), *tb = TF(1, D(3), 3, 4, 5), *tt1 = TF(1, D(1), 10), *out = NULL;
    eval_graph(m, (const ph_tensor *[]){ta, tb, tt1}, 3, &out, 1);
    ck_assert_int_eq(ph_tensor_kind(out), PH_KIND_SEQUENCE);
    ck_assert_uint_eq(ph_container_length(out), 2);
    expect(ph_container_item(out, 0), PH_DT_FLOAT, 1, D(2), V(11, 12), 0);
    expect(ph_container_item(out, 1), PH_DT_FLOAT, 1, D(3), V(13, 14, 15), 0);
    ph_tensor_free(out);
    ph_tensor_free(ta);
    ph_tensor_free(tb);
    ph_tensor_free(tt1);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ sequence ops */

/* A sequence of n float tensors [k] holding k, k+1, ... (taken by mk). */
static ph_tensor *seq_of(size_t n)
{
    ph_tensor *items[8];
    for (size_t i = 0; i < n; i++)
        items[i] = TF(1, D(1), (double)i);
    ph_tensor *s = ph_sequence_new(PH_DT_FLOAT, n, items);
    ck_assert_ptr_nonnull(s);
    return s;
}

START_TEST(sequence_ops)
{
    /* SequenceConstruct, then the item at a negative position */
    tc *c = mk(17, "SequenceConstruct", 1, 2, TF(1, D(2), 1, 2), TF(1, D(1), 3));
    run_ok(c);
    ck_assert_uint_eq(ph_container_length(c->out[0]), 2);
    done(c);
    c = mk(17, "SequenceAt", 1, 2, seq_of(3), TL(0, NULL, -1));
    /* mk makes graph inputs from tensors: a sequence input gets no type */
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(1), V(2), 0);
    done(c);
    c = mk(17, "SequenceAt", 1, 2, seq_of(3), TL(0, NULL, 3));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* SequenceInsert at position 1 and at the end; SequenceErase default
       (the last) and at 0; SequenceLength */
    c = mk(17, "SequenceInsert", 1, 3, seq_of(2), TF(1, D(1), 7), TL(0, NULL, 1));
    run_ok(c);
    ck_assert_uint_eq(ph_container_length(c->out[0]), 3);
    expect(ph_container_item(c->out[0], 1), PH_DT_FLOAT, 1, D(1), V(7), 0);
    expect(ph_container_item(c->out[0], 2), PH_DT_FLOAT, 1, D(1), V(1), 0);
    done(c);
    c = mk(17, "SequenceInsert", 1, 2, seq_of(2), T(PH_DT_INT64, 1, D(1), V(7)));
    ck_assert_int_eq(run(c), PH_EINVAL); /* another dtype */
    done(c);
    c = mk(17, "SequenceErase", 1, 1, seq_of(3));
    run_ok(c);
    ck_assert_uint_eq(ph_container_length(c->out[0]), 2);
    expect(ph_container_item(c->out[0], 1), PH_DT_FLOAT, 1, D(1), V(1), 0);
    done(c);
    c = mk(17, "SequenceErase", 1, 2, seq_of(3), TL(0, NULL, 0));
    run_ok(c);
    expect(ph_container_item(c->out[0], 0), PH_DT_FLOAT, 1, D(1), V(1), 0);
    done(c);
    c = mk(17, "SequenceErase", 1, 1, seq_of(0));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    c = mk(17, "SequenceLength", 1, 1, seq_of(4));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 0, NULL, V(4), 0);
    done(c);
    /* SequenceEmpty of int32 */
    c = mk(17, "SequenceEmpty", 1, 0);
    ph_node_set_attr_int(c->n, "dtype", PH_DT_INT32);
    run_ok(c);
    ck_assert_uint_eq(ph_container_length(c->out[0]), 0);
    ck_assert_int_eq(ph_container_elem_dtype(c->out[0]), PH_DT_INT32);
    done(c);
    /* a sequence given to an op that takes tensors is refused */
    c = mk(17, "Relu", 1, 1, seq_of(1));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    ck_assert_msg(strstr(c->err.message, "sequence"), "%s", c->err.message);
    done(c);
}
END_TEST

START_TEST(split_and_concat_sequences)
{
    /* SplitToSequence by a scalar length: pieces of 2, 2, 1 along axis 1 */
    tc *c = mk(17, "SplitToSequence", 1, 2, TF(2, D(1, 5), 0, 1, 2, 3, 4), TL(0, NULL, 2));
    ph_node_set_attr_int(c->n, "axis", 1);
    run_ok(c);
    ck_assert_uint_eq(ph_container_length(c->out[0]), 3);
    expect(ph_container_item(c->out[0], 2), PH_DT_FLOAT, 2, D(1, 1), V(4), 0);
    done(c);
    /* by lengths; then without split and keepdims 0 (squeezed pieces) */
    c = mk(17, "SplitToSequence", 1, 2, TF(1, D(5), 0, 1, 2, 3, 4), TL(1, D(2), 1, 4));
    run_ok(c);
    expect(ph_container_item(c->out[0], 1), PH_DT_FLOAT, 1, D(4), V(1, 2, 3, 4), 0);
    done(c);
    c = mk(17, "SplitToSequence", 1, 2, TF(1, D(5), 0, 1, 2, 3, 4), TL(1, D(2), 1, 3));
    ck_assert_int_eq(run(c), PH_EINVAL); /* lengths sum to 4 */
    done(c);
    c = mk(17, "SplitToSequence", 1, 1, T(PH_DT_BFLOAT16, 2, D(2, 2), V(1, 2, 3, 4)));
    ph_node_set_attr_int(c->n, "keepdims", 0);
    run_ok(c);
    expect(ph_container_item(c->out[0], 1), PH_DT_BFLOAT16, 1, D(2), V(3, 4), 0);
    done(c);
    /* ConcatFromSequence along an axis, and stacked on a new axis */
    ph_tensor *items[2] = {TF(2, D(1, 2), 1, 2), TF(2, D(1, 2), 3, 4)};
    c = mk(17, "ConcatFromSequence", 1, 1, ph_sequence_new(PH_DT_FLOAT, 2, items));
    ph_node_set_attr_int(c->n, "axis", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 4), V(1, 2, 3, 4), 0);
    ph_node_set_attr_int(c->n, "new_axis", 1);
    ph_node_set_attr_int(c->n, "axis", -1);
    ph_tensor_free(c->out[0]);
    c->out[0] = NULL;
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 3, D(1, 2, 2), V(1, 3, 2, 4), 0);
    done(c);
}
END_TEST

START_TEST(optional_ops)
{
    tc *c = mk(18, "Optional", 1, 1, TF(1, D(2), 1, 2));
    run_ok(c);
    ck_assert_int_eq(ph_tensor_kind(c->out[0]), PH_KIND_OPTIONAL);
    ck_assert_uint_eq(ph_container_length(c->out[0]), 1);
    done(c);
    /* OptionalHasElement / OptionalGetElement of a full and an empty one */
    c = mk(18, "OptionalHasElement", 1, 1, ph_optional_new(PH_DT_FLOAT, TF(1, D(1), 5)));
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 0, NULL, V(1), 0);
    done(c);
    c = mk(18, "OptionalHasElement", 1, 1, ph_optional_new(PH_DT_FLOAT, NULL));
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 0, NULL, V(0), 0);
    done(c);
    c = mk(18, "OptionalHasElement", 1, 1, NULL); /* an omitted input is empty */
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 0, NULL, V(0), 0);
    done(c);
    c = mk(18, "OptionalGetElement", 1, 1, ph_optional_new(PH_DT_FLOAT, TF(1, D(1), 5)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(1), V(5), 0);
    done(c);
    c = mk(18, "OptionalGetElement", 1, 1, ph_optional_new(PH_DT_FLOAT, NULL));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* Identity passes sequences and optionals */
    c = mk(16, "Identity", 1, 1, seq_of(2));
    run_ok(c);
    ck_assert(ph_tensor_equal(c->out[0], c->in[0]));
    done(c);
}
END_TEST

/* ------------------------------------------------------------ random ops */

/* Random ops evaluate with the node's seed (the same values at every run),
 * and ph_eval_output_is_random marks the outputs that depend on them, also
 * through a body. */
START_TEST(random_ops_are_seeded_and_marked)
{
    ph_model *m = ph_model_new(16);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = in_f(g, "x", 1, D(4));
    ph_value *r = OP(g, "RandomUniformLike", x);
    ph_node_set_attr_float(ph_value_producer(r), "seed", 3);
    ph_node_set_attr_float(ph_value_producer(r), "low", 2);
    ph_node_set_attr_float(ph_value_producer(r), "high", 3);
    ph_value *sum = OP(g, "Add", x, r);
    ph_value *plain = OP(g, "Neg", x);
    ph_value *c = ph_graph_add_input(g, "c", PH_DT_BOOL, 0, NULL);
    ph_node *iff = ph_node_create(g, NULL, "If", 1, &c, 1);
    ph_graph *tb = ph_node_add_subgraph(iff, "then_branch"), *eb = ph_node_add_subgraph(iff, "else_branch");
    ph_node *rn = ph_node_create(tb, NULL, "RandomNormal", 0, NULL, 1);
    ph_node_set_attr_ints(rn, "shape", 1, D(4));
    ph_graph_add_output(tb, ph_node_output(rn, 0));
    ph_graph_add_output(eb, OP(eb, "Identity", x));
    ph_graph_add_output(g, sum);
    ph_graph_add_output(g, plain);
    ph_graph_add_output(g, ph_node_output(iff, 0));
    ph_eval *e = NULL;
    ph_error err = {0, ""};
    ck_assert_msg(ph_eval_new(g, &e, &err) == 0, "%s", err.message);
    ck_assert(ph_eval_output_is_random(e, 0));
    ck_assert(!ph_eval_output_is_random(e, 1));
    ck_assert(ph_eval_output_is_random(e, 2));
    ck_assert(!ph_eval_output_is_random(e, 3)); /* out of range */
    ph_tensor *tx = TF(1, D(4), 0, 0, 0, 0), *tc1 = T(PH_DT_BOOL, 0, NULL, V(1)), *a[3], *b[3];
    ck_assert_msg(ph_eval_run(e, (const ph_tensor *[]){tx, tc1}, 2, a, 3, &err) == 0, "%s", err.message);
    ck_assert_msg(ph_eval_run(e, (const ph_tensor *[]){tx, tc1}, 2, b, 3, &err) == 0, "%s", err.message);
    ck_assert(ph_tensor_equal(a[0], b[0]) && ph_tensor_equal(a[2], b[2]));
    for (size_t i = 0; i < 4; i++) {
        float v = ((const float *)ph_tensor_data(a[0]))[i];
        ck_assert_msg(v >= 2 && v < 3, "uniform value %g outside [2, 3)", v);
    }
    free_all(a, 3);
    free_all(b, 3);
    ph_eval_free(e);
    ph_tensor_free(tx);
    ph_tensor_free(tc1);
    ph_model_free(m);

    /* Bernoulli of 0 and 1 is certain; Multinomial of one dominant class */
    tc *k = mk(16, "Bernoulli", 1, 1, TF(1, D(4), 0, 1, 0, 1));
    run_ok(k);
    expect(k->out[0], PH_DT_FLOAT, 1, D(4), V(0, 1, 0, 1), 0);
    done(k);
    k = mk(16, "Multinomial", 1, 1, TF(2, D(1, 3), -100, 100, -100));
    ph_node_set_attr_int(k->n, "sample_size", 3);
    run_ok(k);
    expect(k->out[0], PH_DT_INT32, 2, D(1, 3), V(1, 1, 1), 0);
    done(k);
    k = mk(16, "RandomNormal", 1, 0);
    ph_node_set_attr_ints(k->n, "shape", 2, D(2, 2));
    ph_node_set_attr_int(k->n, "dtype", PH_DT_FLOAT16);
    run_ok(k);
    ck_assert_int_eq(ph_tensor_dtype(k->out[0]), PH_DT_FLOAT16);
    done(k);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("eval_control");
    TCase *tc_ = tcase_create("control");
    tcase_add_test(tc_, if_reads_outer_values);
    tcase_add_test(tc_, float64_mode_reaches_bodies_sequences_and_quantizing);
    tcase_add_test(tc_, if_self_contained_and_halves);
    tcase_add_test(tc_, loop_carried_scan_and_condition);
    tcase_add_test(tc_, loop_sequence_and_nested_if);
    tcase_add_test(tc_, scan_axes_and_directions);
    tcase_add_test(tc_, scan_opset8_batches);
    tcase_add_test(tc_, sequence_map);
    tcase_add_test(tc_, sequence_ops);
    tcase_add_test(tc_, split_and_concat_sequences);
    tcase_add_test(tc_, optional_ops);
    tcase_add_test(tc_, random_ops_are_seeded_and_marked);
    suite_add_tcase(s, tc_);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
