/* tests/test_eval_models.c - whole bundled models run by the evaluator agree
 * with ONNX Runtime: the demo CNN and transformer block, and three models
 * of deployed shapes (scripts/gen_models.py): speech_vad (Conv1d, an LSTM
 * with state in and out, an If reading outer weights), quantized_mlp
 * (DynamicQuantizeLinear, MatMulInteger, QDQ, per-axis DequantizeLinear)
 * and ort_contrib (the com.microsoft ops of the target-ort passes).
 *
 * Reference data (inputs and ORT outputs, batch 1) lives in
 * tests/models/reference/<model>/ and was made by scripts/ort_reference.js
 * (seed 1; transformer: --dim batch=1 --dim seq=16), so no Node is needed at
 * test time.  Regenerate with:
 *   node scripts/ort_reference.js models/transformer_block.onnx \
 *        tests/models/reference/transformer_block --seed 1 --dim batch=1 --dim seq=16
 *   node scripts/ort_reference.js models/cnn_small.onnx \
 *        tests/models/reference/cnn_small --seed 1 --dim batch=1
 *   for m in speech_vad quantized_mlp ort_contrib; do
 *     node scripts/ort_reference.js tests/models/$m.onnx tests/models/reference/$m --seed 1; done
 * Every output must agree element by element within |got - want| <=
 * 1e-4 + 1e-4 * |want|; the maximum absolute and relative errors are printed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

#define ATOL 1e-4
#define RTOL 1e-4
#define MAX_T 16

typedef struct ref_tensor {
    char kind[8], name[128], file[128];
    int dtype;
    size_t rank;
    int64_t dims[8];
} ref_tensor;

/* Read manifest.txt: "input|output <i> <name> <dtype> <rank> <dims...> <file>". */
static size_t read_manifest(const char *dir, ref_tensor *ts)
{
    char path[1200], line[1024];
    snprintf(path, sizeof path, "%s/manifest.txt", dir);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        ck_assert_uint_lt(n, MAX_T);
        ref_tensor *t = &ts[n];
        int idx, pos, rank;
        ck_assert_int_eq(sscanf(line, "%7s %d %127s %d %d%n", t->kind, &idx, t->name, &t->dtype, &rank, &pos), 5);
        ck_assert(rank >= 0 && rank <= 8);
        t->rank = (size_t)rank;
        char *p = line + pos;
        for (int i = 0; i < rank; i++) {
            int used;
            long long d;
            ck_assert_int_eq(sscanf(p, "%lld%n", &d, &used), 1);
            t->dims[i] = d;
            p += used;
        }
        ck_assert_int_eq(sscanf(p, "%127s", t->file), 1);
        n++;
    }
    fclose(f);
    return n;
}

static ph_tensor *read_tensor(const char *dir, const ref_tensor *r)
{
    ph_tensor *t = ph_tensor_new(r->dtype, r->rank, r->dims, NULL);
    ck_assert_ptr_nonnull(t);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, r->file);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t nb = ph_tensor_nbytes(t);
    ck_assert_uint_eq(fread((void *)ph_tensor_data(t), 1, nb, f), nb);
    ck_assert_int_eq(fgetc(f), EOF);
    fclose(f);
    return t;
}

/* Run model `name` on its reference inputs and compare every output. */
static void check_model(const char *name)
{
    char model[1024], dir[1024];
    snprintf(model, sizeof model, "%s/tests/models/%s.onnx", PH_SOURCE_DIR, name);
    snprintf(dir, sizeof dir, "%s/tests/models/reference/%s", PH_SOURCE_DIR, name);
    ph_model *m = NULL;
    ph_error err = {0, ""};
    int rc = ph_model_load(model, &m, &err);
    ck_assert_msg(rc == 0, "load %s: %s", model, err.message);
    ph_graph *g = ph_model_graph(m);
    ph_eval *e = NULL;
    rc = ph_eval_new(g, &e, &err);
    ck_assert_msg(rc == 0, "%s: %s", name, err.message);

    ref_tensor refs[MAX_T];
    size_t n = read_manifest(dir, refs), n_in = 0, n_out = 0;
    const ph_tensor *ins[MAX_T];
    ph_tensor *want[MAX_T], *got[MAX_T];
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(refs[i].kind, "input")) {
            ck_assert_str_eq(refs[i].name, ph_value_name(ph_graph_input(g, n_in)));
            ins[n_in++] = read_tensor(dir, &refs[i]);
        } else {
            ck_assert_str_eq(refs[i].name, ph_value_name(ph_graph_output(g, n_out)));
            want[n_out++] = read_tensor(dir, &refs[i]);
        }
    }
    ck_assert_uint_eq(n_in, ph_graph_input_count(g));
    ck_assert_uint_eq(n_out, ph_graph_output_count(g));
    rc = ph_eval_run(e, ins, n_in, got, n_out, &err);
    ck_assert_msg(rc == 0, "%s: %s", name, err.message);

    for (size_t o = 0; o < n_out; o++) {
        ck_assert_int_eq(ph_tensor_dtype(got[o]), PH_DT_FLOAT);
        ck_assert_uint_eq(ph_tensor_rank(got[o]), ph_tensor_rank(want[o]));
        for (size_t d = 0; d < ph_tensor_rank(got[o]); d++)
            ck_assert_int_eq(ph_tensor_dim(got[o], d), ph_tensor_dim(want[o], d));
        const float *a = ph_tensor_data(got[o]), *b = ph_tensor_data(want[o]);
        double max_abs = 0, max_rel = 0;
        int64_t bad = -1;
        for (int64_t i = 0; i < ph_tensor_numel(got[o]); i++) {
            double diff = fabs((double)a[i] - (double)b[i]), rel = diff / fmax(fabs((double)b[i]), 1e-30);
            max_abs = fmax(max_abs, diff);
            if (fabs((double)b[i]) > 1e-6)
                max_rel = fmax(max_rel, rel);
            if (!(diff <= ATOL + RTOL * fabs((double)b[i])) && bad < 0)
                bad = i;
        }
        printf("%s: output %-10s max abs err %.3g, max rel err %.3g (|want| > 1e-6)\n", name,
               ph_value_name(ph_graph_output(g, o)), max_abs, max_rel);
        ck_assert_msg(bad < 0, "%s output %zu element %lld: got %.9g, ORT %.9g", name, o, (long long)bad,
                      bad < 0 ? 0.0 : (double)a[bad], bad < 0 ? 0.0 : (double)b[bad]);
    }
    for (size_t i = 0; i < n_in; i++)
        ph_tensor_free((ph_tensor *)ins[i]);
    for (size_t i = 0; i < n_out; i++) {
        ph_tensor_free(want[i]);
        ph_tensor_free(got[i]);
    }
    ph_eval_free(e);
    ph_model_free(m);
}

START_TEST(test_transformer_block) { check_model("transformer_block"); }
END_TEST

START_TEST(test_cnn_small) { check_model("cnn_small"); }
END_TEST

START_TEST(test_speech_vad) { check_model("speech_vad"); }
END_TEST

START_TEST(test_quantized_mlp) { check_model("quantized_mlp"); }
END_TEST

START_TEST(test_ort_contrib) { check_model("ort_contrib"); }
END_TEST

/* An operator of a domain the evaluator does not know (a model-local
 * function here) is refused at preparation, naming the node and the
 * operator. */
START_TEST(test_control_flow_refused)
{
    ph_model *m = NULL;
    ph_error err = {0, ""};
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/tests/models/control_flow.onnx", &m, &err), 0);
    ph_eval *e = NULL;
    ck_assert_int_eq(ph_eval_new(ph_model_graph(m), &e, &err), PH_EUNSUPPORTED);
    ck_assert_ptr_null(e);
    ck_assert_ptr_nonnull(strstr(err.message, "ScaleAdd"));
    ck_assert_ptr_nonnull(strstr(err.message, "custom.fn"));
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("eval_models");
    TCase *t = tcase_create("ort");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_transformer_block);
    tcase_add_test(t, test_cnn_small);
    tcase_add_test(t, test_speech_vad);
    tcase_add_test(t, test_quantized_mlp);
    tcase_add_test(t, test_ort_contrib);
    tcase_add_test(t, test_control_flow_refused);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_set_fork_status(r, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
