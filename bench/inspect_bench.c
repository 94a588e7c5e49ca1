/* bench/inspect_bench.c - what the summary table costs on a big model:
 * host_model_info_take (the op-type histogram, inputs, outputs,
 * initializers) and the table itself.  A run that prints its report (no -q)
 * or writes --report-json/--report-html does this twice: for the input as
 * loaded and for the output.
 *
 *   cc -std=c11 -D_GNU_SOURCE -O2 -Isdk/include -Ihost bench/inspect_bench.c \
 *      build/lib/libphhost.a -Lbuild/lib -lpasshost -linih -ldl -lm \
 *      -Wl,-rpath,$PWD/build/lib -o build/bench/inspect_bench
 *   build/bench/gen_big_model nodes /tmp/big.onnx 1000000
 *   build/bench/inspect_bench /tmp/big.onnx
 */
#include <stdio.h>

#include "report/inspect.h"
#include "base/util.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: inspect_bench MODEL.onnx\n");
        return 2;
    }
    ph_model *m;
    ph_error e = {0};
    double t0 = host_now_ms();
    if (ph_model_load(argv[1], &m, &e)) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    double t1 = host_now_ms();
    printf("load %.1f ms\n", t1 - t0);
    for (int i = 0; i < 3; i++) {
        host_model_info info;
        double a = host_now_ms();
        host_model_info_take(&info, m, argv[1], argv[1]);
        double b = host_now_ms();
        FILE *devnull = fopen("/dev/null", "w");
        host_model_info two[2] = {info, info};
        host_inspect_table(devnull, two, 2, 1);
        fclose(devnull);
        double c = host_now_ms();
        printf("model info %.1f ms (%zu nodes, %zu op types), table %.2f ms\n", b - a, info.nodes,
               info.n_ops, c - b);
        host_model_info_free(&info);
    }
    ph_model_free(m);
    return 0;
}
