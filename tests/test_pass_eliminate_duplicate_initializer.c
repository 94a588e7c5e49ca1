/* tests/test_pass_eliminate_duplicate_initializer.c - the
 * eliminate_duplicate_initializer pass.
 *
 * Numeric checks use the SDK evaluator (ph_eval_run) before and after the
 * pass on the same seeded inputs and require bit-identical outputs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passrun.h"
#include "pbwire.h"
#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("eliminate_duplicate_initializer"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}


/* ---- models written as protobuf wire bytes (the builder API cannot make
 * If bodies or inputs with defaults) */











/* ------------------------------------------------------------ tests */

static ph_value *init_of(ph_graph *g, const char *name, int dtype, size_t rank, const int64_t *dims,
                         const void *data)
{
    ph_value *v = ph_graph_add_initializer(g, name, ph_tensor_new(dtype, rank, dims, data));
    ck_assert_ptr_nonnull(v);
    return v;
}

START_TEST(merges_two_equal_initializers)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w1 = tk_init(g, "w1", 2, TK_I64(2, 3), 42), *w2 = tk_init(g, "w2", 2, TK_I64(2, 3), 42);
    ph_node *add = tk_node(g, "Add", 2, (ph_value *[]){x, w1});
    ph_node *mul = tk_node(g, "Mul", 2, (ph_value *[]){ph_node_output(add, 0), w2});
    tk_output(g, ph_node_output(mul, 0));

    ck_assert_int_eq(tk_run_checked(pass, m, 1, NULL, NULL, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add,Mul");
    ck_assert_ptr_eq(ph_node_input(mul, 1), w1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ck_assert_ptr_null(ph_graph_find_value(g, "w2"));
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0); /* fixpoint */
    ph_model_free(m);
}
END_TEST

/* Three copies of one tensor, two of another, one distinct, and two empty
 * tensors: the first of each group (file order) is kept. */
START_TEST(merges_groups_keeping_the_first)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *a[3], *b[2], *c;
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "a%d", i);
        a[i] = tk_init(g, name, 1, TK_I64(4), 7);
    }
    b[0] = tk_init(g, "b0", 1, TK_I64(4), 8);
    c = tk_init(g, "c", 1, TK_I64(4), 9);
    b[1] = tk_init(g, "b1", 1, TK_I64(4), 8);
    ph_value *e0 = init_of(g, "e0", PH_DT_FLOAT, 1, TK_I64(0), NULL);
    ph_value *e1 = init_of(g, "e1", PH_DT_FLOAT, 1, TK_I64(0), NULL);
    ph_value *cur = x;
    ph_value *all[6] = {a[2], b[1], a[1], c, b[0], a[0]};
    for (int i = 0; i < 6; i++)
        cur = tk_op2(g, i % 2 ? "Mul" : "Add", cur, all[i]);
    tk_output(g, cur);
    ph_value *cat_in[3] = {x, e0, e1};
    ph_node *cat = tk_node(g, "Concat", 3, cat_in);
    ck_assert_int_eq(ph_node_set_attr_int(cat, "axis", 0), 0);
    tk_output(g, ph_node_output(cat, 0));

    ck_assert_int_eq(tk_run_checked(pass, m, 2, NULL, NULL, NULL), 4);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 4);
    ck_assert_uint_eq(ph_value_use_count(a[0]), 3);
    ck_assert_uint_eq(ph_value_use_count(b[0]), 2);
    ck_assert_uint_eq(ph_value_use_count(c), 1);
    ck_assert_ptr_eq(ph_node_input(cat, 1), e0);
    ck_assert_ptr_eq(ph_node_input(cat, 2), e0);
    ph_model_free(m);
}
END_TEST

/* The same bytes under another shape or dtype are different constants. */
START_TEST(same_bytes_other_shape_or_dtype_kept)
{
    const float f[6] = {1, 2, 3, 4, 5, 6};
    int32_t bits[6];
    memcpy(bits, f, sizeof f);
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w23 = init_of(g, "w23", PH_DT_FLOAT, 2, TK_I64(2, 3), f);
    ph_value *w32 = init_of(g, "w32", PH_DT_FLOAT, 2, TK_I64(3, 2), f);
    ph_value *w6 = init_of(g, "w6", PH_DT_FLOAT, 1, TK_I64(6), f);
    ph_value *wi = init_of(g, "wi", PH_DT_INT32, 2, TK_I64(2, 3), bits);
    tk_output(g, tk_op2(g, "Add", x, w23));
    tk_output(g, tk_op2(g, "MatMul", x, w32));
    tk_output(g, tk_op1(g, "Relu", w6));
    tk_output(g, tk_op1(g, "Neg", wi));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Tensors of one shape that begin alike (the same first 64 bytes, which
 * the pass looks at first) and differ only further on are kept apart;
 * equal ones among them, and equal ones shorter than those 64 bytes, are
 * merged into the first of their kind. */
START_TEST(same_beginning_other_end_kept)
{
    enum { N = 300 }; /* floats: 1200 bytes each */
    static const int64_t where[5] = {-1, N - 1, 20, 21, N - 1}; /* element changed; -1: none */
    static const float delta[5] = {0, 1, 1, 1, 1};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(N));
    float data[N];
    ph_value *v[7];
    for (int k = 0; k < 7; k++) {
        char name[8];
        for (int i = 0; i < N; i++)
            data[i] = (float)i;
        int variant = k < 5 ? k : k - 5; /* 5 and 6 repeat variants 0 and 1 */
        if (where[variant] >= 0)
            data[where[variant]] += delta[variant] * (float)(k == 4 ? 2 : 1);
        snprintf(name, sizeof name, "w%d", k);
        v[k] = init_of(g, name, PH_DT_FLOAT, 1, TK_I64(N), data);
        x = tk_op2(g, k % 2 ? "Mul" : "Add", x, v[k]);
    }
    float small[3] = {1, 2, 3}; /* shorter than the prefix */
    ph_value *s0 = init_of(g, "s0", PH_DT_FLOAT, 1, TK_I64(3), small);
    ph_value *s1 = init_of(g, "s1", PH_DT_FLOAT, 1, TK_I64(3), small);
    small[2] = 4;
    ph_value *s2 = init_of(g, "s2", PH_DT_FLOAT, 1, TK_I64(3), small);
    tk_output(g, x);
    tk_output(g, tk_op2(g, "Add", tk_op2(g, "Add", s0, s1), s2));

    ck_assert_int_eq(tk_run_checked(pass, m, 5, NULL, NULL, NULL), 3);
    ck_assert_uint_eq(ph_value_use_count(v[0]), 2); /* w5 merged into w0 */
    ck_assert_uint_eq(ph_value_use_count(v[1]), 2); /* w6 into w1 */
    for (int k = 2; k < 5; k++)
        ck_assert_uint_eq(ph_value_use_count(v[k]), 1);
    ck_assert_uint_eq(ph_value_use_count(s0), 2);
    ck_assert_uint_eq(ph_value_use_count(s2), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 7);
    ph_model_free(m);
}
END_TEST

/* An initializer that is a graph output keeps its name: never merged, in
 * either direction. */
START_TEST(graph_output_initializer_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w1 = tk_init(g, "w1", 2, TK_I64(2, 3), 5);
    ph_value *w2 = tk_init(g, "w2", 2, TK_I64(2, 3), 5);
    tk_output(g, w1);
    tk_output(g, tk_op2(g, "Add", x, w2));
    tk_output(g, tk_op2(g, "Mul", x, w1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* x float[3], w float[3] with initializer [1,2,3] (a default the user can
 * override), w2 = [1,2,3] a true constant: never merged. */
START_TEST(graph_input_default_kept)
{
    const int64_t d[1] = {3};
    const float w[3] = {1, 2, 3};
    pb graph = {0}, opset = {0}, model = {0}, i1 = {0}, i2 = {0};
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
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 17);
    pb_int(&model, 1, 8);
    pb_msg(&model, 7, &graph);
    pb_msg(&model, 8, &opset);
    ph_model *m = pb_load(&model);
    ck_assert_int_eq(ph_value_is_graph_input(ph_graph_find_value(ph_model_graph(m), "w")), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Bodies are deduplicated on their own initializers.
 *   main: initializer k = [1,2,3]; If(flag) -> y
 *   then: initializers a = b = [1,2,3]; Add(x, a) -> t; Add(t, b) -> then_out
 *   else: Neg(x) -> else_out */
START_TEST(duplicates_inside_if_body)
{
    const int64_t d[1] = {3}, v[3] = {1, 2, 3};
    pb then_g = {0}, else_g = {0}, attrs = {0}, graph = {0}, opset = {0}, model = {0};
    const char *names[3] = {"a", "b", "k"};
    pb inits[3] = {{{0}, 0}, {{0}, 0}, {{0}, 0}};
    for (int i = 0; i < 3; i++) {
        pb_int(&inits[i], 1, 3);
        pb_int(&inits[i], 2, PH_DT_INT64);
        pb_str(&inits[i], 8, names[i]);
        pb_bytes(&inits[i], 9, v, sizeof v);
    }
    pb_node(&then_g, "Add", "x", "a", "t", NULL);
    pb_node(&then_g, "Add", "t", "b", "then_out", NULL);
    pb_str(&then_g, 2, "then_branch");
    pb_msg(&then_g, 5, &inits[0]);
    pb_msg(&then_g, 5, &inits[1]);
    pb_value_info(&then_g, 12, "then_out", PH_DT_INT64, 1, d);
    pb_node(&else_g, "Add", "x", "k", "else_out", NULL);
    pb_str(&else_g, 2, "else_branch");
    pb_value_info(&else_g, 12, "else_out", PH_DT_INT64, 1, d);
    pb_graph_attr(&attrs, "then_branch", &then_g);
    pb_graph_attr(&attrs, "else_branch", &else_g);
    pb_node(&graph, "If", "flag", NULL, "y", &attrs);
    pb_str(&graph, 2, "main");
    pb_msg(&graph, 5, &inits[2]);
    pb_value_info(&graph, 11, "x", PH_DT_INT64, 1, d);
    pb_value_info(&graph, 11, "flag", PH_DT_BOOL, 0, NULL);
    pb_value_info(&graph, 12, "y", PH_DT_INT64, 1, d);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 17);
    pb_int(&model, 1, 8);
    pb_msg(&model, 7, &graph);
    pb_msg(&model, 8, &opset);
    ph_model *m = pb_load(&model);
    ph_graph *g = ph_model_graph(m);
    ph_graph *then_b = ph_node_attr_graph(tk_find_op(g, PH_OP_If), "then_branch");
    ck_assert_ptr_nonnull(then_b);

    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(then_b), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ph_node *a1 = ph_graph_first_node(then_b), *a2 = ph_node_next(a1);
    ck_assert_str_eq(ph_value_name(ph_node_input(a1, 1)), "a");
    ck_assert_ptr_eq(ph_node_input(a2, 1), ph_node_input(a1, 1));
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0);
    ph_model_free(m);
}
END_TEST

/* Many initializers, every value twice (interleaved): half are merged,
 * through the hash table, with the right partner each time. */
START_TEST(many_initializers)
{
    enum { N = 1500 };
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(2));
    ph_value *first[N];
    for (int pass_no = 0; pass_no < 2; pass_no++)
        for (int i = 0; i < N; i++) {
            char name[16];
            int64_t val[2] = {i, -i}; /* the same in both copies */
            snprintf(name, sizeof name, "v%d_%d", pass_no, i);
            ph_value *v = init_of(g, name, PH_DT_INT64, 1, TK_I64(2), val);
            if (!pass_no)
                first[i] = v;
            ph_node *cast = tk_node(g, "Cast", 1, &v);
            ck_assert_int_eq(ph_node_set_attr_int(cast, "to", PH_DT_FLOAT), 0);
            x = tk_op2(g, "Add", x, ph_node_output(cast, 0));
        }
    tk_output(g, x);
    ck_assert_int_eq(tk_run_checked(pass, m, 3, NULL, NULL, NULL), N);
    ck_assert_uint_eq(ph_graph_initializer_count(g), N);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(ph_value_use_count(first[i]), 2);
    ph_model_free(m);
}
END_TEST

/* The transformer block after constant_to_initializer: its many equal
 * small constants (Unsqueeze axes, ...) collapse, outputs bit-identical. */
START_TEST(transformer_block_duplicates)
{
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &m, &err), 0);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    tk_pass *c2i = tk_pass_load("constant_to_initializer");
    ck_assert_int_gt(tk_run_with(c2i, m, NULL, NULL, NULL), 0);
    tk_pass_free(c2i);
    size_t inits = ph_graph_initializer_count(g);
    int merged = tk_run_checked(pass, m, 4, NULL, NULL, NULL);
    ck_assert_int_gt(merged, 0);
    ck_assert_uint_eq(ph_graph_initializer_count(g), inits - (size_t)merged);
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        for (size_t j = i + 1; j < ph_graph_initializer_count(g); j++) {
            ph_value *a = ph_graph_initializer(g, i), *b = ph_graph_initializer(g, j);
            if (ph_value_const(a) && ph_value_const(b) && !ph_value_graph_output_count(a) &&
                !ph_value_graph_output_count(b))
                ck_assert_msg(!ph_tensor_equal(ph_value_const(a), ph_value_const(b)), "%s and %s still equal",
                              ph_value_name(a), ph_value_name(b));
        }
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0);
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
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
