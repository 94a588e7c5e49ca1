/* tests/test_load_long.c - a model file whose nodes take megabytes: the
 * loader lets the file's pages go behind its reader as it builds the nodes
 * (sdk/src/onnx/read_nodes.c), so what it reads after a node is built must
 * not come from that node's bytes.  A chain of LeakyRelu nodes whose alpha
 * attributes repeat (the reader shares one message between nodes with the
 * same attribute bytes, found again by those bytes long after the first)
 * ends in an Add that reads an initializer:
 *   - written in the order a save writes, it saves to the same bytes, from
 *     a file and from memory;
 *   - with the initializer's data among the nodes, it loads the same;
 *   - with the last node listed before the one it reads (the rest of the
 *     list read again, past the pages already let go), it is sorted and
 *     saves the same;
 *   - with the last node reading a name nothing defines, the error names it.
 * The files are written as protobuf wire bytes: only that controls where
 * the initializer lies. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbwire.h"
#include "tmpdir.h"

#define CHAIN 40000 /* LeakyRelu nodes: about 2.3 MB of NodeProto */

static const int64_t D23[2] = {2, 3};
static const float ALPHAS[3] = {0.5f, 0.25f, 0.125f};

/* A growable byte buffer (a pb holds 4 KiB).  The chain's bytes are
 * written without Check's assertions: each passed one costs a write(2). */
typedef struct big {
    unsigned char *d;
    size_t n, cap;
} big;

static void big_put(big *b, const void *p, size_t len)
{
    if (b->n + len > b->cap) {
        b->cap = (b->n + len) * 2;
        b->d = realloc(b->d, b->cap);
        if (!b->d)
            abort();
    }
    memcpy(b->d + b->n, p, len);
    b->n += len;
}

static void big_varint(big *b, uint64_t v)
{
    unsigned char tmp[10];
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        tmp[n++] = (unsigned char)(v | 0x80);
    tmp[n++] = (unsigned char)v;
    big_put(b, tmp, n);
}

/* A length-delimited field of b holding data[0, len). */
static void big_field(big *b, unsigned field, const void *data, size_t len)
{
    big_varint(b, (uint64_t)field << 3 | 2);
    big_varint(b, len);
    big_put(b, data, len);
}

static void big_str(big *b, unsigned field, const char *s) { big_field(b, field, s, strlen(s)); }

/* LeakyRelu(in) -> out (named out), alpha the k-th of ALPHAS, as a graph's
 * node field. */
static void leaky_relu(big *graph, const char *in, const char *out, int k)
{
    unsigned char attr[32];
    size_t a = 0;
    attr[a++] = 1u << 3 | 2; /* name */
    attr[a++] = 5;
    memcpy(attr + a, "alpha", 5);
    a += 5;
    attr[a++] = 2u << 3 | 5; /* f: fixed32, little-endian */
    uint32_t bits;
    memcpy(&bits, &ALPHAS[k], 4);
    for (int i = 0; i < 4; i++)
        attr[a++] = (unsigned char)(bits >> (8 * i));
    attr[a++] = 0xa0; /* type: field 20, a varint (tag 160 in two bytes) */
    attr[a++] = 0x01;
    attr[a++] = 1; /* FLOAT */
    big node = {0};
    big_str(&node, 1, in);
    big_str(&node, 2, out);
    big_str(&node, 3, out);
    big_str(&node, 4, "LeakyRelu");
    big_field(&node, 5, attr, a);
    big_field(graph, 1, node.d, node.n);
    free(node.d);
}

/* The initializer w, float[2,3] in raw_data, as a graph's field. */
static void initializer_w(big *graph)
{
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    pb t = {0};
    pb_int(&t, 1, 2);
    pb_int(&t, 1, 3);
    pb_int(&t, 2, PH_DT_FLOAT);
    pb_str(&t, 8, "w");
    pb_bytes(&t, 9, w, sizeof w);
    big_field(graph, 5, t.data, t.len);
}

enum layout {
    SAVED_ORDER,    /* the nodes, then the initializer (as a save writes) */
    INIT_AMONG,     /* the initializer between two nodes of the chain */
    LAST_TOO_EARLY, /* the Add listed before the node whose output it reads */
    UNDEFINED_READ  /* the Add reads a name nothing defines */
};

/* The model's bytes: x -> CHAIN LeakyRelus -> Add(., w) -> y. */
static big model_bytes(enum layout layout)
{
    big graph = {0}, model = {0};
    char in[32], out[32];
    pb add = {0};
    const char *last = layout == UNDEFINED_READ ? "nowhere" : NULL;
    snprintf(out, sizeof out, "v%d", CHAIN);
    pb_node(&add, "Add", last ? last : out, "w", "y", NULL);
    for (int i = 0; i < CHAIN; i++) {
        if (i == CHAIN / 2 && layout == INIT_AMONG)
            initializer_w(&graph);
        if (i == CHAIN - 1 && layout == LAST_TOO_EARLY)
            big_put(&graph, add.data, add.len);
        snprintf(in, sizeof in, i ? "v%d" : "x", i);
        snprintf(out, sizeof out, "v%d", i + 1);
        leaky_relu(&graph, in, out, i % 3);
    }
    if (layout != LAST_TOO_EARLY)
        big_put(&graph, add.data, add.len);
    pb rest = {0};
    pb_str(&rest, 2, "g");
    big_put(&graph, rest.data, rest.len);
    if (layout != INIT_AMONG)
        initializer_w(&graph);
    rest.len = 0;
    pb_value_info(&rest, 11, "x", PH_DT_FLOAT, 2, D23);
    pb_value_info(&rest, 12, "y", PH_DT_FLOAT, 2, D23);
    big_put(&graph, rest.data, rest.len);

    pb head = {0}, opset = {0};
    pb_int(&head, 1, 8);
    big_put(&model, head.data, head.len);
    big_field(&model, 7, graph.d, graph.n);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 17);
    head.len = 0;
    pb_msg(&head, 8, &opset);
    big_put(&model, head.data, head.len);
    free(graph.d);
    return model;
}

static void write_file(const char *path, const big *b)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b->d, 1, b->n, f), b->n);
    ck_assert_int_eq(fclose(f), 0);
}

/* m saved, as bytes (caller frees); m freed. */
static char *save_and_free(ph_model *m, size_t *len)
{
    ph_error err = {0};
    ck_assert_msg(ph_model_save(m, tk_tpath("out.onnx"), &err) == 0, "%s", err.message);
    ph_model_free(m);
    char *bytes = tk_slurp(tk_tpath("out.onnx"), len);
    ck_assert_ptr_nonnull(bytes);
    return bytes;
}

/* The chain's shared attributes, read back from its last LeakyRelus. */
static void check_chain(ph_model *m)
{
    ph_graph *g = ph_model_graph(m);
    ck_assert_uint_eq(ph_graph_node_count(g), CHAIN + 1);
    ph_value *y = ph_graph_find_value(g, "y");
    ck_assert_ptr_nonnull(y);
    ph_node *add = ph_value_producer(y);
    ck_assert_str_eq(ph_node_op_type(add), "Add");
    ph_node *n = ph_value_producer(ph_node_input(add, 0));
    for (int i = CHAIN - 1; i >= CHAIN - 3; i--) {
        ck_assert_str_eq(ph_node_op_type(n), "LeakyRelu");
        ck_assert(ph_node_attr_float(n, "alpha", -1) == ALPHAS[i % 3]);
        n = ph_value_producer(ph_node_input(n, 0));
    }
    const ph_tensor *w = ph_value_const(ph_node_input(add, 1));
    ck_assert_ptr_nonnull(w);
    float last; /* data in place in the file need not be aligned */
    memcpy(&last, (const char *)ph_tensor_data(w) + 5 * sizeof last, sizeof last);
    ck_assert(last == 6);
}

static void setup(void) { tk_tmpdir_make("load_long"); }
static void teardown(void) { tk_tmpdir_remove(); }

/* Each layout that loads saves to the bytes of SAVED_ORDER. */
START_TEST(long_file_saves_the_same)
{
    static const enum layout layouts[3] = {SAVED_ORDER, INIT_AMONG, LAST_TOO_EARLY};
    big want = model_bytes(SAVED_ORDER);
    for (size_t k = 0; k < 3; k++) {
        big b = model_bytes(layouts[k]);
        ck_assert_uint_gt(b.n, (size_t)2 << 20);
        write_file(tk_tpath("in.onnx"), &b);
        ph_model *m = NULL;
        ph_error err = {0};
        ck_assert_msg(ph_model_load(tk_tpath("in.onnx"), &m, &err) == 0, "layout %zu: %s", k, err.message);
        ck_assert_uint_eq(ph_model_load_reordered(m), layouts[k] == LAST_TOO_EARLY ? 1 : 0);
        check_chain(m);
        size_t len;
        char *saved = save_and_free(m, &len);
        ck_assert_msg(len == want.n && memcmp(saved, want.d, len) == 0, "layout %zu: saved differently", k);
        free(saved);
        free(b.d);
    }
    /* from memory: an in-memory file, whose pages go the same way */
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_model_load_memory(want.d, want.n, "long", &m, &err) == 0, "%s", err.message);
    check_chain(m);
    size_t len;
    char *saved = save_and_free(m, &len);
    ck_assert_msg(len == want.n && memcmp(saved, want.d, len) == 0, "from memory: saved differently");
    free(saved);
    free(want.d);
}
END_TEST

START_TEST(long_file_undefined_input_named)
{
    big b = model_bytes(UNDEFINED_READ);
    write_file(tk_tpath("in.onnx"), &b);
    free(b.d);
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_int_eq(ph_model_load(tk_tpath("in.onnx"), &m, &err), PH_EPARSE);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(err.message, "node 'y' (Add): input 'nowhere' is not defined"), "%s", err.message);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load_long");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, long_file_saves_the_same);
    tcase_add_test(tc, long_file_undefined_input_named);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* a forked case pays a write for each assertion passed */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
