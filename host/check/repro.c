/* host/check/repro.c - the reproducer folder of --bisect-out and --crash-out
 * (repro.h). */
#include "repro.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/exit.h"
#include "base/util.h"
#include "config/effective.h"

int host_repro_open(host_repro *r, const char *dir, const char *option, ph_error *err)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    r->option = option;
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return ph_error_set(err, HOST_EXIT_OUTPUT, "%s %s: not a folder", option, dir);
    } else if (mkdir(dir, 0777) != 0) {
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s %s: %s", option, dir, strerror(errno));
    }
    char *adir = realpath(dir, NULL);
    r->config = host_xasprintf("%s/config.ini", adir ? adir : dir);
    free(adir);
    return 0;
}

int host_repro_config(host_repro *r, const host_config *cfg, const host_plan *plan,
                      const host_verify_config *vcfg, ph_error *err)
{
    char *comment = host_xasprintf("; The effective configuration of a passhost run, written by "
                                   "%s.\n; `passhost config.ini --max-rewrites N` applies its "
                                   "first N rewrites (README.txt).\n", r->option);
    host_effective e;
    host_effective_make(&e, cfg, plan, vcfg, "out.onnx", comment);
    int rc = host_effective_write(&e, r->dir, "config.ini", err);
    host_effective_free(&e);
    free(comment);
    return rc;
}

int host_repro_copy(host_repro *r, const char *from, const char *name, ph_error *err)
{
    char *to = host_xasprintf("%s/%s", r->dir, name);
    int rc = 0;
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (in < 0)
        rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", from, strerror(errno));
    else if (out < 0)
        rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", to, strerror(errno));
    char buf[1 << 16];
    ssize_t n;
    while (!rc && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", from, strerror(errno));
            break;
        }
        for (ssize_t off = 0, w; !rc && off < n; off += w > 0 ? w : 0)
            if ((w = write(out, buf + off, (size_t)(n - off))) < 0 && errno != EINTR)
                rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", to, strerror(errno));
    }
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0 && !rc)
        rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", to, strerror(errno));
    free(to);
    return rc;
}

FILE *host_repro_readme(host_repro *r, ph_error *err)
{
    r->readme_path = host_xasprintf("%s/README.txt", r->dir);
    r->readme = fopen(r->readme_path, "w");
    if (!r->readme)
        ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", r->readme_path, strerror(errno));
    return r->readme;
}

/* One shell word. */
static void put_word(FILE *f, const char *w)
{
    if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "_-./=:,+@%") == strlen(w)) {
        fputs(w, f);
        return;
    }
    fputc('\'', f);
    for (const char *c = w; *c; c++)
        *c == '\'' ? fputs("'\\''", f) : fputc(*c, f);
    fputc('\'', f);
}

void host_repro_command(host_repro *r, const char *program, const char *args, const char *comment)
{
    fprintf(r->readme, "  %s ", program ? program : "passhost");
    put_word(r->readme, r->config);
    if (comment)
        fprintf(r->readme, " %-26s  # %s\n", args, comment);
    else
        fprintf(r->readme, " %s\n", args);
}

void host_repro_argv(host_repro *r, int argc, char *const *argv)
{
    fputs("\nThe original command line\n ", r->readme);
    for (int i = 0; i < argc; i++) {
        fputc(' ', r->readme);
        put_word(r->readme, argv[i]);
    }
    fputc('\n', r->readme);
}

int host_repro_close(host_repro *r, int rc, ph_error *err)
{
    if (r->readme && fclose(r->readme) != 0 && !rc)
        rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", r->readme_path, strerror(errno));
    free(r->readme_path);
    free(r->config);
    memset(r, 0, sizeof *r);
    return rc;
}
