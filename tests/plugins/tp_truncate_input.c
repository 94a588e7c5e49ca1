/* tests/plugins/tp_truncate_input.c - what happens when someone truncates
 * the input model while passhost has it mapped: the pass truncates the file
 * named by its `path` parameter to 0 bytes, then (read = true) reads the
 * bytes of every initializer, which now lie past the end of the file
 * (SIGBUS); with read = false it changes nothing and leaves the mapped
 * bytes to the save.  passhost must end with a one-line error naming the
 * file, exit 3, and write nothing. */
#include <passhost/passhost.h>
#include <unistd.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    const char *path = ph_params_string(p, "path");
    if (!path || !*path)
        return 0;
    if (truncate(path, 0) != 0)
        return ph_ctx_error(ctx, PH_EIO, "cannot truncate %s", path);
    if (!ph_params_bool(p, "read"))
        return 0;
    volatile unsigned sum = 0;
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++) {
        const ph_tensor *t = ph_value_const(ph_graph_initializer(g, i));
        const unsigned char *d = t ? ph_tensor_data(t) : NULL;
        for (size_t k = 0; d && k < ph_tensor_nbytes(t); k += 512)
            sum += d[k];
    }
    return 0;
}

static const ph_param_def params[] = {
    {"path", PH_PARAM_STRING, "", "the file to truncate"},
    {"read", PH_PARAM_BOOL, "true", "read every initializer afterwards"},
    {NULL, 0, NULL, NULL}};

PH_PASS_DEFINE(.name = "tp_truncate_input", .summary = "truncates the input under passhost",
               .stages = PH_STAGE_OPTIMIZE, .run_once = 1, .params = params, .run = run)
