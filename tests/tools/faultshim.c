/* tests/tools/faultshim.c - disk faults on demand, for tests: an LD_PRELOAD
 * library that makes write(2) and fsync(2) fail (or a signal arrive) on the
 * files passhost writes, without a full disk or a kill at the right moment.
 *
 * It acts on descriptors whose path (from /proc/self/fd) contains the text
 * of PH_FAULT_MATCH (default ".tmp.": passhost's temporary files), and only
 * as the environment asks:
 *   PH_FAULT_ENOSPC_AFTER=N  once N bytes were written to such files in all,
 *                            every further write fails with ENOSPC (a disk
 *                            that fills up part way);
 *   PH_FAULT_FSYNC_EIO=1     fsync fails with EIO (a device error at flush);
 *   PH_FAULT_SIGNAL=N        the first write raises signal N in the writing
 *                            process (an interrupted save, exactly mid-way);
 *   PH_FAULT_KILL_PARENT=1   with PH_FAULT_SIGNAL=9: the first write also
 *                            kills the writer's parent first (SIGKILL to a
 *                            supervisor while its worker saves);
 *   PH_FAULT_RENAME=N        the N-th rename of the process (rename(2) or
 *                            renameat2(2), from 1) fails with EIO, whatever
 *                            the path (a commit that fails part way).
 * Built by `make test-build` into $(BUILD)/test-tools/faultshim.so.  With a
 * sanitized passhost, also set ASAN_OPTIONS=verify_asan_link_order=0. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static unsigned long long written;
static int signalled;

static int matches(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = 0;
    const char *m = getenv("PH_FAULT_MATCH");
    return strstr(path, m && *m ? m : ".tmp.") != NULL;
}

ssize_t write(int fd, const void *buf, size_t count)
{
    static ssize_t (*real_write)(int, const void *, size_t);
    if (!real_write)
        real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (fd > 2 && count > 0 && matches(fd)) {
        const char *sig = getenv("PH_FAULT_SIGNAL");
        if (sig && *sig && !signalled) {
            signalled = 1;
            const char *parent = getenv("PH_FAULT_KILL_PARENT");
            if (parent && *parent == '1')
                kill(getppid(), SIGKILL);
            raise(atoi(sig));
        }
        const char *after = getenv("PH_FAULT_ENOSPC_AFTER");
        if (after && *after) {
            unsigned long long limit = strtoull(after, NULL, 10);
            if (written >= limit) {
                errno = ENOSPC;
                return -1;
            }
            if (count > limit - written)
                count = (size_t)(limit - written); /* a short write, then ENOSPC */
        }
        ssize_t k = real_write(fd, buf, count);
        if (k > 0)
            written += (unsigned long long)k;
        return k;
    }
    return real_write(fd, buf, count);
}

int fsync(int fd)
{
    static int (*real_fsync)(int);
    if (!real_fsync)
        real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    const char *e = getenv("PH_FAULT_FSYNC_EIO");
    if (e && *e == '1' && matches(fd)) {
        errno = EIO;
        return -1;
    }
    return real_fsync(fd);
}

/* PH_FAULT_RENAME: 1 when this rename is the one to fail. */
static int rename_fails(void)
{
    static int renames;
    const char *n = getenv("PH_FAULT_RENAME");
    return n && *n && ++renames == atoi(n);
}

int rename(const char *from, const char *to)
{
    static int (*real_rename)(const char *, const char *);
    if (!real_rename)
        real_rename = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    if (rename_fails()) {
        errno = EIO;
        return -1;
    }
    return real_rename(from, to);
}

int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned flags)
{
    static int (*real_renameat2)(int, const char *, int, const char *, unsigned);
    if (!real_renameat2)
        real_renameat2 = (int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
    if (rename_fails()) {
        errno = EIO;
        return -1;
    }
    return real_renameat2(from_dir, from, to_dir, to, flags);
}
