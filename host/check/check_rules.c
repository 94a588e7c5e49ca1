/* host/check/check_rules.c - `passhost --check-rules`: load one pattern
 * pass (a .so path, or a pass name looked up beside the program in
 * ../plugins/NAME.so) and run the rule checker on it.  One line per rule:
 * forms, instances generated, refused by shape inference or the
 * evaluator, positives, matched, rewritten, refused by the condition,
 * negatives, rewritten models the evaluator cannot run, failures; then the first failure of each rule with its
 * reproducer, and "rules covered: K of N" (a rule is covered when at least
 * one of its instances was kept). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/check_rules.h"
#include "base/exit.h"
#include "passhost/rulecheck.h"
#include "passhost/testing.h"

static int usage(const char *msg)
{
    fprintf(stderr,
            "passhost: %s (usage: passhost --check-rules PLUGIN [--instances N] [--seed S] [--rule NAME] "
            "[--repro-dir DIR])\n",
            msg);
    return HOST_EXIT_USAGE;
}

/* PLUGIN as a path: itself when it names a file, else ../plugins/NAME.so
 * beside the program. */
static void plugin_path(const char *arg, char *buf, size_t size)
{
    snprintf(buf, size, "%s", arg);
    if (strchr(arg, '/') || access(arg, R_OK) == 0)
        return;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    snprintf(buf, size, "%.2000s/../plugins/%.200s.so", exe, arg);
}

int host_check_rules_main(int argc, char **argv, FILE *out)
{
    ph_rulecheck_options o = {.size = sizeof o, .seed = 1};
    const char *plugin = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--instances") && v) {
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 1000000)
                return usage("--instances takes a number from 1 to 1000000");
            o.instances = (int)n;
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            o.seed = strtoull(v, &end, 10);
            if (*end)
                return usage("--seed takes a number");
            i++;
        } else if (!strcmp(a, "--rule") && v) {
            o.only = v;
            i++;
        } else if (!strcmp(a, "--repro-dir") && v) {
            o.repro_dir = v;
            i++;
        } else if (a[0] != '-' && !plugin) {
            plugin = a;
        } else {
            char msg[300];
            snprintf(msg, sizeof msg, "--check-rules: unexpected argument '%.200s'", a);
            return usage(msg);
        }
    }
    if (!plugin)
        return usage("--check-rules needs a plugin (a .so file or a pass name)");
    char path[4096];
    plugin_path(plugin, path, sizeof path);
    ph_error err = {0};
    ph_test_pass *tp = NULL;
    if (ph_test_load_pass(path, NULL, &tp, &err) < 0) {
        fprintf(stderr, "passhost: --check-rules: %s\n", err.message);
        return HOST_EXIT_PLUGIN;
    }
    const ph_pass_desc *desc = ph_test_pass_desc(tp);
    if (!desc->rules) {
        fprintf(stderr, "passhost: --check-rules: pass %s has no rules (it is not a pattern pass)\n", desc->name);
        ph_test_pass_free(tp);
        return HOST_EXIT_PLUGIN;
    }
    size_t cap = 0;
    while (desc->rules[cap].pattern)
        cap++;
    ph_rulecheck_rule *r = calloc(cap ? cap : 1, sizeof *r);
    int n = r ? ph_rulecheck_run(desc, &o, r, cap, &err) : PH_ENOMEM;
    if (n < 0) {
        fprintf(stderr, "passhost: --check-rules: %s\n", r ? err.message : "out of memory");
        free(r);
        ph_test_pass_free(tp);
        return HOST_EXIT_PLUGIN;
    }
    int failed = 0, covered = 0;
    fprintf(out, "%-32s %5s %6s %8s %6s %7s %9s %7s %6s %8s %8s %9s\n", desc->name, "forms", "tried", "rejected",
            "pos", "matched", "rewritten", "refused", "neg", "unjudged", "failures", "in_body");
    for (int i = 0; i < n; i++) {
        char body[32];
        snprintf(body, sizeof body, "%d/%d", r[i].in_body_rewritten, r[i].in_body);
        fprintf(out, "  %-30.30s %5zu %6d %8d %6d %7d %9d %7d %6d %8d %8d %9s\n", r[i].name, r[i].forms, r[i].tried,
                r[i].rejected, r[i].positives, r[i].matched, r[i].rewritten, r[i].refused, r[i].negatives,
                r[i].unjudged, r[i].failures, body);
        covered += r[i].positives + r[i].negatives > 0;
        failed += r[i].failures > 0;
    }
    for (int i = 0; i < n; i++)
        if (r[i].failures)
            fprintf(out, "FAIL %s/%s: %s\n", desc->name, r[i].name, r[i].failure);
    fprintf(out, "%s: rules %d, rules covered %d, rules failing %d\n", desc->name, n, covered, failed);
    free(r);
    ph_test_pass_free(tp);
    return failed ? HOST_EXIT_MISMATCH : HOST_EXIT_OK;
}
