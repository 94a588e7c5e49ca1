/* tests/test_ir.c - the IR's mutation API keeps use lists, names and order right. */
#include <check.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

static const int64_t dims23[] = {2, 3};

/* x -> Relu -> a -> Identity -> b -> Neg -> c (output) */
typedef struct chain {
    ph_model *m;
    ph_graph *g;
    ph_value *x, *a, *b, *c;
    ph_node *relu, *id, *neg;
} chain;

static chain make_chain(void)
{
    chain k;
    k.m = ph_model_new(13);
    ck_assert_ptr_nonnull(k.m);
    k.g = ph_model_graph(k.m);
    k.x = ph_graph_add_input(k.g, "x", PH_DT_FLOAT, 2, dims23);
    k.relu = ph_node_create(k.g, NULL, "Relu", 1, &k.x, 1);
    k.a = ph_node_output(k.relu, 0);
    k.id = ph_node_create(k.g, NULL, "Identity", 1, &k.a, 1);
    k.b = ph_node_output(k.id, 0);
    k.neg = ph_node_create(k.g, NULL, "Neg", 1, &k.b, 1);
    k.c = ph_node_output(k.neg, 0);
    ck_assert_int_eq(ph_graph_add_output(k.g, k.c), 0);
    ck_assert_int_eq(ph_graph_verify(k.g, NULL), 0);
    return k;
}

static void assert_valid(ph_graph *g)
{
    ph_error e = {0};
    int rc = ph_graph_verify(g, &e);
    ck_assert_msg(rc == 0, "verify failed: %s", e.message);
}

START_TEST(test_build_and_query)
{
    chain k = make_chain();
    ck_assert_uint_eq(ph_graph_node_count(k.g), 3);
    ck_assert_int_eq(ph_node_op(k.relu), PH_OP_Relu);
    ck_assert_int_eq(ph_node_op(k.id), PH_OP_Identity);
    ck_assert_str_eq(ph_node_domain(k.id), "");
    ck_assert_ptr_eq(ph_value_producer(k.a), k.relu);
    ck_assert_uint_eq(ph_value_use_count(k.x), 1);
    size_t idx = 9;
    ck_assert_ptr_eq(ph_value_use(k.x, 0, &idx), k.relu);
    ck_assert_uint_eq(idx, 0);
    ck_assert_ptr_eq(ph_value_sole_consumer(k.a), k.id);
    ck_assert_ptr_null(ph_value_sole_consumer(k.c)); /* graph output */
    ck_assert_ptr_eq(ph_value_only_reader(k.a), k.id);
    ck_assert_ptr_null(ph_value_only_reader(k.c)); /* graph output */
    ck_assert_uint_eq(ph_value_graph_output_count(k.c), 1);
    ck_assert(ph_value_is_graph_input(k.x));
    ck_assert_int_eq(ph_value_rank(k.x), 2);
    ck_assert_int_eq(ph_value_dim(k.x, -1), 3);
    ck_assert_ptr_eq(ph_graph_find_value(k.g, ph_value_name(k.b)), k.b);
    ck_assert_ptr_eq(ph_graph_first_node(k.g), k.relu);
    ck_assert_ptr_eq(ph_node_next(k.relu), k.id);
    ck_assert_ptr_eq(ph_graph_last_node(k.g), k.neg);
    /* unknown op types map to PH_OP_UNKNOWN, custom domains too */
    ph_node *c = ph_node_create(k.g, NULL, "NotAnOp", 1, &k.c, 1);
    ck_assert_int_eq(ph_node_op(c), PH_OP_UNKNOWN);
    ph_node_set_op_type(c, "Relu");
    ck_assert_int_eq(ph_node_op(c), PH_OP_Relu);
    ph_node_set_domain(c, "com.example");
    ck_assert_int_eq(ph_node_op(c), PH_OP_UNKNOWN);
    ck_assert_str_eq(ph_node_domain(c), "com.example");
    ph_model_free(k.m);
}
END_TEST

/* ph_value_only_reader: one node reading a value at two inputs is its only
 * reader (ph_value_sole_consumer wants one use); a second reader or a
 * graph output is not. */
START_TEST(test_only_reader)
{
    chain k = make_chain();
    ph_value *aa[2] = {k.a, k.a};
    ph_node *add = ph_node_create(k.g, NULL, "Add", 2, aa, 1);
    ph_value *s = ph_node_output(add, 0);
    ck_assert_ptr_null(ph_value_only_reader(k.a)); /* Identity and Add */
    ph_node *twice = ph_node_create(k.g, NULL, "Mul", 2, (ph_value *[]){s, s}, 1);
    ck_assert_ptr_null(ph_value_sole_consumer(s));
    ck_assert_ptr_eq(ph_value_only_reader(s), twice);
    ck_assert_int_eq(ph_graph_add_output(k.g, s), 0);
    ck_assert_ptr_null(ph_value_only_reader(s));
    ck_assert_ptr_null(ph_value_only_reader(ph_node_output(twice, 0))); /* no use */
    ck_assert_ptr_null(ph_value_only_reader(NULL));
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_replace_and_bypass)
{
    chain k = make_chain();
    /* bypass the Identity: Neg now reads a */
    ck_assert_int_eq(ph_node_bypass(k.id, 0, k.a), 0);
    ck_assert(ph_node_is_removed(k.id));
    ck_assert_ptr_eq(ph_node_input(k.neg, 0), k.a);
    ck_assert_uint_eq(ph_value_use_count(k.a), 1);
    ck_assert_uint_eq(ph_graph_node_count(k.g), 2);
    assert_valid(k.g);
    ph_model_collect(k.m);
    assert_valid(k.g);
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_graph_output_keeps_its_name)
{
    chain k = make_chain();
    const char *out_name = strdup(ph_value_name(k.c));
    /* c = Neg(b) is the graph output; replacing c by b renames b to c's name */
    ck_assert(ph_value_can_replace(k.c, k.b));
    ck_assert_int_eq(ph_value_replace(k.c, k.b), 0);
    ck_assert_ptr_eq(ph_graph_output(k.g, 0), k.b);
    ck_assert_str_eq(ph_value_name(k.b), out_name);
    ck_assert_str_ne(ph_value_name(k.c), out_name);
    ck_assert_ptr_eq(ph_graph_find_value(k.g, out_name), k.b);
    ck_assert_int_eq(ph_node_remove(k.neg), 0);
    assert_valid(k.g);
    /* a graph input cannot take over an output's name */
    ph_value *x = k.x;
    ck_assert(!ph_value_can_replace(k.b, x));
    ck_assert_int_eq(ph_value_replace(k.b, x), PH_EBUSY);
    ck_assert_ptr_eq(ph_graph_output(k.g, 0), k.b);
    assert_valid(k.g);
    free((void *)out_name);
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_remove_busy_and_prune)
{
    chain k = make_chain();
    ck_assert_int_eq(ph_node_remove(k.relu), PH_EBUSY); /* a is used */
    ck_assert(!ph_node_is_removed(k.relu));
    /* cut the output: everything becomes dead */
    ph_value *ones = ph_graph_add_initializer(k.g, "ones", ph_tensor_new(PH_DT_FLOAT, 2, dims23, NULL));
    ck_assert_ptr_nonnull(ones);
    ph_node *add = ph_node_create(k.g, NULL, "Add", 2, (ph_value *[]){k.x, ones}, 1);
    ck_assert_int_eq(ph_value_replace(k.c, ph_node_output(add, 0)), 0);
    int removed = ph_value_prune(k.c);
    ck_assert_int_eq(removed, 3); /* Neg, Identity, Relu */
    ck_assert_uint_eq(ph_graph_node_count(k.g), 1);
    assert_valid(k.g);
    /* the initializer is still used by Add */
    ck_assert_uint_eq(ph_graph_initializer_count(k.g), 1);
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_remove_dead)
{
    chain k = make_chain();
    ph_node *dead1 = ph_node_create(k.g, NULL, "Sigmoid", 1, &k.a, 1);
    ph_value *d1 = ph_node_output(dead1, 0);
    ph_node_create(k.g, NULL, "Tanh", 1, &d1, 1);
    ph_graph_add_initializer(k.g, "unused", ph_tensor_new(PH_DT_INT64, 0, NULL, NULL));
    ck_assert_int_eq(ph_graph_remove_dead(k.g), 3);
    ck_assert_uint_eq(ph_graph_node_count(k.g), 3);
    ck_assert_uint_eq(ph_graph_initializer_count(k.g), 0);
    assert_valid(k.g);
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_set_remove_input)
{
    chain k = make_chain();
    ph_node *cat = ph_node_create(k.g, NULL, "Concat", 3, (ph_value *[]){k.a, k.b, k.a}, 1);
    ph_node_set_attr_int(cat, "axis", 0); /* required by Concat's schema */
    ck_assert_uint_eq(ph_value_use_count(k.a), 3);
    ck_assert_int_eq(ph_node_remove_input(cat, 0), 0);
    ck_assert_ptr_eq(ph_node_input(cat, 0), k.b);
    ck_assert_ptr_eq(ph_node_input(cat, 1), k.a);
    ck_assert_uint_eq(ph_value_use_count(k.a), 2);
    assert_valid(k.g);
    ck_assert_int_eq(ph_node_set_input(cat, 2, k.x), 0); /* append */
    ck_assert_uint_eq(ph_node_input_count(cat), 3);
    ck_assert_int_eq(ph_node_set_input(cat, 1, NULL), 0); /* omit */
    ck_assert_uint_eq(ph_value_use_count(k.a), 1);
    ck_assert_int_eq(ph_node_set_input(cat, 7, k.x), PH_EINVAL);
    assert_valid(k.g);
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_order_and_toposort)
{
    chain k = make_chain();
    /* insert a consumer of c before the first node: out of order */
    ph_node *early = ph_node_create(k.g, k.relu, "Abs", 1, &k.c, 1);
    ck_assert_ptr_eq(ph_graph_first_node(k.g), early);
    ph_error e = {0};
    ck_assert_int_eq(ph_graph_verify(k.g, &e), PH_EVERIFY);
    ck_assert_ptr_nonnull(strstr(e.message, "before it is defined"));
    ck_assert_int_eq(ph_graph_toposort(k.g), 0);
    ck_assert_ptr_eq(ph_graph_last_node(k.g), early);
    ck_assert_ptr_eq(ph_graph_first_node(k.g), k.relu);
    assert_valid(k.g);
    /* a cycle is refused */
    ck_assert_int_eq(ph_node_set_input(k.relu, 0, ph_node_output(early, 0)), 0);
    ck_assert_int_eq(ph_graph_toposort(k.g), PH_EVERIFY);
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_attributes)
{
    chain k = make_chain();
    ph_node *n = k.relu;
    ck_assert_int_eq(ph_node_attr_int(n, "axis", -7), -7);
    ck_assert_int_eq(ph_node_set_attr_int(n, "axis", 3), 0);
    ck_assert_int_eq(ph_node_attr_int(n, "axis", -7), 3);
    ck_assert_int_eq(ph_node_attr_type(n, "axis"), PH_ATTR_INT);
    ck_assert_int_eq(ph_node_set_attr_int(n, "axis", 4), 0); /* replace, not add */
    ck_assert_uint_eq(ph_node_attr_count(n), 1);
    const int64_t perm[] = {1, 0};
    ph_node_set_attr_ints(n, "perm", 2, perm);
    const int64_t *got;
    ck_assert_int_eq(ph_node_attr_ints(n, "perm", &got), 2);
    ck_assert_int_eq(got[0], 1);
    ck_assert_int_eq(ph_node_attr_ints(n, "absent", &got), -1);
    ph_node_set_attr_string(n, "mode", "linear");
    ck_assert_str_eq(ph_node_attr_string(n, "mode", "x"), "linear");
    ph_node_set_attr_float(n, "alpha", 0.5f);
    ck_assert(ph_node_attr_float(n, "alpha", 0) == 0.5f);
    const float fl[] = {1.5f, 2.5f};
    ph_node_set_attr_floats(n, "scales", 2, fl);
    const float *gf;
    ck_assert_int_eq(ph_node_attr_floats(n, "scales", &gf), 2);
    float td[] = {1, 2, 3, 4, 5, 6};
    ck_assert_int_eq(ph_node_set_attr_tensor(n, "value", ph_tensor_new(PH_DT_FLOAT, 2, dims23, td)), 0);
    const ph_tensor *t = ph_node_attr_tensor(n, "value");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_numel(t), 6);
    ck_assert(((const float *)ph_tensor_data(t))[5] == 6.0f);
    /* wrong-type getters return the default */
    ck_assert_int_eq(ph_node_attr_int(n, "mode", 11), 11);
    ck_assert_int_eq(ph_node_copy_attrs(k.neg, n), 0);
    ck_assert_uint_eq(ph_node_attr_count(k.neg), ph_node_attr_count(n));
    ck_assert_str_eq(ph_node_attr_string(k.neg, "mode", "x"), "linear");
    ck_assert(((const float *)ph_tensor_data(ph_node_attr_tensor(k.neg, "value")))[0] == 1.0f);
    ck_assert_int_eq(ph_node_remove_attr(n, "mode"), 1);
    ck_assert_int_eq(ph_node_remove_attr(n, "mode"), 0);
    ck_assert_int_eq(ph_node_attr_type(n, "mode"), PH_ATTR_NONE);
    assert_valid(k.g);
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_unique_names_and_initializers)
{
    chain k = make_chain();
    const char *n1 = ph_graph_unique_name(k.g, "x");
    ck_assert_str_ne(n1, "x");
    ck_assert_ptr_null(ph_graph_find_value(k.g, n1));
    int64_t d[] = {4};
    int64_t data[] = {1, 2, 3, 4};
    ph_value *c1 = ph_graph_add_initializer(k.g, "w", ph_tensor_new(PH_DT_INT64, 1, d, data));
    ph_value *c2 = ph_graph_add_initializer(k.g, "w", ph_tensor_new(PH_DT_INT64, 1, d, data));
    ck_assert_str_eq(ph_value_name(c1), "w");
    ck_assert_str_ne(ph_value_name(c2), "w");
    ck_assert(ph_tensor_equal(ph_value_const(c1), ph_value_const(c2)));
    ck_assert(ph_value_is_initializer(c1));
    ck_assert_ptr_null(ph_value_const(k.x));
    ck_assert_int_eq(ph_value_prune(c1), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(k.g), 1);
    ck_assert_ptr_eq(ph_graph_initializer(k.g, 0), c2);
    ck_assert_ptr_null(ph_graph_add_input(k.g, "x", PH_DT_FLOAT, 0, NULL)); /* taken */
    assert_valid(k.g);
    ph_model_free(k.m);
}
END_TEST

START_TEST(test_subgraph_uses)
{
    ph_model *m;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/tests/models/control_flow.onnx", &m, &e), 0);
    ph_graph *g = ph_model_graph(m);
    assert_valid(g);
    ph_node *iff = NULL;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (ph_node_op(n) == PH_OP_If)
            iff = n;
    ck_assert_ptr_nonnull(iff);
    ck_assert_uint_eq(ph_node_subgraph_count(iff), 2);
    ph_graph *then_g = ph_node_attr_graph(iff, "then_branch");
    ck_assert_ptr_nonnull(then_g);
    ck_assert_ptr_eq(ph_graph_parent(then_g), iff);
    /* some value of the main graph is read from inside the branch */
    int outer_uses = 0;
    for (ph_node *n = ph_graph_first_node(then_g); n; n = ph_node_next(n))
        for (size_t i = 0; i < ph_node_input_count(n); i++)
            if (ph_node_input(n, i) && ph_value_graph(ph_node_input(n, i)) == g)
                outer_uses++;
    ck_assert_int_gt(outer_uses, 0);
    /* a value of the subgraph cannot be used by the main graph */
    ph_value *inner = ph_node_output(ph_graph_first_node(then_g), 0);
    ck_assert_ptr_null(ph_node_create(g, NULL, "Relu", 1, &inner, 1));
    ck_assert_int_eq(ph_node_set_input(ph_graph_first_node(g), 0, inner), PH_EINVAL);
    /* removing the If (after cutting its users) drops the branch's outer uses */
    ph_value *out = ph_node_output(iff, 0);
    size_t n_users = ph_value_use_count(out);
    if (n_users == 0 && ph_value_graph_output_count(out) == 0) {
        ck_assert_int_eq(ph_node_remove(iff), 0);
        assert_valid(g);
    }
    ph_model_free(m);
}
END_TEST

/* An If built with ph_node_add_subgraph: branches read an outer value,
 * save and load back, and removing the If drops the branches' outer uses. */
START_TEST(test_build_subgraphs)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, dims23);
    ph_value *c = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = ph_node_create(g, NULL, "If", 1, &c, 1);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ck_assert_ptr_nonnull(then_g);
    ck_assert_ptr_nonnull(else_g);
    ck_assert_ptr_null(ph_node_add_subgraph(iff, "then_branch")); /* taken */
    ck_assert_ptr_eq(ph_graph_parent(then_g), iff);
    ph_node *relu = ph_node_create(then_g, NULL, "Relu", 1, &x, 1);
    ph_node *neg = ph_node_create(else_g, NULL, "Neg", 1, &x, 1);
    ck_assert_int_eq(ph_graph_add_output(then_g, ph_node_output(relu, 0)), 0);
    ck_assert_int_eq(ph_graph_add_output(else_g, ph_node_output(neg, 0)), 0);
    ph_graph_add_output(g, ph_node_output(iff, 0));
    ck_assert_uint_eq(ph_value_use_count(x), 2); /* read from both branches */
    ck_assert_uint_eq(ph_node_subgraph_count(iff), 2);
    ck_assert_ptr_eq(ph_node_attr_graph(iff, "else_branch"), else_g);
    ck_assert_int_eq(ph_node_attr_type(iff, "then_branch"), PH_ATTR_GRAPH);
    assert_valid(g);
    ck_assert_uint_eq(ph_model_node_count(m), 3);

    char path[] = "/tmp/ph_ir_if_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ph_error e = {0};
    ck_assert_int_eq(ph_model_save(m, path, &e), 0);
    ph_model *m2;
    ck_assert_msg(ph_model_load(path, &m2, &e) == 0, "%s", e.message);
    unlink(path);
    ph_graph *g2 = ph_model_graph(m2);
    ph_node *iff2 = ph_graph_first_node(g2);
    ck_assert_int_eq(ph_node_op(iff2), PH_OP_If);
    ck_assert_uint_eq(ph_node_subgraph_count(iff2), 2);
    ck_assert_int_eq(ph_node_op(ph_graph_first_node(ph_node_attr_graph(iff2, "else_branch"))), PH_OP_Neg);
    ck_assert_uint_eq(ph_value_use_count(ph_graph_input(g2, 0)), 2);
    ph_model_free(m2);

    /* cut the output, remove the If: its branches no longer read x */
    ph_value *y = ph_node_output(ph_node_create(g, NULL, "Abs", 1, &x, 1), 0);
    ck_assert_int_eq(ph_value_replace(ph_node_output(iff, 0), y), 0);
    ck_assert_int_eq(ph_node_remove(iff), 0);
    ck_assert_uint_eq(ph_value_use_count(x), 1);
    assert_valid(g);
    ph_model_free(m);
}
END_TEST

/* Removes every Identity and the node right after each one it visits. */
static int drop_identity_and_next(ph_node *n, void *user)
{
    int *visits = user;
    (*visits)++;
    if (ph_node_op(n) != PH_OP_Identity)
        return 0;
    ph_node *after = ph_node_next(n);
    ph_value *in = ph_node_input(n, 0), *out = ph_node_output(n, 0);
    ck_assert_int_eq(ph_value_replace(out, in), 0);
    ck_assert_int_eq(ph_node_remove(n), 0);
    if (after && ph_value_use_count(ph_node_output(after, 0)) == 0 &&
        ph_value_graph_output_count(ph_node_output(after, 0)) == 0) {
        ck_assert_int_eq(ph_node_remove(after), 0);
        return 2;
    }
    return 1;
}

START_TEST(test_walk_survives_removal)
{
    chain k = make_chain();
    /* x -> Relu -> Identity -> Neg(out); plus a dead Sigmoid after the Identity's position */
    ph_node *dead = ph_node_create(k.g, k.neg, "Sigmoid", 1, &k.a, 1);
    ck_assert_ptr_nonnull(dead);
    int visits = 0;
    int rc = ph_graph_walk(k.g, drop_identity_and_next, &visits);
    ck_assert_int_eq(rc, 2);
    ck_assert_int_eq(visits, 3); /* Relu, Identity, Neg: the removed Sigmoid is skipped */
    ck_assert_uint_eq(ph_graph_node_count(k.g), 2);
    assert_valid(k.g);
    ph_model_free(k.m);
}
END_TEST

/* A node removed inside an If branch, then the If itself, both freed at one
 * collection (in either order of removal), with a rule set's change log
 * and shape inference observing the model: nothing may read the freed
 * branch (ASan). */
static int rw_nothing(ph_rewriter *rw, const ph_match *m) { return 0; }

START_TEST(test_collect_removed_body_nodes)
{
    for (int order = 0; order < 2; order++) {
        ph_model *m = ph_model_new(17);
        ph_graph *g = ph_model_graph(m);
        int64_t d[1] = {4};
        ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, d);
        ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
        ph_node *iff = ph_node_create(g, NULL, "If", 1, &cond, 1);
        ph_graph *t = ph_node_add_subgraph(iff, "then_branch");
        ph_graph *e = ph_node_add_subgraph(iff, "else_branch");
        ph_node *inner = ph_node_create(t, NULL, "Relu", 1, &x, 1);
        ph_node *id = ph_node_create(t, NULL, "Identity", 1, &x, 1);
        ph_graph_add_output(t, ph_node_output(inner, 0));
        ph_node *neg = ph_node_create(e, NULL, "Neg", 1, &x, 1);
        ph_graph_add_output(e, ph_node_output(neg, 0));
        ph_node *keep = ph_node_create(g, NULL, "Relu", 1, &x, 1);
        ph_graph_add_output(g, ph_node_output(keep, 0));
        ph_error err = {0};
        ph_graph_infer_shapes(g, &err);
        static const ph_rule rules[] = {{"r", "y = Relu(x)", NULL, rw_nothing}, {0}};
        ph_ruleset *rs = ph_ruleset_new(rules, &err);
        ck_assert_int_eq(ph_ruleset_run(rs, g, NULL, NULL), 0); /* the change log exists */
        if (order == 0) {
            ck_assert_int_eq(ph_node_remove(id), 0);
            ck_assert_int_eq(ph_node_remove(iff), 0);
        } else {
            ck_assert_int_eq(ph_node_remove(iff), 0);
            ck_assert_int_eq(ph_node_remove(id), 0);
        }
        ph_model_collect(m);
        ck_assert_int_eq(ph_graph_verify(g, &err), 0);
        ck_assert_uint_eq(ph_model_node_count(m), 1);
        ck_assert_int_eq(ph_ruleset_run(rs, g, NULL, NULL), 0);
        ph_ruleset_free(rs);
        ph_model_free(m);
    }
}
END_TEST

/* Two nodes of one name (ONNX allows it): removing and freeing either must
 * leave the name known, and asking for it again must not read freed
 * memory (ASan). */
START_TEST(test_duplicate_node_names)
{
    for (int which = 0; which < 2; which++) {
        ph_model *m = ph_model_new(17);
        ph_graph *g = ph_model_graph(m);
        int64_t d[1] = {4};
        ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, d);
        ph_node *a = ph_node_create(g, NULL, "Relu", 1, &x, 1);
        ph_node *b = ph_node_create(g, NULL, "Neg", 1, &x, 1);
        ck_assert_int_eq(ph_node_set_name(a, "dup"), 0);
        ck_assert_int_eq(ph_node_set_name(b, "dup"), 0);
        ph_graph_add_output(g, ph_node_output(which ? a : b, 0));
        ck_assert_int_eq(ph_node_remove(which ? b : a), 0);
        ph_model_collect(m);
        const char *u = ph_graph_unique_name(g, "dup");
        ck_assert_str_ne(u, "dup"); /* the other node still has it */
        ph_node *c = ph_node_create(g, NULL, "Abs", 1, &x, 1);
        ck_assert_str_ne(ph_node_name(c), "dup");
        ph_error err = {0};
        ck_assert_int_eq(ph_graph_verify(g, &err), 0);
        ph_model_free(m);
    }
}
END_TEST

/* The name maps through growth and removals: thousands of nodes and
 * values, every other one removed; each name left resolves to its value,
 * no removed name does, and new unique names avoid every live one. */
START_TEST(test_name_maps_grow_and_shrink)
{
    enum { N = 5000 };
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    int64_t d[1] = {4};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, d);
    ck_assert_ptr_nonnull(ph_graph_unique_name(g, "Relu")); /* the node-name map exists from here */
    static ph_node *nodes[N];
    static char names[N][64], vnames[N][64];
    for (int i = 0; i < N; i++) {
        ck_assert_ptr_nonnull(nodes[i] = ph_node_create(g, NULL, "Relu", 1, &x, 1));
        snprintf(names[i], sizeof names[i], "%s", ph_node_name(nodes[i]));
        snprintf(vnames[i], sizeof vnames[i], "%s", ph_value_name(ph_node_output(nodes[i], 0)));
    }
    for (int i = 0; i < N; i += 2)
        ck_assert_int_eq(ph_node_remove(nodes[i]), 0);
    ph_model_collect(m);
    for (int i = 0; i < N; i++) {
        ph_value *v = ph_graph_find_value(g, vnames[i]);
        if (i % 2)
            ck_assert_ptr_eq(v, ph_node_output(nodes[i], 0));
        else
            ck_assert_ptr_null(v);
    }
    for (int i = 0; i < 100; i++) {
        ph_node *c = ph_node_create(g, NULL, "Relu", 1, &x, 1);
        ck_assert_ptr_nonnull(c);
        for (int k = 1; k < N; k += 2)
            ck_assert_str_ne(ph_node_name(c), names[k]);
    }
    ck_assert_int_eq(ph_node_set_name(nodes[1], "renamed"), 0);
    const char *u = ph_graph_unique_name(g, "renamed");
    ck_assert_str_ne(u, "renamed");
    ck_assert_str_eq(ph_graph_unique_name(g, names[1]), names[1]); /* free again */
    ph_error err = {0};
    ck_assert_int_eq(ph_graph_verify(g, &err), 0);
    ph_model_free(m);
}
END_TEST

/* The initializers' version moves with every change a dedup-like pass
 * cares about, and a pass's memo word survives from call to call. */
START_TEST(test_initializer_version_and_memo)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    uint64_t v0 = ph_model_initializers_version(m);
    float one = 1.0f;
    ph_value *a = ph_graph_add_initializer(g, "a", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &one));
    uint64_t v1 = ph_model_initializers_version(m);
    ck_assert_uint_ne(v0, v1);
    ck_assert_int_eq(ph_value_set_const(a, ph_tensor_new(PH_DT_FLOAT, 0, NULL, &one)), 0);
    uint64_t v2 = ph_model_initializers_version(m);
    ck_assert_uint_ne(v1, v2);
    ck_assert_int_eq(ph_graph_add_output(g, a), 0);
    uint64_t v3 = ph_model_initializers_version(m);
    ck_assert_uint_ne(v2, v3);
    ph_value *b = ph_graph_add_initializer(g, "b", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &one));
    uint64_t v4 = ph_model_initializers_version(m);
    ck_assert_uint_ne(v3, v4);
    ph_value_prune(b); /* unused: removed */
    ck_assert_uint_ne(v4, ph_model_initializers_version(m));

    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ph_ctx_begin_pass(ctx, "p1", "");
    uint64_t *w = ph_ctx_pass_memo(ctx);
    ck_assert_ptr_nonnull(w);
    ck_assert_uint_eq(*w, 0);
    *w = 42;
    ph_ctx_end_pass(ctx);
    ph_ctx_begin_pass(ctx, "p2", "");
    ck_assert_uint_eq(*ph_ctx_pass_memo(ctx), 0);
    ph_ctx_end_pass(ctx);
    ph_ctx_begin_pass(ctx, "p1", "");
    ck_assert_uint_eq(*ph_ctx_pass_memo(ctx), 42);
    ph_ctx_end_pass(ctx);
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

/* ph_graph_walk_ops visits exactly the nodes of the given ops, bodies
 * included, and survives fn removing the node it is given. */
static int count_and_remove_neg(ph_node *n, void *user)
{
    (*(int *)user)++;
    if (ph_node_op(n) == PH_OP_Neg && ph_value_use_count(ph_node_output(n, 0)) == 0 &&
        !ph_value_graph_output_count(ph_node_output(n, 0)))
        ph_node_remove(n);
    return 1;
}

START_TEST(test_walk_ops)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    int64_t d[1] = {4};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, d);
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *dead = ph_node_create(g, NULL, "Neg", 1, &x, 1); /* removed by the walk */
    ph_node *r = ph_node_create(g, NULL, "Relu", 1, &x, 1);
    ph_node *live = ph_node_create(g, NULL, "Neg", 1, (ph_value *[]){ph_node_output(r, 0)}, 1);
    ph_node *iff = ph_node_create(g, NULL, "If", 1, &cond, 1);
    ph_graph *t = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *e = ph_node_add_subgraph(iff, "else_branch");
    ph_graph_add_output(t, ph_node_output(ph_node_create(t, NULL, "Neg", 1, &x, 1), 0));
    ph_graph_add_output(e, ph_node_output(ph_node_create(e, NULL, "Sigmoid", 1, &x, 1), 0));
    ph_graph_add_output(g, ph_node_output(live, 0));
    ph_graph_add_output(g, ph_node_output(iff, 0));
    int visits = 0;
    static const ph_op ops[] = {PH_OP_Neg, PH_OP_Sigmoid};
    ck_assert_int_eq(ph_graph_walk_ops(g, ops, 2, count_and_remove_neg, &visits), 4);
    ck_assert_int_eq(visits, 4); /* two Neg of g, the Neg and the Sigmoid of the branches */
    ck_assert(ph_node_is_removed(dead));
    visits = 0;
    static const ph_op relu[] = {PH_OP_Relu};
    ck_assert_int_eq(ph_graph_walk_ops(g, relu, 1, count_and_remove_neg, &visits), 1);
    ph_error err = {0};
    ck_assert_int_eq(ph_graph_verify(g, &err), 0);
    ph_model_free(m);
}
END_TEST

/* ph_graph_has_bodies: 0 for a graph whose nodes hold no subgraph, 1 once
 * an If or a node of an unknown op holds one, 0 again once that node is
 * removed; a body's own graph answers for its own nodes. */
START_TEST(test_has_bodies)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    int64_t d[1] = {4};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, d);
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *r = ph_node_create(g, NULL, "Relu", 1, &x, 1);
    ph_graph_add_output(g, ph_node_output(r, 0));
    ck_assert_int_eq(ph_graph_has_bodies(g), 0);
    ph_node *iff = ph_node_create(g, NULL, "If", 1, &cond, 1);
    ck_assert_int_eq(ph_graph_has_bodies(g), 0); /* an If without branches yet */
    ph_graph *t = ph_node_add_subgraph(iff, "then_branch");
    ph_graph_add_output(t, ph_node_output(ph_node_create(t, NULL, "Neg", 1, &x, 1), 0));
    ck_assert_int_eq(ph_graph_has_bodies(g), 1);
    ck_assert_int_eq(ph_graph_has_bodies(t), 0);
    ck_assert_int_eq(ph_node_remove(iff), 0);
    ck_assert_int_eq(ph_graph_has_bodies(g), 0);
    ph_node *custom = ph_node_create(g, NULL, "Repeat", 1, &x, 1);
    ph_node_set_domain(custom, "my.domain");
    ck_assert_int_eq(ph_node_op(custom), PH_OP_UNKNOWN);
    ck_assert_int_eq(ph_graph_has_bodies(g), 0);
    ph_node_add_subgraph(custom, "body");
    ck_assert_int_eq(ph_graph_has_bodies(g), 1);
    ph_model_free(m);
}
END_TEST

/* ph_graph_add_initializer_for names the initializer as
 * ph_graph_add_initializer does with the value's name: numbered, the
 * counter advancing alike. */
START_TEST(test_add_initializer_for)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    int64_t d[1] = {2};
    float data[2] = {1, 2};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, d);
    ph_node *r = ph_node_create(g, NULL, "Relu", 1, &x, 1);
    ph_value *y = ph_node_output(r, 0);
    char want[64];
    ph_value *a = ph_graph_add_initializer(g, ph_value_name(y), ph_tensor_new(PH_DT_FLOAT, 1, d, data));
    ck_assert_ptr_nonnull(a);
    ck_assert_str_ne(ph_value_name(a), ph_value_name(y));
    ph_value *b = ph_graph_add_initializer_for(g, y, ph_tensor_new(PH_DT_FLOAT, 1, d, data));
    ck_assert_ptr_nonnull(b);
    /* the next number after a's */
    const char *an = ph_value_name(a);
    long k = strtol(strrchr(an, '_') + 1, NULL, 10);
    snprintf(want, sizeof want, "%s__%ld", ph_value_name(y), k + 1);
    ck_assert_str_eq(ph_value_name(b), want);
    ck_assert_ptr_eq(ph_graph_find_value(g, want), b);
    ck_assert_int_eq(ph_tensor_dtype(ph_value_const(b)), PH_DT_FLOAT);
    ph_error err = {0};
    ck_assert_int_eq(ph_graph_verify(g, &err), 0);
    ph_model_free(m);
}
END_TEST

/* ir_version raised to what an opset needs, never lowered. */
START_TEST(test_require_ir_version)
{
    ph_model *m = ph_model_new(13);
    ck_assert_int_eq(ph_model_ir_version(m), 8);
    ck_assert_int_eq(ph_model_require_ir_version(m, 11), 0);
    ck_assert_int_eq(ph_model_ir_version(m), 8);
    ck_assert_int_eq(ph_model_require_ir_version(m, 19), 0);
    ck_assert_int_eq(ph_model_ir_version(m), 9);
    ck_assert_int_eq(ph_model_require_ir_version(m, 21), 0);
    ck_assert_int_eq(ph_model_ir_version(m), 10);
    ck_assert_int_eq(ph_model_require_ir_version(NULL, 21), PH_EINVAL);
    ph_model_free(m);
}
END_TEST

START_TEST(test_node_opset)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, dims23);
    ph_node *relu = ph_node_create(g, NULL, "Relu", 1, &x, 1);
    ph_node *gelu = ph_node_create(g, NULL, "Gelu", 1, &x, 1);
    ph_node_set_domain(gelu, "com.microsoft");
    ck_assert_int_eq(ph_node_opset(relu), 13);
    ck_assert_int_eq(ph_node_opset(gelu), -1); /* com.microsoft not imported */
    ph_model_set_opset(m, "com.microsoft", 1);
    ph_model_set_opset(m, "", 17);
    ck_assert_int_eq(ph_node_opset(gelu), 1);
    ck_assert_int_eq(ph_node_opset(relu), 17);
    ph_node_set_domain(relu, "ai.onnx"); /* the default domain by name */
    ck_assert_int_eq(ph_node_opset(relu), 17);
    ck_assert_int_eq(ph_node_opset(NULL), -1);
    ph_model_free(m);
}
END_TEST

/* Sticky errors outside rewrites: a pass run through ph_ctx_run that goes
 * on after a setter failed fails with it; one that checks is unchanged. */
static int run_ignores_failure(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    ph_node *n = ph_graph_first_node(g);
    ph_node_set_input(n, 9, NULL); /* past the inputs: PH_EINVAL */
    ck_assert_int_eq(ph_ctx_status(ctx), PH_EINVAL);
    ph_node_set_attr_int(n, "k", 1); /* later calls do not hide the first failure */
    return 1;
}

static int run_checks(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    return ph_node_set_input(ph_graph_first_node(g), 9, NULL) < 0 ? 0 : 1;
}

START_TEST(test_ctx_run_sticky)
{
    chain k = make_chain();
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ph_ctx_begin_pass(ctx, "ignores", "");
    ck_assert_int_eq(ph_ctx_run(ctx, k.g, run_ignores_failure, NULL), PH_EINVAL);
    ck_assert_msg(strstr(ph_ctx_last_error(ctx), "a call failed during the pass"), "%s", ph_ctx_last_error(ctx));
    ph_ctx_end_pass(ctx);
    ph_ctx_begin_pass(ctx, "checks", ""); /* clears the status */
    ck_assert_int_eq(ph_ctx_status(ctx), 0);
    ck_assert_int_eq(ph_ctx_run(ctx, k.g, run_checks, NULL), PH_EINVAL);
    ph_ctx_end_pass(ctx);
    /* outside ph_ctx_run nothing is recorded */
    ph_ctx_begin_pass(ctx, "none", "");
    ph_node_set_input(k.relu, 9, NULL);
    ck_assert_int_eq(ph_ctx_status(ctx), 0);
    ph_ctx_free(ctx);
    ph_model_free(k.m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ir");
    TCase *tc = tcase_create("mutation");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_build_and_query);
    tcase_add_test(tc, test_only_reader);
    tcase_add_test(tc, test_replace_and_bypass);
    tcase_add_test(tc, test_graph_output_keeps_its_name);
    tcase_add_test(tc, test_remove_busy_and_prune);
    tcase_add_test(tc, test_remove_dead);
    tcase_add_test(tc, test_set_remove_input);
    tcase_add_test(tc, test_order_and_toposort);
    tcase_add_test(tc, test_attributes);
    tcase_add_test(tc, test_unique_names_and_initializers);
    tcase_add_test(tc, test_subgraph_uses);
    tcase_add_test(tc, test_walk_survives_removal);
    tcase_add_test(tc, test_build_subgraphs);
    tcase_add_test(tc, test_collect_removed_body_nodes);
    tcase_add_test(tc, test_duplicate_node_names);
    tcase_add_test(tc, test_name_maps_grow_and_shrink);
    tcase_add_test(tc, test_initializer_version_and_memo);
    tcase_add_test(tc, test_walk_ops);
    tcase_add_test(tc, test_has_bodies);
    tcase_add_test(tc, test_add_initializer_for);
    tcase_add_test(tc, test_node_opset);
    tcase_add_test(tc, test_require_ir_version);
    tcase_add_test(tc, test_ctx_run_sticky);
    suite_add_tcase(s, tc);
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
