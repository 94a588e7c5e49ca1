/* tests/test_pass_constant_folding.c - the constant_folding pass.
 *
 * The cases are text graphs on the public harness (passhost/testing.h),
 * checked bit for bit: the pass is exact, and folding runs the very kernels
 * the evaluator runs.  The If models and the input with a default are
 * written as protobuf wire bytes (the text has no subgraphs, and no input
 * that is also an initializer), and the bundled transformer block runs
 * three passes to their fixpoint: those stay C, on ph_test_run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passcase.h"
#include "passrun.h"
#include "pbwire.h"
#include "testkit.h"
#include "tmpdir.h"

PASS_FIXTURE("constant_folding")

/* A loaded pass beside this one (caller frees with ph_test_pass_free). */
static ph_test_pass *load(const char *name)
{
    char path[4096];
    ph_error err = {0};
    ph_test_pass *p = NULL;
    snprintf(path, sizeof path, "%s/plugins/%s.so", PH_BUILD_DIR, name);
    ck_assert_msg(ph_test_load_pass(path, name, &p, &err) == 0, "%s", err.message);
    return p;
}

/* One run of desc on m (no numeric check); the rewrites. */
static int run(const ph_pass_desc *desc, ph_model *m)
{
    ph_error err = {0};
    int rc = ph_test_run(desc, m, NULL, NULL, &err);
    ck_assert_msg(rc >= 0, "%s", err.message);
    return rc;
}

/* The pass, checked, leaves m as it is (opts NULL: the defaults). */
static void assert_model_untouched(ph_model *m, const ph_test_options *opts)
{
    ph_graph *g = ph_model_graph(m);
    size_t inits = ph_graph_initializer_count(g);
    char *before = tk_graph_sig(g);
    ph_error err = {0};
    int rc = ph_test_run_checked(pass, m, opts, NULL, &err);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, err.message);
    char *after = tk_graph_sig(g);
    ck_assert_msg(strcmp(before, after) == 0, "graph changed:\n--- before\n%s--- after\n%s", before, after);
    ck_assert_uint_eq(ph_graph_initializer_count(g), inits);
    free(before);
    free(after);
}

/* `graph` after one run of the pass (its case has checked it); caller frees. */
static ph_model *rewritten(const char *graph, int rewrites)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ck_assert_int_eq(run(pass, m), rewrites);
    return m;
}

static const int64_t *const_data_i64(const ph_value *v, size_t *count)
{
    const ph_tensor *t = ph_value_const(v);
    ck_assert_msg(t != NULL, "'%s' is not a constant", ph_value_name(v));
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_INT64);
    *count = (size_t)ph_tensor_numel(t);
    return ph_tensor_data(t);
}

/* The int64 constant input i of the first node of op is `want` (n values). */
static void expect_ints(const ph_graph *g, ph_op op, size_t i, size_t n, const int64_t *want)
{
    size_t count;
    const int64_t *v = const_data_i64(ph_node_input(tk_find_op(g, op), i), &count);
    ck_assert_uint_eq(count, n);
    for (size_t k = 0; k < n; k++)
        ck_assert_int_eq(v[k], want[k]);
}

/* ------------------------------------------------------------ positive */

/* Add(w1, w2) -> Mul(., w3) -> Add(x, .): both constant nodes fold, the
 * three weights only fed them and are pruned. */
START_TEST(folds_constant_chain)
{
    const char *graph = "x: float[2,3]; w1: const float[2,3]; w2: const float[2,3]; w3: const float[3]\n"
                        "a = Add(w1, w2); c = Mul(a, w3); y = Add(x, c)\nreturn y";
    PC_CASE(graph, 2, "y = Add(x, _:const:shape=[2,3])");
    ph_model *m = rewritten(graph, 2);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 1);
    ph_model_free(m);
}
END_TEST

/* The required case: Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape's shape input on a static shape.  The indices, axes and the -1
 * come from Constant nodes, so the whole chain folds in one call (3
 * Constants, Shape, 2 Gathers, Mul, Concat); the Reshape's data is the
 * graph input, so the Reshape stays. */
START_TEST(folds_shape_gather_concat_reshape)
{
    const char *graph = "x: float[2,3,4]\nsh = Shape(x)\n"
                        "k0 = Constant() {value_ints=[0]}; d0 = Gather(sh, k0)\n"
                        "k1 = Constant() {value_ints=[1]}; d1 = Gather(sh, k1)\n"
                        "p = Mul(d0, d1); m1 = Constant() {value_ints=[-1]}; c = Concat(p, m1) {axis=0}\n"
                        "r = Reshape(x, c); y = Relu(r)\nreturn y";
    PC_CASE(graph, 8, "r = Reshape(x, _:const); y = Relu(r)");
    ph_model *m = rewritten(graph, 8);
    expect_ints(ph_model_graph(m), PH_OP_Reshape, 1, 2, TK_I64(6, -1));
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 1);
    ph_model_free(m);
}
END_TEST

/* The same chain behind a Relu whose output has no declared type: without
 * shape inference nothing folds; with it the chain does, and the Reshape's
 * data stays non-constant. */
START_TEST(folds_shape_chain_after_inference)
{
    const char *graph = "x: float[2,3,4]; idx: int64[] = [2]; axes: int64[1] = [0]; lead: int64[1] = [-1]\n"
                        "r = Relu(x); sh = Shape(r); d2 = Gather(sh, idx); u = Unsqueeze(d2, axes)\n"
                        "c = Concat(lead, u) {axis=0}; s = Reshape(r, c)\nreturn s";
    ph_test_options o = {.max_iterations = 4, .no_shapes = 1};
    PC_CASE_OPTS(&o, graph, 0, NULL); /* shape of r unknown */
    PC_CASE(graph, 4, "r = Relu(x); s = Reshape(r, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 4); /* shapes inferred first */
    expect_ints(ph_model_graph(m), PH_OP_Reshape, 1, 2, TK_I64(-1, 4));
    ph_model_free(m);
}
END_TEST

/* Shape with start: only dims 1.. must be known; Size needs all of them.
 * Only Shape(start=1) folds: its dims are [3, 4]. */
START_TEST(shape_slice_of_partly_known_shape)
{
    const char *graph = "x: float[?,3,4]; one: int64[] = [1]\n"
                        "sh1 = Shape(x) {start=1}; sz = Size(x); full = Shape(x); r = Relu(x); sr = Shape(r)\n"
                        "c = Concat(sh1, full, sr) {axis=0}; a = Add(sz, one)\nreturn c, a";
    PC_CASE(graph, 1, "sz = Size(x); a = Add(sz, one)\n--\nfull = Shape(x); r = Relu(x); sr = Shape(r)\n"
                      "c = Concat(_:const, full, sr)");
    char ops[256];
    ph_model *m = rewritten(graph, 1);
    ck_assert_str_eq(tk_ops(ph_model_graph(m), ops, sizeof ops), "Size,Shape,Relu,Shape,Concat,Add");
    expect_ints(ph_model_graph(m), PH_OP_Concat, 0, 2, TK_I64(3, 4));
    ph_model_free(m);
}
END_TEST

/* x[batch, 3, 4]: Gather(Shape(x), 2) is 4 whatever batch is; the chain
 * behind it folds, the Gather of dim 0 stays.
 *   Reshape(x, Concat([-1], Unsqueeze(Gather(Shape(x), 2))))   -> folds
 *   Concat(Gather(Shape(x), [0]), Gather(Shape(x), [1]))      -> 2nd Gather only
 * (Gather(., 2), Unsqueeze, Concat, Gather(., [1])) */
START_TEST(partly_known_shape_folds_known_dims)
{
    const char *graph = "x: float[batch,3,4]; i2: int64[] = [2]; axes: int64[1] = [0]; m1: int64[1] = [-1]\n"
                        "i0: int64[1] = [0]; i1: int64[1] = [1]\n"
                        "sh = Shape(x); d2 = Gather(sh, i2); u = Unsqueeze(d2, axes); c = Concat(m1, u) {axis=0}\n"
                        "r = Reshape(x, c)\n"
                        "b = Gather(sh, i0); cc = Gather(sh, i1); c2 = Concat(b, cc) {axis=0}; f = Cast(c2) {to=1}\n"
                        "return r, f";
    ph_test_options o = {.max_iterations = 4, .sizes = (const int64_t[]){1, 5}, .n_sizes = 2};
    PC_CASE_OPTS(&o, graph, 4,
                 "sh = Shape(x); b = Gather(sh, i0); c2 = Concat(b, _:const); f = Cast(c2)\n--\nr = Reshape(x, _:const)");
    char ops[256];
    ph_model *m = rewritten(graph, 4);
    ph_graph *g = ph_model_graph(m);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Shape,Reshape,Gather,Concat,Cast");
    expect_ints(g, PH_OP_Reshape, 1, 2, TK_I64(-1, 4));
    expect_ints(g, PH_OP_Concat, 1, 1, TK_I64(3));
    ph_model_free(m);
}
END_TEST

START_TEST(size_of_static_shape)
{
    const char *graph = "x: float[2,3,4]\nsz = Size(x); c = Cast(sz) {to=1}; y = Mul(x, c)\nreturn y";
    PC_CASE(graph, 2, "y = Mul(x, _:const:float32)");
    ph_model *m = rewritten(graph, 2);
    const ph_tensor *t = ph_value_const(ph_node_input(ph_graph_first_node(ph_model_graph(m)), 1));
    ck_assert_float_eq(*(const float *)ph_tensor_data(t), 24.0f);
    ph_model_free(m);
}
END_TEST

/* A constant input also read by a node that stays is kept; only what fed
 * the folded node alone is pruned. */
START_TEST(shared_constant_stays_for_other_consumers)
{
    const char *graph = "x: float[2,3]; w: const float[2,3]\nn = Neg(w); m = Mul(x, w); y = Add(m, n)\nreturn y";
    PC_CASE(graph, 1, "m = Mul(x, w); y = Add(m, _:const)");
    ph_model *m = rewritten(graph, 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 2);
    ph_model_free(m);
}
END_TEST

/* Multi-output node: Split of a constant; an unused output gets no
 * initializer. */
START_TEST(folds_split_outputs)
{
    const char *graph = "x: float[2]; w: const float[6]\ns0, s1, s2 = Split(w) {axis=0}; a = Add(x, s0); b = Sub(x, s2)\n"
                        "return a, b";
    PC_CASE(graph, 1, "a = Add(x, _:const)\n--\nb = Sub(x, _:const)");
    ph_model *m = rewritten(graph, 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 2);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ negative */

START_TEST(non_constant_operand_is_kept)
{
    PC_UNTOUCHED("x: float[2,3]; w: const float[2,3]\na = Add(x, w); y = Relu(a)\nreturn y");
}
END_TEST

START_TEST(unknown_shape_is_kept)
{
    PC_UNTOUCHED("x: float[?,3,4]; idx: int64[1] = [0]; rest: int64[1] = [-1]\n"
                 "sh = Shape(x); d0 = Gather(sh, idx); c = Concat(d0, rest) {axis=0}; r = Reshape(x, c); s = Size(x)\n"
                 "return r, s");
}
END_TEST

/* The folded node's output is a graph output: it keeps its node (and
 * name); the node reading it still folds from the computed value. */
START_TEST(graph_output_in_the_middle)
{
    const char *graph = "x: float[2,3]; w: const float[2,3]\nn = Neg(w); r = Relu(n); y = Add(x, r)\nreturn n, y";
    PC_CASE(graph, 1, "n = Neg(w)\n--\ny = Add(x, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(run(pass, m), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), ph_graph_first_node(g));
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_alone_is_kept)
{
    PC_UNTOUCHED("x: float[2,3]; w: const float[2,3]\nr = Relu(x); n = Neg(w)\nreturn r, n");
}
END_TEST

START_TEST(dead_node_is_left_to_dead_code_removal)
{
    PC_UNTOUCHED("x: float[2,3]; w: const float[2,3]\nn = Neg(w); y = Relu(x)\nreturn y");
}
END_TEST

/* 1024x1024 floats = 4 MiB: above the 1 MiB default, folded with no cap;
 * a small cap refuses even a 24-byte Add. */
START_TEST(size_cap)
{
    const char *big = "x: float[1024,1024]; shape: int64[2] = [1024, 1024]\n"
                      "b = ConstantOfShape(shape); y = Add(x, b)\nreturn y";
    PC_UNTOUCHED(big);
    ph_test_options o = {.max_iterations = 4, .params = (const char *const[]){"max_output_bytes=0", NULL}};
    PC_CASE_OPTS(&o, big, 1, "y = Add(x, _:const)");
    const char *small = "x: float[2,3]; a: const float[2,3]; b: const float[2,3]\ns = Add(a, b); y = Mul(x, s)\nreturn y";
    o.params = (const char *const[]){"max_output_bytes=16", NULL};
    PC_CASE_OPTS(&o, small, 0, NULL);
    o.params = (const char *const[]){"max_output_bytes=24", NULL};
    PC_CASE_OPTS(&o, small, 1, "y = Mul(x, _:const)");
}
END_TEST

/* Blow-ups are refused from the constant inputs, before evaluating (these
 * would need 40 GB and 8 GB; neither shape inference nor the evaluator can
 * take them). */
START_TEST(huge_outputs_refused_before_evaluation)
{
    ph_test_options o = {.max_iterations = 4, .no_shapes = 1, .unchecked = 1};
    PC_CASE_OPTS(&o,
                 "x: float[2,3]; shape: int64[2] = [100000, 100000]; w: const float[1,1]\n"
                 "es: int64[2] = [50000, 40000]; t: const float[2]; reps: int64[1] = [1000000000]\n"
                 "big = ConstantOfShape(shape); ex = Expand(w, es); tl = Tile(t, reps)\n"
                 "y1 = Add(x, big); y2 = Add(x, ex); y3 = Add(x, tl)\nreturn y1, y2, y3",
                 0, NULL);
}
END_TEST

/* Random ops stay (unchecked: their outputs differ run to run); the
 * Sigmoid before Bernoulli is deterministic: it alone folds. */
START_TEST(nondeterministic_ops_are_kept)
{
    PC_CASE_OPTS(&pc_unchecked,
                 "x: float[2,3]; w: const float[2,3]; train: bool[] = [1]\n"
                 "rn = RandomNormalLike(w); a1 = Add(x, rn)\n"
                 "ru1 = RandomUniformLike(w); a2 = Add(x, ru1)\n"
                 "ru = RandomUniform() {shape=[2,3]}; a3 = Add(x, ru)\n"
                 "p = Sigmoid(w); b = Bernoulli(p)\n"
                 "d = Dropout(w, _, train); a4 = Add(x, d)\n"
                 "return a1, a2, a3, b, a4",
                 1,
                 "rn = RandomNormalLike(w); a1 = Add(x, rn)\n--\nru1 = RandomUniformLike(w); a2 = Add(x, ru1)\n--\n"
                 "ru = RandomUniform(); a3 = Add(x, ru)\n--\nb = Bernoulli(_:const)\n--\n"
                 "d = Dropout(w, r?, train); a4 = Add(x, d)");
}
END_TEST

START_TEST(quantization_ops_are_kept)
{
    PC_UNTOUCHED("x: float[2,3]; w: const float[2,3]; scale: float[] = [0.05]; zp: uint8[] = [128]\n"
                 "q = QuantizeLinear(w, scale, zp); dq = DequantizeLinear(q, scale, zp); y = Add(x, dq)\nreturn y");
}
END_TEST

START_TEST(other_domain_is_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[2,3]; w: const float[2,3]\nn = Neg@com.example(w); y = Add(x, n)\nreturn y");
}
END_TEST

/* The pass's warnings, counted. */
typedef struct logcap {
    int warnings;
    char last[512];
} logcap;

static void capture(void *user, ph_log_level level, const char *pass_name, const char *message)
{
    logcap *c = user;
    if (level == PH_LOG_WARN) {
        c->warnings++;
        snprintf(c->last, sizeof c->last, "%s", message);
    }
}

/* An op the evaluator does not know, and a node it fails on: a warning
 * each, no failure, graph untouched (no shapes, no numeric check: the
 * models do not infer or evaluate). */
START_TEST(unsupported_op_warns)
{
    static const struct {
        const char *graph, *op;
    } warn[] = {
        {"x: float[6]; w: const float[6]\ns = StringNormalizer(w); y = Add(x, s)\nreturn y", "StringNormalizer"},
        {"x: float[4]; w: const float[6]; s: int64[1] = [4]\nb = Reshape(w, s); y = Add(x, b)\nreturn y", "Reshape"},
    };
    for (size_t i = 0; i < sizeof warn / sizeof *warn; i++) {
        logcap cap = {0, ""};
        ph_test_options o = {.no_shapes = 1, .unchecked = 1, .log = capture, .log_user = &cap};
        PC_CASE_OPTS(&o, warn[i].graph, 0, NULL);
        ck_assert_int_eq(cap.warnings, 1);
        ck_assert_msg(strstr(cap.last, warn[i].op) != NULL, "warning: %s", cap.last);
    }
}
END_TEST

/* ------------------------------------------------------------ subgraphs */

/* x int64[3], flag bool[] -> If -> y int64[3].
 *   then: Constant [1,2,3] -> c; Neg(c) -> nc; Add(x, nc) -> then_out
 *   else: Constant [4,5,6] -> else_out (a body output: kept)   */
static ph_model *load_if_model(void)
{
    const int64_t d[1] = {3};
    pb then_g = {0}, else_g = {0}, attrs = {0}, graph = {0}, model = {0}, ca = {0}, cb = {0};
    pb_ints_attr(&ca, "value_ints", 3, (const int64_t[]){1, 2, 3});
    pb_node(&then_g, "Constant", NULL, NULL, "c", &ca);
    pb_node(&then_g, "Neg", "c", NULL, "nc", NULL);
    pb_node(&then_g, "Add", "x", "nc", "then_out", NULL);
    pb_str(&then_g, 2, "then_branch");
    pb_value_info(&then_g, 12, "then_out", PH_DT_INT64, 1, d);
    pb_ints_attr(&cb, "value_ints", 3, (const int64_t[]){4, 5, 6});
    pb_node(&else_g, "Constant", NULL, NULL, "else_out", &cb);
    pb_str(&else_g, 2, "else_branch");
    pb_value_info(&else_g, 12, "else_out", PH_DT_INT64, 1, d);
    pb_graph_attr(&attrs, "then_branch", &then_g);
    pb_graph_attr(&attrs, "else_branch", &else_g);
    pb_node(&graph, "If", "flag", NULL, "y", &attrs);
    pb_str(&graph, 2, "main");
    pb_value_info(&graph, 11, "x", PH_DT_INT64, 1, d);
    pb_value_info(&graph, 11, "flag", PH_DT_BOOL, 0, NULL);
    pb_value_info(&graph, 12, "y", PH_DT_INT64, 1, d);
    pb_model(&model, &graph);
    return pb_load(&model);
}

/* x float[3], w float[3] with initializer w = [1,2,3] (a default the user
 * can override): Neg(w) -> n; Add(x, n) -> y.  Nothing is constant. */
static ph_model *load_input_default_model(void)
{
    const int64_t d[1] = {3};
    const float w[3] = {1, 2, 3};
    pb graph = {0}, model = {0}, init = {0};
    pb_int(&init, 1, 3);
    pb_int(&init, 2, PH_DT_FLOAT);
    pb_str(&init, 8, "w");
    pb_bytes(&init, 9, w, sizeof w);
    pb_node(&graph, "Neg", "w", NULL, "n", NULL);
    pb_node(&graph, "Add", "x", "n", "y", NULL);
    pb_str(&graph, 2, "main");
    pb_msg(&graph, 5, &init);
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 1, d);
    pb_value_info(&graph, 11, "w", PH_DT_FLOAT, 1, d);
    pb_value_info(&graph, 12, "y", PH_DT_FLOAT, 1, d);
    pb_model(&model, &graph);
    return pb_load(&model);
}


START_TEST(input_with_default_is_not_constant)
{
    ph_model *m = load_input_default_model();
    ph_value *w = ph_graph_find_value(ph_model_graph(m), "w");
    ck_assert_int_eq(ph_value_is_initializer(w), 1);
    ck_assert_int_eq(ph_value_is_graph_input(w), 1);
    assert_model_untouched(m, NULL);
    ph_model_free(m);
}
END_TEST

START_TEST(folds_inside_if_body)
{
    char ops[256];
    ph_model *m = load_if_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *iff = ph_graph_first_node(g);
    ph_graph *then_g = ph_node_subgraph(iff, 0), *else_g = ph_node_subgraph(iff, 1);
    if (strcmp(ph_graph_name(then_g), "then_branch") != 0) {
        ph_graph *t = then_g;
        then_g = else_g;
        else_g = t;
    }
    ck_assert_int_eq(run(pass, m), 2); /* Constant, Neg */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Add");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Constant");
    ck_assert_uint_eq(ph_graph_initializer_count(then_g), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    size_t n;
    const int64_t *v = const_data_i64(ph_node_input(ph_graph_first_node(then_g), 1), &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(v[0], -1);
    ck_assert_int_eq(v[2], -3);
    ck_assert_int_eq(run(pass, m), 0);
    /* the folded tensor has no TensorProto of its own: a body is packed by
     * protobuf-c, so the save makes one, and the file holds the values */
    tk_tmpdir_make("fold_if_save");
    ph_error e = {0};
    const char *out = tk_tpath("folded_if.onnx");
    ck_assert_msg(ph_model_save(m, out, &e) == 0, "%s", e.message);
    ph_model *m2 = NULL;
    ck_assert_msg(ph_model_load(out, &m2, &e) == 0, "%s", e.message);
    ph_node *iff2 = ph_graph_first_node(ph_model_graph(m2));
    ph_graph *then2 = ph_node_subgraph(iff2, strcmp(ph_graph_name(ph_node_subgraph(iff2, 0)), "then_branch") ? 1 : 0);
    ck_assert_uint_eq(ph_graph_initializer_count(then2), 1);
    ck_assert(ph_tensor_equal(ph_value_const(ph_graph_initializer(then_g, 0)),
                              ph_value_const(ph_graph_initializer(then2, 0))));
    ck_assert_str_eq(ph_value_name(ph_graph_initializer(then2, 0)), ph_value_name(ph_graph_initializer(then_g, 0)));
    /* saved again: the same bytes (the message made for the save stays) */
    const char *again = tk_tpath("again.onnx");
    ck_assert_msg(ph_model_save(m, again, &e) == 0, "%s", e.message);
    size_t na, nb;
    char *a = tk_slurp(out, &na), *b = tk_slurp(again, &nb);
    ck_assert(na == nb && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    ph_model_free(m2);
    tk_tmpdir_remove();
    ph_model_free(m);
}
END_TEST

/* A float initializer w[2,3] whose raw bytes lie in the file at an offset
 * set by the length of its name (so, over four names, at every address
 * modulo 4: the loader reads them in place, and a kernel needs them
 * aligned); t = Transpose(w), y = Add(x, t). */
static ph_model *load_in_place_transpose(const char *w_name)
{
    const float w[6] = {1, 2, 3, 4, 5, 6};
    const int64_t yd[2] = {3, 2};
    pb init = {0}, graph = {0}, model = {0};
    pb_int(&init, 1, 2);
    pb_int(&init, 1, 3);
    pb_int(&init, 2, PH_DT_FLOAT);
    pb_str(&init, 8, w_name);
    pb_bytes(&init, 9, w, sizeof w);
    pb_node(&graph, "Transpose", w_name, NULL, "t", NULL);
    pb_node(&graph, "Add", "x", "t", "y", NULL);
    pb_str(&graph, 2, "main");
    pb_msg(&graph, 5, &init);
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 2, yd);
    pb_value_info(&graph, 12, "y", PH_DT_FLOAT, 2, yd);
    pb_model(&model, &graph);
    return pb_load(&model);
}

START_TEST(folds_weights_read_in_place_at_any_alignment)
{
    static const char *const names[] = {"w", "wa", "wab", "wabc"};
    const float want[6] = {1, 4, 2, 5, 3, 6};
    for (size_t k = 0; k < 4; k++) {
        ph_model *m = load_in_place_transpose(names[k]);
        ck_assert_int_eq(run(pass, m), 1);
        ph_node *add = ph_graph_first_node(ph_model_graph(m));
        ck_assert_int_eq(ph_node_op(add), PH_OP_Add);
        const ph_tensor *t = ph_value_const(ph_node_input(add, 1));
        ck_assert_msg(t != NULL, "name %s: t not folded", names[k]);
        ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_FLOAT);
        ck_assert_uint_eq(ph_tensor_rank(t), 2);
        ck_assert_int_eq(ph_tensor_dim(t, 0), 3);
        float got[6];
        ck_assert_uint_eq(ph_tensor_nbytes(t), sizeof got);
        memcpy(got, ph_tensor_data(t), sizeof got);
        ck_assert_msg(memcmp(got, want, sizeof got) == 0, "name %s: wrong values", names[k]);
        ph_model_free(m);
    }
}
END_TEST

/* ------------------------------------------------------------ models */

static int run_all(const ph_pass_desc *const *p, size_t np, ph_model *m)
{
    int total = 0;
    for (int round = 0; round < 10; round++) {
        int changed = 0;
        for (size_t i = 0; i < np; i++)
            changed += run(p[i], m);
        total += changed;
        if (!changed)
            return total;
    }
    ck_abort_msg("passes still changing the graph after 10 rounds");
    return total;
}

/* The bundled transformer block with batch = 2 and seq = 5: the three
 * passes fold every shape computation (no Shape, Concat left; each
 * Reshape reads an initializer) and the outputs stay bit-identical. */
START_TEST(transformer_block_static_shapes)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_msg(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err) == 0, "%s", err.message);
    ck_assert_msg(ph_graph_infer_shapes(g, &err) == 0, "%s", err.message);
    size_t nodes = ph_model_node_count(m);
    ck_assert_uint_gt(tk_count_op(g, PH_OP_Shape), 0);

    ph_test_pass *c2i = load("constant_to_initializer"), *dup = load("eliminate_duplicate_initializer");
    const ph_pass_desc *p[3] = {ph_test_pass_desc(c2i), pass, ph_test_pass_desc(dup)};
    ph_tensor **before, **after;
    size_t nb = tk_eval_model(m, 21, &before);
    int total = run_all(p, 3, m);
    size_t na = tk_eval_model(m, 21, &after);
    tk_assert_same(before, nb, after, na);
    tk_free_outs(before, nb);
    tk_free_outs(after, na);

    ck_assert_int_gt(total, 0);
    ck_assert_uint_lt(ph_model_node_count(m), nodes);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Constant), 0);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Shape), 0);
    /* the one Gather left picks a row of the hidden state (data) */
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Gather), 1);
    ck_assert_ptr_null(ph_value_const(ph_node_input(tk_find_op(g, PH_OP_Gather), 0)));
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Concat), 0);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Unsqueeze), 0);
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (ph_node_op(n) == PH_OP_Reshape)
            ck_assert_msg(ph_value_const(ph_node_input(n, 1)) != NULL, "Reshape '%s' shape not folded",
                          ph_node_name(n));
    /* no two initializers hold the same data */
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        for (size_t j = i + 1; j < ph_graph_initializer_count(g); j++)
            ck_assert(!ph_tensor_equal(ph_value_const(ph_graph_initializer(g, i)),
                                       ph_value_const(ph_graph_initializer(g, j))));
    ph_test_pass_free(c2i);
    ph_test_pass_free(dup);
    ph_model_free(m);
}
END_TEST

/* With symbolic batch/seq nothing shape-dependent may fold, and the model
 * still computes the same (evaluated at batch 2, seq 5). */
START_TEST(transformer_block_symbolic_shapes)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_msg(ph_graph_infer_shapes(g, &err) == 0, "%s", err.message);
    size_t shapes = tk_count_op(g, PH_OP_Shape);
    ph_test_pass *c2i = load("constant_to_initializer"), *dup = load("eliminate_duplicate_initializer");
    const ph_pass_desc *p[3] = {ph_test_pass_desc(c2i), pass, ph_test_pass_desc(dup)};
    run_all(p, 3, m);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Shape), shapes);
    /* now fix the shapes for the evaluator and compare with the original */
    ph_model *orig = NULL;
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &orig, &err), 0);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    ck_assert_int_eq(ph_graph_set_input_shape(ph_model_graph(orig), "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    ph_tensor **before, **after;
    size_t nb = tk_eval_model(orig, 22, &before);
    size_t na = tk_eval_model(m, 22, &after);
    tk_assert_same(before, nb, after, na);
    tk_free_outs(before, nb);
    tk_free_outs(after, na);
    ph_test_pass_free(c2i);
    ph_test_pass_free(dup);
    ph_model_free(orig);
    ph_model_free(m);
}
END_TEST

/* Ops whose output is a sequence or an optional stay: no initializer can
 * hold one (SequenceEmpty once became an initializer of data_type 0 that
 * the written file could not load back with). */
START_TEST(sequences_are_not_folded)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *se = ph_node_create(g, NULL, "SequenceEmpty", 0, NULL, 1);
    ph_node *len = ph_node_create(g, NULL, "SequenceLength", 1, (ph_value *[]){ph_node_output(se, 0)}, 1);
    ph_node *opt = ph_node_create(g, NULL, "Optional", 1, (ph_value *[]){ph_node_output(len, 0)}, 1);
    ph_node *has = ph_node_create(g, NULL, "OptionalHasElement", 1, (ph_value *[]){ph_node_output(opt, 0)}, 1);
    tk_output(g, ph_node_output(len, 0));
    tk_output(g, ph_node_output(has, 0));
    ck_assert_int_eq(run(pass, m), 0);
    char ops[256];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "SequenceEmpty,SequenceLength,Optional,OptionalHasElement");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model *back = tk_reload(m);
    ph_tensor **outs;
    size_t n = tk_eval_model(back, 1, &outs);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(*(const int64_t *)ph_tensor_data(outs[0]), 0);
    ck_assert_int_eq(*(const uint8_t *)ph_tensor_data(outs[1]), 1);
    tk_free_outs(outs, n);
    ph_model_free(back);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------- calls after the first one */

/* x -> 41 nodes -> v40; k = Sin(x), t = Add(x, w), z = Add(k, t), and
 * g0 = Neg(w), g1 = Relu(g0) graph outputs: computed and kept, not
 * folded. */
static ph_model *far_model(int with_kept)
{
    static char text[4096];
    int len = snprintf(text, sizeof text, "x: float[4]; w: const float[4]\nv0 = Neg(x)\n");
    for (int i = 0; i < 40; i++)
        len += snprintf(text + len, sizeof text - (size_t)len, "v%d = %s(v%d)\n", i + 1, i % 2 ? "Relu" : "Abs", i);
    snprintf(text + len, sizeof text - (size_t)len, "%sk = Sin(x); t = Add(x, w); z = Add(k, t)\nreturn v40, z%s",
             with_kept ? "g0 = Neg(w); g1 = Relu(g0); " : "", with_kept ? ", g0, g1" : "");
    return pc_model(text);
}

/* far_model's nodes: 41 k, 42 t, 43 z (two more each with g0, g1: 41, 42) */
static ph_node *far_node(ph_model *m, size_t k) { return ph_value_producer(pc_node_output(m, k)); }

static int run_in(ph_ctx *ctx, ph_model *m)
{
    ph_error err = {0};
    ph_params *params = ph_params_new(pass->params, &err);
    ck_assert_ptr_nonnull(params);
    ph_ctx_begin_pass(ctx, "constant_folding", "");
    int r = ph_ctx_run(ctx, ph_model_graph(m), pass->run, params);
    ph_ctx_end_pass(ctx);
    ph_params_free(params);
    return r;
}

/* A change far from most nodes makes Sin's input constant: the second
 * call folds Sin; another makes t's inputs constant: the third folds t,
 * and computes z (a graph output: kept, not folded). */
START_TEST(second_call_folds_a_far_change)
{
    ph_model *m = far_model(0);
    ph_graph *g = ph_model_graph(m);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_in(ctx, m), 0);
    ph_node *k = far_node(m, 41), *t = far_node(m, 42);
    ph_value *w = ph_node_input(t, 1);
    ck_assert_int_eq(ph_node_set_input(k, 0, w), 0);
    ck_assert_int_eq(run_in(ctx, m), 1); /* Sin; z still reads t = Add(x, w) */
    ck_assert_int_eq(ph_node_set_input(t, 0, w), 0);
    ck_assert_int_eq(run_in(ctx, m), 1); /* t */
    ck_assert_uint_eq(ph_graph_node_count(g), 42);
    ck_assert_int_eq(run_in(ctx, m), 0);
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

/* Of two listed nodes, u reads k, which may fold and u not, until k has
 * folded: the call starts from k alone and reaches u as k's reader. */
START_TEST(second_call_reaches_a_listed_reader)
{
    static char text[4096];
    int len = snprintf(text, sizeof text, "x: float[4]; w: const float[4]\nv0 = Neg(x)\n");
    for (int i = 0; i < 40; i++)
        len += snprintf(text + len, sizeof text - (size_t)len, "v%d = Abs(v%d)\n", i + 1, i);
    snprintf(text + len, sizeof text - (size_t)len, "k = Sin(x); u = Cos(x); o = Add(u, x)\nreturn v40, o");
    ph_model *m = pc_model(text);
    ph_graph *g = ph_model_graph(m);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_in(ctx, m), 0);
    ph_node *k = far_node(m, 41), *u = far_node(m, 42);
    ph_value *w = ph_graph_find_value(g, "w");
    ck_assert_int_eq(ph_node_set_input(u, 0, ph_node_output(k, 0)), 0); /* listed, not constant yet */
    ck_assert_int_eq(ph_node_set_input(k, 0, w), 0);
    ck_assert_int_eq(run_in(ctx, m), 2); /* k, then u */
    ck_assert(ph_node_is_removed(k));
    ck_assert(ph_node_is_removed(u));
    ck_assert_uint_eq(ph_graph_node_count(g), 42);
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

/* A call that kept a value (g0, g1: graph outputs computed from
 * constants) makes the next one walk the whole graph: t, changed to read
 * g1, folds with g1's value, which needs g0's, and nothing listed g0. */
START_TEST(second_call_after_a_kept_value)
{
    ph_model *m = far_model(1);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_in(ctx, m), 0);
    ph_node *g1 = far_node(m, 42), *t = far_node(m, 44);
    ck_assert_int_eq(ph_node_set_input(t, 0, ph_node_output(g1, 0)), 0);
    ck_assert_int_eq(run_in(ctx, m), 1);
    ck_assert(ph_node_is_removed(t));
    ck_assert(!ph_node_is_removed(g1));
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

/* Few initializers for many nodes: the first call starts from the
 * constants' readers, the Constant and Shape nodes (not a walk of every
 * node), and folds as the walk would, in graph order: w2 comes first in
 * the file but its reader b after a, so a's value is added first; c reads
 * both and folds after them, d reads c and the Constant k, e is a Shape. */
START_TEST(first_call_from_the_constants_in_graph_order)
{
    static char text[4096];
    int len = snprintf(text, sizeof text, "x: float[4]; w2: const float[4]; w1: const float[4]\nv0 = Neg(x)\n");
    for (int i = 0; i < 40; i++)
        len += snprintf(text + len, sizeof text - (size_t)len, "v%d = Abs(v%d)\n", i + 1, i);
    snprintf(text + len, sizeof text - (size_t)len,
             "a = Neg(w1); b = Sin(w2); y1 = Add(v40, a); y0 = Add(x, b)\nc = Add(a, b); k = Constant() {value_floats=[1.0, 2, 3, 4]}\n"
             "d = Mul(c, k); e = Shape(x); y2 = Add(x, d); y3 = Reshape(y2, e)\nreturn y0, y1, y3");
    ph_model *m = pc_model(text);
    ph_graph *g = ph_model_graph(m);
    char want[4][64]; /* the outputs of a, b, d, e, in graph order */
    const ph_op ops[4] = {PH_OP_Neg, PH_OP_Sin, PH_OP_Mul, PH_OP_Shape};
    for (size_t i = 0; i < 4; i++) {
        const ph_node *n = i ? tk_find_op(g, ops[i]) : ph_value_use(ph_graph_find_value(g, "w1"), 0, NULL);
        snprintf(want[i], sizeof want[i], "%s", ph_value_name(ph_node_output(n, 0)));
    }
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, NULL, NULL, &err), 6); /* a, b, c, k, d, e; numeric check */
    ck_assert_uint_eq(ph_graph_initializer_count(g), 4);
    for (size_t i = 0; i < 4; i++)
        ck_assert_msg(!strncmp(ph_value_name(ph_graph_initializer(g, i)), want[i], strlen(want[i])), "%s for %s",
                      ph_value_name(ph_graph_initializer(g, i)), want[i]); /* named after the output */
    ck_assert_uint_eq(ph_graph_node_count(g), 45);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_constant_folding");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folds_constant_chain);
    tcase_add_test(tc, folds_weights_read_in_place_at_any_alignment);
    tcase_add_test(tc, second_call_folds_a_far_change);
    tcase_add_test(tc, second_call_after_a_kept_value);
    tcase_add_test(tc, first_call_from_the_constants_in_graph_order);
    tcase_add_test(tc, second_call_reaches_a_listed_reader);
    tcase_add_test(tc, folds_shape_gather_concat_reshape);
    tcase_add_test(tc, folds_shape_chain_after_inference);
    tcase_add_test(tc, shape_slice_of_partly_known_shape);
    tcase_add_test(tc, partly_known_shape_folds_known_dims);
    tcase_add_test(tc, size_of_static_shape);
    tcase_add_test(tc, shared_constant_stays_for_other_consumers);
    tcase_add_test(tc, folds_split_outputs);
    tcase_add_test(tc, non_constant_operand_is_kept);
    tcase_add_test(tc, unknown_shape_is_kept);
    tcase_add_test(tc, graph_output_in_the_middle);
    tcase_add_test(tc, graph_output_alone_is_kept);
    tcase_add_test(tc, dead_node_is_left_to_dead_code_removal);
    tcase_add_test(tc, size_cap);
    tcase_add_test(tc, huge_outputs_refused_before_evaluation);
    tcase_add_test(tc, nondeterministic_ops_are_kept);
    tcase_add_test(tc, quantization_ops_are_kept);
    tcase_add_test(tc, other_domain_is_kept);
    tcase_add_test(tc, unsupported_op_warns);
    tcase_add_test(tc, folds_inside_if_body);
    tcase_add_test(tc, input_with_default_is_not_constant);
    tcase_add_test(tc, transformer_block_static_shapes);
    tcase_add_test(tc, transformer_block_symbolic_shapes);
    tcase_add_test(tc, sequences_are_not_folded);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
