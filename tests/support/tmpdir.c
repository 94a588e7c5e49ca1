/* tests/support/tmpdir.c - a scratch folder per test and small file
 * helpers (see tmpdir.h). */
#include "tmpdir.h"

#include <check.h>
#include <dirent.h>
#include <string.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#ifndef PH_BUILD_DIR
#define PH_BUILD_DIR "build"
#endif

static char tk_dir[256];

const char *tk_tmpdir_make(const char *name)
{
    snprintf(tk_dir, sizeof tk_dir, "/tmp/ph_test_%s.XXXXXX", name);
    ck_assert_msg(mkdtemp(tk_dir) != NULL, "cannot make %s", tk_dir);
    return tk_dir;
}

static int tk_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void tk_tmpdir_remove(void)
{
    nftw(tk_dir, tk_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *tk_tpath(const char *name)
{
    static char bufs[64][600];
    static int next;
    char *b = bufs[next++ % 64];
    snprintf(b, 600, "%s/%s", tk_dir, name);
    return b;
}

const char *tk_tmpdir_plugins(const char *const *names)
{
    static char dir[300];
    snprintf(dir, sizeof dir, "%s/plugins", tk_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    tk_copy_test_plugins(dir, names);
    return dir;
}

void tk_copy_test_plugins(const char *dir, const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        char from[600];
        snprintf(from, sizeof from, "%s/test-plugins/%s.so", PH_BUILD_DIR, names[i]);
        tk_copy_file(from, dir);
    }
}

void tk_copy_file(const char *from, const char *to)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

char *tk_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return buf;
}

int tk_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int tk_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open the folder %s", dir);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

const char *tk_data_file(const char *name)
{
    DIR *d = opendir(tk_dir);
    ck_assert_ptr_nonnull(d);
    static char found[700];
    int n = 0;
    size_t len = strlen(name);
    for (struct dirent *de; (de = readdir(d));) {
        size_t k = strlen(de->d_name);
        if (k > len + 6 && strncmp(de->d_name, name, len) == 0 && de->d_name[len] == '.' &&
            strcmp(de->d_name + k - 5, ".data") == 0) {
            snprintf(found, sizeof found, "%s/%s", tk_dir, de->d_name);
            n++;
        }
    }
    closedir(d);
    ck_assert_msg(n <= 1, "%d data files of %s", n, name);
    return n ? found : NULL;
}
