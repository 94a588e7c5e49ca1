/* tests/test_load_checks.c - what the loader refuses and what the save
 * writes for big models, each a regression test of a defect found by
 * probing:
 *   - two initializers of one name: a clear error naming it (the message
 *     once read the name after freeing it: ASan aborted);
 *   - tensor data that does not match its shape and dtype (typed fields of
 *     the wrong kind or count, negative dims, element counts that overflow,
 *     two places for the data), in initializers, bodies and Constant nodes;
 *   - external data that leaves the model's folder ("..", absolute paths,
 *     symbolic links to /etc/passwd, linked folders);
 *   - operators that lack a required input (the schema's arity);
 *   - dim products that overflow int64 in shape inference and the evaluator
 *     (Reshape to [2^62, 2^62]: signed overflow under UBSan);
 *   - external data written on save (a small threshold here; the 2 GB case
 *     is bench/big_model.sh): one PATH.data file, 4 KiB-aligned offsets,
 *     tensors back byte for byte, never over a file the input reads. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "passhost/host.h"
#include "passhost/passhost.h"
#include "pbwire.h"
#include "tmpdir.h"

static const char *tmpdir;

static void setup(void) { tmpdir = tk_tmpdir_make("loadchk"); }
static void teardown(void) { tk_tmpdir_remove(); }

/* ------------------------------------------------------------ builders */

/* TensorProto fields (onnx.proto) */
enum { T_DIMS = 1, T_DTYPE = 2, T_FLOAT = 4, T_INT32 = 5, T_STRING = 6, T_INT64 = 7, T_NAME = 8,
       T_RAW = 9, T_DOUBLE = 10, T_UINT64 = 11, T_EXTERNAL = 13, T_LOCATION = 14 };

static void tensor_head(pb *t, const char *name, int dtype, int rank, const int64_t *dims)
{
    for (int i = 0; i < rank; i++)
        pb_int(t, T_DIMS, (uint64_t)dims[i]); /* a negative dim: ten-byte varint, as protobuf writes it */
    pb_int(t, T_DTYPE, (uint64_t)dtype);
    pb_str(t, T_NAME, name);
}

static void floats(pb *t, int n, float v)
{
    float f[64];
    for (int i = 0; i < n; i++)
        f[i] = v + (float)i;
    pb_bytes(t, T_FLOAT, f, (size_t)n * sizeof *f); /* packed repeated float */
}

static void external(pb *t, const char *location, long long offset, long long length)
{
    pb e = {0};
    pb_str(&e, 1, "location");
    pb_str(&e, 2, location);
    pb_msg(t, T_EXTERNAL, &e);
    char num[32];
    if (offset >= 0) {
        pb o = {0};
        snprintf(num, sizeof num, "%lld", offset);
        pb_str(&o, 1, "offset");
        pb_str(&o, 2, num);
        pb_msg(t, T_EXTERNAL, &o);
    }
    if (length >= 0) {
        pb l = {0};
        snprintf(num, sizeof num, "%lld", length);
        pb_str(&l, 1, "length");
        pb_str(&l, 2, num);
        pb_msg(t, T_EXTERNAL, &l);
    }
    pb_int(t, T_LOCATION, 1);
}

/* Model: input x FLOAT [1,4]; y = Add(x, w) with initializers inits (whole
 * field-5 records) and extra nodes (whole field-1 records); output y. */
static void model_bytes(pb *model, const pb *inits, const pb *nodes, int opset)
{
    pb g = {0}, op = {0};
    int64_t d[2] = {1, 4};
    pb_node(&g, "Add", "x", "w", "y", NULL);
    for (size_t i = 0; nodes && i < nodes->len; i++)
        pb_byte(&g, nodes->data[i]);
    pb_str(&g, 2, "g");
    for (size_t i = 0; inits && i < inits->len; i++)
        pb_byte(&g, inits->data[i]);
    pb_value_info(&g, 11, "x", 1, 2, d);
    pb_value_info(&g, 12, "y", 1, 2, d);
    pb_int(model, 1, 8);
    pb_int(&op, 2, (uint64_t)opset);
    pb_msg(model, 8, &op);
    pb_msg(model, 7, &g);
}

static const char *write_model(const char *name, const pb *model)
{
    const char *path = tk_tpath(name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(model->data, 1, model->len, f), model->len);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

/* Load must fail with PH_EPARSE and a message holding each fragment. */
static void expect_refused(const pb *model, const char *frag1, const char *frag2)
{
    const char *path = write_model("m.onnx", model);
    ph_model *m = (ph_model *)1;
    ph_error e = {0};
    int rc = ph_model_load(path, &m, &e);
    ck_assert_msg(rc != 0, "loaded, but should not (%s)", frag1);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(e.message, path), "message does not name the file: %s", e.message);
    ck_assert_msg(strstr(e.message, frag1), "'%s' not in: %s", frag1, e.message);
    if (frag2)
        ck_assert_msg(strstr(e.message, frag2), "'%s' not in: %s", frag2, e.message);
}

static ph_model *expect_loads(const pb *model)
{
    const char *path = write_model("ok.onnx", model);
    ph_model *m = NULL;
    ph_error e = {0};
    ck_assert_msg(ph_model_load(path, &m, &e) == 0, "%s", e.message);
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), &e), 0);
    return m;
}

/* One initializer record (field 5) from a tensor message. */
static void init_of(pb *inits, const pb *tensor) { pb_msg(inits, 5, tensor); }

/* ------------------------------------------------------------- the tests */

START_TEST(duplicate_initializer_is_named)
{
    pb t = {0}, inits = {0}, model = {0};
    int64_t d[2] = {1, 4};
    tensor_head(&t, "w", PH_DT_FLOAT, 2, d);
    floats(&t, 4, 1);
    init_of(&inits, &t);
    init_of(&inits, &t); /* the same name again */
    model_bytes(&model, &inits, NULL, 13);
    expect_refused(&model, "initializer 'w' is defined twice", NULL);
    /* with raw_data (the mapped path of the loader) too */
    pb r = {0}, inits2 = {0}, model2 = {0};
    float raw[4] = {1, 2, 3, 4};
    tensor_head(&r, "w", PH_DT_FLOAT, 2, d);
    pb_bytes(&r, T_RAW, raw, sizeof raw);
    init_of(&inits2, &r);
    init_of(&inits2, &r);
    model_bytes(&model2, &inits2, NULL, 13);
    expect_refused(&model2, "initializer 'w' is defined twice", NULL);
}
END_TEST

typedef struct bad_tensor {
    const char *what;
    int dtype, rank;
    int64_t dims[3];
    int field;   /* typed field to fill, or T_RAW */
    int count;   /* values (bytes for T_RAW) */
    int also_raw; /* raw_data as well */
    const char *frag;
} bad_tensor;

static void tensor_case(pb *t, const bad_tensor *c)
{
    tensor_head(t, "w", c->dtype, c->rank, c->dims);
    static const unsigned char zeros[512];
    switch (c->field) {
    case T_FLOAT: floats(t, c->count, 0); break;
    case T_RAW: pb_bytes(t, T_RAW, zeros, (size_t)c->count); break;
    case T_STRING: for (int i = 0; i < c->count; i++) pb_str(t, T_STRING, "s"); break;
    case T_DOUBLE: {
        double v[16] = {0};
        pb_bytes(t, T_DOUBLE, v, (size_t)c->count * sizeof *v);
        break;
    }
    default: for (int i = 0; i < c->count; i++) pb_int(t, (unsigned)c->field, 7); break;
    }
    if (c->also_raw)
        pb_bytes(t, T_RAW, zeros, 16);
}

START_TEST(tensor_data_must_match_its_shape)
{
    const bad_tensor cases[] = {
        {"two float_data for [1,4]", PH_DT_FLOAT, 2, {1, 4}, T_FLOAT, 2, 0, "float_data has 2 values, its shape [1,4] needs 4"},
        {"a negative dim", PH_DT_FLOAT, 2, {-1, 4}, T_RAW, 16, 0, "negative dim -1"},
        {"int64_data in a FLOAT tensor", PH_DT_FLOAT, 2, {1, 4}, T_INT64, 4, 0, "not in int64_data"},
        {"dims that overflow", PH_DT_FLOAT, 2, {(int64_t)1 << 62, (int64_t)1 << 62}, T_FLOAT, 0, 0, "overflows"},
        {"bytes that overflow", PH_DT_DOUBLE, 2, {(int64_t)1 << 31, (int64_t)1 << 31}, T_DOUBLE, 0, 0, "overflows"},
        {"float_data and raw_data", PH_DT_FLOAT, 2, {1, 4}, T_FLOAT, 4, 1, "as well as raw"},
        {"raw_data too short", PH_DT_FLOAT, 2, {1, 4}, T_RAW, 12, 0, "raw_data has 12 bytes"},
        {"int32_data short for INT8", PH_DT_INT8, 1, {3}, T_INT32, 2, 0, "int32_data has 2 values"},
        {"int64_data and int32_data", PH_DT_INT64, 1, {2}, T_INT64, 2, 0, NULL}, /* filled below */
        {"double_data short", PH_DT_DOUBLE, 1, {3}, T_DOUBLE, 1, 0, "double_data has 1 values"},
        {"uint64_data short", PH_DT_UINT64, 1, {3}, T_UINT64, 4, 0, "uint64_data has 4 values"},
        {"string_data short", PH_DT_STRING, 1, {3}, T_STRING, 2, 0, "string_data has 2 values"},
        {"no data_type", 0, 1, {1}, T_FLOAT, 1, 0, "UNDEFINED"},
        {"no data at all", PH_DT_FLOAT, 2, {1, 4}, T_FLOAT, 0, 0, "float_data has 0 values"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pb t = {0}, inits = {0}, model = {0};
        tensor_case(&t, &cases[i]);
        if (!cases[i].frag) /* int64_data then int32_data */
            pb_int(&t, T_INT32, 1);
        init_of(&inits, &t);
        model_bytes(&model, &inits, NULL, 13);
        expect_refused(&model, "initializer 'w'", cases[i].frag ? cases[i].frag : "holds both");
    }
}
END_TEST

START_TEST(good_tensors_still_load)
{
    pb inits = {0}, model = {0};
    pb w = {0}, e = {0}, s = {0}, k = {0};
    int64_t d[2] = {1, 4}, zero = 0, three = 3;
    tensor_head(&w, "w", PH_DT_FLOAT, 2, d);
    floats(&w, 4, 1);
    init_of(&inits, &w);
    tensor_head(&e, "empty", PH_DT_FLOAT, 1, &zero); /* no data for no elements */
    init_of(&inits, &e);
    tensor_head(&s, "s", PH_DT_STRING, 1, &three);
    for (int i = 0; i < 3; i++)
        pb_str(&s, T_STRING, "abc");
    init_of(&inits, &s);
    tensor_head(&k, "k", PH_DT_INT64, 1, &three);
    for (int i = 0; i < 3; i++)
        pb_int(&k, T_INT64, (uint64_t)-i); /* negative values are fine */
    init_of(&inits, &k);
    model_bytes(&model, &inits, NULL, 13);
    ph_model *m = expect_loads(&model);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 4);
    ph_model_free(m);
}
END_TEST

START_TEST(constant_and_body_tensors_are_checked)
{
    /* a Constant node whose value attribute has 2 floats for [1,4] */
    pb t = {0}, attr = {0}, attrs = {0}, nodes = {0}, inits = {0}, model = {0};
    int64_t d[2] = {1, 4};
    tensor_head(&t, "cv", PH_DT_FLOAT, 2, d);
    floats(&t, 2, 0);
    pb_str(&attr, 1, "value");
    pb_msg(&attr, 5, &t);
    pb_int(&attr, 20, 4); /* TENSOR */
    pb_msg(&attrs, 5, &attr);
    pb_node(&nodes, "Constant", NULL, NULL, "c", &attrs);
    pb w = {0};
    tensor_head(&w, "w", PH_DT_FLOAT, 2, d);
    floats(&w, 4, 1);
    init_of(&inits, &w);
    model_bytes(&model, &inits, &nodes, 13);
    expect_refused(&model, "node 'c' (Constant): attribute 'value'", "float_data has 2 values");

    /* an If body whose initializer has a negative dim */
    pb body = {0}, bt = {0}, battrs = {0}, nodes2 = {0}, cond = {0}, model2 = {0};
    int64_t nd[1] = {-2};
    tensor_head(&bt, "b", PH_DT_FLOAT, 1, nd);
    pb_str(&body, 2, "then");
    pb_msg(&body, 5, &bt);
    pb_value_info(&body, 12, "b", 1, 0, NULL);
    pb ebody = {0}, et = {0};
    int64_t one = 1;
    tensor_head(&et, "b2", PH_DT_FLOAT, 1, &one);
    floats(&et, 1, 0);
    pb_str(&ebody, 2, "else");
    pb_msg(&ebody, 5, &et);
    pb_value_info(&ebody, 12, "b2", 1, 1, &one);
    pb_graph_attr(&battrs, "then_branch", &body);
    pb_graph_attr(&battrs, "else_branch", &ebody);
    tensor_head(&cond, "cond", PH_DT_BOOL, 0, NULL);
    pb_int(&cond, T_INT32, 1);
    pb_node(&nodes2, "If", "cond", NULL, "z", &battrs);
    pb inits2 = {0};
    init_of(&inits2, &w);
    init_of(&inits2, &cond);
    model_bytes(&model2, &inits2, &nodes2, 13);
    expect_refused(&model2, "initializer 'b'", "negative dim -2");
}
END_TEST

/* A model whose initializer w has its 16 bytes at LOCATION. */
static void external_model(pb *model, const char *location)
{
    pb t = {0}, inits = {0};
    int64_t d[2] = {1, 4};
    tensor_head(&t, "w", PH_DT_FLOAT, 2, d);
    external(&t, location, 0, 16);
    init_of(&inits, &t);
    model_bytes(model, &inits, NULL, 13);
}

static void write_bytes(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(d, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(external_data_stays_in_the_model_folder)
{
    const float w[4] = {1, 2, 3, 4};
    char other[] = "/tmp/ph_test_outside.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(other));
    char outside[600];
    snprintf(outside, sizeof outside, "%s/w.bin", other);
    write_bytes(outside, w, sizeof w);
    write_bytes(tk_tpath("w.bin"), w, sizeof w);

    /* fine: a plain file, a name with dots, a link to a file of the folder */
    pb ok = {0};
    external_model(&ok, "w.bin");
    ph_model *m = expect_loads(&ok);
    const float *got = ph_tensor_data(ph_value_const(ph_graph_initializer(ph_model_graph(m), 0)));
    ck_assert(got && memcmp(got, w, sizeof w) == 0);
    ph_model_free(m);
    write_bytes(tk_tpath("w..bin"), w, sizeof w);
    pb dots = {0};
    external_model(&dots, "w..bin");
    ph_model_free(expect_loads(&dots));
    ck_assert_int_eq(symlink("w.bin", tk_tpath("inside_link.bin")), 0);
    pb inlink = {0};
    external_model(&inlink, "inside_link.bin");
    ph_model_free(expect_loads(&inlink));

    /* refused: a link to /etc/passwd, a link to another folder's file, a
     * linked folder, "..", absolute paths */
    ck_assert_int_eq(symlink("/etc/passwd", tk_tpath("passwd.bin")), 0);
    pb bad = {0};
    external_model(&bad, "passwd.bin");
    expect_refused(&bad, "initializer 'w'", "leads outside the model's folder");
    ck_assert_int_eq(symlink(outside, tk_tpath("out_link.bin")), 0);
    pb bad2 = {0};
    external_model(&bad2, "out_link.bin");
    expect_refused(&bad2, "'out_link.bin' leads outside", NULL);
    ck_assert_int_eq(symlink(other, tk_tpath("sub")), 0);
    pb bad3 = {0};
    external_model(&bad3, "sub/w.bin");
    expect_refused(&bad3, "'sub/w.bin' leads outside", NULL);
    const char *escapes[] = {"../w.bin", "/etc/passwd", "a/../w.bin", "..", NULL};
    for (int i = 0; escapes[i]; i++) {
        pb esc = {0};
        external_model(&esc, escapes[i]);
        expect_refused(&esc, "initializer 'w'", "absolute paths and '..' are refused");
    }
    unlink(outside);
    rmdir(other);
}
END_TEST

/* A FIFO, a device, a socket or a folder, as the model or as an external
 * data location: refused at once, naming what it is (open() of a FIFO
 * without a writer used to block for ever; Check's time limit fails the
 * test if it does again). */
START_TEST(models_and_data_must_be_regular_files)
{
    ck_assert_int_eq(mkfifo(tk_tpath("fifo"), 0600), 0);
    ck_assert_int_eq(mkdir(tk_tpath("folder"), 0700), 0);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", tk_tpath("sock"));
    ck_assert_int_eq(bind(sock, (struct sockaddr *)&sa, sizeof sa), 0);
    /* a character device made here (as root), never the real /dev/null */
    int have_dev = mknod(tk_tpath("null"), S_IFCHR | 0600, makedev(1, 3)) == 0;
    const char *names[] = {"fifo", "folder", "sock", "null"};
    const char *kinds[] = {"a FIFO", "a folder", "a socket", "a character device"};
    for (int i = 0; i < 4; i++) {
        if (i == 3 && !have_dev)
            continue;
        pb ext = {0};
        external_model(&ext, names[i]);
        expect_refused(&ext, "initializer 'w'", kinds[i]);
        ph_model *m = (ph_model *)1;
        ph_error e = {0};
        ck_assert_int_ne(ph_model_load(tk_tpath(names[i]), &m, &e), 0);
        ck_assert_ptr_null(m);
        ck_assert_msg(strstr(e.message, kinds[i]), "'%s' not in: %s", kinds[i], e.message);
    }
    close(sock);
}
END_TEST

START_TEST(required_inputs_are_checked)
{
    /* Add with one input */
    pb g = {0}, model = {0}, op = {0};
    int64_t d[2] = {1, 4};
    pb_node(&g, "Add", "x", NULL, "y", NULL);
    pb_str(&g, 2, "g");
    pb_value_info(&g, 11, "x", 1, 2, d);
    pb_value_info(&g, 12, "y", 1, 2, d);
    pb_int(&model, 1, 8);
    pb_int(&op, 2, 13);
    pb_msg(&model, 8, &op);
    pb_msg(&model, 7, &g);
    expect_refused(&model, "node 'y' (Add): 1 inputs, the operator needs at least 2", NULL);
    /* Conv with its weight omitted ("" in the slot) */
    pb g2 = {0}, model2 = {0};
    int64_t xd[4] = {1, 1, 4, 4};
    pb_node(&g2, "Conv", "x", "", "y", NULL);
    pb_str(&g2, 2, "g");
    pb_value_info(&g2, 11, "x", 1, 4, xd);
    pb_value_info(&g2, 12, "y", 1, 4, xd);
    pb_int(&model2, 1, 8);
    pb_msg(&model2, 8, &op);
    pb_msg(&model2, 7, &g2);
    expect_refused(&model2, "node 'y' (Conv): required input 1 is missing", NULL);
    /* Clip's min and max are optional: fine */
    pb g3 = {0}, model3 = {0};
    pb_node(&g3, "Clip", "x", "", "y", NULL);
    pb_str(&g3, 2, "g");
    pb_value_info(&g3, 11, "x", 1, 2, d);
    pb_value_info(&g3, 12, "y", 1, 2, d);
    pb_int(&model3, 1, 8);
    pb_msg(&model3, 8, &op);
    pb_msg(&model3, 7, &g3);
    ph_model_free(expect_loads(&model3));
}
END_TEST

START_TEST(dim_products_never_overflow)
{
    /* Reshape of a [1,4] input to [2^62, 2^62]: once signed overflow in
     * shape inference (UBSan), now an inference error */
    pb t = {0}, inits = {0}, g = {0}, model = {0}, op = {0};
    int64_t two = 2, d[2] = {1, 4}, big[2] = {(int64_t)1 << 62, (int64_t)1 << 62};
    tensor_head(&t, "shape", PH_DT_INT64, 1, &two);
    pb_bytes(&t, T_RAW, big, sizeof big);
    pb_node(&g, "Reshape", "x", "shape", "y", NULL);
    pb_str(&g, 2, "g");
    pb_msg(&g, 5, &t);
    pb_value_info(&g, 11, "x", 1, 2, d);
    pb_value_info(&g, 12, "y", 1, 0, NULL);
    pb_int(&model, 1, 8);
    pb_int(&op, 2, 13);
    pb_msg(&model, 8, &op);
    pb_msg(&model, 7, &g);
    (void)inits;
    ph_model *m = expect_loads(&model);
    ph_error e = {0};
    ck_assert_int_ne(ph_graph_infer_shapes(ph_model_graph(m), &e), 0);
    ck_assert_msg(strstr(e.message, "more elements than int64"), "%s", e.message);

    /* the evaluator: the same Reshape, and a Tile, an Expand and a
     * ConstantOfShape whose outputs would have 2^80 elements: errors before
     * anything is allocated */
    ph_node *rs = ph_graph_first_node(ph_model_graph(m));
    ph_tensor *x = ph_tensor_new(PH_DT_FLOAT, 2, d, NULL);
    ph_tensor *sh = ph_tensor_new(PH_DT_INT64, 1, &two, big);
    ph_tensor *out[1] = {NULL};
    const ph_tensor *ins[2] = {x, sh};
    ck_assert_int_ne(ph_eval_node(rs, 13, ins, out, &e), 0);
    ck_assert_msg(strstr(e.message, "int64"), "%s", e.message);

    ph_model *b = ph_model_new(13);
    ph_graph *bg = ph_model_graph(b);
    int64_t one[2] = {1, 1}, huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    ph_value *z = ph_graph_add_input(bg, "z", PH_DT_FLOAT, 2, one);
    ph_value *r = ph_graph_add_initializer(bg, "r", ph_tensor_new(PH_DT_INT64, 1, &two, huge));
    ph_tensor *zt = ph_tensor_new(PH_DT_FLOAT, 2, one, NULL);
    ph_tensor *rt = ph_tensor_new(PH_DT_INT64, 1, &two, huge);
    const ph_tensor *tins[2] = {zt, rt};
    const char *ops[] = {"Tile", "Expand", NULL};
    for (int i = 0; ops[i]; i++) {
        ph_node *n = ph_node_create(bg, NULL, ops[i], 2, (ph_value *[]){z, r}, 1);
        ck_assert_int_ne(ph_eval_node(n, 13, tins, out, &e), 0);
        ck_assert_ptr_null(out[0]);
    }
    ph_node *cos = ph_node_create(bg, NULL, "ConstantOfShape", 1, &r, 1);
    ck_assert_int_ne(ph_eval_node(cos, 13, &tins[1], out, &e), 0);
    ck_assert_ptr_null(out[0]);
    /* no tensor of such a shape can be made, even with a zero dim */
    int64_t zero_huge[3] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
    ck_assert_ptr_null(ph_tensor_new(PH_DT_FLOAT, 3, zero_huge, NULL));
    ph_tensor_free(zt);
    ph_tensor_free(rt);
    ph_tensor_free(x);
    ph_tensor_free(sh);
    ph_model_free(b);
    ph_model_free(m);
}
END_TEST

/* ---------------------------------------------------------- external data */

/* Read a varint at *p (tests only: the file was just written by us). */
static uint64_t rd_varint(const unsigned char **p)
{
    uint64_t v = 0;
    for (int s = 0; s < 64; s += 7) {
        unsigned char c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80))
            break;
    }
    return v;
}

typedef struct ext_seen {
    char name[64], location[256];
    long long offset, length;
    int external, raw;
} ext_seen;

/* The initializers of the main graph of the model bytes d[0..n): name,
 * data_location, external_data entries, raw_data presence. */
static size_t scan_inits(const unsigned char *d, size_t n, ext_seen *out, size_t max)
{
    size_t k = 0;
    int in_graph = 0;
    const unsigned char *p = d, *end = d + n;
    while (p < end) {
        uint64_t tag = rd_varint(&p), len = 0;
        if ((tag & 7) == 0) {
            rd_varint(&p);
            continue;
        }
        ck_assert_int_eq((int)(tag & 7), 2); /* no fixed-size fields in ModelProto and GraphProto */
        len = rd_varint(&p);
        if (tag >> 3 == 7 && !in_graph) { /* the graph: walk into it */
            end = p + len;
            in_graph = 1;
            continue;
        }
        if (tag >> 3 == 5 && in_graph && k < max) { /* an initializer of the graph */
            ext_seen *e = &out[k++];
            memset(e, 0, sizeof *e);
            e->offset = e->length = -1;
            const unsigned char *q = p, *qe = p + len;
            while (q < qe) {
                uint64_t t = rd_varint(&q);
                if ((t & 7) == 0) {
                    uint64_t v = rd_varint(&q);
                    if (t >> 3 == T_LOCATION)
                        e->external = v == 1;
                    continue;
                }
                if ((t & 7) == 5) {
                    q += 4;
                    continue;
                }
                if ((t & 7) == 1) {
                    q += 8;
                    continue;
                }
                uint64_t l = rd_varint(&q);
                if (t >> 3 == T_NAME)
                    snprintf(e->name, sizeof e->name, "%.*s", (int)l, (const char *)q);
                if (t >> 3 == T_RAW)
                    e->raw = 1;
                if (t >> 3 == T_EXTERNAL) {
                    char key[32] = "", val[256] = "";
                    const unsigned char *r = q, *re = q + l;
                    while (r < re) {
                        uint64_t kt = rd_varint(&r), kl = rd_varint(&r);
                        if (kt >> 3 == 1)
                            snprintf(key, sizeof key, "%.*s", (int)kl, (const char *)r);
                        else
                            snprintf(val, sizeof val, "%.*s", (int)kl, (const char *)r);
                        r += kl;
                    }
                    if (!strcmp(key, "location"))
                        snprintf(e->location, sizeof e->location, "%s", val);
                    else if (!strcmp(key, "offset"))
                        e->offset = atoll(val);
                    else if (!strcmp(key, "length"))
                        e->length = atoll(val);
                }
                q += l;
            }
        }
        p += len;
    }
    return k;
}

/* A model with initializers of 10, 3000 and 5000 floats and a 1000-byte
 * UINT8 one: y = x + a + b + c (shapes broadcast from [n]). */
static ph_model *sized_model(void)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    const int64_t sizes[3] = {10, 3000, 5000};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, (int64_t[]){1});
    for (int i = 0; i < 3; i++) {
        float *v = malloc((size_t)sizes[i] * sizeof *v);
        for (int64_t k = 0; k < sizes[i]; k++)
            v[k] = (float)(i * 100000 + k) * 0.5f;
        char name[8];
        snprintf(name, sizeof name, "t%d", i);
        ph_value *w = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 1, &sizes[i], v));
        free(v);
        ph_node *add = ph_node_create(g, NULL, "Add", 2, (ph_value *[]){x, w}, 1);
        ph_graph_add_output(g, ph_node_output(add, 0));
    }
    int64_t nb = 1000;
    unsigned char bytes[1000];
    for (int k = 0; k < 1000; k++)
        bytes[k] = (unsigned char)(k * 7);
    ph_value *u = ph_graph_add_initializer(g, "u8", ph_tensor_new(PH_DT_UINT8, 1, &nb, bytes));
    ph_node *id = ph_node_create(g, NULL, "Identity", 1, &u, 1);
    ph_graph_add_output(g, ph_node_output(id, 0));
    return m;
}

typedef struct temp_log {
    int made, gone;
    char last[4096];
} temp_log;

static void on_temp(void *user, const char *path, int created)
{
    temp_log *l = user;
    ck_assert_ptr_nonnull(strstr(path, ".tmp."));
    if (created) {
        l->made++;
        snprintf(l->last, sizeof l->last, "%s", path);
    } else {
        l->gone++;
    }
}

/* Files a and b hold the same bytes. */
static void assert_same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = tk_slurp(a, &na), *y = tk_slurp(b, &nb);
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(y);
    ck_assert_msg(na == nb && memcmp(x, y, na) == 0, "%s and %s differ", a, b);
    free(x);
    free(y);
}

START_TEST(large_tensors_go_to_one_data_file)
{
    ph_model *m = sized_model();
    ph_error e = {0};
    /* saved whole by default (far below 2 GB) */
    const char *whole = tk_tpath("whole.onnx");
    ck_assert_int_eq(ph_model_save(m, whole, &e), 0);
    ck_assert(!tk_exists(tk_tpath("whole.onnx.data")));
    /* a threshold of 1 byte: every tensor of >= 4000 bytes goes out */
    temp_log tl = {0};
    ph_save_options o = {.size = sizeof o, .external_threshold = 1, .external_min_bytes = 4000,
                         .temp_file = on_temp, .user = &tl};
    const char *out = tk_tpath("ext.onnx");
    ck_assert_msg(ph_model_save_with(m, out, &o, &e) == 0, "%s", e.message);
    ck_assert_int_eq(tl.made, 1); /* the staging folder of the save */
    ck_assert_int_eq(tl.gone, 1);
    ck_assert(!tk_exists(tl.last));
    size_t n, dn;
    char data_path[700]; /* ext.onnx.XXXXXX.data: unique to the save */
    ck_assert_ptr_nonnull(tk_data_file("ext.onnx"));
    snprintf(data_path, sizeof data_path, "%s", tk_data_file("ext.onnx"));
    char data_name[100];
    snprintf(data_name, sizeof data_name, "%s", strrchr(data_path, '/') + 1);
    char *bytes = tk_slurp(out, &n), *data = tk_slurp(data_path, &dn);
    ck_assert_ptr_nonnull(data);
    ext_seen seen[8];
    size_t k = scan_inits((const unsigned char *)bytes, n, seen, 8);
    ck_assert_uint_eq(k, 4);
    int ext = 0;
    for (size_t i = 0; i < k; i++) {
        const ph_tensor *t = ph_value_const(ph_graph_initializer(ph_model_graph(m), i));
        if (ph_tensor_nbytes(t) < 4000) { /* t0 (40 bytes) and u8 (1000) stay inline */
            ck_assert_msg(seen[i].raw && !seen[i].external, "%s", seen[i].name);
            continue;
        }
        ext++;
        ck_assert_msg(seen[i].external && !seen[i].raw, "%s", seen[i].name);
        ck_assert_str_eq(seen[i].location, data_name);
        ck_assert_int_eq(seen[i].offset % 4096, 0);
        ck_assert_int_eq(seen[i].length, (long long)ph_tensor_nbytes(t));
        ck_assert(seen[i].offset + seen[i].length <= (long long)dn);
        ck_assert(memcmp(data + seen[i].offset, ph_tensor_data(t), ph_tensor_nbytes(t)) == 0);
    }
    ck_assert_int_eq(ext, 2);
    free(bytes);
    free(data);
    /* the save left the model as it was: saved whole again, the same bytes */
    const char *whole2 = tk_tpath("whole2.onnx");
    ck_assert_int_eq(ph_model_save(m, whole2, &e), 0);
    assert_same_file(whole, whole2);

    /* it loads back with the same tensors, and saved whole again it is
     * byte-identical to the model saved whole at first */
    ph_model *back = NULL;
    ck_assert_msg(ph_model_load(out, &back, &e) == 0, "%s", e.message);
    for (size_t i = 0; i < 4; i++)
        ck_assert(ph_tensor_equal(ph_value_const(ph_graph_initializer(ph_model_graph(m), i)),
                                  ph_value_const(ph_graph_initializer(ph_model_graph(back), i))));
    const char *again = tk_tpath("again.onnx");
    ck_assert_int_eq(ph_model_save(back, again, &e), 0);
    assert_same_file(whole, again);
    size_t a1, a2;
    /* and external again from the mapped data: identical files */
    const char *ext2 = tk_tpath("ext2.onnx");
    ck_assert_int_eq(ph_model_save_with(back, ext2, &o, &e), 0);
    char data2[700];
    snprintf(data2, sizeof data2, "%s", tk_data_file("ext2.onnx"));
    char *d1 = tk_slurp(data_path, &a1), *d2 = tk_slurp(data2, &a2);
    ck_assert(a1 == a2 && memcmp(d1, d2, a1) == 0);
    free(d1);
    free(d2);

    /* never over a file the loaded model reads: its data file as output */
    ck_assert_int_eq(ph_model_reads_file(back, data_path), 1);
    ck_assert_int_eq(ph_model_reads_file(back, data2), 0);
    ck_assert_int_eq(ph_model_save_with(back, data_path, &o, &e), PH_EINVAL);
    /* a model that reads ext.onnx's data file, saved over ext.onnx: its data
     * file gets a new name, and the commit, which removes the data files of
     * the model it replaces, leaves the one the model reads */
    tk_copy_file(out, tk_tpath("copy.onnx"));
    ph_model *copy = NULL;
    ck_assert_msg(ph_model_load(tk_tpath("copy.onnx"), &copy, &e) == 0, "%s", e.message);
    ck_assert_msg(ph_model_save_with(copy, out, &o, &e) == 0, "%s", e.message);
    ck_assert(tk_exists(data_path));
    size_t a3;
    char *d3 = tk_slurp(data_path, &a3);
    ck_assert(a3 == a1);
    free(d3);
    ph_model_free(copy);
    /* another model saved over ext.onnx: the data file of the model it
     * replaces goes (nothing reads it), the first one stays (`back` reads it) */
    size_t nb;
    char *cb = tk_slurp(out, &nb);
    ext_seen s2[8];
    size_t k2 = scan_inits((const unsigned char *)cb, nb, s2, 8);
    char replaced[100] = "";
    for (size_t i = 0; i < k2 && !replaced[0]; i++)
        if (s2[i].external)
            snprintf(replaced, sizeof replaced, "%s", s2[i].location);
    free(cb);
    ck_assert(replaced[0] && strcmp(replaced, data_name) != 0 && tk_exists(tk_tpath(replaced)));
    ck_assert_msg(ph_model_save_with(m, out, &o, &e) == 0, "%s", e.message);
    ck_assert(!tk_exists(tk_tpath(replaced)));
    ck_assert(tk_exists(data_path));
    ph_model_free(back);
    ph_model_free(m);
}
END_TEST

START_TEST(failed_save_leaves_nothing)
{
    ph_model *m = sized_model();
    ph_error e = {0};
    temp_log tl = {0};
    ph_save_options o = {.size = sizeof o, .external_threshold = 1, .temp_file = on_temp, .user = &tl};
    /* the output is a folder: the commit fails after both files are written
     * and the data file was moved in */
    ck_assert_int_eq(mkdir(tk_tpath("dir.onnx"), 0700), 0);
    ck_assert_int_eq(ph_model_save_with(m, tk_tpath("dir.onnx"), &o, &e), PH_EIO);
    ck_assert_msg(strstr(e.message, "it is a folder, not a file"), "%s", e.message);
    ck_assert_int_eq(tl.made, tl.gone);
    ck_assert(!tk_exists(tl.last));
    ck_assert(tk_data_file("dir.onnx") == NULL); /* moved in first, removed again */
    struct stat st;
    ck_assert(stat(tk_tpath("dir.onnx"), &st) == 0 && S_ISDIR(st.st_mode));
    ph_model_free(m);
}
END_TEST

/* ph_model_sniff tells a model from other bytes by its first fields, as
 * the command line needs it (a model and an INI file given positionally). */
START_TEST(sniff_tells_a_model_by_its_first_bytes)
{
    size_t n;
    unsigned char *model = (unsigned char *)tk_slurp(PH_SOURCE_DIR "/models/cnn_small.onnx", &n);
    ck_assert_ptr_nonnull(model);
    ck_assert_int_eq(ph_model_sniff(model, n, n), 1);
    /* the first 4 KiB of it, as the command line reads them */
    ck_assert_int_eq(ph_model_sniff(model, 4096 < n ? 4096 : n, n), 1);
    /* a length that runs past the end of the file is no model */
    ck_assert_int_eq(ph_model_sniff(model, n / 2, n / 2), 0);
    free(model);
    static const char ini[] = "[model]\ninput = a.onnx\n";
    ck_assert_int_eq(ph_model_sniff(ini, sizeof ini - 1, sizeof ini - 1), 0);
    /* another protobuf: field 9 is none of ModelProto's */
    static const unsigned char other[] = {0x48, 0x01, 0x0a, 0x01, 'x'};
    ck_assert_int_eq(ph_model_sniff(other, sizeof other, sizeof other), 0);
    /* ir_version 8 then a graph field cut by the end of what was read */
    static const unsigned char cut[] = {0x08, 0x08, 0x3a, 0x80, 0x01, 0x0a};
    ck_assert_int_eq(ph_model_sniff(cut, sizeof cut, 1000), 1);
    ck_assert_int_eq(ph_model_sniff(cut, sizeof cut, sizeof cut), 0);
    ck_assert_int_eq(ph_model_sniff(NULL, 0, 0), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("load_checks");
    TCase *tc = tcase_create("checks");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, duplicate_initializer_is_named);
    tcase_add_test(tc, sniff_tells_a_model_by_its_first_bytes);
    tcase_add_test(tc, tensor_data_must_match_its_shape);
    tcase_add_test(tc, good_tensors_still_load);
    tcase_add_test(tc, constant_and_body_tensors_are_checked);
    tcase_add_test(tc, external_data_stays_in_the_model_folder);
    tcase_add_test(tc, models_and_data_must_be_regular_files);
    tcase_add_test(tc, required_inputs_are_checked);
    tcase_add_test(tc, dim_products_never_overflow);
    tcase_add_test(tc, large_tensors_go_to_one_data_file);
    tcase_add_test(tc, failed_save_leaves_nothing);
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
