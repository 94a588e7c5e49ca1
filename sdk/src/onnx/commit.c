/* sdk/src/onnx/commit.c - a saved model put in place with one commit point.
 *
 * A save is written into a staging folder of its own beside the output,
 * .NAME.tmp.PID.XXXXXX/ (ph_staging_make), holding the model and, when it
 * has external data, one data file whose name is unique to this save
 * (NAME.XXXXXX.data, as the model's `location` says).  ph_model_commit then
 *
 *   1. moves each data file of the staging folder (every file but the
 *      model) into the output's folder (renameat2 RENAME_NOREPLACE: a new
 *      name, nothing replaced);
 *   2. moves the model over the output with renameat2 RENAME_EXCHANGE:
 *      the commit point.  The model that was there comes back under the
 *      staged name, so the commit knows exactly which model it replaced,
 *      also when other runs write the same output at the same time;
 *   3. removes the data files that replaced model named (those of this
 *      output's naming, NAME.data and NAME.*.data, in its folder, that the
 *      new model does not name and the caller does not keep), then the
 *      replaced model.  The replaced model is only read when the folder
 *      holds such a file at all.
 *
 * Before step 2 the old pair is whole and in place; after it the new pair
 * is.  A failure before or in step 2 removes the moved data files again.
 * A process killed between steps 1 and 2 (two system calls) leaves its new
 * data file beside the old pair; killed after step 2, the replaced model's
 * data files.  A filesystem without RENAME_EXCHANGE gets a plain rename
 * after the old model was opened (two runs racing may then leave an old
 * data file, never a mixed pair).
 *
 * The staging folder's PID is the process that will commit it: a folder
 * whose process is gone (killed by SIGKILL while it wrote) is removed by
 * the next ph_staging_make in that folder. */
#include <dirent.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "wire.h"

/* ------------------------------------------------------------ staging */

/* "dir" and "name" of path (dir "." when it has no '/'). */
static int split_path(const char *path, char *dir, size_t size, const char **name)
{
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    int n = slash ? snprintf(dir, size, "%.*s", (int)(slash == path ? 1 : slash - path), path)
                  : snprintf(dir, size, ".");
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Each entry of the folder open on fd (not "." and ".."), with its type
 * (DT_DIR, DT_REG... or DT_UNKNOWN), through getdents64 and a buffer on the
 * stack: no allocation (a failed malloc cannot change what is removed) and
 * only system calls (a signal handler may remove a staging folder). */
static void each_entry(int fd, void (*fn)(int fd, const char *name, unsigned char type, void *user), void *user)
{
    char buf[4096] __attribute__((aligned(8)));
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long off = 0; off < n;) {
            const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
            if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                fn(fd, de->d_name, de->d_type, user);
            off += de->d_reclen;
        }
}

static void remove_tree_levels(int dirfd_at, const char *folder, int levels);

static void remove_entry(int fd, const char *name, unsigned char type, void *user)
{
    int levels = *(const int *)user;
    if (unlinkat(fd, name, 0) != 0 && errno == EISDIR && levels > 1)
        remove_tree_levels(fd, name, levels - 1);
    (void)type;
}

/* Remove what folder holds, then folder: plain files, and folders up to
 * `levels` deep (a staging folder holds files; passhost's folder of
 * standard input and output holds the staging folder of its output). */
static void remove_tree_levels(int dirfd_at, const char *folder, int levels)
{
    int fd = openat(dirfd_at, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        each_entry(fd, remove_entry, &levels);
        close(fd);
    }
    unlinkat(dirfd_at, folder, AT_REMOVEDIR);
}

static void remove_tree(int dirfd_at, const char *folder) { remove_tree_levels(dirfd_at, folder, 3); }

/* The process id in a staging name ".NAME.tmp.PID.XXXXXX", or 0. */
static long staging_pid(const char *entry)
{
    size_t len = strlen(entry);
    if (entry[0] != '.' || len < 14 || entry[len - 7] != '.')
        return 0;
    const char *end = entry + len - 7; /* the '.' before XXXXXX */
    const char *p = end;
    while (p > entry && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == end || end - p > 9 || p - entry < 5 || memcmp(p - 5, ".tmp.", 5) != 0)
        return 0;
    return strtol(p, NULL, 10);
}

static void remove_if_stale(int fd, const char *name, unsigned char type, void *user)
{
    (void)type, (void)user;
    long pid = staging_pid(name);
    if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return; /* not ours, or its process (or one with its number) is alive */
    struct stat st;
    if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    if (S_ISDIR(st.st_mode))
        remove_tree(fd, name);
    else if (S_ISREG(st.st_mode))
        unlinkat(fd, name, 0);
}

/* Remove the staging folders (and files) in dir whose process is gone. */
static void remove_stale(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    each_entry(fd, remove_if_stale, NULL);
    close(fd);
}

int onnx_output_target(const char *path, char *target, size_t size)
{
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char real[PATH_MAX];
        if (!realpath(path, real))
            return -1;
        return (size_t)snprintf(target, size, "%s", real) >= size ? -1 : 0;
    }
    return (size_t)snprintf(target, size, "%s", path) >= size ? -1 : 0;
}

PH_API int ph_staging_make(const char *path, long pid, char *folder, size_t size, ph_error *err)
{
    char dir[PATH_MAX], target[PATH_MAX];
    const char *name;
    if (!path || onnx_output_target(path, target, sizeof target) != 0)
        return ph_error_set(err, PH_EIO, "%s: cannot create output: a symbolic link to nothing",
                            path ? path : "(null)");
    if (split_path(target, dir, sizeof dir, &name) || !*name)
        return ph_error_set(err, PH_EINVAL, "%s: not a file name", path);
    remove_stale(dir);
    int n = snprintf(folder, size, "%s/.%s.tmp.%ld.XXXXXX", dir, name, pid > 0 ? pid : (long)getpid());
    if (n < 0 || (size_t)n >= size)
        return ph_error_set(err, PH_EINVAL, "%s: path too long", path);
    if (!mkdtemp(folder))
        return ph_error_set(err, PH_EIO, "%s: cannot create output: %s", path, strerror(errno));
    return 0;
}

PH_API void ph_staging_remove(const char *folder)
{
    if (folder && *folder)
        remove_tree(AT_FDCWD, folder);
}

/* ------------------------------------------------------------- commit */

/* The external-data locations named by the model file open on fd (its
 * bytes mapped for the walk) into *names (NULL, *n 0: none).  0, or -1
 * when the file cannot be read or PH_ENOMEM. */
static int locations_of_fd(int fd, char ***names, size_t *n)
{
    struct stat st;
    *names = NULL;
    *n = 0;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    if (st.st_size <= 0)
        return 0;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    int rc = onnx_external_locations(p, (size_t)st.st_size, names, n);
    munmap(p, (size_t)st.st_size);
    return rc;
}

/* A data file of this output's naming (NAME.data, NAME.*.data) in its
 * folder: the only kind the commit removes. */
static int our_data_name(const char *loc, const char *name)
{
    size_t ln = strlen(loc), nn = strlen(name);
    return !strchr(loc, '/') && ln > nn + 5 && strncmp(loc, name, nn) == 0 && loc[nn] == '.' &&
           strcmp(loc + ln - 5, ".data") == 0;
}

/* The data files a save put in its staging folder (every file but the
 * model), found without allocating. */
typedef struct staged_files {
    const char *model; /* the model's name: not a data file */
    char names[8][NAME_MAX + 1];
    int n, too_many;
} staged_files;

static void add_staged(int fd, const char *name, unsigned char type, void *user)
{
    (void)fd, (void)type;
    staged_files *f = user;
    if (strcmp(name, f->model) == 0)
        return;
    if (f->n == 8 || strlen(name) > NAME_MAX) {
        f->too_many = 1;
        return;
    }
    snprintf(f->names[f->n++], sizeof f->names[0], "%s", name);
}

static int is_staged(const staged_files *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->names[i], name) == 0)
            return 1;
    return 0;
}

/* A data file of the output's naming, other than the new ones, is there:
 * only then is the replaced model read for the data files it names. */
typedef struct candidates {
    const char *name;
    const staged_files *fresh;
    int found;
} candidates;

static void find_candidate(int fd, const char *entry, unsigned char type, void *user)
{
    (void)fd, (void)type;
    candidates *c = user;
    if (!c->found && our_data_name(entry, c->name) && !is_staged(c->fresh, entry))
        c->found = 1;
}

/* Remove the data files of the model that was replaced (open on fd). */
static void remove_old_data(int old_fd, const char *dir, const char *name, const staged_files *fresh,
                            int (*keep)(void *user, const char *path), void *user)
{
    candidates c = {name, fresh, 0};
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        each_entry(dfd, find_candidate, &c);
        close(dfd);
    }
    if (!c.found)
        return; /* nothing of this naming there: no need to read the old model */
    size_t n = 0;
    char **old = NULL;
    locations_of_fd(old_fd, &old, &n); /* unreadable, out of memory: its data files stay */
    for (size_t i = 0; i < n; i++) {
        char p[PATH_MAX];
        if (!our_data_name(old[i], name) || is_staged(fresh, old[i]) ||
            (size_t)snprintf(p, sizeof p, "%s/%s", dir, old[i]) >= sizeof p)
            continue;
        if (!keep || !keep(user, p))
            unlink(p);
    }
    onnx_free_strings(old, n);
}

static int exchange_supported(int e) { return e != EINVAL && e != ENOSYS && e != EOPNOTSUPP; }

PH_API int ph_model_commit(const char *staged, const char *path, int (*keep)(void *user, const char *path),
                           void *user, ph_error *err)
{
    char sdir[PATH_MAX], odir[PATH_MAX], target[PATH_MAX];
    const char *sname, *oname;
    if (!staged || !path || split_path(staged, sdir, sizeof sdir, &sname))
        return ph_error_set(err, PH_EINVAL, "no staged model to commit");
    /* an output that is a symbolic link: the file it names is replaced, the link stays */
    if (onnx_output_target(path, target, sizeof target) != 0)
        return ph_error_set(err, PH_EIO, "%s: cannot write output: a symbolic link to nothing", path);
    if (split_path(target, odir, sizeof odir, &oname) || !*oname)
        return ph_error_set(err, PH_EINVAL, "%s: not a file name", path);

    /* 1. the data files, under their new names: every file of the staging
     * folder but the model */
    staged_files fresh = {.model = sname};
    int sdfd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sdfd < 0)
        return ph_error_set(err, PH_EIO, "%s: cannot write output: %s: %s", path, sdir, strerror(errno));
    each_entry(sdfd, add_staged, &fresh);
    close(sdfd);
    if (fresh.too_many)
        return ph_error_set(err, PH_EINVAL, "%s: cannot write output: more files than a save makes in %s", path,
                            sdir);
    int rc = 0, moved = 0;
    for (; moved < fresh.n && !rc; moved++) {
        char from[PATH_MAX], to[PATH_MAX];
        const char *d = fresh.names[moved];
        if ((size_t)snprintf(from, sizeof from, "%s/%s", sdir, d) >= sizeof from ||
            (size_t)snprintf(to, sizeof to, "%s/%s", odir, d) >= sizeof to) {
            rc = ph_error_set(err, PH_EINVAL, "%s: cannot write output: path too long", path);
            break;
        }
        if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) != 0) {
            int e = errno;
            if (!exchange_supported(e) && access(to, F_OK) != 0 && rename(from, to) == 0)
                continue;
            rc = ph_error_set(err, PH_EIO, "%s: cannot write output: %s: %s", path, to,
                              e == EEXIST ? "a file of that name exists already" : strerror(e));
            break;
        }
    }

    /* 2. the model: the commit point */
    int old_fd = -1, exchanged = 0;
    for (int tries = 0; !rc && tries < 8; tries++) {
        if (renameat2(AT_FDCWD, staged, AT_FDCWD, target, RENAME_EXCHANGE) == 0) {
            exchanged = 1;
            struct stat st;
            if (lstat(staged, &st) == 0 && !S_ISREG(st.st_mode)) { /* a folder or link slipped in: undo */
                renameat2(AT_FDCWD, staged, AT_FDCWD, target, RENAME_EXCHANGE);
                rc = ph_error_set(err, PH_EIO, "%s: cannot write output: it is %s, not a file", path,
                                  ir_file_kind(st.st_mode));
            }
            break;
        }
        int e = errno;
        if (e == ENOENT && renameat2(AT_FDCWD, staged, AT_FDCWD, target, RENAME_NOREPLACE) == 0)
            break; /* no output before: nothing replaced */
        if (e == ENOENT && errno == EEXIST)
            continue; /* another run made it just now: exchange with that */
        if (!exchange_supported(e) || (e == ENOENT && !exchange_supported(errno))) {
            old_fd = open(target, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
            if (rename(staged, target) != 0)
                rc = ph_error_set(err, PH_EIO, "%s: cannot write output: %s", path, strerror(errno));
            break;
        }
        rc = ph_error_set(err, PH_EIO, "%s: cannot write output: %s", path, strerror(e == ENOENT ? errno : e));
        break;
    }
    if (rc) { /* the old pair stays as it was: take the new data files away again */
        for (int i = 0; i < moved; i++) {
            char to[PATH_MAX];
            if ((size_t)snprintf(to, sizeof to, "%s/%s", odir, fresh.names[i]) < sizeof to)
                unlink(to);
        }
        if (old_fd >= 0)
            close(old_fd);
        return rc;
    }
    int dfd = open(odir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { /* the renames, on disk */
        fsync(dfd);
        close(dfd);
    }

    /* 3. what the replaced model named, then the replaced model */
    if (exchanged)
        old_fd = open(staged, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    remove_old_data(old_fd, odir, oname, &fresh, keep, user);
    if (old_fd >= 0)
        close(old_fd);
    if (exchanged)
        unlink(staged);
    return 0;
}
