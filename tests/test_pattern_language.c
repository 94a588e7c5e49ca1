/* tests/test_pattern_language.c - the pattern language beyond plain
 * statements (passhost/pattern.h): benefits and the larger match winning,
 * attribute variables, defaults and comparisons, dtype variables, tests on
 * constant values, fits(), opset guards, alternatives between statements,
 * state from a condition to its rewrite, declarative results (output
 * lists, '_' as the copied node's op), '!all' readers, sticky
 * errors, why a match fails (ph_pattern_explain); each with the cases it
 * must refuse, and parse errors that keep their position. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/passhost.h"
#include "testkit.h"

static ph_pattern *parse_ok(const char *text)
{
    ph_error err = {0};
    ph_pattern *p = ph_pattern_parse(text, &err);
    ck_assert_msg(p != NULL, "parse '%s': %s", text, err.message);
    return p;
}

static int matches(const char *text, ph_node *root)
{
    ph_pattern *p = parse_ok(text);
    ph_match *m = ph_match_new(p);
    int r = ph_pattern_match_at(p, root, m);
    ph_match_free(m);
    ph_pattern_free(p);
    return r;
}

/* Run a rule table on m's main graph until nothing changes; the total. */
static int run_rules(const ph_rule *rules, ph_model *m)
{
    ph_error err = {0};
    ph_ruleset *rs = ph_ruleset_new(rules, &err);
    ck_assert_msg(rs != NULL, "%s", err.message);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    int total = 0, r;
    while ((r = ph_ruleset_run(rs, ph_model_graph(m), NULL, ctx)) > 0) {
        total += r;
        ck_assert_int_eq(ph_graph_toposort(ph_model_graph(m)), 0);
        ph_model_collect(m);
    }
    ck_assert_msg(r == 0, "run: %s (%s)", ph_strerror(r), ph_ctx_last_error(ctx));
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), &err), 0);
    ph_ctx_free(ctx);
    ph_ruleset_free(rs);
    return total;
}

/* ---------------------------------------------------------------- parsing */

START_TEST(new_parse_errors_keep_their_position)
{
    static const struct {
        const char *text, *needle;
        int line, column;
    } bad[] = {
        {"y = Relu(x:float)", "'float' is ambiguous", 1, 12},
        {"y = Relu(x:dtype=float)", "'float' is ambiguous", 1, 18},
        {"y = Relu(x:float16|float)", "'float' is ambiguous", 1, 20},
        {"y = Relu(x:all)", "expected '=' or '~' after 'all'", 1, 15},
        {"y = Relu(x:scalar~)", "expected a number", 1, 19},
        {"y = Relu(x:scalar~1+-)", "expected a number", 1, 22},
        {"y = Relu(x:fits(q))", "fits(q): q is not a value", 1, 10},
        {"y = Relu(x) {alpha in 3}", "'in' takes a list", 1, 23},
        {"y = Relu(x) {mode < \"a\"}", "compare numbers", 1, 21},
        {"y = Relu(x) {alpha != $a}", "binds with '=' only", 1, 23},
        {"y = Relu(x) {alpha?}", "expected a comparison", 1, 20},
        {"y = Relu(x) {pads all=[0]}", "'all' compares", 1, 23},
        {"y = Relu(x)\n=>\ny = Neg(x)\n=>", "a second '=>'", 4, 1},
        {"y = Relu(x)\n( a = Neg(x)\n=> y = Neg(a) )", "inside alternatives", 3, 1},
        {"( a = Neg(x)\n| a = Abs(x)\ny = Relu(a)", "not closed", 1, 1},
        {"( a = Neg(x) | )\ny = Relu(a)", "an empty alternative", 1, 16},
        {"a = Neg(x) | b = Abs(x)\ny = Relu(a)", "'|' outside a group", 1, 12},
        {"y = Relu(x))", "closes no group", 1, 12},
        {"opset >> 3\ny = Relu(x)", "expected an integer", 1, 8},
        {"opset 3\ny = Relu(x)", "expected a comparison", 1, 7},
        {"benefit -1\ny = Relu(x)", "a benefit is 0..1000000", 1, 9},
        {"y = Relu(x)\n=>\nx = Neg(y)", "is an input of the match", 3, 1},
        {"y = Relu(x)\n=>\ny = Neg(t)\nt = Abs(x)", "read before the result statement", 4, 1},
        {"y = Relu(x)\n=>\ny = Neg(x) like x", "not made by a statement", 3, 17},
        {"y = Relu(x)\n=>\ny = Neg(x) {...q}", "not made by a statement", 3, 16},
        {"y = Relu(x)\n=>\ny = Neg(x) {alpha}", "expected '='", 3, 18},
        {"_* = Split(x)", "a variadic output needs a name", 1, 3},
        {"ys*, z = Split(x)", "a variadic output must come last", 1, 4},
        {"ys* = Split(x)\nzs* = Split(x)\ny = Neg(ys)", "a variadic list", 3, 11},
        {"ys* = Split(x)\n=>\nys* = _(x)", "needs 'like'", 3, 7},
        {"ys* = Split(x)\n=>\nys* = _@a.b(x) like ys", "takes no domain", 3, 7},
        {"y = Relu(x)\n=>\nqs* = Neg(x)", "not an output list", 3, 1},
        {"y = Relu(x)\n=>\ny = Neg(x*)", "not a list", 3, 9},
        {"ys* = Split(x, qs*)\n=>\nys* = Split(qs*, x) like ys", "a variadic input must come last", 3, 16},
        {"ys* = Split(x)\n=>\nys* = ys", "names one value on each side", 3, 7},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ph_error err = {0};
        ph_pattern *p = ph_pattern_parse(bad[i].text, &err);
        ck_assert_msg(p == NULL, "'%s' parsed", bad[i].text);
        ck_assert_msg(strstr(err.message, bad[i].needle) != NULL, "'%s': message '%s' lacks '%s'", bad[i].text,
                      err.message, bad[i].needle);
        char where[64];
        snprintf(where, sizeof where, "(line %d, column %d)", bad[i].line, bad[i].column);
        ck_assert_msg(strstr(err.message, where) != NULL, "'%s': message '%s' lacks %s", bad[i].text,
                      err.message, where);
        ck_assert_int_eq(err.code, PH_EINVAL);
    }
}
END_TEST

START_TEST(benefit_and_forms)
{
    ph_pattern *p = parse_ok("a = Neg(x)\ny = Relu(a)");
    ck_assert_uint_eq(ph_pattern_form_count(p), 1);
    ck_assert_int_eq(ph_pattern_benefit(p, 0), 2);
    ph_pattern_free(p);
    p = parse_ok("benefit 7\ny = Relu(x)");
    ck_assert_int_eq(ph_pattern_benefit(p, 0), 7);
    ph_pattern_free(p);
    /* names 'benefit' and 'opset' are still value names */
    p = parse_ok("benefit = Neg(x)\nopset, _ = Split(benefit)");
    ck_assert_int_eq(ph_pattern_benefit(p, 0), 2);
    ph_pattern_free(p);
    /* two groups: 2 x 3 forms, each with its own benefit and depth */
    p = parse_ok("( a = Neg(x) | t = Abs(x)\n    a = Neg(t) )\n"
                 "( y = Relu(a) | y = Sigmoid(a) | u = Tanh(a); y = Sigmoid(u) )");
    ck_assert_uint_eq(ph_pattern_form_count(p), 6);
    ck_assert_int_eq(ph_pattern_benefit(p, 0), 2);
    ck_assert_int_eq(ph_pattern_benefit(p, 2), 3);
    ck_assert_int_eq(ph_pattern_benefit(p, 5), 4); /* Abs, Neg, Tanh, Sigmoid */
    ck_assert_int_eq(ph_pattern_depth(p), 4);
    ph_pattern_free(p);
    /* nested groups, on one line */
    p = parse_ok("( a = Neg(x) | ( a = Abs(x) | a = Relu(x) ) ); y = Sigmoid(a)");
    ck_assert_uint_eq(ph_pattern_form_count(p), 3);
    ph_pattern_free(p);
}
END_TEST

/* ---------------------------------------------------------- alternatives */

START_TEST(alternatives_between_statements)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *h = tk_init(g, "h", 0, NULL, 1);
    ph_value *a = tk_op1(g, "Erf", x);
    ph_value *hx = tk_op2(g, "Mul", x, h); /* the 0.5 into x first */
    ph_value *y = tk_op2(g, "Mul", hx, a);
    tk_output(g, y);
    const char *pat = "a = Erf(x)\n"
                      "( xa = Mul(x, a); y = Mul(xa, h:const)\n"
                      "| hx = Mul(x, h:const); y = Mul(hx, a)\n"
                      "| y = Mul(x, a) )";
    ph_pattern *p = parse_ok(pat);
    ph_match *mt = ph_match_new(p);
    ck_assert(ph_pattern_match_at(p, ph_value_producer(y), mt));
    ck_assert_uint_eq(ph_match_form(mt), 1);
    ck_assert_ptr_eq(ph_match_value(mt, "h"), h);
    ck_assert_ptr_eq(ph_match_value(mt, "hx"), hx);
    ck_assert_ptr_null(ph_match_value(mt, "xa")); /* another form's name */
    ck_assert_ptr_eq(ph_match_node(mt, "a"), ph_value_producer(a));
    /* the form without the 0.5 does not match this Mul: x is not hx */
    ck_assert(!matches("a = Erf(x); y = Mul(x, a)", ph_value_producer(y)));
    ph_match_free(mt);
    ph_pattern_free(p);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------ attribute tests */

START_TEST(attribute_variables_defaults_and_comparisons)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *a = tk_op1(g, "LeakyRelu", x);
    ph_value *b = tk_op1(g, "LeakyRelu", a);
    tk_output(g, b);
    ph_node *na = ph_value_producer(a), *nb = ph_value_producer(b);
    ph_node_set_attr_float(na, "alpha", 0.25f);
    ph_node_set_attr_int(na, "k", 3);
    ph_node_set_attr_ints(na, "pads", 4, TK_I64(0, 0, 0, 0));
    ph_node_set_attr_ints(na, "perm", 3, TK_I64(0, 2, 1));
    ph_node_set_attr_string(na, "mode", "linear");
    ph_node_set_attr_float(nb, "alpha", 0.25f);

    /* binding: the condition reads what the pattern bound */
    ph_pattern *p = parse_ok("y = LeakyRelu(x) {alpha=$a, k=$k, perm=$p, mode=$m, beta(0.5)=$b, !gamma}");
    ph_match *mt = ph_match_new(p);
    ck_assert(ph_pattern_match_at(p, na, mt));
    ck_assert(ph_match_float(mt, "a", 0) == 0.25);
    ck_assert(ph_match_float(mt, "$a", 0) == 0.25);
    ck_assert_int_eq(ph_match_int(mt, "k", -1), 3);
    ck_assert(ph_match_float(mt, "k", 0) == 3.0); /* integers read as floats */
    const int64_t *pv;
    ck_assert_int_eq(ph_match_ints(mt, "p", &pv), 3);
    ck_assert_int_eq(pv[1], 2);
    ck_assert_str_eq(ph_match_string(mt, "m", ""), "linear");
    ck_assert(ph_match_float(mt, "b", 0) == 0.5); /* the default */
    ck_assert(ph_match_has(mt, "b") && !ph_match_has(mt, "nope"));
    ck_assert_int_eq(ph_match_int(mt, "nope", -7), -7);
    ck_assert_ptr_null(ph_match_string(mt, "a", NULL)); /* a float is no string */
    ph_match_free(mt);
    ph_pattern_free(p);

    /* an absent attribute without default leaves its variable unbound */
    p = parse_ok("y = LeakyRelu(x) {beta?=$b}");
    mt = ph_match_new(p);
    ck_assert(ph_pattern_match_at(p, na, mt));
    ck_assert(!ph_match_has(mt, "b"));
    ph_match_free(mt);
    ph_pattern_free(p);
    ck_assert(!matches("y = LeakyRelu(x) {beta=$b}", na));

    /* a variable used twice must be equal */
    ck_assert(matches("a = LeakyRelu(x) {alpha=$v}\ny = LeakyRelu(a) {alpha=$v}", nb));
    ph_node_set_attr_float(nb, "alpha", 0.5f);
    ck_assert(!matches("a = LeakyRelu(x) {alpha=$v}\ny = LeakyRelu(a) {alpha=$v}", nb));

    /* comparisons */
    ck_assert(matches("y = LeakyRelu(x) {alpha > 0, alpha < 1, alpha >= 0.25, alpha <= 0.25, k != 2}", na));
    ck_assert(!matches("y = LeakyRelu(x) {alpha > 0.25}", na));
    ck_assert(!matches("y = LeakyRelu(x) {k != 3}", na));
    ck_assert(matches("y = LeakyRelu(x) {k in [1, 3, 5], mode in [\"nearest\", \"linear\"]}", na));
    ck_assert(!matches("y = LeakyRelu(x) {k in [1, 5]}", na));
    ck_assert(!matches("y = LeakyRelu(x) {mode in [\"cubic\"]}", na));
    /* a float attribute holds a float32: 0.1 as written compares as one */
    ph_node_set_attr_float(nb, "alpha", 0.1f);
    ck_assert(matches("y = LeakyRelu(x) {alpha=0.1}", nb));
    ck_assert(matches("y = LeakyRelu(x) {k=3.0}", na)); /* numbers by value */
    /* lists: exact, and every element */
    ck_assert(matches("y = LeakyRelu(x) {pads=[0,0,0,0], pads all=0, perm all>=0, perm all<3}", na));
    ck_assert(!matches("y = LeakyRelu(x) {perm all=0}", na));
    ck_assert(!matches("y = LeakyRelu(x) {pads=[0,0]}", na));
    /* absent: 'key?' passes, 'key(d)' compares d, plain fails */
    ck_assert(matches("y = LeakyRelu(x) {strides? all=1, group(1)=1, group(1) < 2}", na));
    ck_assert(!matches("y = LeakyRelu(x) {group(2)=1}", na));
    ck_assert(!matches("y = LeakyRelu(x) {group=1}", na));
    ck_assert(matches("y = LeakyRelu(x) {mode, !group}", na));
    ck_assert(!matches("y = LeakyRelu(x) {group}", na));
    ph_model_free(m);
}
END_TEST

START_TEST(dtype_variables)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *c = tk_op1(g, "Cast", x);
    tk_output(g, c);
    ph_node *n = ph_value_producer(c);
    ph_node_set_attr_int(n, "to", PH_DT_FLOAT);
    ck_assert(matches("y = Cast(x:dtype=$t) {to=$t}", n));
    ph_node_set_attr_int(n, "to", PH_DT_FLOAT16);
    ck_assert(!matches("y = Cast(x:dtype=$t) {to=$t}", n));
    ck_assert(matches("y = Cast(x:float32|double)", n));
    ck_assert(matches("y = Cast(x:floating)", n));
    ck_assert(!matches("y = Cast(x:float16|bfloat16)", n));
    /* an unknown dtype binds nothing */
    ph_value *u = tk_input(g, "u", -1, NULL);
    ph_value_set_type(u, PH_DT_UNDEFINED, -1, NULL);
    ph_value *cu = tk_op1(g, "Cast", u);
    tk_output(g, cu);
    ck_assert(!matches("y = Cast(x:dtype=$t)", ph_value_producer(cu)));
    ph_model_free(m);
}
END_TEST

/* ----------------------------------------------------------- value tests */

static ph_value *const_f(ph_graph *g, const char *name, size_t rank, const int64_t *dims, const double *vals)
{
    return ph_graph_add_initializer(g, name, ph_tensor_from_f64(PH_DT_FLOAT, rank, dims, vals));
}

/* ':ints': integers ph_value_const_ints reads (an int64 initializer, a
 * shape constant with a symbolic entry); not floats, not a graph input. */
START_TEST(ints_constraint)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, TK_I64(-1, 6));
    ph_value_set_dim_param(x, 0, "batch");
    ph_value *shp = tk_op1(g, "Shape", x), *dyn = ph_graph_add_input(g, "dyn", PH_DT_INT64, 1, TK_I64(2));
    ph_value *shapes[] = {tk_ints(g, "s", 2, TK_I64(3, 2)), shp, const_f(g, "f", 1, TK_I64(2), (double[]){3, 2}), dyn};
    ph_node *n[4];
    for (int i = 0; i < 4; i++) {
        ph_value *y = tk_op2(g, "Reshape", x, shapes[i]);
        tk_output(g, y);
        n[i] = ph_value_producer(y);
    }
    tk_infer(m);
    ck_assert(matches("y = Reshape(x, s:ints)", n[0]));
    ck_assert(matches("y = Reshape(x, s:ints)", n[1])); /* [batch, 6] */
    ck_assert(!matches("y = Reshape(x, s:const)", n[1]));
    ck_assert(!matches("y = Reshape(x, s:ints)", n[2])); /* floats */
    ck_assert(!matches("y = Reshape(x, s:ints)", n[3])); /* a graph input */
    ph_model_free(m);
}
END_TEST

START_TEST(constant_value_tests)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *half = const_f(g, "half", 0, NULL, (double[]){0.5});
    ph_value *kappa = const_f(g, "kappa", 1, TK_I64(1), (double[]){0.0447149});
    ph_value *ones = const_f(g, "ones", 1, TK_I64(3), (double[]){1, 1, 1});
    ph_value *mixed = const_f(g, "mixed", 1, TK_I64(3), (double[]){1, 1, 1.00001});
    ph_value *nan = const_f(g, "nan", 0, NULL, (double[]){NAN});
    ph_value *vals[] = {half, kappa, ones, mixed, nan};
    ph_node *n[5];
    for (int i = 0; i < 5; i++) {
        ph_value *y = tk_op2(g, "Mul", x, vals[i]);
        tk_output(g, y);
        n[i] = ph_value_producer(y);
    }
    ck_assert(matches("y = Mul(x, c:scalar=0.5)", n[0]));
    ck_assert(!matches("y = Mul(x, c:scalar=0.25)", n[0]));
    ck_assert(matches("y = Mul(x, c:scalar~0.044715)", n[1])); /* relative 1e-4 */
    ck_assert(!matches("y = Mul(x, c:scalar~0.044715+-1e-8)", n[1]));
    ck_assert(matches("y = Mul(x, c:scalar~0.044715+-1e-6)", n[1]));
    ck_assert(!matches("y = Mul(x, c:scalar=1)", n[2])); /* three elements */
    ck_assert(matches("y = Mul(x, c:all=1)", n[2]));
    ck_assert(!matches("y = Mul(x, c:all=1)", n[3]));
    ck_assert(matches("y = Mul(x, c:all~1)", n[3]));
    ck_assert(!matches("y = Mul(x, c:all~1+-1e-7)", n[3]));
    ck_assert(matches("y = Mul(x, c:all=0.5)", n[0])); /* a scalar is all of one */
    ck_assert(!matches("y = Mul(x, c:scalar~0)", n[4])); /* NaN never */
    ck_assert(!matches("y = Mul(x, c:all=0)", n[4]));
    /* not a constant */
    ph_value *y = tk_op2(g, "Mul", x, x);
    tk_output(g, y);
    ck_assert(!matches("y = Mul(x, c:scalar~1)", ph_value_producer(y)));
    /* fits: broadcasts to x's shape without widening it */
    ck_assert(matches("y = Mul(x, c:fits(x))", n[0]));
    ck_assert(matches("y = Mul(x, c:fits(x))", n[2]));
    ph_value *wide = const_f(g, "wide", 3, TK_I64(1, 1, 3), (double[]){1, 2, 3});
    ph_value *other = const_f(g, "other", 1, TK_I64(2), (double[]){1, 2});
    ph_value *yw = tk_op2(g, "Mul", x, wide), *yo = tk_op2(g, "Mul", x, other);
    tk_output(g, yw);
    tk_output(g, yo);
    ck_assert(!matches("y = Mul(x, c:fits(x))", ph_value_producer(yw)));
    ck_assert(!matches("y = Mul(x, c:fits(x))", ph_value_producer(yo)));
    ph_model_free(m);
}
END_TEST

START_TEST(opset_guards)
{
    ph_model *m = tk_model(); /* default opset 17 */
    ph_graph *g = ph_model_graph(m);
    ph_value *y = tk_op1(g, "Relu", tk_input(g, "x", 1, TK_I64(4)));
    tk_output(g, y);
    ph_node *n = ph_value_producer(y);
    ck_assert(matches("opset >= 17\ny = Relu(x)", n));
    ck_assert(matches("opset == 17; opset <= 17; opset > 13; opset != 12\ny = Relu(x)", n));
    ck_assert(!matches("opset >= 18\ny = Relu(x)", n));
    ck_assert(!matches("opset < 17\ny = Relu(x)", n));
    ck_assert(!matches("opset@com.microsoft >= 1\ny = Relu(x)", n)); /* not imported */
    ph_model_set_opset(m, "com.microsoft", 1);
    ck_assert(matches("opset@com.microsoft >= 1\ny = Relu(x)", n));
    /* a guard per form */
    ph_pattern *p = parse_ok("( opset < 13; y = Relu(x) {!k} | opset >= 13; y = Relu(x) )");
    ph_match *mt = ph_match_new(p);
    ck_assert(ph_pattern_match_at(p, n, mt));
    ck_assert_uint_eq(ph_match_form(mt), 1);
    ph_match_free(mt);
    ph_pattern_free(p);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------ why a match fails */

/* ph_pattern_explain of text at root: its answer, the reason in why. */
static int explain(const char *text, ph_node *root, char *why, size_t size)
{
    ph_pattern *p = parse_ok(text);
    ph_match *mt = ph_match_new(p);
    int r = ph_pattern_explain(p, root, mt, why, size);
    ph_match_free(mt);
    ph_pattern_free(p);
    return r;
}

#define ASSERT_WHY(text, root, expect)                                                   \
    do {                                                                                 \
        char why_[600];                                                                  \
        ck_assert_int_eq(explain(text, root, why_, sizeof why_), 0);                     \
        ck_assert_msg(strstr(why_, expect) != NULL, "%s\n  says: %s\n  not: %s", text, why_, expect); \
    } while (0)

/* The reasons in the language's own words: attributes and their defaults,
 * comparisons, variables bound elsewhere, constant values, fits(), dtype
 * variables, guards, negative statements, and the form that got furthest. */
START_TEST(explain_says_why_in_the_language)
{
    ph_model *m = tk_model(); /* opset 17 */
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *a = tk_op1(g, "LeakyRelu", x);
    ph_value *b = tk_op1(g, "LeakyRelu", a);
    tk_output(g, b);
    ph_node *na = ph_value_producer(a), *nb = ph_value_producer(b);
    ph_node_set_attr_float(na, "alpha", 0.25f);
    ph_node_set_attr_float(nb, "alpha", 0.5f);
    ph_node_set_attr_ints(na, "perm", 3, TK_I64(0, 2, 1));

    ASSERT_WHY("y = LeakyRelu(x) {group=1}", na,
               "statement 1 (LeakyRelu): attribute group is absent; the pattern wants group = 1 (exporters "
               "leave out attributes at their default value: write group ?= 1 to accept that)");
    ASSERT_WHY("y = LeakyRelu(x) {group(2)=1}", na, "attribute group is absent, its default 2; the pattern wants 1");
    ASSERT_WHY("y = LeakyRelu(x) {alpha > 0.25}", na, "attribute alpha is 0.25; the pattern wants alpha > 0.25");
    ASSERT_WHY("y = LeakyRelu(x) {perm all=0}", na, "attribute perm is [0, 2, 1]; the pattern wants perm all = 0");
    ASSERT_WHY("y = LeakyRelu(x) {!alpha}", na, "attribute alpha is present (0.25); the pattern wants it absent");
    ASSERT_WHY("a = LeakyRelu(x) {alpha=$v}\ny = LeakyRelu(a) {alpha=$v}", nb,
               "statement 1 (LeakyRelu): attribute alpha is 0.25, but $v is 0.5 already in this match");

    /* constants: the value, the shape, fits() */
    ph_value *half = ph_graph_add_initializer(g, "half", ph_tensor_from_f64(PH_DT_FLOAT, 0, NULL, (double[]){0.5}));
    ph_value *wide = ph_graph_add_initializer(
        g, "wide", ph_tensor_from_f64(PH_DT_FLOAT, 3, TK_I64(1, 1, 3), (double[]){1, 2, 3}));
    ph_value *yh = tk_op2(g, "Mul", x, half), *yw = tk_op2(g, "Mul", x, wide);
    tk_output(g, yh);
    tk_output(g, yw);
    ASSERT_WHY("y = Mul(x, c:scalar=0.25)", ph_value_producer(yh),
               "statement 1 (Mul): input 1 'half' fails ':scalar=0.25' (dtype float32, shape [], a constant of "
               "value 0.5)");
    ASSERT_WHY("y = Mul(x, c:const:fits(x))", ph_value_producer(yw),
               "'wide' (statement 1, input 1: dtype float32, shape [1,1,3], a constant of 3 elements) fails "
               "':fits(x)' ('x': dtype float32, shape [2,3], not a constant)");
    ASSERT_WHY("y = Mul(x:float16|bfloat16, c)", ph_value_producer(yh),
               "input 0 'x' fails ':float16|bfloat16' (dtype float32, shape [2,3], not a constant)");

    /* a dtype variable bound by an attribute */
    ph_value *c = tk_op1(g, "Cast", x);
    tk_output(g, c);
    ph_node_set_attr_int(ph_value_producer(c), "to", PH_DT_FLOAT16);
    ASSERT_WHY("y = Cast(x:dtype=$t) {to=$t}", ph_value_producer(c),
               "input 0 'x' has dtype float32, but $t is float16 already in this match");

    /* guards */
    ASSERT_WHY("opset >= 18\ny = Cast(x)", ph_value_producer(c),
               "the guard opset >= 18 fails: the model's opset is 17");
    ASSERT_WHY("opset@com.microsoft >= 1\ny = Cast(x)", ph_value_producer(c),
               "the model's opset of com.microsoft is not imported");

    /* a negative statement names the reader it excludes */
    char label[200], expect[300];
    snprintf(expect, sizeof expect, "node '%s' reads the match and is what the negative statement 1 (!LeakyRelu) "
             "excludes", ph_node_label(nb, label, sizeof label));
    ASSERT_WHY("y = LeakyRelu(x)\n!LeakyRelu(y)", na, expect);

    /* several forms: the one that got furthest */
    ph_value *n = tk_op1(g, "Neg", x);
    ph_value *r = tk_op1(g, "Relu", n);
    tk_output(g, r);
    ph_node_set_attr_int(ph_value_producer(n), "k", 1);
    ASSERT_WHY("( a = Neg(x) {!k} | t = Abs(x); a = Neg(t) )\ny = Relu(a)", ph_value_producer(r),
               "form 2 of 2: statement 1 (Abs): 'x' is a graph input, not made by a node");

    /* not a candidate; bad arguments */
    char why[64] = "unchanged";
    ck_assert_int_eq(explain("y = Relu(x)", na, why, sizeof why), -1);
    ck_assert_str_eq(why, "");
    ph_pattern *p = parse_ok("y = LeakyRelu(x)");
    ph_match *mt = ph_match_new(p);
    ck_assert_int_eq(ph_pattern_explain(p, na, mt, why, sizeof why), 1);
    ck_assert_str_eq(why, "");
    ck_assert_ptr_eq(ph_match_root(mt), na);
    ck_assert_int_eq(ph_pattern_explain(p, na, mt, NULL, 8), PH_EINVAL);
    ck_assert_int_eq(ph_pattern_explain(p, NULL, mt, why, sizeof why), PH_EINVAL);
    /* a short buffer is cut, not overrun */
    char small[12];
    ck_assert_int_eq(explain("y = LeakyRelu(x) {group=1}", na, small, sizeof small), 0);
    ck_assert_uint_eq(strlen(small), sizeof small - 1);
    ph_match_free(mt);
    ph_pattern_free(p);
    ph_model_free(m);
}
END_TEST

/* ----------------------------------------------- benefit: larger wins */

static int rw_fuse_to_elu(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    ph_node *n = ph_rw_node(rw, "Elu", 1, &x, 1);
    ph_node_set_attr_float(n, "alpha", (float)ph_match_node_count(m));
    return ph_rw_replace_root(rw, ph_node_output(n, 0));
}

static int no_big(const ph_match *m, const ph_params *p)
{
    return ph_match_int(m, "big", 1);
}

/* Neg -> Relu [-> Sigmoid [-> Tanh]]: the short rule's root is the Relu,
 * the longer ones' roots are downstream; whatever order the driver visits
 * the candidates in, the longest that passes its condition wins. */
START_TEST(the_larger_match_wins)
{
    static const ph_rule rules[] = {
        {"short", "a = Neg(x)\ny = Relu(a)", NULL, rw_fuse_to_elu},
        {"longer", "a = Neg(x)\nr = Relu(a)\ny = Sigmoid(r)", NULL, rw_fuse_to_elu},
        {"longest", "a = Neg(x)\nr = Relu(a)\ns = Sigmoid(r)\ny = Tanh(s) {big(1)=$big}", no_big, rw_fuse_to_elu},
        {0}};
    for (int variant = 0; variant < 3; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *v = tk_op1(g, "Relu", tk_op1(g, "Neg", tk_input(g, "x", 1, TK_I64(4))));
        if (variant >= 1)
            v = tk_op1(g, "Sigmoid", v);
        if (variant >= 2) {
            v = tk_op1(g, "Tanh", v);
            ph_node_set_attr_int(ph_value_producer(v), "big", 0); /* its condition says no */
        }
        tk_output(g, v);
        ck_assert_int_eq(run_rules(rules, m), 1);
        ph_node *elu = tk_find_op(g, PH_OP_Elu);
        ck_assert_ptr_nonnull(elu);
        /* the number of nodes the winning match held */
        ck_assert(ph_node_attr_float(elu, "alpha", 0) == (variant == 0 ? 2.0f : 3.0f));
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Tanh), variant == 2);
        ph_model_free(m);
    }
}
END_TEST

/* ----------------------------------------------------------- state */

typedef struct st {
    int calls;
    double value;
} st;

static int state_check(const ph_match *m, const ph_params *p)
{
    st *s = ph_match_state(m, sizeof *s);
    if (!s)
        return PH_ENOMEM;
    ck_assert_int_eq(s->calls, 0); /* zeroed for each new match */
    s->calls++;
    s->value = 42.0;
    return 1;
}

static int state_rewrite(ph_rewriter *rw, const ph_match *m)
{
    const st *s = ph_match_state(m, sizeof *s);
    ck_assert_int_eq(s->calls, 1);
    ph_value *x = ph_match_value(m, "x");
    ph_node *n = ph_rw_node(rw, "Elu", 1, &x, 1);
    ph_node_set_attr_float(n, "alpha", (float)s->value);
    return ph_rw_replace_root(rw, ph_node_output(n, 0));
}

START_TEST(condition_hands_state_to_rewrite)
{
    static const ph_rule rules[] = {{"state", "y = Relu(x)", state_check, state_rewrite}, {0}};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    tk_output(g, tk_op1(g, "Relu", x));
    tk_output(g, tk_op1(g, "Relu", x));
    ck_assert_int_eq(run_rules(rules, m), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Elu), 2);
    ck_assert(ph_node_attr_float(tk_find_op(g, PH_OP_Elu), "alpha", 0) == 42.0f);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------- declarative results */

static int bind_two(ph_rewriter *rw, const ph_match *m)
{
    double two = 2.0;
    ph_rw_bind(rw, "two", ph_rw_initializer(rw, "two", ph_tensor_from_f64(PH_DT_FLOAT, 0, NULL, &two)));
    ph_rw_bind_float(rw, "alpha", 0.125);
    return 1;
}

START_TEST(declarative_results)
{
    /* Conv + Relu -> FusedConv like the Conv, with an attribute from a
     * literal; the result replaces the root and keeps its name */
    static const ph_rule fuse[] = {
        {"fuse", "c = Conv(x, w, b?)\ny = Relu(c)\n=>\ny = FusedConv@com.microsoft(x, w, b?) like c {activation=\"Relu\"}",
         NULL, NULL},
        {0}};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 4, 4));
    ph_value *w = tk_init(g, "w", 4, TK_I64(3, 2, 1, 1), 1);
    ph_node *conv = tk_node(g, "Conv", 2, (ph_value *[]){x, w});
    ph_node_set_name(conv, "/conv1/Conv");
    ph_node_set_attr_int(conv, "group", 1);
    ph_value *y = tk_op1(g, "Relu", ph_node_output(conv, 0));
    tk_neg_output(g, y);
    tk_infer(m);
    ck_assert_int_eq(run_rules(fuse, m), 1);
    ph_node *fc = ph_value_producer(ph_node_input(tk_find_op(g, PH_OP_Neg), 0));
    ck_assert_str_eq(ph_node_op_type(fc), "FusedConv");
    ck_assert_str_eq(ph_node_domain(fc), "com.microsoft");
    ck_assert_str_eq(ph_node_name(fc), "/conv1/Conv"); /* like c: the Conv's name */
    ck_assert_uint_eq(ph_node_input_count(fc), 2);      /* b absent: left out */
    ck_assert_int_eq(ph_node_attr_int(fc, "group", 0), 1);
    ck_assert_str_eq(ph_node_attr_string(fc, "activation", ""), "Relu");
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), 1); /* imported */
    ck_assert_int_eq(ph_value_rank(ph_node_output(fc, 0)), 4); /* y's type */
    ph_model_free(m);

    /* values and variables from the callback; the root's name; an alias */
    static const ph_rule scaled[] = {
        {"scaled", "a = Neg(x)\ny = LeakyRelu(a) {alpha(0.01)=$alpha}\n=>\nt = Mul(a, two)\ny = LeakyRelu(t) {alpha=$alpha}",
         NULL, bind_two},
        {"keep", "a = Neg(x)\ny = Elu(a) {alpha=$al}\n=>\ny = Selu(a) {...y, gamma=$al}", NULL, NULL},
        {"alias", "a = Abs(x)\ny = Abs(a)\n=>\ny = a", NULL, NULL},
        {0}};
    m = tk_model();
    g = ph_model_graph(m);
    x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *lr = tk_op1(g, "LeakyRelu", tk_op1(g, "Neg", x));
    ph_node_set_name(ph_value_producer(lr), "act");
    ph_value *el = tk_op1(g, "Elu", tk_op1(g, "Neg", x));
    ph_node_set_attr_float(ph_value_producer(el), "alpha", 0.75f);
    ph_value *ab = tk_op1(g, "Abs", tk_op1(g, "Abs", x));
    tk_neg_output(g, lr);
    tk_neg_output(g, el);
    tk_neg_output(g, ab);
    ck_assert_int_eq(run_rules(scaled, m), 3);
    ph_node *leaky = tk_find_op(g, PH_OP_LeakyRelu);
    ck_assert_str_eq(ph_node_name(leaky), "act");
    ck_assert(ph_node_attr_float(leaky, "alpha", 0) == 0.125f); /* the callback's over the match's */
    ph_node *mul = ph_value_producer(ph_node_input(leaky, 0));
    ck_assert_str_eq(ph_node_op_type(mul), "Mul");
    ck_assert(ph_value_const(ph_node_input(mul, 1)) != NULL);
    ph_node *selu = tk_find_op(g, PH_OP_Selu);
    ck_assert(ph_node_attr_float(selu, "alpha", 0) == 0.75f && ph_node_attr_float(selu, "gamma", 0) == 0.75f);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Abs), 1);
    ph_model_free(m);
}
END_TEST

/* A float list from the callback; nodes of other domains built in C. */
static int bind_list(ph_rewriter *rw, const ph_match *m)
{
    ph_rw_bind_floats(rw, "p", 2, (const float[]){0.5f, 6.0f});
    return 1;
}

static int gelu_in_c(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    return ph_rw_replace_root(rw, ph_rw_op(rw, "Gelu@com.microsoft", 1, &x));
}

static int build_then_decline(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    return ph_rw_op(rw, "Thing@com.other", 1, &x) ? 0 : -1;
}

START_TEST(float_lists_and_domains_from_callbacks)
{
    static const ph_rule rules[] = {{"list", "y = Clip(x)\n=>\ny = Bounded@com.example(x) {p=$p}", NULL, bind_list},
                                    {"c_node", "y = Erf(x)", NULL, gelu_in_c},
                                    {"declined", "y = Sin(x)", NULL, build_then_decline},
                                    {0}};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    tk_neg_output(g, tk_op1(g, "Clip", x));
    tk_neg_output(g, tk_op1(g, "Erf", x));
    tk_neg_output(g, tk_op1(g, "Sin", x));
    ck_assert_int_eq(run_rules(rules, m), 2);
    const float *p = NULL;
    ph_node *b = NULL;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        b = strcmp(ph_node_op_type(n), "Bounded") ? b : n;
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(ph_node_attr_floats(b, "p", &p), 2);
    ck_assert(p[0] == 0.5f && p[1] == 6.0f);
    ck_assert_int_eq(ph_model_opset(m, "com.example"), 1);   /* a result's op */
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), 1); /* ph_rw_op's */
    ck_assert_int_eq(ph_model_opset(m, "com.other"), -1);    /* declined: nothing imported */
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Sin), 1);
    ph_model_free(m);
}
END_TEST

static int decline(ph_rewriter *rw, const ph_match *m) { return 0; }

START_TEST(results_refused_and_declined)
{
    /* a result that reads a value nobody binds is a compile error */
    static const ph_rule unbound[] = {{"unbound", "y = Relu(x)\n=>\ny = Mul(x, two)", NULL, NULL}, {0}};
    ph_error err = {0};
    ck_assert_ptr_null(ph_ruleset_new(unbound, &err));
    ck_assert_msg(strstr(err.message, "reads 'two'") && strstr(err.message, "rule 1 unbound"), "%s", err.message);
    /* ... but with a callback it may bind it: when it does not, the rewrite fails */
    static const ph_rule forgot[] = {{"forgot", "y = Relu(x)\n=>\ny = Mul(x, two)", NULL, decline}, {0}};
    ph_ruleset *rs = ph_ruleset_new(forgot, &err);
    ck_assert_ptr_nonnull(rs);
    ph_ruleset_free(rs);
    /* neither a rewrite nor a result */
    static const ph_rule neither[] = {{"neither", "y = Relu(x)", NULL, NULL}, {0}};
    ck_assert_ptr_null(ph_ruleset_new(neither, &err));
    ck_assert_msg(strstr(err.message, "no rewrite function and no result"), "%s", err.message);
    /* a callback that declines: no result is built, nothing changes */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, tk_op1(g, "Relu", tk_input(g, "x", 1, TK_I64(4))));
    char *before = tk_graph_sig(g);
    ck_assert_int_eq(run_rules(forgot, m), 0);
    char *after = tk_graph_sig(g);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    ph_model_free(m);
}
END_TEST

/* Output lists, lists in results and '_' as a result's op. */
START_TEST(output_lists_and_same_op_results)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text("opset 13\nx: float[2,10]; sp: int64[5] = [1, 2, 3, 2, 2]\nr = Relu(x)\n"
                                     "a, b, c, d, e = Split(r, sp) {axis=1}\nt, u = Split(r) {axis=0}\n"
                                     "v = Neg(t)\nreturn a, b, c, d, e, v, u", &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ph_node *five = ph_value_producer(ph_graph_output(g, 0)), *two = ph_value_producer(ph_graph_output(g, 6));
    ph_node_set_name(five, "/s/Split");
    /* the list takes the outputs after the named ones, every one of them */
    ph_pattern *p = parse_ok("ys* = Split(x, qs*)");
    ph_match *mt = ph_match_new(p);
    ph_value *const *vals = NULL;
    ck_assert_int_eq(ph_pattern_match_at(p, five, mt), 1);
    ck_assert_uint_eq(ph_match_values(mt, "ys", &vals), 5);
    ck_assert_ptr_eq(vals[4], ph_node_output(five, 4));
    ck_assert_ptr_eq(ph_match_node(mt, "ys"), five);
    ck_assert_uint_eq(ph_match_values(mt, "qs", &vals), 1);
    ph_match_free(mt);
    ph_pattern_free(p);
    p = parse_ok("y0, y1, ys* = Split(x, qs*)");
    mt = ph_match_new(p);
    ck_assert_int_eq(ph_pattern_match_at(p, five, mt), 1);
    ck_assert_uint_eq(ph_match_values(mt, "ys", &vals), 3);
    ck_assert_ptr_eq(vals[0], ph_node_output(five, 2));
    ck_assert_ptr_eq(ph_match_value(mt, "y1"), ph_node_output(five, 1));
    ck_assert_int_eq(ph_pattern_match_at(p, two, mt), 1); /* two named, an empty list */
    ck_assert_uint_eq(ph_match_values(mt, "ys", &vals), 0);
    ph_match_free(mt);
    ph_pattern_free(p);
    /* interior: the list is private like any interior output (t is read
     * by v, but u is a graph output) */
    ck_assert_int_eq(matches("t, us* = Split(r)\ny = Neg(t)", ph_value_producer(ph_graph_output(g, 5))), 0);
    ck_assert_int_eq(matches("t, _ = Split(r)\ny = Neg(t)", ph_value_producer(ph_graph_output(g, 5))), 0);

    /* a result rebuilds the matched node (its op, attributes and name) with
     * another first input, each output of the list replacing its own */
    static const ph_rule copy[] = {
        {"copy", "r = Relu(x)\nys* = Split(r, qs*)\n=>\nc = Identity(r)\nys* = _(c, qs*) like ys", NULL, NULL},
        {0}};
    ck_assert_int_eq(run_rules(copy, m), 0); /* r has three readers */
    ph_model_free(m);
    m = ph_test_model_text("opset 13\nx: float[2,10]; sp: int64[5] = [1, 2, 3, 2, 2]\nr = Relu(x)\n"
                           "a, b, c, d, e = Split(r, sp) {axis=1}\nreturn a, b, c, d, e", &err);
    g = ph_model_graph(m);
    ph_node_set_name(ph_value_producer(ph_graph_output(g, 0)), "/s/Split");
    tk_infer(m);
    char e_name[64];
    snprintf(e_name, sizeof e_name, "%s", ph_value_name(ph_graph_output(g, 4)));
    ck_assert_int_eq(run_rules(copy, m), 1);
    five = ph_value_producer(ph_graph_output(g, 4));
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), five);
    ck_assert_str_eq(ph_node_name(five), "/s/Split");
    ck_assert_str_eq(ph_node_op_type(five), "Split");
    ck_assert_int_eq(ph_node_attr_int(five, "axis", 0), 1);
    ck_assert_uint_eq(ph_node_input_count(five), 2);
    ck_assert_str_eq(ph_node_op_type(ph_value_producer(ph_node_input(five, 0))), "Identity");
    ck_assert_str_eq(ph_value_name(ph_node_input(five, 1)), "sp");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 4)), e_name); /* graph outputs keep their names */
    ck_assert_int_eq(ph_value_rank(ph_graph_output(g, 4)), 2);
    ph_model_free(m);

    /* without 'like': a new node of as many outputs, the root's name */
    static const ph_rule axis[] = {
        {"axis", "ys* = Split(x) {axis=-1}\n=>\nys* = Split(x) {axis=1}", NULL, NULL}, {0}};
    m = ph_test_model_text("opset 13\nx: float[2,6]\na, b, c = Split(x) {axis=-1}\nreturn a, b, c", &err);
    g = ph_model_graph(m);
    ph_node_set_name(ph_value_producer(ph_graph_output(g, 0)), "cut");
    ck_assert_int_eq(run_rules(axis, m), 1);
    ph_node *n = ph_value_producer(ph_graph_output(g, 2));
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), n);
    ck_assert_int_eq(ph_node_attr_int(n, "axis", 0), 1);
    ck_assert_uint_eq(ph_node_output_count(n), 3);
    ck_assert_str_eq(ph_node_name(n), "cut");
    ph_model_free(m);
}
END_TEST

/* '!all Op(x)': refused when every reader of x is such a node (x no graph
 * output; a value nobody reads counts), not when one reader is not. */
START_TEST(negative_statement_every_reader)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *all = tk_op1(g, "Neg", x), *some = tk_op1(g, "Neg", x), *none = tk_op1(g, "Neg", x);
    ph_value *out = tk_op1(g, "Neg", x);
    ph_value *c[5] = {tk_op1(g, "Cast", all), tk_op1(g, "Cast", all), tk_op1(g, "Cast", some),
                      tk_op1(g, "Relu", some), tk_op1(g, "Cast", out)};
    for (int i = 0; i < 5; i++) {
        if (ph_node_op(ph_value_producer(c[i])) == PH_OP_Cast)
            ph_node_set_attr_int(ph_value_producer(c[i]), "to", PH_DT_INT32);
        tk_output(g, c[i]);
    }
    tk_output(g, out);
    const char *rule = "y = Neg(x)\n!all Cast(y) {to=6}";
    ck_assert_int_eq(matches(rule, ph_value_producer(all)), 0);
    ck_assert_int_eq(matches(rule, ph_value_producer(some)), 1);  /* a Relu reads it too */
    ck_assert_int_eq(matches(rule, ph_value_producer(none)), 0);  /* nothing reads it */
    ck_assert_int_eq(matches(rule, ph_value_producer(out)), 1);   /* a graph output */
    ck_assert_int_eq(matches("y = Neg(x)\n!all Cast(y) {to=7}", ph_value_producer(all)), 1);
    ck_assert_int_eq(matches("y = Neg(x)\n!Cast(y) {to=6}", ph_value_producer(some)), 0); /* '!' alone: none */
    /* a reader inside the match is not one of the readers */
    ck_assert_int_eq(matches("y = Neg(x)\nz = Relu(y)\n!all Cast(y)", ph_value_producer(c[3])), 0);
    char why[400];
    ck_assert_int_eq(explain(rule, ph_value_producer(all), why, sizeof why), 0);
    ck_assert_msg(strstr(why, "every reader of") && strstr(why, "(!all Cast) excludes"), "%s", why);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------- sticky errors */

static int rw_bad_setter(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    ph_node *n = ph_rw_node(rw, "Elu", 1, &x, 1);
    ph_node_set_input(n, 7, x); /* past the inputs: PH_EINVAL, kept */
    ph_node_set_attr_float(n, "alpha", 1.0f);
    ck_assert_int_eq(ph_rw_status(rw), PH_EINVAL);
    ck_assert_int_eq(ph_rw_done(rw), PH_EINVAL);
    ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(n, 0));
    return 1; /* the failure above still fails the rewrite */
}

static int rw_null_chain(ph_rewriter *rw, const ph_match *m)
{
    ph_node *n = ph_rw_node(rw, "", 0, NULL, 1); /* fails: no op */
    ph_node_set_attr_int(n, "k", 1);             /* NULL node: refused, no crash */
    ph_value_copy_type(ph_node_output(n, 0), ph_match_value(m, "y"));
    return ph_rw_replace_root(rw, ph_node_output(n, 0));
}

START_TEST(setters_record_the_first_failure)
{
    static const ph_rule bad[] = {{"bad", "y = Relu(x)", NULL, rw_bad_setter}, {0}};
    static const ph_rule chain[] = {{"chain", "y = Relu(x)", NULL, rw_null_chain}, {0}};
    const ph_rule *tables[] = {bad, chain};
    for (int t = 0; t < 2; t++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        tk_output(g, tk_op1(g, "Relu", tk_input(g, "x", 1, TK_I64(4))));
        char *before = tk_graph_sig(g);
        ph_error err = {0};
        ph_ruleset *rs = ph_ruleset_new(tables[t], &err);
        ph_ctx *ctx = ph_ctx_new(NULL, NULL);
        ck_assert_int_eq(ph_ruleset_run(rs, g, NULL, ctx), PH_EINVAL);
        ph_model_collect(m);
        char *after = tk_graph_sig(g);
        ck_assert_str_eq(before, after); /* rolled back */
        free(before);
        free(after);
        ph_ctx_free(ctx);
        ph_ruleset_free(rs);
        ph_model_free(m);
    }
}
END_TEST

Suite *pattern_language_suite(void)
{
    Suite *s = suite_create("pattern_language");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, new_parse_errors_keep_their_position);
    tcase_add_test(tc, benefit_and_forms);
    tcase_add_test(tc, alternatives_between_statements);
    tcase_add_test(tc, attribute_variables_defaults_and_comparisons);
    tcase_add_test(tc, dtype_variables);
    tcase_add_test(tc, ints_constraint);
    tcase_add_test(tc, constant_value_tests);
    tcase_add_test(tc, opset_guards);
    tcase_add_test(tc, explain_says_why_in_the_language);
    tcase_add_test(tc, the_larger_match_wins);
    tcase_add_test(tc, condition_hands_state_to_rewrite);
    tcase_add_test(tc, declarative_results);
    tcase_add_test(tc, float_lists_and_domains_from_callbacks);
    tcase_add_test(tc, results_refused_and_declined);
    tcase_add_test(tc, output_lists_and_same_op_results);
    tcase_add_test(tc, negative_statement_every_reader);
    tcase_add_test(tc, setters_record_the_first_failure);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(pattern_language_suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
