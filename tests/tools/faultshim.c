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
 *                            process (an interrupted save, exactly mid-way).
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
