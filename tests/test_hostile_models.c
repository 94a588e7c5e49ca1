/* tests/test_hostile_models.c - models made to hurt the loader, refused with
 * a clear message and never a crash (docs/reliability.md, "Hostile
 * models"):
 *   - If bodies nested deeper than the loader reads (a scan of the wire
 *     format before anything is unpacked), from just under the limit to
 *     10,000 levels (1.3 MB), from a file and from memory, and through the
 *     passhost program in one process and supervised;
 *   - attributes of the wrong type for a known operator (a Transpose whose
 *     perm is a STRING ran as the default, reversed, Transpose), and a
 *     required attribute missing: refused, naming node, attribute and the
 *     type the operator's schema expects (passhost/schema.h);
 *   - an operator of a domain the model does not import: refused; an
 *     operator the default domain does not have: one warning naming it;
 *   - names holding terminal escapes: every line printed (the error, the
 *     report, --inspect) shows them escaped, \u001b, never raw.
 * The models are written as protobuf wire bytes here (they are far larger
 * than tests/support/pbwire.h's fixed buffers). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clirun.h"
#include "passhost/host.h"
#include "tmpdir.h"

/* ----------------------------------------------- growable wire buffers */

typedef struct wb {
    unsigned char *d;
    size_t n, cap;
} wb;

static void wb_put(wb *b, const void *p, size_t len)
{
    if (len == 0)
        return;
    if (b->n + len > b->cap) {
        b->cap = (b->n + len) * 2 + 64;
        b->d = realloc(b->d, b->cap);
        ck_assert_ptr_nonnull(b->d);
    }
    memcpy(b->d + b->n, p, len);
    b->n += len;
}

static void wb_varint(wb *b, uint64_t v)
{
    unsigned char c[10];
    size_t n = 0;
    do {
        c[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        c[n++] |= v ? 0x80 : 0;
    } while (v);
    wb_put(b, c, n);
}

static void wb_int(wb *b, unsigned field, uint64_t v)
{
    wb_varint(b, (uint64_t)field << 3);
    wb_varint(b, v);
}

static void wb_bytes(wb *b, unsigned field, const void *p, size_t len)
{
    wb_varint(b, (uint64_t)field << 3 | 2);
    wb_varint(b, len);
    wb_put(b, p, len);
}

static void wb_str(wb *b, unsigned field, const char *s) { wb_bytes(b, field, s, strlen(s)); }

/* m as field `field` of b; m is freed. */
static void wb_msg(wb *b, unsigned field, wb *m)
{
    wb_bytes(b, field, m->d, m->n);
    free(m->d);
    *m = (wb){0};
}

/* A ValueInfoProto: float[1] (elem 1) or a bool scalar (elem 9, rank 0). */
static void wb_value_info(wb *b, unsigned field, const char *name, int elem)
{
    wb vi = {0}, tp = {0}, tt = {0}, shape = {0}, dim = {0};
    wb_int(&tt, 1, (uint64_t)elem);
    if (elem == 1) {
        wb_int(&dim, 1, 1);
        wb_msg(&shape, 1, &dim);
    }
    wb_msg(&tt, 2, &shape);
    wb_msg(&tp, 1, &tt);
    wb_str(&vi, 1, name);
    wb_msg(&vi, 2, &tp);
    wb_msg(b, field, &vi);
}

/* Bytes built from the inside out: each message's nested field is its
 * last one, so wrapping the whole buffer in a message only prepends (the
 * 10,000-level model is built in linear time). */
typedef struct rb {
    unsigned char *d;
    size_t start, cap; /* the bytes are d[start, cap) */
} rb;

static void rb_prepend(rb *b, const void *p, size_t len)
{
    if (len == 0)
        return;
    if (len > b->start) {
        size_t used = b->cap - b->start, cap = (b->cap + len) * 2;
        unsigned char *d = malloc(cap);
        ck_assert_ptr_nonnull(d);
        if (used)
            memcpy(d + cap - used, b->d + b->start, used);
        free(b->d);
        b->d = d;
        b->start = cap - used;
        b->cap = cap;
    }
    b->start -= len;
    memcpy(b->d + b->start, p, len);
}

/* The buffer becomes field `field` of a message that starts with the
 * fields in prefix (freed here). */
static void rb_wrap(rb *b, wb *prefix, unsigned field)
{
    wb head = {0};
    wb_put(&head, prefix->d, prefix->n);
    wb_varint(&head, (uint64_t)field << 3 | 2);
    wb_varint(&head, b->cap - b->start);
    rb_prepend(b, head.d, head.n);
    free(head.d);
    free(prefix->d);
    *prefix = (wb){0};
}

/* A model whose output is computed `depth` If bodies deep: each body's one
 * node is an If on c whose then-branch is the next body and whose
 * else-branch is an Identity; the innermost body is an Identity. */
static wb nested_model(int depth)
{
    rb b = {0};
    char out[32], name[32], eout[32];
    /* the innermost body */
    wb g = {0}, node = {0};
    snprintf(out, sizeof out, "y%d", depth);
    wb_str(&node, 1, "x");
    wb_str(&node, 2, out);
    wb_str(&node, 4, "Identity");
    rb_prepend(&b, node.d, node.n);
    free(node.d);
    node = (wb){0};
    wb_str(&g, 2, "inner");
    wb_value_info(&g, 12, out, 1);
    rb_wrap(&b, &g, 1);
    for (int level = depth - 1; level >= 0; level--) {
        wb attr = {0}, els = {0}, enode = {0}, eattr = {0};
        wb_str(&attr, 1, "then_branch");
        wb_int(&attr, 20, 5);
        rb_wrap(&b, &attr, 6);
        snprintf(eout, sizeof eout, "e%d", level);
        wb_str(&enode, 1, "x");
        wb_str(&enode, 2, eout);
        wb_str(&enode, 4, "Identity");
        wb_msg(&els, 1, &enode);
        wb_str(&els, 2, "else");
        wb_value_info(&els, 12, eout, 1);
        wb_str(&eattr, 1, "else_branch");
        wb_msg(&eattr, 6, &els);
        wb_int(&eattr, 20, 5);
        snprintf(out, sizeof out, "y%d", level);
        wb_str(&node, 1, "c");
        wb_str(&node, 2, out);
        wb_str(&node, 4, "If");
        wb_msg(&node, 5, &eattr);
        rb_wrap(&b, &node, 5);
        snprintf(name, sizeof name, "g%d", level);
        wb_str(&g, 2, name);
        wb_value_info(&g, 12, out, 1);
        if (level == 0) {
            wb_value_info(&g, 11, "c", 9);
            wb_value_info(&g, 11, "x", 1);
        }
        rb_wrap(&b, &g, 1);
    }
    wb model = {0}, op = {0};
    wb_int(&model, 1, 8);
    wb_int(&op, 2, 13);
    wb_msg(&model, 8, &op);
    rb_wrap(&b, &model, 7);
    wb whole = {0};
    wb_put(&whole, b.d + b.start, b.cap - b.start);
    free(b.d);
    return whole;
}

static const char *write_wb(const char *name, const wb *b)
{
    const char *path = tk_tpath(name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b->d, 1, b->n, f), b->n);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

static void setup(void) { tk_tmpdir_make("hostile"); }
static void teardown(void) { tk_tmpdir_remove(); }

/* ------------------------------------------------------------- nesting */

/* The deepest model the loader takes: 31 bodies (the messages of the
 * innermost Identity's output type then sit 100 deep). */
enum { DEEPEST_OK = 31 };

START_TEST(nesting_just_under_the_limit_loads_and_runs)
{
    wb m = nested_model(DEEPEST_OK);
    const char *in = write_wb("deep_ok.onnx", &m);
    ph_model *model = NULL;
    ph_error e = {0};
    ck_assert_msg(ph_model_load(in, &model, &e) == 0, "%s", e.message);
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(model), &e), 0);
    ph_model_free(model);
    free(m.d);
    /* the whole program: load, shape inference, every default pass, save */
    tk_cli_result r = TK_CLI("-q", in, tk_tpath("out.onnx"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
}
END_TEST

START_TEST(deeper_nesting_is_refused_before_unpacking)
{
    const int depths[] = {DEEPEST_OK + 1, DEEPEST_OK + 2, 1700, 10000};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        wb m = nested_model(depths[i]);
        const char *in = write_wb("deep.onnx", &m);
        ph_model *model = (ph_model *)1;
        ph_error e = {0};
        ck_assert_int_eq(ph_model_load(in, &model, &e), PH_EPARSE);
        ck_assert_ptr_null(model);
        ck_assert_msg(strstr(e.message, in) && strstr(e.message, "nest more than 100 deep"), "%s",
                      e.message);
        model = (ph_model *)1;
        ck_assert_int_eq(ph_model_load_memory(m.d, m.n, "mem.onnx", &model, &e), PH_EPARSE);
        ck_assert_ptr_null(model);
        ck_assert_msg(strstr(e.message, "mem.onnx: refused"), "%s", e.message);
        free(m.d);
        /* the program: exit 3 and the one line, in one process and supervised
         * (1,700 levels overflowed the stack in shape inference, 10,000 in
         * protobuf-c's unpacking) */
        tk_cli_result r = TK_CLI("-q", in, tk_tpath("out.onnx"));
        tk_expect_failure(&r, 3, "deep.onnx: refused", "nest more than 100 deep");
        r = TK_CLI("-q", "--no-fork", in, tk_tpath("out.onnx"));
        tk_expect_failure(&r, 3, "deep.onnx: refused", "nest more than 100 deep");
    }
}
END_TEST

/* ------------------------------------------- attributes and operators */

/* A model of one node (op in domain, inputs x[, w], output y) with the
 * attribute records in attrs (freed), importing the default domain at
 * opset 17 and, when import is not NULL, that domain at version 1. */
static wb one_node_model(const char *op, const char *domain, int two_inputs, wb *attrs, const char *import)
{
    wb g = {0}, node = {0};
    wb_str(&node, 1, "x");
    if (two_inputs)
        wb_str(&node, 1, "w");
    wb_str(&node, 2, "y");
    wb_str(&node, 3, "the_node");
    wb_str(&node, 4, op);
    if (domain)
        wb_str(&node, 7, domain);
    wb_put(&node, attrs->d, attrs->n);
    free(attrs->d);
    *attrs = (wb){0};
    wb_msg(&g, 1, &node);
    wb_str(&g, 2, "g");
    wb_value_info(&g, 11, "x", 1);
    if (two_inputs)
        wb_value_info(&g, 11, "w", 1);
    wb_value_info(&g, 12, "y", 1);
    wb model = {0}, op17 = {0}, other = {0};
    wb_int(&model, 1, 8);
    wb_int(&op17, 2, 17);
    wb_msg(&model, 8, &op17);
    if (import) {
        wb_str(&other, 1, import);
        wb_int(&other, 2, 1);
        wb_msg(&model, 8, &other);
    }
    wb_msg(&model, 7, &g);
    return model;
}

/* One AttributeProto record (field 5 of a node): name, type, value. */
static void attr_str(wb *attrs, const char *name, const char *v)
{
    wb a = {0};
    wb_str(&a, 1, name);
    wb_str(&a, 4, v);
    wb_int(&a, 20, 3);
    wb_msg(attrs, 5, &a);
}

static void attr_strs(wb *attrs, const char *name, const char *v0, const char *v1)
{
    wb a = {0};
    wb_str(&a, 1, name);
    wb_str(&a, 9, v0);
    wb_str(&a, 9, v1);
    wb_int(&a, 20, 8);
    wb_msg(attrs, 5, &a);
}

static void attr_float(wb *attrs, const char *name, float v)
{
    wb a = {0};
    wb_str(&a, 1, name);
    uint32_t bits;
    memcpy(&bits, &v, 4);
    wb_varint(&a, 2 << 3 | 5);
    unsigned char le[4] = {bits & 255, bits >> 8 & 255, bits >> 16 & 255, bits >> 24};
    wb_put(&a, le, 4);
    wb_int(&a, 20, 1);
    wb_msg(attrs, 5, &a);
}

static void attr_ints(wb *attrs, const char *name, int n, const int64_t *v)
{
    wb a = {0};
    wb_str(&a, 1, name);
    for (int i = 0; i < n; i++)
        wb_int(&a, 8, (uint64_t)v[i]);
    wb_int(&a, 20, 7);
    wb_msg(attrs, 5, &a);
}

/* The model must be refused by the loader and by the program, with one
 * line naming the node, the attribute and the expected type. */
static void expect_attr_refused(wb *m, const char *what)
{
    const char *in = write_wb("attr.onnx", m);
    free(m->d);
    ph_model *model = (ph_model *)1;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(in, &model, &e), PH_EPARSE);
    ck_assert_ptr_null(model);
    ck_assert_msg(strstr(e.message, "node 'the_node'") && strstr(e.message, what), "'%s' not in: %s", what,
                  e.message);
    tk_cli_result r = TK_CLI("-q", in, tk_tpath("out.onnx"));
    tk_expect_failure(&r, 3, "node 'the_node'", what);
    ck_assert(access(tk_tpath("out.onnx"), F_OK) != 0);
}

START_TEST(attributes_of_the_wrong_type_are_refused)
{
    /* Transpose perm as a STRING: was run as the default (reversed) Transpose */
    wb a = {0};
    attr_str(&a, "perm", "1,0");
    wb m = one_node_model("Transpose", NULL, 0, &a, NULL);
    expect_attr_refused(&m, "attribute 'perm' is a STRING, the operator expects INTS at opset 17");
    /* Conv kernel_shape as a FLOAT, strides as STRINGS */
    attr_float(&a, "kernel_shape", 3.0f);
    m = one_node_model("Conv", NULL, 1, &a, NULL);
    expect_attr_refused(&m, "attribute 'kernel_shape' is a FLOAT, the operator expects INTS");
    attr_strs(&a, "strides", "1", "1");
    m = one_node_model("Conv", NULL, 1, &a, NULL);
    expect_attr_refused(&m, "attribute 'strides' is of type STRINGS, the operator expects INTS");
    /* Gemm alpha as INTS */
    attr_ints(&a, "alpha", 1, (const int64_t[]){2});
    m = one_node_model("Gemm", NULL, 1, &a, NULL);
    expect_attr_refused(&m, "attribute 'alpha' is of type INTS, the operator expects FLOAT");
    /* a required attribute missing: Cast without `to` */
    m = one_node_model("Cast", NULL, 0, &a, NULL);
    expect_attr_refused(&m, "required attribute 'to' (INT) is missing at opset 17");
    /* the right types load, and run through the program */
    attr_ints(&a, "perm", 1, (const int64_t[]){0});
    m = one_node_model("Transpose", NULL, 0, &a, NULL);
    const char *in = write_wb("good.onnx", &m);
    free(m.d);
    tk_cli_result r = TK_CLI("-q", in, tk_tpath("out.onnx"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
}
END_TEST

START_TEST(unknown_operators_and_domains)
{
    /* a domain the model does not import: an invalid model, refused */
    wb a = {0};
    wb m = one_node_model("Fused", "com.unimported", 0, &a, NULL);
    const char *in = write_wb("unimported.onnx", &m);
    free(m.d);
    tk_cli_result r = TK_CLI("-q", in, tk_tpath("out.onnx"));
    tk_expect_failure(&r, 3, "node 'the_node' (Fused)", "the model imports no opset of the operator's domain: "
                      "com.unimported");
    /* imported: loads, and nothing is said about a domain ONNX does not define */
    m = one_node_model("Fused", "com.imported", 0, &a, "com.imported");
    in = write_wb("imported.onnx", &m);
    free(m.d);
    r = TK_CLI("-q", in, tk_tpath("out.onnx"));
    ck_assert_msg(r.status == 0 && !*r.err, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    /* an operator the default domain does not have: written, with one
     * warning naming the node */
    m = one_node_model("NoSuchOp", NULL, 0, &a, NULL);
    in = write_wb("nosuchop.onnx", &m);
    free(m.d);
    r = TK_CLI(in, tk_tpath("out.onnx")); /* -q keeps warnings off */
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(tk_line_count(r.err), 1);
    ck_assert_msg(strstr(r.err, "passhost: warning: node 'the_node': operator NoSuchOp is not defined by ONNX") &&
                  strstr(r.err, "in domain ai.onnx at opset 17"), "%s", r.err);
    tk_cli_free(&r);
    ck_assert(access(tk_tpath("out.onnx"), F_OK) == 0);
    /* an operator of passhost's table that the model's opset lacks (Gelu
     * came at 20; the model imports 17): found through the op-type index,
     * the same warning */
    m = one_node_model("Gelu", NULL, 0, &a, NULL);
    in = write_wb("gelu17.onnx", &m);
    free(m.d);
    r = TK_CLI(in, tk_tpath("out.onnx"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(tk_line_count(r.err), 1);
    ck_assert_msg(strstr(r.err, "passhost: warning: node 'the_node': operator Gelu is not defined by ONNX") &&
                  strstr(r.err, "in domain ai.onnx at opset 17"), "%s", r.err);
    tk_cli_free(&r);
}
END_TEST

/* ---------------------------------------------------- control characters */

/* A model whose graph, node and value names hold terminal escapes. */
static wb escapes_model(int broken)
{
    wb g = {0}, node = {0}, a = {0}, model = {0}, op = {0};
    wb_str(&node, 1, "x");
    wb_str(&node, 2, "y\x1b]0;retitled\x07");
    wb_str(&node, 3, "node\x1b[2J\xc2\x9b" "31m");
    wb_str(&node, 4, "Transpose");
    if (broken)
        attr_str(&a, "perm", "0");
    else
        attr_ints(&a, "perm", 1, (const int64_t[]){0});
    wb_put(&node, a.d, a.n);
    free(a.d);
    wb_msg(&g, 1, &node);
    wb_str(&g, 2, "graph\x1b[2J");
    wb_value_info(&g, 11, "x", 1);
    wb_value_info(&g, 12, "y\x1b]0;retitled\x07", 1);
    wb_int(&model, 1, 8);
    wb_int(&op, 2, 17);
    wb_msg(&model, 8, &op);
    wb_msg(&model, 7, &g);
    return model;
}

/* No raw control character but newline and tab, none of the UTF-8 C1
 * controls; the escaped forms there instead. */
static void printable(const char *what, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        ck_assert_msg((*p >= 0x20 && *p != 0x7f) || *p == '\n' || *p == '\t', "%s: raw byte 0x%02x in: %s", what, *p,
                      s);
        ck_assert_msg(!(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f), "%s: a raw C1 control in: %s", what, s);
    }
    ck_assert_msg(strstr(s, "\\u001b"), "%s: no escaped ESC in: %s", what, s);
}

START_TEST(control_characters_are_escaped)
{
    wb m = escapes_model(1);
    const char *in = write_wb("escapes_bad.onnx", &m);
    free(m.d);
    tk_cli_result r = TK_CLI("-q", in, tk_tpath("out.onnx"));
    ck_assert_int_eq(r.status, 3);
    printable("the error line", r.err);
    ck_assert_msg(strstr(r.err, "node\\u001b[2J\\u009b31m") && strstr(r.err, "graph 'graph\\u001b[2J'"), "%s",
                  r.err);
    tk_cli_free(&r);
    m = escapes_model(0);
    in = write_wb("escapes.onnx", &m);
    free(m.d);
    r = TK_CLI("--inspect", in);
    ck_assert_msg(r.status == 0, "%s", r.err);
    printable("--inspect", r.out);
    ck_assert_msg(strstr(r.out, "y\\u001b]0;retitled\\u0007"), "%s", r.out);
    tk_cli_free(&r);
    /* the report of a run (-v: with the input/output table) names the output value too */
    r = TK_CLI("-v", in, tk_tpath("out.onnx"));
    ck_assert_msg(r.status == 0, "%s", r.err);
    printable("the report", r.out);
    tk_cli_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hostile_models");
    TCase *tc = tcase_create("models");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, nesting_just_under_the_limit_loads_and_runs);
    tcase_add_test(tc, deeper_nesting_is_refused_before_unpacking);
    tcase_add_test(tc, attributes_of_the_wrong_type_are_refused);
    tcase_add_test(tc, unknown_operators_and_domains);
    tcase_add_test(tc, control_characters_are_escaped);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
