/* fuzz/load.c - libFuzzer target: the ONNX loader, from bytes.
 *
 * Each input is a model file.  It is loaded (ph_model_load), and what loads
 * is checked, its shapes inferred, saved and loaded again:
 *   - a refused model has a non-empty message naming the file, and no model;
 *   - a loaded model passes ph_graph_verify;
 *   - shape inference may report a contradiction, never crash;
 *   - a model that saves loads back, and a failed save leaves no file (no
 *     output, no temporary) behind;
 *   - the input file is never written;
 *   - ph_model_load_memory on the same bytes agrees: it refuses what the
 *     file load refuses (and a model with external data), and a model
 *     loaded both ways saves to the same bytes.
 * ASan, UBSan and LeakSanitizer turn any memory error, undefined behaviour
 * or leak into a crash.  Seeds: fuzz/corpus/load. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/fuzz_support.h"

static size_t load_count_entries(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *de; (de = readdir(d));)
        n += de->d_name[0] != '.' || (de->d_name[1] && strcmp(de->d_name, "..") != 0);
    closedir(d);
    return n;
}

static int load_same_bytes(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint8_t *buf = malloc(size + 1);
    size_t got = buf ? fread(buf, 1, size + 1, f) : 0;
    int same = buf && got == size && (size == 0 || memcmp(buf, data, size) == 0);
    free(buf);
    fclose(f);
    return same;
}

static char *load_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fz_fail("cannot read %s back", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc((size_t)n + 1);
    if (!d || fread(d, 1, (size_t)n, f) != (size_t)n)
        fz_fail("cannot read %s back", path);
    fclose(f);
    *len = (size_t)n;
    return d;
}

/* The bytes through ph_model_load_memory; from_file is what ph_model_load
 * made of them (NULL: refused). */
static void load_check_memory(const uint8_t *data, size_t size, ph_model *from_file)
{
    ph_model *m = NULL;
    ph_error e = {0};
    if (ph_model_load_memory(data, size, "memory.onnx", &m, &e) != 0) {
        if (m)
            fz_fail("a model refused from memory came with a model");
        if (!strstr(e.message, "memory.onnx"))
            fz_fail("refusal from memory without the model's name: '%s'", e.message);
        if (from_file && !strstr(e.message, "loaded from memory"))
            fz_fail("loads from its file but not from memory: %s", e.message);
        return;
    }
    if (!from_file)
        fz_fail("loads from memory but not from its file");
    const char *a = fz_path("file.onnx"), *b = fz_path("memory.onnx");
    ph_error ea = {0}, eb = {0};
    int ra = ph_model_save(from_file, a, &ea), rb = ph_model_save(m, b, &eb);
    if ((ra == 0) != (rb == 0))
        fz_fail("saves differently from its file and from memory: '%s' / '%s'", ea.message, eb.message);
    if (ra == 0) {
        size_t la, lb;
        char *da = load_slurp(a, &la), *db = load_slurp(b, &lb);
        if (la != lb || memcmp(da, db, la) != 0)
            fz_fail("loaded from its file and from memory, it saves to other bytes");
        free(da);
        free(db);
        unlink(a);
        unlink(b);
    }
    ph_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = fz_path("model.onnx"), *out = fz_path("out.onnx");
    fz_write(in, data, size);
    size_t entries = load_count_entries(fz_dir());
    ph_model *m = NULL;
    ph_error e = {0};
    if (ph_model_load(in, &m, &e) != 0) {
        if (m)
            fz_fail("a refused model came with a model");
        if (!e.message[0] || !strstr(e.message, in))
            fz_fail("refusal without a message naming the file: '%s'", e.message);
        load_check_memory(data, size, NULL);
        return 0;
    }
    load_check_memory(data, size, m);
    ph_graph *g = ph_model_graph(m);
    if (ph_graph_verify(g, &e) != 0)
        fz_fail("a loaded model does not verify: %s", e.message);
    ph_error ie = {0};
    if (ph_graph_infer_shapes(g, &ie) != 0 && !ie.message[0])
        fz_fail("shape inference failed without a message");
    if (ph_model_save(m, out, &e) == 0) {
        ph_model *again = NULL;
        if (ph_model_load(out, &again, &e) != 0)
            fz_fail("a saved model does not load back: %s", e.message);
        ph_model_free(again);
        unlink(out);
    } else {
        if (!e.message[0])
            fz_fail("save failed without a message");
        if (load_count_entries(fz_dir()) != entries)
            fz_fail("a failed save left a file behind: %s", e.message);
    }
    ph_model_free(m);
    if (!load_same_bytes(in, data, size))
        fz_fail("the input file was modified");
    return 0;
}
