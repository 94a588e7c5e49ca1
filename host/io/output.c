/* host/io/output.c - the output, checked before anything is loaded
 * (output.h). */
#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "base/exit.h"
#include "passhost/host.h"

static const char *kind_of(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFDIR: return "a folder";
    }
    return "not a regular file";
}

int host_output_has_data_file(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    DIR *d = opendir(dir);
    size_t len = strlen(name);
    int found = 0;
    for (struct dirent *de; d && !found && (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        found = n > len + 6 && strncmp(de->d_name, name, len) == 0 && de->d_name[len] == '.' &&
                strcmp(de->d_name + n - 5, ".data") == 0;
    }
    if (d)
        closedir(d);
    return found;
}

int host_output_check(const char *path, int stdout_fd, host_output_kind *kind, ph_error *err)
{
    struct stat st, out;
    *kind = HOST_OUTPUT_FILE;
    if (stat(path, &st) == 0) {
        if (stdout_fd >= 0 && fstat(stdout_fd, &out) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino &&
            !S_ISDIR(st.st_mode)) {
            *kind = HOST_OUTPUT_STDOUT;
            return 0;
        }
        if (S_ISDIR(st.st_mode))
            return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: the output is a folder; give a file name "
                                "(such as %s/out.onnx)", path, path);
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            *kind = HOST_OUTPUT_STREAM;
            return 0;
        }
        if (!S_ISREG(st.st_mode))
            return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: the output is %s; passhost writes a file, a "
                                "character device or a FIFO", path, kind_of(st.st_mode));
    } else if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: the output is a symbolic link to nothing", path);
    }
    char folder[PATH_MAX];
    ph_error e = {0};
    if (ph_staging_make(path, 0, folder, sizeof folder, &e) != 0) {
        if (e.message[0] && strstr(e.message, path))
            return ph_error_set(err, HOST_EXIT_OUTPUT, "%.500s", e.message);
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %.400s", path, e.message);
    }
    ph_staging_remove(folder);
    return 0;
}
