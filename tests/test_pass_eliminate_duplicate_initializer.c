/* tests/test_pass_eliminate_duplicate_initializer.c -
 * eliminate_duplicate_initializer: initializers of the same dtype, shape and
 * bytes become one (the first in file order); exact, so every checked run
 * requires bit-identical outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "pbwire.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_duplicate_initializer")

/* w2 goes, the Mul reads w1 */
START_TEST(merges_two_equal_initializers)
{
    const char *graph = "x: float[2,3]; w1: float[2,3] = [1, 2, 3, 4, 5, 6]; w2: float[2,3] = [1, 2, 3, 4, 5, 6]\n"
                        "a = Add(x, w1); y = Mul(a, w2)\nreturn y";
    PC_CASE(graph, 1, "a = Add(x, w1)\ny = Mul(a, w1)");
    PC_INITIALIZERS_AFTER(graph, 1, 1);
}
END_TEST

/* Three copies of one tensor, two of another, one distinct, and two empty
 * tensors: the first of each group (file order) is kept. */
START_TEST(merges_groups_keeping_the_first)
{
    const char *graph = "x: float[4]\n"
                        "a0: float[4] = [1, 2, 3, 4]; a1: float[4] = [1, 2, 3, 4]; a2: float[4] = [1, 2, 3, 4]\n"
                        "b0: float[4] = [5, 6, 7, 8]; c: float[4] = [9, 1, 2, 3]; b1: float[4] = [5, 6, 7, 8]\n"
                        "e0: const float[0]; e1: const float[0]\n"
                        "t1 = Add(x, a2); t2 = Mul(t1, b1); t3 = Add(t2, a1); t4 = Mul(t3, c); t5 = Add(t4, b0)\n"
                        "y = Mul(t5, a0); z = Concat(x, e0, e1) {axis=0}\nreturn y, z";
    PC_CASE(graph, 4,
            "t1 = Add(x, a0)\nt2 = Mul(t1, b0)\nt3 = Add(t2, a0)\nt4 = Mul(t3, c)\nt5 = Add(t4, b0)\ny = Mul(t5, a0)\n--\n"
            "z = Concat(x, e0, e0)");
    PC_INITIALIZERS_AFTER(graph, 4, 4);
}
END_TEST

/* The same bytes under another shape or dtype are different constants
 * (wi holds the bits of the floats 1..6). */
START_TEST(same_bytes_other_shape_or_dtype_kept)
{
    PC_UNTOUCHED("x: float[2,3]; w23: float[2,3] = [1, 2, 3, 4, 5, 6]; w32: float[3,2] = [1, 2, 3, 4, 5, 6]\n"
                 "w6: float[6] = [1, 2, 3, 4, 5, 6]\n"
                 "wi: int32[2,3] = [1065353216, 1073741824, 1077936128, 1082130432, 1084227584, 1086324736]\n"
                 "a = Add(x, w23); m = MatMul(x, w32); r = Relu(w6); n = Neg(wi)\nreturn a, m, r, n");
}
END_TEST

/* Seven 300-float tensors of one shape that begin alike (the same first 64
 * bytes, which the pass looks at first) and differ only further on are
 * kept apart; equal ones among them, and equal ones shorter than those 64
 * bytes, are merged into the first of their kind: w5 into w0, w6 into w1,
 * s1 into s0. */
START_TEST(same_beginning_other_end_kept)
{
    enum { N = 300 };
    static const int where[5] = {-1, N - 1, 20, 21, N - 1}; /* the element changed; -1: none */
    static char graph[32768];
    size_t n = (size_t)snprintf(graph, sizeof graph, "x: float[%d]\n", N);
    for (int k = 0; k < 7; k++) {
        int variant = k < 5 ? k : k - 5; /* 5 and 6 repeat variants 0 and 1 */
        n += (size_t)snprintf(graph + n, sizeof graph - n, "w%d: float[%d] = [", k, N);
        for (int i = 0; i < N; i++)
            n += (size_t)snprintf(graph + n, sizeof graph - n, "%s%d", i ? "," : "",
                                  i + (i == where[variant] ? (k == 4 ? 2 : 1) : 0));
        n += (size_t)snprintf(graph + n, sizeof graph - n, "]\n");
    }
    snprintf(graph + n, sizeof graph - n,
             "s0: float[3] = [1, 2, 3]; s1: float[3] = [1, 2, 3]; s2: float[3] = [1, 2, 4]\n"
             "v0 = Add(x, w0); v1 = Mul(v0, w1); v2 = Add(v1, w2); v3 = Mul(v2, w3); v4 = Add(v3, w4)\n"
             "v5 = Mul(v4, w5); y = Add(v5, w6); p = Add(s0, s1); z = Add(p, s2)\nreturn y, z");
    PC_CASE(graph, 3,
            "v0 = Add(x, w0)\nv1 = Mul(v0, w1)\nv2 = Add(v1, w2)\nv3 = Mul(v2, w3)\nv4 = Add(v3, w4)\nv5 = Mul(v4, w0)\n"
            "y = Add(v5, w1)\n--\np = Add(s0, s0)\nz = Add(p, s2)");
    PC_INITIALIZERS_AFTER(graph, 3, 7);
}
END_TEST

/* An initializer that is a graph output keeps its name: never merged, in
 * either direction. */
START_TEST(graph_output_initializer_kept)
{
    PC_UNTOUCHED("x: float[2,3]; w1: float[2,3] = [1, 2, 3, 4, 5, 6]; w2: float[2,3] = [1, 2, 3, 4, 5, 6]\n"
                 "a = Add(x, w2); m = Mul(x, w1)\nreturn w1, a, m");
}
END_TEST

/* x float[3], w float[3] with initializer [1,2,3] (a default the user can
 * override), w2 = [1,2,3] a true constant: never merged.  Written as
 * protobuf wire bytes: the text has no graph input with a default. */
START_TEST(graph_input_default_kept)
{
    const int64_t d[1] = {3};
    const float w[3] = {1, 2, 3};
    pb graph = {0}, model = {0}, i1 = {0}, i2 = {0};
    pb_int(&i1, 1, 3);
    pb_int(&i1, 2, PH_DT_FLOAT);
    pb_str(&i1, 8, "w");
    pb_bytes(&i1, 9, w, sizeof w);
    pb_int(&i2, 1, 3);
    pb_int(&i2, 2, PH_DT_FLOAT);
    pb_str(&i2, 8, "w2");
    pb_bytes(&i2, 9, w, sizeof w);
    pb_node(&graph, "Add", "x", "w", "t", NULL);
    pb_node(&graph, "Mul", "t", "w2", "y", NULL);
    pb_str(&graph, 2, "main");
    pb_msg(&graph, 5, &i1);
    pb_msg(&graph, 5, &i2);
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 1, d);
    pb_value_info(&graph, 11, "w", PH_DT_FLOAT, 1, d);
    pb_value_info(&graph, 12, "y", PH_DT_FLOAT, 1, d);
    pb_model(&model, &graph);
    ph_model *m = pb_load(&model);
    ck_assert_int_eq(ph_value_is_graph_input(ph_graph_find_value(ph_model_graph(m), "w")), 1);
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, &pc_defaults, NULL, &err), 0);
    PC_GRAPH_IS(ph_model_graph(m), "t = Add(x, w)\ny = Mul(t, w2)");
    ph_model_free(m);
}
END_TEST

/* Bodies are deduplicated on their own initializers: the then branch's b
 * goes for a; the main graph's k, equal to them, stays. */
START_TEST(duplicates_inside_if_body)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_text("x: int64[3]; flag: bool[]; k: int64[3] = [1, 2, 3]\ny = If(flag)\nreturn y",
                             "x: int64[3]; a: int64[3] = [1, 2, 3]; b: int64[3] = [1, 2, 3]\n"
                             "t = Add(x, a); o = Add(t, b)\nreturn o",
                             "x: int64[3]; k: int64[3]\no = Add(x, k)\nreturn o", &then_g, &else_g);
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "t = Add(x, a)\no = Add(t, a)");
    ck_assert_uint_eq(ph_graph_initializer_count(then_g), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 1);
    ph_model_free(m);
}
END_TEST

/* Many initializers, every value twice (interleaved): half are merged,
 * through the hash table, with the right partner each time.  Built with
 * the IR calls: more names than a text holds. */
START_TEST(many_initializers)
{
    enum { N = 1500 };
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(2));
    ph_value **first = malloc(N * sizeof *first);
    ck_assert_ptr_nonnull(first);
    for (int copy = 0; copy < 2; copy++)
        for (int i = 0; i < N; i++) {
            char name[16];
            int64_t val[2] = {i, -i}; /* the same in both copies */
            snprintf(name, sizeof name, "v%d_%d", copy, i);
            ph_value *v = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_INT64, 1, TK_I64(2), val));
            ck_assert_ptr_nonnull(v);
            if (!copy)
                first[i] = v;
            ph_node *cast = tk_node(g, "Cast", 1, &v);
            ck_assert_int_eq(ph_node_set_attr_int(cast, "to", PH_DT_FLOAT), 0);
            x = tk_op2(g, "Add", x, ph_node_output(cast, 0));
        }
    tk_output(g, x);
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, NULL, NULL, &err), N);
    ck_assert_uint_eq(ph_graph_initializer_count(g), N);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(ph_value_use_count(first[i]), 2);
    free(first);
    ph_model_free(m);
}
END_TEST

/* The transformer block after constant_to_initializer: its many equal
 * small constants (Unsqueeze axes, ...) collapse, outputs bit-identical (a
 * model file, on the public harness). */
START_TEST(transformer_block_duplicates)
{
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &m, &err), 0);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    ph_test_pass *c2i = NULL;
    ck_assert_int_eq(ph_test_load_pass(PH_BUILD_DIR "/plugins/constant_to_initializer.so", "constant_to_initializer",
                                       &c2i, &err), 0);
    ck_assert_int_gt(ph_test_run(ph_test_pass_desc(c2i), m, NULL, NULL, &err), 0);
    ph_test_pass_free(c2i);
    size_t inits = ph_graph_initializer_count(g);
    int merged = ph_test_run_checked(pass, m, NULL, NULL, &err);
    ck_assert_msg(merged > 0, "%d: %s", merged, err.message);
    ck_assert_uint_eq(ph_graph_initializer_count(g), inits - (size_t)merged);
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        for (size_t j = i + 1; j < ph_graph_initializer_count(g); j++) {
            ph_value *a = ph_graph_initializer(g, i), *b = ph_graph_initializer(g, j);
            if (ph_value_const(a) && ph_value_const(b) && !ph_value_graph_output_count(a) &&
                !ph_value_graph_output_count(b))
                ck_assert_msg(!ph_tensor_equal(ph_value_const(a), ph_value_const(b)), "%s and %s still equal",
                              ph_value_name(a), ph_value_name(b));
        }
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 0);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_duplicate_initializer");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, merges_two_equal_initializers);
    tcase_add_test(tc, merges_groups_keeping_the_first);
    tcase_add_test(tc, same_bytes_other_shape_or_dtype_kept);
    tcase_add_test(tc, same_beginning_other_end_kept);
    tcase_add_test(tc, graph_output_initializer_kept);
    tcase_add_test(tc, graph_input_default_kept);
    tcase_add_test(tc, duplicates_inside_if_body);
    tcase_add_test(tc, many_initializers);
    tcase_add_test(tc, transformer_block_duplicates);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
