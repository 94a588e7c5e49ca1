/* tests/test_pass_simplify_layout_chain.c - simplify_layout_chain, and its
 * fixpoint with merge_consecutive_transpose, transpose_to_reshape,
 * merge_consecutive_reshape and eliminate_nop_reshape.  The shape a Reshape
 * of the result makes is written as its output's shape in the pattern. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("simplify_layout_chain")

/* ShuffleNet channel shuffle of x [1,8,4,4] in g groups (view given) */
#define SHUFFLE(view)                                                                              \
    "x: float[1,8,4,4]; s1: int64[5] = [" view "]; s2: int64[4] = [1, 8, 4, 4]; z: int64[1] = [0]\n" \
    "r = Relu(x); a = Reshape(r, s1); t = Transpose(a) {perm=[0,2,1,3,4]}; b = Reshape(t, s2)\n"
#define RN "r = Relu(x)\nn = Neg(r)"
#define RTN(perm) "r = Relu(x)\nt = Transpose(r) {perm=[" perm "]}\nn = Neg(t)"
/* Unsqueeze -> Transpose -> Squeeze around x [3,5]: Transpose(1,0) */
#define SQT17 "x: float[3,5]; z: int64[1] = [0]\nr = Relu(x); u = Unsqueeze(r, z); t = Transpose(u) {perm=[0,2,1]}\n" \
              "q = Squeeze(t, z); n = Neg(q)\nreturn n"
#define SQT11 "opset 11\nx: float[3,5]\nr = Relu(x); u = Unsqueeze(r) {axes=[0]}; t = Transpose(u) {perm=[0,2,1]}\n" \
              "q = Squeeze(t) {axes=[0]}; n = Neg(q)\nreturn n"
/* x [6,4] -> [2,3,4] -> (2,0,1) */
#define SPLIT "x: float[6,4]; s1: int64[3] = [2, 3, 4]; z: int64[1] = [0]; s2: int64[2] = [4, 6]\n" \
              "r = Relu(x); a = Reshape(r, s1); t = Transpose(a) {perm=[2,0,1]}\n"

static const struct {
    const char *graph;
    int rewrites;
    const char *expect;
    int inits; /* initializers left, -1: not checked */
} simplified[] = {
    /* a channel shuffle with an Unsqueeze/Squeeze pair after it: five nodes
     * become R -> T -> R over the blocks [2, 4, 16] (N = 1 and H*W merged);
     * idempotent */
    {SHUFFLE("1, 2, 4, 4, 4") "u = Unsqueeze(b, z); q = Squeeze(u, z); n = Neg(q)\nreturn n", 1,
     "r = Relu(x)\na = Reshape(r, _:const)\nt = Transpose(a:shape=[2,4,16]) {perm=[1,0,2]}\nb = Reshape(t, _:const)\n"
     "n = Neg(b:shape=[1,8,4,4])", -1},
    /* one group: the shuffle moves nothing and disappears */
    {SHUFFLE("1, 1, 8, 4, 4") "n = Neg(b)\nreturn n", 1, RN, -1},
    /* ViT: x.flatten(2).transpose(1, 2) then back to an image in NHWC = one
     * Transpose (0,2,3,1) */
    {"x: float[2,6,3,5]; s1: int64[3] = [2, 6, 15]; s2: int64[4] = [2, 3, 5, 6]\n"
     "r = Relu(x); a = Reshape(r, s1); t = Transpose(a) {perm=[0,2,1]}; b = Reshape(t, s2); n = Neg(b)\nreturn n", 1,
     RTN("0,2,3,1"), -1},
    /* ViT patchify without a Conv: [B,C,H,W] -> [B,C,h,p,w,p] ->
     * (0,2,4,3,5,1) -> [B,h*w,p*p*C], then tokens transposed to [B,D,T] and
     * unsqueezed: five nodes, R -> T -> R after */
    {"x: float[2,3,8,8]; s1: int64[6] = [2, 3, 2, 4, 2, 4]; s2: int64[3] = [2, 4, 48]; z: int64[1] = [1]\n"
     "r = Relu(x); a = Reshape(r, s1); t = Transpose(a) {perm=[0,2,4,3,5,1]}; b = Reshape(t, s2)\n"
     "u = Transpose(b) {perm=[0,2,1]}; v = Unsqueeze(u, z); n = Neg(v)\nreturn n", 1,
     "r = Relu(x)\na = Reshape(r, _:const)\nt = Transpose(a)\nb = Reshape(t, _:const)\nn = Neg(b)", -1},
    /* Unsqueeze -> Transpose -> Squeeze around a 2-D tensor = Transpose(1,0);
     * opset 17 (axes as inputs) and opset 11 (attributes); the axes went
     * with the chain */
    {SQT17, 1, RTN("1,0"), 0},
    {SQT11, 1, RTN("1,0"), 0},
    /* Unsqueeze then Squeeze of the same axis: nothing */
    {"x: float[2,3,4]; o: int64[1] = [1]\nr = Relu(x); u = Unsqueeze(r, o); q = Squeeze(u, o); n = Neg(q)\nreturn n", 1, RN, -1},
    /* two cancelling Transposes and a Flatten: one Reshape */
    {"x: float[2,3,4]\nr = Relu(x); a = Transpose(r) {perm=[1,0,2]}; b = Transpose(a) {perm=[1,0,2]}\n"
     "f = Flatten(b) {axis=1}; n = Neg(f)\nreturn n", 1, "r = Relu(x)\nb = Reshape(r, _:const)\nn = Neg(b:shape=[2,12])", -1},
    /* Flatten then a Reshape back: nothing */
    {"x: float[2,3,4]; s: int64[3] = [2, 3, 4]\nr = Relu(x); f = Flatten(r) {axis=2}; b = Reshape(f, s); n = Neg(b)\nreturn n", 1,
     RN, -1},
    /* [6,4] -> [2,3,4] -> (2,0,1) -> [4,6]: one Transpose (1,0) */
    {SPLIT "b = Reshape(t, s2); n = Neg(b)\nreturn n", 1, RTN("1,0"), -1},
    /* ... -> Unsqueeze -> [1,4,2,3]: the blocks are whole input dims, so
     * Transpose(1,0) -> Reshape */
    {SPLIT "u = Unsqueeze(t, z); n = Neg(u)\nreturn n", 1,
     "r = Relu(x)\nt = Transpose(r) {perm=[1,0]}\nb = Reshape(t, _:const)\nn = Neg(b:shape=[1,4,2,3])", -1},
    /* [24] -> [4,6] -> (1,0) -> Unsqueeze -> [1,6,4]: the blocks are whole
     * output dims, so Reshape [4,6,1] -> Transpose (2,1,0) */
    {"x: float[24]; s: int64[2] = [4, 6]; z: int64[1] = [0]\n"
     "r = Relu(x); a = Reshape(r, s); t = Transpose(a) {perm=[1,0]}; u = Unsqueeze(t, z); n = Neg(u)\nreturn n", 1,
     "r = Relu(x)\na = Reshape(r, _:const)\nt = Transpose(a:shape=[4,6,1]) {perm=[2,1,0]}\nn = Neg(t)", -1},
    /* a 4-cycle of blocks that do not merge: Unsqueeze -> (0,2,4,1,3) ->
     * Squeeze = one Transpose (1,3,0,2) */
    {"x: float[2,3,4,5]; z: int64[1] = [0]\nr = Relu(x); u = Unsqueeze(r, z); t = Transpose(u) {perm=[0,2,4,1,3]}\n"
     "q = Squeeze(t, z); n = Neg(q)\nreturn n", 1, RTN("1,3,0,2"), -1},
    /* [24,5] -> [2,3,4,5] -> (2,0,3,1) -> [8,15] -> Unsqueeze: four blocks in
     * a 4-cycle, aligned with neither side: R [2,3,4,5] -> T -> R [1,8,15] */
    {"x: float[24,5]; s1: int64[4] = [2, 3, 4, 5]; s2: int64[2] = [8, 15]; z: int64[1] = [0]\n"
     "r = Relu(x); a = Reshape(r, s1); t = Transpose(a) {perm=[2,0,3,1]}; b = Reshape(t, s2); u = Unsqueeze(b, z)\n"
     "n = Neg(u)\nreturn n", 1,
     "r = Relu(x)\na = Reshape(r, _:const)\nt = Transpose(a:shape=[2,3,4,5]) {perm=[2,0,3,1]}\nb = Reshape(t, _:const)\n"
     "n = Neg(b:shape=[1,8,15])", -1},
    /* Transposes that only move size-1 dims need no simulation: see below;
     * integer data moves the same way */
    {"x: int64[6,4]; s1: int64[3] = [2, 3, 4]; s2: int64[2] = [4, 6]\n"
     "a = Reshape(x, s1); t = Transpose(a) {perm=[2,0,1]}; b = Reshape(t, s2); n = Neg(b)\nreturn n", 1,
     "t = Transpose(x)\nn = Neg(t)", -1},
    /* a cut keeps the parts apart: with a graph output in the middle of a
     * four-node chain, each two-node half is simplified on its own */
    {"x: float[3,5]; z: int64[1] = [0]\nr = Relu(x); a = Transpose(r) {perm=[1,0]}; b = Transpose(a) {perm=[1,0]}\n"
     "u = Unsqueeze(b, z); q = Squeeze(u, z); n = Neg(q)\nreturn b, n", 2, "b:shared = Relu(x)\nn = Neg(b)", -1},
};

START_TEST(simplifies)
{
    PC_CASE(simplified[_i].graph, simplified[_i].rewrites, simplified[_i].expect);
    if (simplified[_i].inits >= 0) {
        ph_error err = {0};
        ph_model *m = ph_test_model_text(simplified[_i].graph, &err);
        ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), simplified[_i].rewrites);
        ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), (size_t)simplified[_i].inits);
        ph_model_free(m);
    }
}
END_TEST

/* A long chain of sixteen nodes folds in one rewrite: NCHW -> NHWC ->
 * flattened -> unsqueezed -> reshaped, four times; (0,2,3,1)^4 = (0,2,3,1). */
START_TEST(long_chain_one_rewrite)
{
    char graph[2048];
    int64_t dims[4] = {2, 3, 4, 5};
    int n = snprintf(graph, sizeof graph, "x: float[2,3,4,5]; o: int64[1] = [1]\nv0 = Relu(x)\n");
    for (int i = 0; i < 4; i++) {
        int64_t d1 = dims[1];
        dims[1] = dims[2], dims[2] = dims[3], dims[3] = d1;
        n += snprintf(graph + n, sizeof graph - (size_t)n,
                      "s%d: int64[4] = [%lld, %lld, %lld, %lld]\nt%d = Transpose(v%d) {perm=[0,2,3,1]}; f%d = Flatten(t%d) {axis=1}\n"
                      "u%d = Unsqueeze(f%d, o); v%d = Reshape(u%d, s%d)\n",
                      i, (long long)dims[0], (long long)dims[1], (long long)dims[2], (long long)dims[3], i, i, i, i, i, i,
                      i + 1, i, i);
    }
    snprintf(graph + n, sizeof graph - (size_t)n, "n = Neg(v4)\nreturn n");
    PC_CASE(graph, 1, "r = Relu(x)\nt = Transpose(r) {perm=[0,2,3,1]}\nn = Neg(t)");
}
END_TEST

/* The chain's last value is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    const char *graph = "x: float[3,5]; two: int64[1] = [2]\nr = Relu(x); u = Unsqueeze(r, two); t = Transpose(u) {perm=[1,0,2]}\n"
                        "y = Squeeze(t, two)\nreturn y";
    PC_CASE(graph, 1, "r = Relu(x)\ny = Transpose(r)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* Identity from a graph input to a graph output: the output cannot take
 * the input's place, so one Reshape keeps its name; it then stays. */
START_TEST(identity_input_to_output_one_reshape)
{
    const char *graph = "x: float[3,5]; z: int64[1] = [0]\nu = Unsqueeze(x, z); y = Squeeze(u, z)\nreturn y";
    PC_CASE(graph, 1, "y = Reshape(x:shape=[3,5], _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    int64_t shp[4];
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(ph_value_producer(ph_graph_output(g, 0)), 1), shp, NULL, 4), 2);
    ck_assert(shp[0] == 3 && shp[1] == 5);
    free(name);
    ph_model_free(m);
}
END_TEST

/* Transposes that only move size-1 dims need no simulation: done even with
 * max_elements = 1.  [2,1,3] -> [1,2,3] -> [2,3,1] */
START_TEST(size_one_moves_need_no_simulation)
{
    ph_test_options o = {.max_iterations = 4, .params = (const char *const[]){"max_elements=1", NULL}};
    PC_CASE_OPTS(&o, "x: float[2,1,3]\nr = Relu(x); a = Transpose(r) {perm=[1,0,2]}; b = Transpose(a) {perm=[1,2,0]}; n = Neg(b)\n"
                     "return n",
                 1, "r = Relu(x)\nb = Reshape(r, _:const)\nn = Neg(b:shape=[2,3,1])");
}
END_TEST

/* Chains of equal shapes and perms share one verdict within a call: three
 * Transpose pairs over [4, 4, 4] whose signatures differ only in their
 * perms, each twice.  (1,0,2) twice is nothing; (1,0,2) then (0,2,1) is one
 * Transpose (1,2,0); (2,1,0) then (1,2,0) is one Transpose (1,0,2) too,
 * composed differently.  A wrong share shows in the perms and the outputs
 * (the harness compares them). */
START_TEST(equal_chains_share_a_verdict)
{
    static const char *const first[3] = {"1,0,2", "1,0,2", "2,1,0"}, *const second[3] = {"1,0,2", "0,2,1", "1,2,0"};
    static const int64_t want[3][3] = {{0, 1, 2}, {1, 2, 0}, {1, 0, 2}};
    char graph[2048];
    int n = snprintf(graph, sizeof graph, "x: float[4,4,4]\nr = Relu(x)\n");
    for (int i = 0; i < 6; i++)
        n += snprintf(graph + n, sizeof graph - (size_t)n, "a%d = Transpose(r) {perm=[%s]}; b%d = Transpose(a%d) {perm=[%s]}; n%d = Neg(b%d)\n",
                      i, first[i % 3], i, i, second[i % 3], i, i);
    snprintf(graph + n, sizeof graph - (size_t)n, "return n0, n1, n2, n3, n4, n5");
    PC_CASE(graph, 6, "r = Relu(x)\n--\nn0 = Neg(r)\n--\nn3 = Neg(r)\n--\nt1 = Transpose(r) {perm=[1,2,0]}\nn1 = Neg(t1)\n--\n"
                                             "t4 = Transpose(r) {perm=[1,2,0]}\nn4 = Neg(t4)\n--\nt2 = Transpose(r) {perm=[1,0,2]}\nn2 = Neg(t2)\n--\n"
                                             "t5 = Transpose(r) {perm=[1,0,2]}\nn5 = Neg(t5)");
    /* output by output: the Neg of output i reads r or one Transpose of r */
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 6);
    ph_value *r = ph_node_output(ph_graph_first_node(g), 0);
    for (int i = 0; i < 6; i++) {
        ph_node *neg = ph_value_producer(ph_graph_output(g, (size_t)i));
        if (i % 3 == 0) {
            ck_assert_ptr_eq(ph_node_input(neg, 0), r);
            continue;
        }
        ph_node *t = ph_value_producer(ph_node_input(neg, 0));
        ck_assert_ptr_eq(ph_node_input(t, 0), r);
        const int64_t *p;
        ck_assert_int_eq(ph_node_attr_ints(t, "perm", &p), 3);
        for (int k = 0; k < 3; k++)
            ck_assert_int_eq(p[k], want[i % 3][k]);
    }
    ph_model_free(m);
}
END_TEST

/* Elements moved and more of them than max_elements: left alone. */
START_TEST(too_large_kept)
{
    const char *graph = "x: float[4,8]\nr = Relu(x); a = Transpose(r) {perm=[1,0]}; b = Transpose(a) {perm=[1,0]}; n = Neg(b)\nreturn n";
    ph_test_options o = {.max_iterations = 4, .params = (const char *const[]){"max_elements=31", NULL}};
    PC_CASE_OPTS(&o, graph, 0, NULL);
    o.params = (const char *const[]){"max_elements=32", NULL};
    PC_CASE_OPTS(&o, graph, 1, RN);
}
END_TEST

/* ------------------------------------------------------------ negative */

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* a bare channel shuffle is already the shortest form */
    {SHUFFLE("1, 2, 4, 4, 4") "n = Neg(b)\nreturn n", 0},
    /* the patchify R -> T -> R alone is already the shortest form */
    {"x: float[2,3,8,8]; s1: int64[6] = [2, 3, 2, 4, 2, 4]; s2: int64[3] = [2, 4, 48]\n"
     "r = Relu(x); a = Reshape(r, s1); t = Transpose(a) {perm=[0,2,4,3,5,1]}; b = Reshape(t, s2); n = Neg(b)\nreturn n", 0},
    /* the middle value has another consumer: the chain is cut there into
     * two single nodes, which stay */
    {"x: float[3,5]; z: int64[1] = [0]\nr = Relu(x); u = Unsqueeze(r, z); q = Squeeze(u, z); n = Neg(q); m = Neg(u)\nreturn n, m", 0},
    /* the middle value is a graph output */
    {"x: float[3,5]\nr = Relu(x); u = Transpose(r) {perm=[1,0]}; t = Transpose(u) {perm=[1,0]}; n = Neg(t)\nreturn u, n", 0},
    /* an unknown dim */
    {"x: float[N,3,4]\nr = Relu(x); a = Transpose(r) {perm=[0,2,1]}; b = Transpose(a) {perm=[0,2,1]}; n = Neg(b)\nreturn n", 0},
    /* unknown rank */
    {"x: float[*]\nr = Relu(x); a = Transpose(r) {perm=[1,0]}; b = Transpose(a) {perm=[1,0]}; n = Neg(b)\nreturn n", 1},
    /* [2,3] -> (1,0) -> [3,2] read as [2,3] -> (1,0): the composite is no
     * transpose of blocks; no shorter form */
    {"x: float[2,3]; s: int64[2] = [2, 3]\nr = Relu(x); a = Transpose(r) {perm=[1,0]}; b = Reshape(a, s); t = Transpose(b) {perm=[1,0]}\n"
     "n = Neg(t)\nreturn n", 0},
    /* Transpose -> Flatten is already the shortest form */
    {"x: float[2,3,4]\nr = Relu(x); a = Transpose(r) {perm=[0,2,1]}; f = Flatten(a) {axis=1}; n = Neg(f)\nreturn n", 0},
    /* single nodes */
    {"x: float[2,3,4]; s: int64[2] = [6, 4]\nr = Relu(x); a = Transpose(r) {perm=[0,1,2]}; q = Relu(a); b = Reshape(q, s); n = Neg(b)\n"
     "return n", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

/* A node of another domain in the middle cuts the chain: only the pair
 * after it (its output's shape given: the inference does not know it). */
START_TEST(other_domain_cuts_chain)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text("x: float[3,5]\nr = Relu(x); t = Transpose(r) {perm=[1,0]}; u = Transpose@com.example(t) {perm=[1,0]}\n"
                                     "a = Transpose(u) {perm=[1,0]}; b = Transpose(a) {perm=[1,0]}; n = Neg(b)\nreturn n",
                                     &err);
    ph_value *u = ph_node_input(ph_value_producer(ph_node_input(ph_value_producer(ph_node_input(
                                    ph_value_producer(ph_graph_output(ph_model_graph(m), 0)), 0)), 0)), 0);
    tk_set_shape(u, 2, TK_I64(3, 5));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    PC_GRAPH_IS(ph_model_graph(m), "r = Relu(x)\nt = Transpose(r)\nu = Transpose@com.example(t)\nn = Neg(u)");
    ph_model_free(m);
}
END_TEST

/* Before opset 5 Reshape took its shape as an attribute: no Reshape is
 * emitted, but a plan of one Transpose is.  [3,5] -> [1,3,5] -> [3,1,5]:
 * one Reshape would do, but not at opset 4; (1,0) twice: nothing, which
 * needs no Reshape. */
START_TEST(opset4_no_reshape)
{
    PC_CASE_OPTS(&pc_unchecked,
                 "opset 4\nx: float[3,5]\nr = Relu(x); u = Unsqueeze(r) {axes=[0]}; t = Transpose(u) {perm=[1,0,2]}; n = Neg(t)\n"
                 "a = Transpose(r) {perm=[1,0]}; b = Transpose(a) {perm=[1,0]}; m = Neg(b)\nreturn n, m",
                 1, "r = Relu(x)\n--\nu = Unsqueeze(r)\nt = Transpose(u)\nn = Neg(t)\n--\nm = Neg(r)");
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[6,4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_graph *tg = body[0];
    ph_value *a = tk_op2(tg, "Reshape", x, tk_ints(tg, "s1", 3, TK_I64(2, 3, 4)));
    ph_value *t = tk_transpose(tg, a, 3, TK_I64(2, 0, 1));
    tk_output(tg, tk_op1(tg, "Neg", tk_op2(tg, "Reshape", t, tk_ints(tg, "s2", 2, TK_I64(4, 6)))));
    tk_output(body[1], tk_op1(body[1], "Neg", tk_transpose(body[1], x, 2, TK_I64(1, 0))));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(tg, "t = Transpose(x) {perm=[1,0]}\ny = Neg(t)");
    PC_GRAPH_IS(body[1], "t = Transpose(x) {perm=[1,0]}\ny = Neg(t)");
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ fixpoint */

/* Run the layout passes round after round, each run checked bit for bit,
 * until none changes anything; the rounds must stay few. */
static void fixpoint(ph_model *m)
{
    static const char *const names[] = {"merge_consecutive_transpose", "transpose_to_reshape",
                                        "merge_consecutive_reshape", "eliminate_nop_reshape"};
    enum { N = sizeof names / sizeof names[0] };
    ph_test_pass *loaded[N];
    const ph_pass_desc *ps[N + 1] = {pass};
    ph_error err = {0};
    for (int i = 0; i < N; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/plugins/%s.so", PH_BUILD_DIR, names[i]);
        ck_assert_msg(ph_test_load_pass(path, names[i], &loaded[i], &err) == 0, "%s", err.message);
        ps[i + 1] = ph_test_pass_desc(loaded[i]);
    }
    int rounds = 0, changed;
    do {
        changed = 0;
        for (int i = 0; i <= N; i++) {
            int rc = ph_test_run_checked(ps[i], m, NULL, NULL, &err);
            ck_assert_msg(rc >= 0, "%s: %s", ps[i]->name, err.message);
            changed += rc;
        }
        rounds++;
        ck_assert_msg(rounds <= 4, "no fixpoint after %d rounds", rounds);
    } while (changed);
    for (int i = 0; i < N; i++)
        ph_test_pass_free(loaded[i]);
}

/* the two shuffles cancel; the ViT chain is one Transpose; the size-1
 * Transpose is a Reshape; the lone shuffle stays R -> T -> R */
START_TEST(fixpoint_with_other_layout_passes)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(
        /* channel shuffle twice with a size-1 transpose and reshapes between */
        "x: float[1,8,4,4]; g2: int64[5] = [1, 2, 4, 4, 4]; g4: int64[5] = [1, 4, 2, 4, 4]; back: int64[4] = [1, 8, 4, 4]\n"
        "four: int64[1] = [4]\n"
        "r = Relu(x); a = Reshape(r, g2); b = Transpose(a) {perm=[0,2,1,3,4]}; c = Reshape(b, back)\n"
        "d = Unsqueeze(c, four); e = Transpose(d) {perm=[0,1,2,4,3]}; f = Reshape(e, back)\n"
        "h = Reshape(f, g4); i = Transpose(h) {perm=[0,2,1,3,4]}; j = Reshape(i, back); n1 = Neg(j)\n"
        /* ViT tokens and back with a stray Transpose pair */
        "y: float[2,6,3,5]; v1: int64[3] = [2, 6, 15]; v2: int64[4] = [2, 3, 5, 6]\n"
        "ry = Relu(y); ya = Reshape(ry, v1); yb = Transpose(ya) {perm=[0,2,1]}; yc = Transpose(yb) {perm=[1,0,2]}\n"
        "yd = Transpose(yc) {perm=[1,0,2]}; ye = Reshape(yd, v2); n2 = Neg(ye)\n"
        /* a size-1 Transpose alone, for transpose_to_reshape */
        "z: float[2,1,3]\nrz = Relu(z); za = Transpose(rz) {perm=[1,0,2]}; n3 = Neg(za)\n"
        /* a channel shuffle alone */
        "w: float[2,6,2,2]; w1: int64[5] = [2, 3, 2, 2, 2]; w2: int64[4] = [2, 6, 2, 2]\n"
        "rw = Relu(w); wa = Reshape(rw, w1); wb = Transpose(wa) {perm=[0,2,1,3,4]}; wc = Reshape(wb, w2); n4 = Neg(wc)\n"
        "return n1, n2, n3, n4",
        &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    fixpoint(m);
    PC_GRAPH_IS(ph_model_graph(m), "r = Relu(x)\nn1 = Neg(r)\n--\nry = Relu(y)\nt = Transpose(ry)\nn2 = Neg(t)\n--\n"
                                   "rz = Relu(z)\nza = Reshape(rz, _:const)\nn3 = Neg(za)\n--\n"
                                   "rw = Relu(w)\nwa = Reshape(rw, _:const)\nwb = Transpose(wa)\nwc = Reshape(wb, _:const)\nn4 = Neg(wc)");
    ph_model_free(m);
}
END_TEST

/* The demo transformer with static shapes: its layout chains reach a
 * fixpoint with the other layout passes, the outputs stay the same and no
 * node is added (a real model file: kept as C). */
START_TEST(transformer_block_fixpoint)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    ck_assert_int_eq(ph_graph_update_shapes(g, &err), 0);
    size_t before = ph_model_node_count(m);
    fixpoint(m);
    ck_assert_uint_lt(ph_model_node_count(m), before);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_simplify_layout_chain");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, simplifies, 0, (int)(sizeof simplified / sizeof *simplified));
    tcase_add_test(tc, long_chain_one_rewrite);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, identity_input_to_output_one_reshape);
    tcase_add_test(tc, size_one_moves_need_no_simulation);
    tcase_add_test(tc, equal_chains_share_a_verdict);
    tcase_add_test(tc, too_large_kept);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, other_domain_cuts_chain);
    tcase_add_test(tc, opset4_no_reshape);
    tcase_add_test(tc, inside_an_if_branch);
    tcase_add_test(tc, fixpoint_with_other_layout_passes);
    tcase_add_test(tc, transformer_block_fixpoint);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
