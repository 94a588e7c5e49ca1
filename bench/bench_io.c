/* bench/bench_io.c - time one ONNX load and one save through libpasshost and
 * report memory.
 *
 *   bench_io IN.onnx OUT.onnx
 *
 * Runs no pass.  Prints one line of key=value figures on stdout:
 *
 *   load_ms save_ms         wall time of ph_model_load / ph_model_save
 *   fsync_ms                part of save_ms spent in fsync(2) (see below)
 *   nodes inits             size of the loaded main graph
 *   rss_load_kb             resident set right after load (VmRSS)
 *   rss_load_anon_kb        ... of which heap/anonymous (RssAnon)
 *   rss_load_file_kb        ... of which file pages, i.e. the mapped model (RssFile)
 *   peak_load_kb            ru_maxrss right after load
 *   peak_kb                 ru_maxrss at the end (after save)
 *   base_kb                 ru_maxrss at the start of main: the process itself
 *                           (libc, libprotobuf-c, libpasshost), no model yet
 *
 * ph_model_save fsyncs the output before renaming it (durability), which cp
 * does not.  To show what that costs, this program defines fsync itself: the
 * executable's definition interposes on libc's for libpasshost's call, and
 * times the real fsync (found with dlsym(RTLD_NEXT)).  Behaviour is
 * unchanged; only the time is recorded.
 *
 * Exit status 0, or 1 with a message when load or save fails.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss; /* kilobytes on Linux */
}

static double fsync_total_ms;

int fsync(int fd)
{
    static int (*real_fsync)(int);
    if (!real_fsync)
        real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    if (!real_fsync)
        return 0; /* cannot happen with glibc; then skip durability, not fail */
    double t0 = now_ms();
    int rc = real_fsync(fd);
    fsync_total_ms += now_ms() - t0;
    return rc;
}

/* A "Key:   123 kB" line of /proc/self/status, or -1. */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_io IN.onnx OUT.onnx\n");
        return 2;
    }
    long base = peak_kb();
    ph_error err = {0};
    ph_model *m = NULL;

    double t0 = now_ms();
    int rc = ph_model_load(argv[1], &m, &err);
    double t1 = now_ms();
    if (rc != 0) {
        fprintf(stderr, "bench_io: load failed: %s\n", err.message);
        return 1;
    }
    long rss_load = status_kb("VmRSS"), rss_anon = status_kb("RssAnon");
    long rss_file = status_kb("RssFile"), peak_load = peak_kb();
    size_t nodes = ph_model_node_count(m);
    size_t inits = ph_graph_initializer_count(ph_model_graph(m));

    double t2 = now_ms();
    rc = ph_model_save(m, argv[2], &err);
    double t3 = now_ms();
    if (rc != 0) {
        fprintf(stderr, "bench_io: save failed: %s\n", err.message);
        ph_model_free(m);
        return 1;
    }
    long peak = peak_kb();
    ph_model_free(m);

    printf("load_ms=%.2f save_ms=%.2f fsync_ms=%.2f nodes=%zu inits=%zu rss_load_kb=%ld "
           "rss_load_anon_kb=%ld rss_load_file_kb=%ld peak_load_kb=%ld peak_kb=%ld base_kb=%ld\n",
           t1 - t0, t3 - t2, fsync_total_ms, nodes, inits, rss_load, rss_anon, rss_file, peak_load,
           peak, base);
    return 0;
}
