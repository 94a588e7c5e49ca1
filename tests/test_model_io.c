/* tests/test_model_io.c - ONNX load and save: byte-identical round trips,
 * external data, typed-field tensors, bad files, atomic and safe writes. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "passhost/host.h"
#include "passhost/passhost.h"
#include "pbwire.h"

static char tmpdir[256];

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ph_io_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(d, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return d;
}

static void write_file(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(d, 1, n, f), n);
    fclose(f);
}

/* Files a and b hold the same bytes. */
static void assert_same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *da = read_file(a, &na), *db = read_file(b, &nb);
    ck_assert_msg(na == nb && memcmp(da, db, na) == 0, "%s and %s differ", a, b);
    free(da);
    free(db);
}

static void assert_round_trip_identical(const char *path)
{
    ph_model *m;
    ph_error e = {0};
    int rc = ph_model_load(path, &m, &e);
    ck_assert_msg(rc == 0, "load %s: %s", path, e.message);
    rc = ph_graph_verify(ph_model_graph(m), &e);
    ck_assert_msg(rc == 0, "verify %s: %s", path, e.message);
    char out[512];
    snprintf(out, sizeof out, "%s/out.onnx", tmpdir);
    rc = ph_model_save(m, out, &e);
    ck_assert_msg(rc == 0, "save %s: %s", path, e.message);
    ph_model_free(m);
    size_t a, b;
    unsigned char *da = read_file(path, &a), *db = read_file(out, &b);
    ck_assert_msg(a == b && memcmp(da, db, a) == 0, "%s: round trip is not byte-identical (%zu vs %zu bytes)",
                  path, a, b);
    free(da);
    free(db);
}

START_TEST(test_round_trip_every_bundled_model)
{
    const char *dirs[] = {PH_SOURCE_DIR "/models", PH_SOURCE_DIR "/tests/models"};
    int count = 0;
    for (int d = 0; d < 2; d++) {
        DIR *dir = opendir(dirs[d]);
        ck_assert_ptr_nonnull(dir);
        struct dirent *de;
        while ((de = readdir(dir))) {
            size_t l = strlen(de->d_name);
            if (l < 5 || strcmp(de->d_name + l - 5, ".onnx") != 0)
                continue;
            if (strstr(de->d_name, "external_data"))
                continue; /* saved with its data inline: tested below */
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[d], de->d_name);
            assert_round_trip_identical(path);
            count++;
        }
        closedir(dir);
    }
    ck_assert_int_ge(count, 5);
}
END_TEST

static const ph_value *find_init(ph_model *m, const char *name)
{
    ph_graph *g = ph_model_graph(m);
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        if (strcmp(ph_value_name(ph_graph_initializer(g, i)), name) == 0)
            return ph_graph_initializer(g, i);
    return NULL;
}

START_TEST(test_external_data_inlined)
{
    ph_model *m, *m2;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/tests/models/external_data.onnx", &m, &e), 0);
    char out[512];
    snprintf(out, sizeof out, "%s/inline.onnx", tmpdir);
    ck_assert_int_eq(ph_model_save(m, out, &e), 0);
    ck_assert_int_eq(ph_model_load(out, &m2, &e), 0);
    ph_graph *g = ph_model_graph(m);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++) {
        const ph_value *v = ph_graph_initializer(g, i);
        const ph_value *w = find_init(m2, ph_value_name(v));
        ck_assert_ptr_nonnull(w);
        ck_assert(ph_tensor_equal(ph_value_const(v), ph_value_const(w)));
        ck_assert_int_gt(ph_tensor_nbytes(ph_value_const(v)), 0);
    }
    /* the saved model needs no external file */
    struct stat st;
    char bin[600];
    snprintf(bin, sizeof bin, "%s/external_data.bin", tmpdir);
    ck_assert_int_ne(stat(bin, &st), 0);
    ph_model_free(m);
    ph_model_free(m2);
}
END_TEST

START_TEST(test_external_data_out_of_range)
{
    /* a data file shorter than the model says */
    size_t n;
    unsigned char *model = read_file(PH_SOURCE_DIR "/tests/models/external_data.onnx", &n);
    char path[512];
    snprintf(path, sizeof path, "%s/external_data.onnx", tmpdir);
    write_file(path, model, n);
    snprintf(path, sizeof path, "%s/external_data.bin", tmpdir);
    write_file(path, "short", 5);
    snprintf(path, sizeof path, "%s/external_data.onnx", tmpdir);
    ph_model *m;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(path, &m, &e), PH_EPARSE);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(e.message, "outside"));
    free(model);
}
END_TEST

START_TEST(test_typed_field_tensor_readable)
{
    ph_model *m;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/tests/models/control_flow.onnx", &m, &e), 0);
    ph_graph *g = ph_model_graph(m);
    int seen = 0;
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++) {
        const ph_tensor *t = ph_value_const(ph_graph_initializer(g, i));
        if (!t)
            continue;
        ck_assert_ptr_nonnull(ph_tensor_data(t));
        ph_tensor *c = ph_tensor_clone(t);
        ck_assert(ph_tensor_equal(c, t));
        ph_tensor_free(c);
        seen++;
    }
    ck_assert_int_ge(seen, 2);
    ph_model_free(m);
}
END_TEST

static void assert_load_fails(const char *path, int code, const char *needle)
{
    ph_model *m = (ph_model *)1;
    ph_error e = {0};
    int rc = ph_model_load(path, &m, &e);
    ck_assert_msg(rc == code, "%s: rc %d, want %d (%s)", path, rc, code, e.message);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(e.message, path) != NULL, "message does not name the file: %s", e.message);
    if (needle)
        ck_assert_msg(strstr(e.message, needle) != NULL, "message lacks '%s': %s", needle, e.message);
}

START_TEST(test_bad_files)
{
    char path[512];
    snprintf(path, sizeof path, "%s/missing.onnx", tmpdir);
    assert_load_fails(path, PH_EIO, "cannot open");
    assert_load_fails(tmpdir, PH_EIO, "not a regular file");
    snprintf(path, sizeof path, "%s/empty.onnx", tmpdir);
    write_file(path, "", 0);
    assert_load_fails(path, PH_EPARSE, "empty");
    snprintf(path, sizeof path, "%s/text.onnx", tmpdir);
    const char *text = "hello, this is not a model\n";
    write_file(path, text, strlen(text));
    assert_load_fails(path, PH_EPARSE, "not");
    /* the first half of a real model */
    size_t n;
    unsigned char *model = read_file(PH_SOURCE_DIR "/models/cnn_small.onnx", &n);
    snprintf(path, sizeof path, "%s/truncated.onnx", tmpdir);
    write_file(path, model, n / 2);
    assert_load_fails(path, PH_EPARSE, "truncated");
    /* one byte short */
    write_file(path, model, n - 1);
    assert_load_fails(path, PH_EPARSE, NULL);
    /* random bytes */
    srand(7);
    for (size_t i = 0; i < 4096; i++)
        model[i] = (unsigned char)rand();
    snprintf(path, sizeof path, "%s/random.onnx", tmpdir);
    write_file(path, model, 4096);
    assert_load_fails(path, PH_EPARSE, NULL);
    free(model);
}
END_TEST

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int c = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.' || strstr(de->d_name, ".tmp."))
            c += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    closedir(d);
    return c;
}

START_TEST(test_save_is_safe)
{
    /* copy a model into the temp dir, load it, try to overwrite it */
    size_t n;
    unsigned char *model = read_file(PH_SOURCE_DIR "/models/transformer_block.onnx", &n);
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/in.onnx", tmpdir);
    write_file(in, model, n);
    ph_model *m;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(in, &m, &e), 0);
    ck_assert_int_eq(ph_model_save(m, in, &e), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "input"));
    /* a folder that does not exist: error, nothing written */
    snprintf(out, sizeof out, "%s/no/such/dir/out.onnx", tmpdir);
    ck_assert_int_eq(ph_model_save(m, out, &e), PH_EIO);
    ck_assert_int_eq(count_files(tmpdir), 1);
    /* an existing output is replaced whole */
    snprintf(out, sizeof out, "%s/out.onnx", tmpdir);
    write_file(out, "old", 3);
    ck_assert_int_eq(ph_model_save(m, out, &e), 0);
    ck_assert_int_eq(count_files(tmpdir), 2);
    size_t n2;
    unsigned char *saved = read_file(out, &n2);
    ck_assert(n2 == n && memcmp(saved, model, n) == 0);
    /* the input is untouched */
    unsigned char *again = read_file(in, &n2);
    ck_assert(n2 == n && memcmp(again, model, n) == 0);
    ph_model_free(m);
    free(model);
    free(saved);
    free(again);
}
END_TEST

START_TEST(test_build_save_load)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t d[] = {1, 4};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, d);
    ph_value_set_dim_param(x, 0, "batch");
    float w[] = {1, 2, 3, 4};
    ph_value *wv = ph_graph_add_initializer(g, "w", ph_tensor_new(PH_DT_FLOAT, 2, d, w));
    ph_node *mul = ph_node_create(g, NULL, "Mul", 2, (ph_value *[]){x, wv}, 1);
    ph_node_set_attr_int(mul, "unused_attr", 5);
    ph_node *tr = ph_node_create(g, NULL, "Transpose", 1, (ph_value *[]){ph_node_output(mul, 0)}, 1);
    const int64_t perm[] = {1, 0};
    ph_node_set_attr_ints(tr, "perm", 2, perm);
    ph_graph_add_output(g, ph_node_output(tr, 0));
    ph_model_set_opset(m, "com.example", 1);
    char out[512];
    snprintf(out, sizeof out, "%s/built.onnx", tmpdir);
    ph_error e = {0};
    ck_assert_int_eq(ph_model_save(m, out, &e), 0);
    ph_model *m2;
    ck_assert_int_eq(ph_model_load(out, &m2, &e), 0);
    ph_graph *g2 = ph_model_graph(m2);
    ck_assert_uint_eq(ph_graph_node_count(g2), 2);
    ck_assert_int_eq(ph_node_op(ph_graph_first_node(g2)), PH_OP_Mul);
    ck_assert_int_eq(ph_node_attr_int(ph_graph_first_node(g2), "unused_attr", 0), 5);
    const int64_t *p;
    ck_assert_int_eq(ph_node_attr_ints(ph_graph_last_node(g2), "perm", &p), 2);
    ck_assert_int_eq(p[0], 1);
    ph_value *x2 = ph_graph_input(g2, 0);
    ck_assert_str_eq(ph_value_name(x2), "x");
    ck_assert_str_eq(ph_value_dim_param(x2, 0), "batch");
    ck_assert_int_eq(ph_value_dim(x2, 1), 4);
    ck_assert_int_eq(ph_model_opset(m2, ""), 13);
    ck_assert_int_eq(ph_model_opset(m2, "com.example"), 1);
    ck_assert_int_eq(ph_model_opset(m2, "com.other"), -1);
    ck_assert(ph_tensor_equal(ph_value_const(wv), ph_value_const(ph_graph_initializer(g2, 0))));
    ck_assert_int_eq(ph_graph_verify(g2, &e), 0);
    ph_model_free(m);
    ph_model_free(m2);
}
END_TEST

/* Nodes read in place share attribute messages and strings in the model's
 * arena: editing one node (its attributes, name, domain) changes that node
 * only, in the IR and in the saved file; a node's domain survives a load
 * and a save. */
START_TEST(test_edit_nodes_read_in_place)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t d[] = {2, 3};
    ph_value *v = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, d);
    const int64_t perm[] = {1, 0};
    for (int i = 0; i < 3; i++) { /* three Transposes with the same perm bytes */
        ph_node *t = ph_node_create(g, NULL, "Transpose", 1, &v, 1);
        ck_assert_int_eq(ph_node_set_attr_ints(t, "perm", 2, perm), 0);
        v = ph_node_output(t, 0);
    }
    ph_node *c = ph_node_create(g, NULL, "Custom", 1, &v, 1);
    ck_assert_int_eq(ph_node_set_domain(c, "com.example"), 0);
    ph_model_set_opset(m, "com.example", 1);
    ph_graph_add_output(g, ph_node_output(c, 0));
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/in_place_a.onnx", tmpdir);
    snprintf(b, sizeof b, "%s/in_place_b.onnx", tmpdir);
    ph_error e = {0};
    ck_assert_int_eq(ph_model_save(m, a, &e), 0);
    ph_model_free(m);

    ck_assert_int_eq(ph_model_load(a, &m, &e), 0);
    g = ph_model_graph(m);
    ph_node *t0 = ph_graph_first_node(g), *t1 = ph_node_next(t0), *t2 = ph_node_next(t1);
    c = ph_node_next(t2);
    ck_assert_str_eq(ph_node_domain(c), "com.example");
    ck_assert_str_eq(ph_node_domain(t0), "");
    const int64_t other[] = {0, 1};
    ck_assert_int_eq(ph_node_set_attr_ints(t1, "perm", 2, other), 0);
    ck_assert_int_eq(ph_node_set_name(t2, "renamed"), 0);
    ck_assert_int_eq(ph_node_set_domain(t0, "com.example"), 0);
    ck_assert_int_eq(ph_node_set_domain(c, NULL), 0);
    const int64_t *p;
    ck_assert_int_eq(ph_node_attr_ints(t0, "perm", &p), 2);
    ck_assert(p[0] == 1 && p[1] == 0);
    ck_assert_int_eq(ph_node_attr_ints(t2, "perm", &p), 2);
    ck_assert(p[0] == 1 && p[1] == 0);
    ck_assert_int_eq(ph_model_save(m, b, &e), 0);
    ph_model_free(m);

    ck_assert_int_eq(ph_model_load(b, &m, &e), 0);
    g = ph_model_graph(m);
    t0 = ph_graph_first_node(g), t1 = ph_node_next(t0), t2 = ph_node_next(t1), c = ph_node_next(t2);
    ck_assert_str_eq(ph_node_domain(t0), "com.example");
    ck_assert_str_eq(ph_node_domain(c), "");
    ck_assert_str_eq(ph_node_name(t2), "renamed");
    ck_assert_int_eq(ph_node_attr_ints(t0, "perm", &p), 2);
    ck_assert(p[0] == 1 && p[1] == 0);
    ck_assert_int_eq(ph_node_attr_ints(t1, "perm", &p), 2);
    ck_assert(p[0] == 0 && p[1] == 1);
    ck_assert_int_eq(ph_node_attr_ints(t2, "perm", &p), 2);
    ck_assert(p[0] == 1 && p[1] == 0);
    ph_model_free(m);
}
END_TEST

/* Unknown fields of every wire type, a doc_string and a domain on main-graph
 * nodes and on a node of an If body, an attribute two nodes share, plain
 * and typed-field initializers: the save writes each main-graph node from
 * the IR, and the bytes are those of the file (protobuf-c's, field by
 * number, unknown fields last). */
START_TEST(test_node_fields_round_trip_identical)
{
    pb model = {0}, graph = {0}, node = {0}, attrs = {0}, body = {0}, bnode = {0}, t = {0};
    pb_int(&model, 1, 8); /* ir_version */
    /* main graph: a node with every field and unknown ones */
    pb_str(&node, 1, "x");
    pb_str(&node, 1, "w");
    pb_str(&node, 2, "a");
    pb_str(&node, 3, "add0");
    pb_str(&node, 4, "Add");
    pb_str(&node, 6, "adds w");
    pb_int(&node, 1000, 7);                     /* unknown varint */
    pb_str(&node, 1001, "passhost-node-bytes"); /* unknown length-delimited */
    pb_varint(&node, 1002u << 3 | 5);           /* unknown fixed32 */
    for (int i = 0; i < 4; i++)
        pb_byte(&node, (unsigned char)(0x11 * i));
    pb_varint(&node, 1003u << 3 | 1); /* unknown fixed64 */
    for (int i = 0; i < 8; i++)
        pb_byte(&node, (unsigned char)i);
    pb_msg(&graph, 1, &node);
    /* two Transposes with the same perm (one attribute message, shared) */
    int64_t perm[] = {0};
    pb_ints_attr(&attrs, "perm", 1, perm);
    pb_node(&graph, "Transpose", "a", NULL, "b", &attrs);
    pb_node(&graph, "Transpose", "b", NULL, "c", &attrs);
    /* an If whose both bodies hold a node with unknown fields and a domain */
    int64_t d2[] = {2};
    pb attrs2 = {0};
    for (int k = 0; k < 2; k++) {
        const char *out = k ? "u" : "t";
        body.len = bnode.len = 0;
        pb_str(&bnode, 1, "c");
        pb_str(&bnode, 2, out);
        pb_str(&bnode, 4, "Identity");
        pb_str(&bnode, 7, "");
        pb_str(&bnode, 2000, "passhost-body-bytes");
        pb_msg(&body, 1, &bnode);
        pb_str(&body, 2, k ? "then" : "else");
        pb_value_info(&body, 12, out, 1, 1, d2);
        pb_graph_attr(&attrs2, k ? "then_branch" : "else_branch", &body);
    }
    pb_node(&graph, "If", "cond", NULL, "y", &attrs2);
    pb_str(&graph, 2, "g");
    /* initializers: raw bytes (written from the IR), float_data (by protobuf-c) */
    pb_int(&t, 1, 2);
    pb_int(&t, 2, 1);
    pb_str(&t, 8, "w");
    float wv[2] = {1.5f, -2.0f};
    pb_bytes(&t, 9, wv, sizeof wv);
    pb_msg(&graph, 5, &t);
    pb t2 = {0};
    pb_int(&t2, 1, 1);
    pb_int(&t2, 2, 1);
    pb_bytes(&t2, 4, wv, sizeof wv[0]); /* packed float_data */
    pb_str(&t2, 8, "unused");
    pb_msg(&graph, 5, &t2);
    pb_value_info(&graph, 11, "x", 1, 1, d2);
    pb_value_info(&graph, 11, "cond", 9, 0, NULL);
    pb_value_info(&graph, 12, "y", 1, 1, d2);
    pb_msg(&model, 7, &graph);
    pb opset = {0};
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 17);
    pb_msg(&model, 8, &opset);
    char in[512];
    snprintf(in, sizeof in, "%s/fields.onnx", tmpdir);
    write_file(in, model.data, model.len);
    assert_round_trip_identical(in);
}
END_TEST

/* A graph whose length takes a byte more than its first nodes suggest (the
 * save guesses the width of the graph's length from them and writes the
 * file again when the guess was wrong): the file reads back whole. */
START_TEST(test_graph_length_wider_than_guessed)
{
    ph_model *m = ph_model_new(17), *m2;
    ph_error e = {0};
    ph_graph *g = ph_model_graph(m);
    int64_t d[] = {2};
    ph_value *v = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, d);
    ck_assert_ptr_nonnull(v);
    ph_node *n = NULL;
    /* 2000 nodes of about 40 bytes, a graph of about 80 KB (its length in
     * 3 bytes), then a name of 2.1 MB makes it take 4 */
    for (int i = 0; i < 2000; i++) {
        n = ph_node_create(g, NULL, "Relu", 1, &v, 1);
        ck_assert_ptr_nonnull(n);
        v = ph_node_output(n, 0);
    }
    size_t n_big = (size_t)2100 << 10;
    char *big = malloc(n_big + 1);
    ck_assert_ptr_nonnull(big);
    memset(big, 'n', n_big);
    big[n_big] = 0;
    ck_assert_int_eq(ph_node_set_name(n, big), 0);
    ck_assert_int_eq(ph_graph_add_output(g, v), 0);
    char out[512], again[512];
    snprintf(out, sizeof out, "%s/wide.onnx", tmpdir);
    snprintf(again, sizeof again, "%s/again.onnx", tmpdir);
    ck_assert_msg(ph_model_save(m, out, &e) == 0, "%s", e.message);
    ck_assert_msg(ph_model_load(out, &m2, &e) == 0, "%s", e.message);
    ph_graph *g2 = ph_model_graph(m2);
    ck_assert_uint_eq(ph_graph_node_count(g2), 2000);
    ph_node *last = NULL;
    for (ph_node *k = ph_graph_first_node(g2); k; k = ph_node_next(k))
        last = k;
    ck_assert_str_eq(ph_node_name(last), big);
    ck_assert_msg(ph_model_save(m2, again, &e) == 0, "%s", e.message);
    assert_same_bytes(out, again);
    free(big);
    ph_model_free(m);
    ph_model_free(m2);
}
END_TEST

START_TEST(test_edit_then_save_keeps_unmodelled_parts)
{
    ph_model *m, *m2;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/tests/models/unknown_fields.onnx", &m, &e), 0);
    /* rename-free edit: add a Relu after the output and make it the output */
    ph_graph *g = ph_model_graph(m);
    ph_value *y = ph_graph_output(g, 0);
    ph_node *r = ph_node_create(g, NULL, "Relu", 1, &y, 1);
    ck_assert_ptr_nonnull(r);
    char out[512];
    snprintf(out, sizeof out, "%s/edited.onnx", tmpdir);
    ck_assert_int_eq(ph_model_save(m, out, &e), 0);
    size_t n;
    unsigned char *d = read_file(out, &n);
    /* the unknown length-delimited field of the model survives */
    int found = 0;
    for (size_t i = 0; i + 22 <= n; i++)
        if (memcmp(d + i, "passhost-unknown-bytes", 22) == 0)
            found = 1;
    ck_assert(found);
    free(d);
    ck_assert_int_eq(ph_model_load(out, &m2, &e), 0);
    ck_assert_uint_eq(ph_graph_node_count(ph_model_graph(m2)), 3);
    ph_model_free(m);
    ph_model_free(m2);
}
END_TEST

/* Tensors around the writer's buffer size (1 MiB) and its direct-write
 * threshold, between small records: every byte must land in order. */
START_TEST(test_large_tensors_keep_their_order)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    const int64_t sizes[] = {3, 600 * 256, 7, 131072, 5, 300 * 1024, 1, 262143, 2};
    const size_t n = sizeof sizes / sizeof sizes[0];
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, (int64_t[]){1});
    for (size_t i = 0; i < n; i++) {
        float *d = malloc((size_t)sizes[i] * sizeof *d);
        for (int64_t k = 0; k < sizes[i]; k++)
            d[k] = (float)(i * 1000003 + (size_t)k);
        char name[32];
        snprintf(name, sizeof name, "t%zu", i);
        ph_value *w = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 1, &sizes[i], d));
        free(d);
        ph_node *add = ph_node_create(g, NULL, "Add", 2, (ph_value *[]){x, w}, 1);
        ph_graph_add_output(g, ph_node_output(add, 0));
    }
    char out[512];
    snprintf(out, sizeof out, "%s/large.onnx", tmpdir);
    ph_error e = {0};
    ck_assert_int_eq(ph_model_save(m, out, &e), 0);
    ph_model *m2;
    ck_assert_msg(ph_model_load(out, &m2, &e) == 0, "%s", e.message);
    for (size_t i = 0; i < n; i++)
        ck_assert(ph_tensor_equal(ph_value_const(ph_graph_initializer(g, i)),
                                  ph_value_const(ph_graph_initializer(ph_model_graph(m2), i))));
    /* and saving the loaded model (data now in a mapping) is byte-identical */
    char again[600];
    snprintf(again, sizeof again, "%s/again.onnx", tmpdir);
    ck_assert_int_eq(ph_model_save(m2, again, &e), 0);
    assert_same_bytes(out, again);
    ph_model_free(m);
    ph_model_free(m2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("model_io");
    TCase *tc = tcase_create("io");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_round_trip_every_bundled_model);
    tcase_add_test(tc, test_external_data_inlined);
    tcase_add_test(tc, test_external_data_out_of_range);
    tcase_add_test(tc, test_typed_field_tensor_readable);
    tcase_add_test(tc, test_bad_files);
    tcase_add_test(tc, test_save_is_safe);
    tcase_add_test(tc, test_build_save_load);
    tcase_add_test(tc, test_edit_nodes_read_in_place);
    tcase_add_test(tc, test_edit_then_save_keeps_unmodelled_parts);
    tcase_add_test(tc, test_node_fields_round_trip_identical);
    tcase_add_test(tc, test_graph_length_wider_than_guessed);
    tcase_add_test(tc, test_large_tensors_keep_their_order);
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
