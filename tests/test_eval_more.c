/* tests/test_eval_more.c - the evaluator's kernels beyond the light and heavy
 * tables, against hand-computed values and the examples of the ONNX
 * operator documentation: indexing (eval_ops_index.c), losses
 * (eval_nn_loss.c), RNN/GRU/LSTM (eval_nn_rnn.c), quantized ops
 * (eval_ops_quant.c), detection and sampling (eval_nn_vision.c), signal
 * processing (eval_ops_signal.c), Det, LRN, MeanVarianceNormalization,
 * BatchNormalization's training mode, Einsum diagonals, TfIdfVectorizer
 * and the com.microsoft ops (eval_ms_contrib.c); each float kernel also in
 * double, float16 and bfloat16; and their errors. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalcase.h"
#include "pbwire.h"
#include "passhost/passhost.h"

static const int float_dtypes[] = {PH_DT_FLOAT, PH_DT_DOUBLE, PH_DT_FLOAT16, PH_DT_BFLOAT16};
#define N_FLOAT (sizeof float_dtypes / sizeof float_dtypes[0])

/* A tolerance for dtype dt (relative, see expect). */
static double tol_of(int dt)
{
    return dt == PH_DT_FLOAT ? 1e-6 : dt == PH_DT_DOUBLE ? 1e-12 : dt == PH_DT_FLOAT16 ? 2e-3 : 1e-2;
}

static double sig(double x) { return 1 / (1 + exp(-x)); }

/* ------------------------------------------------------------ indexing */

START_TEST(scatter_nd_and_gather_nd)
{
    for (int red = 0; red < 2; red++) {
        tc *c = mk(16, "ScatterND", 1, 3, TF(1, D(4), 1, 2, 3, 4), TL(2, D(2, 1), 1, -1), TF(1, D(2), 10, 20));
        if (red)
            ph_node_set_attr_string(c->n, "reduction", "add");
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 1, D(4), red ? V(1, 12, 3, 24) : V(1, 10, 3, 20), 0);
        done(c);
    }
    /* slices of rank 1 (k = 1 of a 2-D data), float16 with mul */
    tc *c = mk(16, "ScatterND", 1, 3, T(PH_DT_FLOAT16, 2, D(2, 2), V(1, 2, 3, 4)), TL(2, D(1, 1), 1),
               T(PH_DT_FLOAT16, 2, D(1, 2), V(2, 0.5)));
    ph_node_set_attr_string(c->n, "reduction", "mul");
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT16, 2, D(2, 2), V(1, 2, 6, 2), 0);
    done(c);
    c = mk(16, "ScatterND", 1, 3, TF(1, D(4), 1, 2, 3, 4), TL(2, D(1, 1), 4), TF(1, D(1), 10));
    ck_assert_int_eq(run(c), PH_EINVAL); /* index out of range */
    done(c);
    /* GatherND with batch_dims 1 */
    c = mk(13, "GatherND", 1, 2, TF(3, D(2, 2, 2), 0, 1, 2, 3, 4, 5, 6, 7), TL(2, D(2, 1), 1, 0));
    ph_node_set_attr_int(c->n, "batch_dims", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 2), V(2, 3, 4, 5), 0);
    done(c);
    /* spec example: full index tuples */
    c = mk(13, "GatherND", 1, 2, TL(2, D(2, 2), 0, 1, 2, 3), TL(2, D(2, 2), 0, 0, 1, 1));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(2), V(0, 3), 0);
    done(c);
}
END_TEST

START_TEST(scatter_elements_one_hot_compress)
{
    tc *c = mk(16, "ScatterElements", 1, 3, TF(2, D(2, 3), 1, 2, 3, 4, 5, 6), TL(2, D(2, 1), -1, 0),
               TF(2, D(2, 1), 10, 20));
    ph_node_set_attr_int(c->n, "axis", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(1, 2, 10, 20, 5, 6), 0);
    done(c);
    c = mk(18, "ScatterElements", 1, 3, TL(1, D(3), 5, 5, 5), TL(1, D(2), 1, 1), TL(1, D(2), 7, 3));
    ph_node_set_attr_string(c->n, "reduction", "max");
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(3), V(5, 7, 5), 0);
    done(c);
    /* OneHot: a negative index counts from depth, one out of range is all off */
    c = mk(11, "OneHot", 1, 3, TL(1, D(3), 0, -1, 5), TL(0, NULL, 3), TF(1, D(2), 0, 1));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(3, 3), V(1, 0, 0, 0, 0, 1, 0, 0, 0), 0);
    done(c);
    c = mk(11, "OneHot", 1, 3, TL(1, D(2), 1, 0), TF(0, NULL, 2), TL(1, D(2), -1, 7));
    ph_node_set_attr_int(c->n, "axis", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(2, 2), V(-1, 7, 7, -1), 0);
    done(c);
    /* Compress without an axis flattens; with one it keeps the rank */
    c = mk(11, "Compress", 1, 2, TF(2, D(2, 2), 1, 2, 3, 4), T(PH_DT_BOOL, 1, D(3), V(0, 1, 1)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(2, 3), 0);
    done(c);
    c = mk(11, "Compress", 1, 2, TF(2, D(2, 2), 1, 2, 3, 4), T(PH_DT_BOOL, 1, D(2), V(0, 1)));
    ph_node_set_attr_int(c->n, "axis", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 1), V(2, 4), 0);
    done(c);
    c = mk(11, "Compress", 1, 2, TF(1, D(2), 1, 2), T(PH_DT_BOOL, 1, D(3), V(1, 1, 1)));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
}
END_TEST

START_TEST(reverse_trilu_eyelike_cumsum)
{
    /* time axis 0, batch axis 1: batch 0 reverses its first 2 steps */
    tc *c = mk(10, "ReverseSequence", 1, 2, TF(2, D(3, 2), 1, 2, 3, 4, 5, 6), TL(1, D(2), 2, 3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(3, 2), V(3, 6, 1, 4, 5, 2), 0);
    done(c);
    c = mk(14, "Trilu", 1, 2, TF(2, D(3, 3), 1, 1, 1, 1, 1, 1, 1, 1, 1), TL(0, NULL, -1));
    ph_node_set_attr_int(c->n, "upper", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(3, 3), V(0, 0, 0, 1, 0, 0, 1, 1, 0), 0);
    done(c);
    c = mk(14, "Trilu", 1, 1, T(PH_DT_BFLOAT16, 3, D(1, 2, 3), V(1, 2, 3, 4, 5, 6)));
    run_ok(c);
    expect(c->out[0], PH_DT_BFLOAT16, 3, D(1, 2, 3), V(1, 2, 3, 0, 5, 6), 0);
    done(c);
    c = mk(9, "EyeLike", 1, 1, TF(2, D(2, 3), 0, 0, 0, 0, 0, 0));
    ph_node_set_attr_int(c->n, "k", 1);
    ph_node_set_attr_int(c->n, "dtype", PH_DT_INT32);
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 2, D(2, 3), V(0, 1, 0, 0, 0, 1), 0);
    done(c);
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        c = mk(14, "CumSum", 1, 2, T(dt, 1, D(3), V(1, 2, 3)), TL(0, NULL, 0));
        ph_node_set_attr_int(c->n, "exclusive", 1);
        ph_node_set_attr_int(c->n, "reverse", 1);
        run_ok(c);
        expect(c->out[0], dt, 1, D(3), V(5, 3, 0), 0);
        done(c);
    }
    c = mk(14, "CumSum", 1, 2, TL(2, D(2, 2), 1, 2, 3, 4), T(PH_DT_INT32, 0, NULL, V(-1)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(2, 2), V(1, 3, 3, 7), 0);
    done(c);
}
END_TEST

START_TEST(unique)
{
    for (int sorted = 0; sorted < 2; sorted++) {
        tc *c = mk(11, "Unique", 4, 1, TF(1, D(6), 2, 1, 1, 3, 4, 3));
        ph_node_set_attr_int(c->n, "sorted", sorted);
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 1, D(4), sorted ? V(1, 2, 3, 4) : V(2, 1, 3, 4), 0);
        expect(c->out[1], PH_DT_INT64, 1, D(4), sorted ? V(1, 0, 3, 4) : V(0, 1, 3, 4), 0);
        expect(c->out[2], PH_DT_INT64, 1, D(6), sorted ? V(1, 0, 0, 2, 3, 2) : V(0, 1, 1, 2, 3, 2), 0);
        expect(c->out[3], PH_DT_INT64, 1, D(4), sorted ? V(2, 1, 2, 1) : V(1, 2, 2, 1), 0);
        done(c);
    }
    tc *c = mk(11, "Unique", 4, 1, TL(2, D(3, 2), 1, 0, 1, 0, 2, 3));
    ph_node_set_attr_int(c->n, "axis", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(2, 2), V(1, 0, 2, 3), 0);
    expect(c->out[3], PH_DT_INT64, 1, D(2), V(2, 1), 0);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ losses */

START_TEST(losses)
{
    static const char *const red[] = {"mean", "sum", "none"};
    const double want[] = {5.5 / 2.5, 5.5};
    for (int r = 0; r < 3; r++) {
        tc *c = mk(13, "NegativeLogLikelihoodLoss", 1, 3, TF(2, D(2, 2), -1, -2, -3, -4), TL(1, D(2), 1, 0),
                   TF(1, D(2), 0.5, 2));
        ph_node_set_attr_string(c->n, "reduction", red[r]);
        run_ok(c);
        if (r < 2)
            expect(c->out[0], PH_DT_FLOAT, 0, NULL, &want[r], 1e-6);
        else
            expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(4, 1.5), 1e-6);
        done(c);
    }
    /* ignore_index: the ignored target neither counts nor weighs */
    tc *c = mk(13, "NegativeLogLikelihoodLoss", 1, 2, TF(2, D(2, 2), -1, -2, -3, -4), TL(1, D(2), 1, 0));
    ph_node_set_attr_int(c->n, "ignore_index", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 0, NULL, V(2), 1e-6);
    done(c);
    c = mk(13, "NegativeLogLikelihoodLoss", 1, 2, TF(2, D(2, 2), -1, -2, -3, -4), TL(1, D(2), 1, 2));
    ck_assert_int_eq(run(c), PH_EINVAL); /* target out of range */
    done(c);
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        c = mk(13, "SoftmaxCrossEntropyLoss", 2, 2, T(dt, 2, D(1, 2), V(0, 0)), TL(1, D(1), 0));
        run_ok(c);
        expect(c->out[0], dt, 0, NULL, V(log(2)), tol_of(dt));
        expect(c->out[1], dt, 2, D(1, 2), V(-log(2), -log(2)), tol_of(dt));
        done(c);
    }
}
END_TEST

/* ------------------------------------------------------------ recurrent */

START_TEST(rnn)
{
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        tc *c = mk(14, "RNN", 2, 6, T(dt, 3, D(1, 1, 1), V(1)), T(dt, 3, D(1, 1, 1), V(0.5)),
                   T(dt, 3, D(1, 1, 1), V(2)), T(dt, 2, D(1, 2), V(0.1, 0.2)), NULL, T(dt, 3, D(1, 1, 1), V(0.3)));
        ph_node_set_attr_int(c->n, "hidden_size", 1);
        run_ok(c);
        expect(c->out[0], dt, 4, D(1, 1, 1, 1), V(tanh(1.4)), tol_of(dt));
        expect(c->out[1], dt, 3, D(1, 1, 1), V(tanh(1.4)), tol_of(dt));
        done(c);
    }
    /* bidirectional with R = 1: the reverse direction starts at the end */
    tc *c = mk(14, "RNN", 2, 3, TF(3, D(2, 1, 1), 1, 2), TF(3, D(2, 1, 1), 1, 1), TF(3, D(2, 1, 1), 1, 1));
    ph_node_set_attr_string(c->n, "direction", "bidirectional");
    run_ok(c);
    double a = tanh(1), b = tanh(2);
    expect(c->out[0], PH_DT_FLOAT, 4, D(2, 2, 1, 1), V(a, tanh(1 + b), tanh(2 + a), b), 1e-6);
    expect(c->out[1], PH_DT_FLOAT, 3, D(2, 1, 1), V(tanh(2 + a), tanh(1 + b)), 1e-6);
    done(c);
    /* sequence_lens: batch 0 stops after one step (zeros after it, Y_h its
       last state); clip 1.5 bounds the pre-activation */
    c = mk(14, "RNN", 2, 5, TF(3, D(2, 2, 1), 1, 1, 2, 2), TF(3, D(1, 1, 1), 1), TF(3, D(1, 1, 1), 0), NULL,
           T(PH_DT_INT32, 1, D(2), V(1, 2)));
    ph_node_set_attr_int(c->n, "hidden_size", 1);
    ph_node_set_attr_float(c->n, "clip", 1.5f);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(2, 1, 2, 1), V(tanh(1), tanh(1), 0, tanh(1.5)), 1e-6);
    expect(c->out[1], PH_DT_FLOAT, 3, D(1, 2, 1), V(tanh(1), tanh(1.5)), 1e-6);
    done(c);
    c = mk(14, "RNN", 2, 5, TF(3, D(1, 1, 1), 1), TF(3, D(1, 1, 1), 1), TF(3, D(1, 1, 1), 0), NULL,
           T(PH_DT_INT32, 1, D(1), V(2)));
    ck_assert_int_eq(run(c), PH_EINVAL); /* a length beyond the sequence */
    done(c);
}
END_TEST

/* RNN with an activations attribute (a STRINGS attribute the builder API
 * cannot set, so the model is written as pb bytes): LeakyRelu with its
 * alpha from activation_alpha, and Relu. */
static double rnn_with_activation(const char *act, double alpha, double x)
{
    pb node = {0}, at = {0}, al = {0}, hs = {0}, graph = {0}, opset = {0}, model = {0};
    const int64_t d1[3] = {1, 1, 1};
    for (const char *const *in = (const char *const[]){"X", "W", "R", NULL}; *in; in++)
        pb_str(&node, 1, *in);
    pb_str(&node, 2, "Y");
    pb_str(&node, 2, "Y_h");
    pb_str(&node, 3, "rnn");
    pb_str(&node, 4, "RNN");
    pb_str(&at, 1, "activations"); /* AttributeProto: name 1, f 2, i 3, floats 7, strings 9, type 20 */
    pb_str(&at, 9, act);
    pb_int(&at, 20, 8);
    pb_msg(&node, 5, &at);
    pb_str(&al, 1, "activation_alpha");
    float f = (float)alpha;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    pb_varint(&al, (7u << 3) | 5); /* floats, fixed32 */
    for (int k = 0; k < 4; k++)
        pb_byte(&al, (unsigned char)(bits >> (8 * k)));
    pb_int(&al, 20, 6);
    pb_msg(&node, 5, &al);
    pb_str(&hs, 1, "hidden_size");
    pb_int(&hs, 3, 1);
    pb_int(&hs, 20, 2);
    pb_msg(&node, 5, &hs);
    pb_msg(&graph, 1, &node);
    pb_str(&graph, 2, "g");
    pb_value_info(&graph, 11, "X", PH_DT_FLOAT, 3, d1);
    pb_value_info(&graph, 11, "W", PH_DT_FLOAT, 3, d1);
    pb_value_info(&graph, 11, "R", PH_DT_FLOAT, 3, d1);
    pb_value_info(&graph, 12, "Y_h", PH_DT_FLOAT, 3, d1);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 14);
    pb_int(&model, 1, 8);
    pb_msg(&model, 7, &graph);
    pb_msg(&model, 8, &opset);
    ph_model *m = pb_load(&model);
    ph_eval *e = NULL;
    ph_error err = {0, ""};
    ck_assert_msg(ph_eval_new(ph_model_graph(m), &e, &err) == 0, "%s", err.message);
    ph_tensor *in[3] = {TF(3, D(1, 1, 1), x), TF(3, D(1, 1, 1), 1), TF(3, D(1, 1, 1), 0)}, *y = NULL;
    ck_assert_msg(ph_eval_run(e, (const ph_tensor *const *)in, 3, &y, 1, &err) == 0, "%s", err.message);
    double v = *(const float *)ph_tensor_data(y);
    ph_tensor_free(y);
    for (int k = 0; k < 3; k++)
        ph_tensor_free(in[k]);
    ph_eval_free(e);
    ph_model_free(m);
    return v;
}

START_TEST(rnn_activations)
{
    ck_assert(fabs(rnn_with_activation("LeakyRelu", 0.1, -1) - -0.1) < 1e-6);
    ck_assert(fabs(rnn_with_activation("Relu", 0.1, -1)) < 1e-12);
    ck_assert(fabs(rnn_with_activation("Relu", 0.1, 2) - 2) < 1e-6);
    ck_assert(fabs(rnn_with_activation("HardSigmoid", 0.1, 2) - 0.7) < 1e-6); /* alpha 0.1, beta 0.5 */
}
END_TEST

START_TEST(gru_and_lstm)
{
    double h0 = 0.5, z = sig(0.1 + 0.4 * h0), r = sig(0.2 + 0.5 * h0);
    for (int lbr = 0; lbr < 2; lbr++) {
        double hh = lbr ? tanh(0.3 + r * (0.6 * h0)) : tanh(0.3 + 0.6 * (r * h0)), h = (1 - z) * hh + z * h0;
        for (size_t k = 0; k < N_FLOAT; k++) {
            int dt = float_dtypes[k];
            tc *c = mk(14, "GRU", 2, 6, T(dt, 3, D(1, 1, 1), V(1)), T(dt, 3, D(1, 3, 1), V(0.1, 0.2, 0.3)),
                       T(dt, 3, D(1, 3, 1), V(0.4, 0.5, 0.6)), NULL, NULL, T(dt, 3, D(1, 1, 1), V(h0)));
            ph_node_set_attr_int(c->n, "hidden_size", 1);
            ph_node_set_attr_int(c->n, "linear_before_reset", lbr);
            run_ok(c);
            expect(c->out[1], dt, 3, D(1, 1, 1), V(h), tol_of(dt));
            done(c);
        }
    }
    /* LSTM with peepholes, initial states, and input_forget */
    for (int forget = 0; forget < 2; forget++) {
        double hp = 0.2, cp = 0.3, i = sig(0.1 + 0.5 * hp + 0.05 * cp);
        double f = forget ? 1 - i : sig(0.3 + 0.7 * hp + 0.07 * cp), cc = tanh(0.4 + 0.8 * hp);
        double C = f * cp + i * cc, o = sig(0.2 + 0.6 * hp + 0.06 * C), H = o * tanh(C);
        for (size_t k = 0; k < N_FLOAT; k++) {
            int dt = float_dtypes[k];
            tc *c = mk(14, "LSTM", 3, 8, T(dt, 3, D(1, 1, 1), V(1)), T(dt, 3, D(1, 4, 1), V(0.1, 0.2, 0.3, 0.4)),
                       T(dt, 3, D(1, 4, 1), V(0.5, 0.6, 0.7, 0.8)), T(dt, 2, D(1, 8), NULL), NULL,
                       T(dt, 3, D(1, 1, 1), V(hp)), T(dt, 3, D(1, 1, 1), V(cp)), T(dt, 2, D(1, 3), V(0.05, 0.06, 0.07)));
            ph_node_set_attr_int(c->n, "hidden_size", 1);
            ph_node_set_attr_int(c->n, "input_forget", forget);
            run_ok(c);
            expect(c->out[0], dt, 4, D(1, 1, 1, 1), V(H), tol_of(dt));
            expect(c->out[1], dt, 3, D(1, 1, 1), V(H), tol_of(dt));
            expect(c->out[2], dt, 3, D(1, 1, 1), V(C), tol_of(dt));
            done(c);
        }
    }
    /* layout 1: batch first; two batch entries of one step each */
    double i = sig(0.1), f = sig(0.3), cc = tanh(0.4), C = i * cc, H = sig(0.2) * tanh(C);
    (void)f;
    tc *c = mk(14, "LSTM", 2, 3, TF(3, D(2, 1, 1), 1, 1), TF(3, D(1, 4, 1), 0.1, 0.2, 0.3, 0.4),
               TF(3, D(1, 4, 1), 0, 0, 0, 0));
    ph_node_set_attr_int(c->n, "hidden_size", 1);
    ph_node_set_attr_int(c->n, "layout", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(2, 1, 1, 1), V(H, H), 1e-6);
    expect(c->out[1], PH_DT_FLOAT, 3, D(2, 1, 1), V(H, H), 1e-6);
    done(c);
    /* W of the wrong gate count */
    c = mk(14, "LSTM", 1, 3, TF(3, D(1, 1, 1), 1), TF(3, D(1, 3, 1), 0, 0, 0), TF(3, D(1, 3, 1), 0, 0, 0));
    ph_node_set_attr_int(c->n, "hidden_size", 1);
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ quantized */

START_TEST(quantize_dequantize)
{
    /* round half to even, saturate; uint8 and int8 */
    tc *c = mk(13, "QuantizeLinear", 1, 3, TF(1, D(5), 0, 2.5, 3.5, -300, 1000), TF(0, NULL, 1),
               T(PH_DT_UINT8, 0, NULL, V(10)));
    run_ok(c);
    expect(c->out[0], PH_DT_UINT8, 1, D(5), V(10, 12, 14, 0, 255), 0);
    done(c);
    c = mk(13, "QuantizeLinear", 1, 3, T(PH_DT_FLOAT16, 1, D(5), V(0, 2.5, 3.5, -300, 1000)),
           T(PH_DT_FLOAT16, 0, NULL, V(1)), T(PH_DT_INT8, 0, NULL, V(-1)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT8, 1, D(5), V(-1, 1, 3, -128, 127), 0);
    done(c);
    /* per axis (axis 1), no zero point: uint8 */
    c = mk(13, "QuantizeLinear", 1, 2, TF(2, D(2, 2), 1, 2, 3, 4), TF(1, D(2), 1, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_UINT8, 2, D(2, 2), V(1, 1, 3, 2), 0);
    done(c);
    c = mk(13, "QuantizeLinear", 1, 2, TF(2, D(2, 2), 1, 2, 3, 4), TF(1, D(3), 1, 2, 3));
    ck_assert_int_eq(run(c), PH_EINVAL); /* 3 scales for an axis of 2 */
    done(c);
    c = mk(13, "DequantizeLinear", 1, 3, T(PH_DT_INT8, 1, D(2), V(-1, 127)), TF(0, NULL, 0.5),
           T(PH_DT_INT8, 0, NULL, V(-1)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(0, 64), 0);
    done(c);
    c = mk(13, "DequantizeLinear", 1, 3, T(PH_DT_UINT8, 2, D(2, 1), V(10, 20)), TF(1, D(2), 1, 0.5),
           T(PH_DT_UINT8, 1, D(2), V(10, 0)));
    ph_node_set_attr_int(c->n, "axis", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 1), V(0, 10), 0);
    done(c);
    for (size_t k = 0; k < N_FLOAT; k++) { /* the scale's dtype is the output's */
        int dt = float_dtypes[k];
        c = mk(19, "DequantizeLinear", 1, 2, T(PH_DT_UINT8, 1, D(2), V(3, 5)), T(dt, 0, NULL, V(0.5)));
        run_ok(c);
        expect(c->out[0], dt, 1, D(2), V(1.5, 2.5), 0);
        done(c);
    }
    /* the spec's DynamicQuantizeLinear example */
    c = mk(11, "DynamicQuantizeLinear", 3, 1, TF(1, D(6), 0, 2, -3, -2.5, 1.34, 0.5));
    run_ok(c);
    expect(c->out[0], PH_DT_UINT8, 1, D(6), V(153, 255, 0, 26, 221, 179), 0);
    expect(c->out[1], PH_DT_FLOAT, 0, NULL, V(5.0 / 255), 1e-6);
    expect(c->out[2], PH_DT_UINT8, 0, NULL, V(153), 0);
    done(c);
}
END_TEST

START_TEST(integer_products)
{
    /* the spec's MatMulInteger example */
    tc *c = mk(10, "MatMulInteger", 1, 4, T(PH_DT_UINT8, 2, D(4, 3), V(11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0)),
               T(PH_DT_UINT8, 2, D(3, 2), V(1, 4, 2, 5, 3, 6)), T(PH_DT_UINT8, 0, NULL, V(12)),
               T(PH_DT_UINT8, 0, NULL, V(0)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 2, D(4, 2), V(-38, -83, -44, -98, -50, -113, -56, -128), 0);
    done(c);
    /* the spec's ConvInteger example (no padding) */
    c = mk(10, "ConvInteger", 1, 3, T(PH_DT_UINT8, 4, D(1, 1, 3, 3), V(2, 3, 4, 5, 6, 7, 8, 9, 10)),
           T(PH_DT_UINT8, 4, D(1, 1, 2, 2), V(1, 1, 1, 1)), T(PH_DT_UINT8, 0, NULL, V(1)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 4, D(1, 1, 2, 2), V(12, 16, 24, 28), 0);
    done(c);
    /* the spec's QLinearMatMul example */
    c = mk(10, "QLinearMatMul", 1, 8, T(PH_DT_UINT8, 2, D(2, 4), V(208, 236, 0, 238, 3, 214, 255, 29)),
           TF(0, NULL, 0.0066), T(PH_DT_UINT8, 0, NULL, V(113)),
           T(PH_DT_UINT8, 2, D(4, 3), V(152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247)),
           TF(0, NULL, 0.00705), T(PH_DT_UINT8, 0, NULL, V(114)), TF(0, NULL, 0.0107),
           T(PH_DT_UINT8, 0, NULL, V(118)));
    run_ok(c);
    expect(c->out[0], PH_DT_UINT8, 2, D(2, 3), V(168, 115, 255, 1, 66, 151), 0);
    done(c);
    /* QLinearConv: (10 * 3 + bias 4) / 2 + 5 */
    c = mk(10, "QLinearConv", 1, 9, T(PH_DT_UINT8, 4, D(1, 1, 1, 1), V(10)), TF(0, NULL, 1),
           T(PH_DT_UINT8, 0, NULL, V(0)), T(PH_DT_INT8, 4, D(1, 1, 1, 1), V(3)), TF(1, D(1), 1),
           T(PH_DT_INT8, 1, D(1), V(0)), TF(0, NULL, 2), T(PH_DT_UINT8, 0, NULL, V(5)),
           T(PH_DT_INT32, 1, D(1), V(4)));
    run_ok(c);
    expect(c->out[0], PH_DT_UINT8, 4, D(1, 1, 1, 1), V(22), 0);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ detection and sampling */

START_TEST(non_max_suppression)
{
    /* the spec's suppress_by_IOU example */
    tc *c = mk(11, "NonMaxSuppression", 1, 5,
               TF(3, D(1, 6, 4), 0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101),
               TF(3, D(1, 1, 6), 0.9, 0.75, 0.6, 0.95, 0.5, 0.3), TL(1, D(1), 3), TF(1, D(1), 0.5),
               TF(1, D(1), 0));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(3, 3), V(0, 0, 3, 0, 0, 0, 0, 0, 5), 0);
    done(c);
    /* centre-point boxes, a score threshold, no max: nothing selected */
    c = mk(11, "NonMaxSuppression", 1, 2, TF(3, D(1, 1, 4), 0.5, 0.5, 1, 1), TF(3, D(1, 1, 1), 0.9));
    ph_node_set_attr_int(c->n, "center_point_box", 1);
    run_ok(c);
    ck_assert_int_eq(ph_tensor_dim(c->out[0], 0), 0);
    done(c);
}
END_TEST

START_TEST(roi_align_and_grid_sample)
{
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        for (int half = 0; half < 2; half++) {
            tc *c = mk(half ? 16 : 10, "RoiAlign", 1, 3, T(dt, 4, D(1, 1, 2, 2), V(1, 2, 3, 4)),
                       T(dt, 2, D(1, 4), V(0, 0, 1, 1)), TL(1, D(1), 0));
            ph_node_set_attr_int(c->n, "sampling_ratio", 1);
            run_ok(c);
            /* half_pixel samples at (0, 0); output_half_pixel at the centre */
            expect(c->out[0], dt, 4, D(1, 1, 1, 1), V(half ? 1 : 2.5), tol_of(dt));
            done(c);
        }
        /* an identity grid with align_corners, and the centre */
        tc *c = mk(16, "GridSample", 1, 2, T(dt, 4, D(1, 1, 2, 2), V(1, 2, 3, 4)),
                   T(dt, 4, D(1, 1, 5, 2), V(-1, -1, 1, -1, -1, 1, 1, 1, 0, 0)));
        ph_node_set_attr_int(c->n, "align_corners", 1);
        run_ok(c);
        expect(c->out[0], dt, 4, D(1, 1, 1, 5), V(1, 2, 3, 4, 2.5), tol_of(dt));
        done(c);
    }
    /* out of range: zeros, border, reflection; nearest rounds half to even */
    static const char *const pads[] = {"zeros", "border", "reflection"};
    const double want[] = {0, 4, 1};
    for (int p = 0; p < 3; p++) {
        tc *c = mk(16, "GridSample", 1, 2, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(4, D(1, 1, 1, 2), 3, 3));
        ph_node_set_attr_string(c->n, "padding_mode", pads[p]);
        ph_node_set_attr_int(c->n, "align_corners", 1);
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 4, D(1, 1, 1, 1), &want[p], 1e-6);
        done(c);
    }
    tc *c = mk(16, "GridSample", 1, 2, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(4, D(1, 1, 1, 2), 0, 0));
    ph_node_set_attr_string(c->n, "mode", "nearest");
    ph_node_set_attr_int(c->n, "align_corners", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 1, 1, 1), V(1), 0);
    done(c);
    /* bicubic at a pixel centre gives the pixel */
    c = mk(16, "GridSample", 1, 2, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(4, D(1, 1, 1, 2), 1, 1));
    ph_node_set_attr_string(c->n, "mode", "bicubic");
    ph_node_set_attr_int(c->n, "align_corners", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 1, 1, 1), V(4), 1e-6);
    done(c);
}
END_TEST

START_TEST(max_unpool_and_upsample)
{
    tc *c = mk(11, "MaxUnpool", 1, 2, TF(4, D(1, 1, 2, 2), 5, 6, 7, 8), TL(4, D(1, 1, 2, 2), 5, 7, 13, 15));
    ph_node_set_attr_ints(c->n, "kernel_shape", 2, D(2, 2));
    ph_node_set_attr_ints(c->n, "strides", 2, D(2, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 1, 4, 4), V(0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8), 0);
    done(c);
    c = mk(11, "MaxUnpool", 1, 2, TF(4, D(1, 1, 1, 1), 5), TL(4, D(1, 1, 1, 1), 99));
    ph_node_set_attr_ints(c->n, "kernel_shape", 2, D(2, 2));
    ck_assert_int_eq(run(c), PH_EINVAL); /* index outside the output */
    done(c);
    c = mk(9, "Upsample", 1, 2, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(1, D(4), 1, 1, 2, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 1, 4, 4), V(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4), 0);
    done(c);
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        c = mk(9, "Upsample", 1, 2, T(dt, 1, D(2), V(1, 2)), TF(1, D(1), 2));
        ph_node_set_attr_string(c->n, "mode", "linear");
        run_ok(c);
        expect(c->out[0], dt, 1, D(4), V(1, 1.5, 2, 2), tol_of(dt));
        done(c);
    }
}
END_TEST

/* ------------------------------------------------------------ signal */

START_TEST(dft_stft_windows)
{
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        tc *c = mk(17, "DFT", 1, 1, T(dt, 3, D(1, 4, 1), V(1, 0, 0, 0)));
        run_ok(c);
        expect(c->out[0], dt, 3, D(1, 4, 2), V(1, 0, 1, 0, 1, 0, 1, 0), tol_of(dt));
        done(c);
    }
    /* [1, 2, 3, 4]: bins 10, -2+2i, -2, -2-2i; onesided keeps 3; the
       inverse of the full spectrum gives the signal back */
    tc *c = mk(17, "DFT", 1, 1, TF(3, D(1, 4, 1), 1, 2, 3, 4));
    ph_node_set_attr_int(c->n, "onesided", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 3, D(1, 3, 2), V(10, 0, -2, 2, -2, 0), 1e-6);
    done(c);
    c = mk(17, "DFT", 1, 1, TF(3, D(1, 4, 2), 10, 0, -2, 2, -2, 0, -2, -2));
    ph_node_set_attr_int(c->n, "inverse", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 3, D(1, 4, 2), V(1, 0, 2, 0, 3, 0, 4, 0), 1e-6);
    done(c);
    /* dft_length pads with zeros */
    c = mk(17, "DFT", 1, 2, TF(3, D(1, 1, 1), 1), TL(0, NULL, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 3, D(1, 2, 2), V(1, 0, 1, 0), 1e-6);
    done(c);
    /* STFT: two frames of four ones: DC 4, the rest 0 */
    c = mk(17, "STFT", 1, 2, TF(3, D(1, 8, 1), 1, 1, 1, 1, 1, 1, 1, 1), TL(0, NULL, 4));
    ck_assert_int_eq(run(c), PH_EINVAL); /* neither window nor frame_length */
    done(c);
    c = mk(17, "STFT", 1, 4, TF(3, D(1, 8, 1), 1, 1, 1, 1, 1, 1, 1, 1), TL(0, NULL, 4), TF(1, D(4), 1, 1, 1, 1),
           TL(0, NULL, 4));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 2, 3, 2), V(4, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0), 1e-6);
    done(c);
    /* windows, periodic and symmetric */
    static const char *const ops[] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
    const double periodic[3][4] = {{0, 0.5, 1, 0.5}, {4.0 / 46, 25.0 / 46, 1, 25.0 / 46}, {0, 0.34, 1, 0.34}};
    for (int w = 0; w < 3; w++) {
        for (size_t k = 0; k < N_FLOAT; k++) {
            c = mk(17, ops[w], 1, 1, TL(0, NULL, 4));
            ph_node_set_attr_int(c->n, "output_datatype", float_dtypes[k]);
            run_ok(c);
            expect(c->out[0], float_dtypes[k], 1, D(4), periodic[w], tol_of(float_dtypes[k]) + 1e-12);
            done(c);
        }
    }
    c = mk(17, "HannWindow", 1, 1, TL(0, NULL, 4));
    ph_node_set_attr_int(c->n, "periodic", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(4), V(0, 0.75, 0.75, 0), 1e-6);
    done(c);
    /* MelWeightMatrix: [dft/2 + 1, bins], every triangle peaking at 1 */
    c = mk(17, "MelWeightMatrix", 1, 5, TL(0, NULL, 8), TL(0, NULL, 16), TL(0, NULL, 8192), TF(0, NULL, 0),
           TF(0, NULL, 4096));
    run_ok(c);
    ck_assert_uint_eq(ph_tensor_rank(c->out[0]), 2);
    ck_assert_int_eq(ph_tensor_dim(c->out[0], 0), 9);
    ck_assert_int_eq(ph_tensor_dim(c->out[0], 1), 8);
    const float *mw = ph_tensor_data(c->out[0]);
    for (int b = 0; b < 8; b++) {
        float mx = 0;
        for (int s = 0; s < 9; s++)
            mx = mw[s * 8 + b] > mx ? mw[s * 8 + b] : mx;
        ck_assert_msg(mx == 1.0f, "band %d peaks at %g", b, mx);
    }
    done(c);
}
END_TEST

/* ------------------------------------------------------------ linear algebra, normalizations */

START_TEST(det_norms_einsum)
{
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        tc *c = mk(11, "Det", 1, 1, T(dt, 3, D(3, 2, 2), V(1, 2, 3, 4, 2, 0, 0, 3, 1, 2, 2, 4)));
        run_ok(c);
        expect(c->out[0], dt, 1, D(3), V(-2, 6, 0), tol_of(dt));
        done(c);
    }
    tc *c = mk(11, "Det", 1, 1, TF(2, D(3, 3), 0, 1, 2, 1, 0, 3, 4, -3, 8)); /* needs a row exchange */
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 0, NULL, V(-2), 1e-6);
    done(c);
    c = mk(11, "Det", 1, 1, TF(2, D(2, 3), 0, 0, 0, 0, 0, 0));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        c = mk(13, "LRN", 1, 1, T(dt, 4, D(1, 3, 1, 1), V(1, 2, 3)));
        ph_node_set_attr_int(c->n, "size", 3);
        ph_node_set_attr_float(c->n, "alpha", 1);
        ph_node_set_attr_float(c->n, "beta", 1);
        run_ok(c);
        expect(c->out[0], dt, 4, D(1, 3, 1, 1), V(0.375, 2 / (1 + 14.0 / 3), 0.5625), tol_of(dt));
        done(c);
        c = mk(13, "MeanVarianceNormalization", 1, 1, T(dt, 4, D(1, 1, 1, 2), V(1, 3)));
        run_ok(c);
        expect(c->out[0], dt, 4, D(1, 1, 1, 2), V(-1, 1), tol_of(dt) + 1e-8);
        done(c);
    }
    /* BatchNormalization in training mode: batch statistics and running ones */
    c = mk(15, "BatchNormalization", 3, 5, TF(4, D(2, 1, 1, 1), 1, 3), TF(1, D(1), 1), TF(1, D(1), 0),
           TF(1, D(1), 0), TF(1, D(1), 1));
    ph_node_set_attr_int(c->n, "training_mode", 1);
    ph_node_set_attr_float(c->n, "epsilon", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(2, 1, 1, 1), V(-1, 1), 1e-6);
    expect(c->out[1], PH_DT_FLOAT, 1, D(1), V(0.2), 1e-6);
    expect(c->out[2], PH_DT_FLOAT, 1, D(1), V(1), 1e-6);
    done(c);
    /* Einsum with an index repeated in one operand: diagonal and trace */
    c = mk(12, "Einsum", 1, 1, TF(3, D(2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8));
    ph_node_set_attr_string(c->n, "equation", "...ii->...i");
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 2), V(1, 4, 5, 8), 0);
    done(c);
    c = mk(12, "Einsum", 1, 1, TF(2, D(2, 2), 1, 2, 3, 4));
    ph_node_set_attr_string(c->n, "equation", "ii");
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 0, NULL, V(5), 0);
    done(c);
    c = mk(12, "Einsum", 1, 1, TF(2, D(2, 3), 1, 2, 3, 4, 5, 6));
    ph_node_set_attr_string(c->n, "equation", "ii->i");
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
}
END_TEST

/* LpPool, GlobalLpPool, LpNormalization, MaxRoiPool, GroupNormalization,
 * BitwiseNot (values also checked against ONNX Runtime 1.x on random data
 * when they were written). */
START_TEST(lp_roi_group_bitwise)
{
    for (int p = 1; p <= 2; p++) {
        tc *c = mk(11, "LpPool", 1, 1, TF(4, D(1, 1, 2, 2), 3, -4, 0, 0));
        ph_node_set_attr_ints(c->n, "kernel_shape", 2, D(2, 2));
        ph_node_set_attr_int(c->n, "p", p);
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 4, D(1, 1, 1, 1), V(p == 1 ? 7 : 5), 1e-6);
        done(c);
    }
    tc *c = mk(11, "GlobalLpPool", 1, 1, T(PH_DT_DOUBLE, 4, D(1, 2, 1, 2), V(3, 4, 1, -1)));
    run_ok(c);
    expect(c->out[0], PH_DT_DOUBLE, 4, D(1, 2, 1, 1), V(5, sqrt(2)), 1e-12);
    done(c);
    c = mk(11, "LpNormalization", 1, 1, TF(2, D(2, 2), 3, 4, 0, 0));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 2), V(0.6, 0.8, 0, 0), 1e-6);
    done(c);
    c = mk(11, "LpNormalization", 1, 1, T(PH_DT_FLOAT16, 2, D(2, 2), V(3, -4, 1, 0)));
    ph_node_set_attr_int(c->n, "axis", 0);
    ph_node_set_attr_int(c->n, "p", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT16, 2, D(2, 2), V(0.75, -1, 0.25, 0), 1e-3);
    done(c);
    c = mk(11, "MaxRoiPool", 1, 2, TF(4, D(1, 1, 4, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
           TF(2, D(1, 5), 0, 0, 0, 3, 3));
    ph_node_set_attr_ints(c->n, "pooled_shape", 2, D(2, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 1, 2, 2), V(5, 7, 13, 15), 0);
    done(c);
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        c = mk(18, "GroupNormalization", 1, 3, T(dt, 4, D(1, 4, 1, 1), V(1, 3, 5, 9)), T(dt, 1, D(2), V(1, 2)),
               T(dt, 1, D(2), V(0, 1)));
        ph_node_set_attr_int(c->n, "num_groups", 2);
        ph_node_set_attr_float(c->n, "epsilon", 0);
        run_ok(c);
        expect(c->out[0], dt, 4, D(1, 4, 1, 1), V(-1, 1, -1, 3), tol_of(dt));
        done(c);
    }
    c = mk(18, "GroupNormalization", 1, 3, TF(4, D(1, 4, 1, 1), 1, 3, 5, 9), TF(1, D(3), 1, 1, 1), TF(1, D(3), 0, 0, 0));
    ph_node_set_attr_int(c->n, "num_groups", 2);
    ck_assert_int_eq(run(c), PH_EINVAL); /* 3 scales for 2 groups of 4 channels */
    done(c);
    c = mk(18, "BitwiseNot", 1, 1, T(PH_DT_INT8, 1, D(3), V(0, -1, 5)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT8, 1, D(3), V(-1, 0, -6), 0);
    done(c);
    c = mk(18, "BitwiseNot", 1, 1, TF(1, D(1), 1));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    done(c);
}
END_TEST

START_TEST(tfidf_vectorizer)
{
    static const char *const modes[] = {"TF", "IDF", "TFIDF"};
    const double want[3][3] = {{2, 1, 2}, {0.5, 1, 2}, {1, 1, 4}};
    for (int m = 0; m < 3; m++) {
        tc *c = mk(9, "TfIdfVectorizer", 1, 1, TL(1, D(5), 1, 2, 1, 2, 3));
        ph_node_set_attr_string(c->n, "mode", modes[m]);
        ph_node_set_attr_int(c->n, "min_gram_length", 1);
        ph_node_set_attr_int(c->n, "max_gram_length", 2);
        ph_node_set_attr_int(c->n, "max_skip_count", 0);
        ph_node_set_attr_ints(c->n, "pool_int64s", 4, D(1, 3, 1, 2));
        ph_node_set_attr_ints(c->n, "ngram_counts", 2, D(0, 2));
        ph_node_set_attr_ints(c->n, "ngram_indexes", 3, D(0, 1, 2));
        ph_node_set_attr_floats(c->n, "weights", 3, (const float[]){0.5f, 1, 2});
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 1, D(3), want[m], 1e-6);
        done(c);
    }
}
END_TEST

/* ------------------------------------------------------------ com.microsoft */

static tc *ms(const char *op, size_t n_out, size_t n_in, ph_tensor *a, ph_tensor *b, ph_tensor *c3,
              ph_tensor *d4, ph_tensor *e5)
{
    tc *c = mk(13, op, n_out, n_in, a, b, c3, d4, e5);
    ph_node_set_domain(c->n, "com.microsoft");
    ck_assert(ph_eval_supports(c->n));
    return c;
}

START_TEST(microsoft_ops)
{
    static const char *const acts[] = {"Relu", "LeakyRelu", "Clip"};
    const double want[3][4] = {{0, 2, 0, 4}, {-0.1, 2, -0.3, 4}, {-1, 2, -1, 3}};
    const float params[3][2] = {{0, 0}, {0.1f, 0}, {-1, 3}};
    for (int a = 0; a < 3; a++) {
        tc *c = ms("FusedConv", 1, 2, TF(4, D(1, 1, 2, 2), -1, 2, -3, 4), TF(4, D(1, 1, 1, 1), 1), NULL, NULL, NULL);
        ph_node_set_attr_string(c->n, "activation", acts[a]);
        if (a)
            ph_node_set_attr_floats(c->n, "activation_params", a == 1 ? 1 : 2, params[a]);
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 4, D(1, 1, 2, 2), want[a], 1e-6);
        done(c);
    }
    /* FusedGemm: 1*2 - 1*3 + 0.5 = -0.5, then LeakyRelu(0.2) */
    tc *c = ms("FusedGemm", 1, 3, TF(2, D(1, 2), 1, -1), TF(2, D(2, 1), 2, 3), TF(1, D(1), 0.5), NULL, NULL);
    ph_node_set_attr_string(c->n, "activation", "LeakyRelu");
    ph_node_set_attr_float(c->n, "activation_alpha", 0.2f);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 1), V(-0.1), 1e-6);
    done(c);
    /* FusedMatMul: transA, transB, alpha; double */
    c = ms("FusedMatMul", 1, 2, T(PH_DT_DOUBLE, 2, D(2, 1), V(1, 2)), T(PH_DT_DOUBLE, 2, D(2, 1), V(3, 4)), NULL,
           NULL, NULL);
    ph_node_set_attr_int(c->n, "transA", 1);
    ph_node_set_attr_float(c->n, "alpha", 2);
    run_ok(c);
    expect(c->out[0], PH_DT_DOUBLE, 2, D(1, 1), V(22), 0);
    done(c);
    c = ms("FusedMatMul", 1, 2, TF(2, D(1, 2), 1, 2), TF(2, D(1, 2), 3, 4), NULL, NULL, NULL);
    ph_node_set_attr_int(c->n, "transB", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 1), V(11), 0);
    done(c);
    for (size_t k = 0; k < N_FLOAT; k++) {
        int dt = float_dtypes[k];
        c = ms("Gelu", 1, 1, T(dt, 1, D(2), V(1, -1)), NULL, NULL, NULL, NULL);
        run_ok(c);
        expect(c->out[0], dt, 1, D(2), V(0.5 * (1 + erf(M_SQRT1_2)), -0.5 * (1 - erf(M_SQRT1_2))), tol_of(dt));
        done(c);
        double v = 1.5, fg = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        c = ms("FastGelu", 1, 2, T(dt, 2, D(1, 1), V(1)), T(dt, 1, D(1), V(0.5)), NULL, NULL, NULL);
        run_ok(c);
        expect(c->out[0], dt, 2, D(1, 1), V(fg), tol_of(dt));
        done(c);
        /* SkipLayerNormalization: s = [1+1, 2+0] + bias [0, 2] = [2, 4] */
        c = ms("SkipLayerNormalization", 4, 5, T(dt, 2, D(1, 2), V(1, 2)), T(dt, 2, D(1, 2), V(1, 0)),
               T(dt, 1, D(2), V(1, 2)), T(dt, 1, D(2), V(0, 1)), T(dt, 1, D(2), V(0, 2)));
        run_ok(c);
        expect(c->out[0], dt, 2, D(1, 2), V(-1, 3), tol_of(dt) + 1e-6);
        expect(c->out[1], dt, 2, D(1, 1), V(3), tol_of(dt));
        expect(c->out[2], dt, 2, D(1, 1), V(1), tol_of(dt) + 1e-6);
        expect(c->out[3], dt, 2, D(1, 2), V(2, 4), tol_of(dt));
        done(c);
    }
    /* an activation ORT's FusedConv does not have */
    c = ms("FusedConv", 1, 2, TF(4, D(1, 1, 1, 1), 1), TF(4, D(1, 1, 1, 1), 1), NULL, NULL, NULL);
    ph_node_set_attr_string(c->n, "activation", "Swish");
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    done(c);
}
END_TEST

/* NaN, infinite and huge coordinates, boxes, scales and values: a defined
 * result or an error, never undefined behaviour (the sanitized build runs
 * this) nor a runaway loop. */
START_TEST(hostile_values)
{
    const double nan = NAN, inf = INFINITY;
    tc *c = mk(16, "GridSample", 1, 2, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(4, D(1, 1, 3, 2), nan, 0, inf, -inf, 1e300, -1e300));
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 3; p++) {
            ph_node_set_attr_string(c->n, "mode", (const char *[]){"bilinear", "nearest", "bicubic"}[m]);
            ph_node_set_attr_string(c->n, "padding_mode", (const char *[]){"zeros", "border", "reflection"}[p]);
            run(c);
            ph_tensor_free(c->out[0]);
            c->out[0] = NULL;
        }
    done(c);
    c = mk(16, "RoiAlign", 1, 3, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(2, D(2, 4), nan, 0, inf, 1, -1e300, 0, 1e300, 1e300),
           TL(1, D(2), 0, 0));
    ck_assert_int_ne(run(c), 0); /* a 1e300 box: refused, not sampled 1e300 times */
    done(c);
    c = mk(16, "RoiAlign", 1, 3, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(2, D(1, 4), nan, nan, nan, nan), TL(1, D(1), 0));
    run_ok(c);
    done(c);
    c = mk(11, "MaxRoiPool", 1, 2, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(2, D(2, 5), 0, nan, -inf, inf, 1e300, nan, 0, 0, 1, 1));
    ph_node_set_attr_ints(c->n, "pooled_shape", 2, D(2, 2));
    ck_assert_int_eq(run(c), PH_EINVAL); /* batch index NaN */
    done(c);
    c = mk(11, "MaxRoiPool", 1, 2, TF(4, D(1, 1, 2, 2), 1, 2, 3, 4), TF(2, D(1, 5), 0, nan, -inf, inf, 1e300));
    ph_node_set_attr_ints(c->n, "pooled_shape", 2, D(2, 2));
    run_ok(c);
    done(c);
    c = mk(11, "DynamicQuantizeLinear", 3, 1, TF(1, D(3), nan, inf, 1));
    run_ok(c);
    done(c);
    c = mk(9, "Upsample", 1, 2, TF(1, D(2), 1, 2), TF(1, D(1), inf));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    c = mk(17, "MelWeightMatrix", 1, 5, TL(0, NULL, 4), TL(0, NULL, 8), TL(0, NULL, 100), TF(0, NULL, nan),
           TF(0, NULL, inf));
    run(c);
    done(c);
    c = mk(13, "QuantizeLinear", 1, 3, TF(1, D(3), nan, inf, -inf), TF(0, NULL, 0), T(PH_DT_INT8, 0, NULL, V(0)));
    run_ok(c);
    done(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("eval_more");
    TCase *t = tcase_create("kernels");
    tcase_add_test(t, scatter_nd_and_gather_nd);
    tcase_add_test(t, scatter_elements_one_hot_compress);
    tcase_add_test(t, reverse_trilu_eyelike_cumsum);
    tcase_add_test(t, unique);
    tcase_add_test(t, losses);
    tcase_add_test(t, rnn);
    tcase_add_test(t, rnn_activations);
    tcase_add_test(t, gru_and_lstm);
    tcase_add_test(t, quantize_dequantize);
    tcase_add_test(t, integer_products);
    tcase_add_test(t, non_max_suppression);
    tcase_add_test(t, roi_align_and_grid_sample);
    tcase_add_test(t, max_unpool_and_upsample);
    tcase_add_test(t, dft_stft_windows);
    tcase_add_test(t, det_norms_einsum);
    tcase_add_test(t, lp_roi_group_bitwise);
    tcase_add_test(t, tfidf_vectorizer);
    tcase_add_test(t, microsoft_ops);
    tcase_add_test(t, hostile_values);
    suite_add_tcase(s, t);
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
