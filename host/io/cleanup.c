/* host/io/cleanup.c - temporary files removed on signals, SIGBUS from a
 * shrunken mapped file reported as an input error (cleanup.h). */
#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "base/exit.h"
#include "passhost/host.h"

static char temp_paths[HOST_CLEANUP_MAX_TEMPS][PATH_MAX];
static volatile sig_atomic_t temp_used[HOST_CLEANUP_MAX_TEMPS];
static struct sigaction old_bus;

void host_cleanup_temp_file(void *user, const char *path, int created)
{
    (void)user;
    size_t len = strlen(path);
    if (len >= PATH_MAX)
        return;
    for (int i = 0; i < HOST_CLEANUP_MAX_TEMPS; i++) {
        if (created && !temp_used[i]) {
            memcpy(temp_paths[i], path, len + 1);
            atomic_signal_fence(memory_order_seq_cst); /* the path before the flag */
            temp_used[i] = 1;
            return;
        }
        if (!created && temp_used[i] && strcmp(temp_paths[i], path) == 0) {
            temp_used[i] = 0;
            return;
        }
    }
}

/* Remove a file, or a staging folder and its files (ph_staging_remove:
 * system calls only, so a signal handler may call it). */
static void remove_path(const char *path)
{
    if (unlink(path) != 0 && errno == EISDIR)
        ph_staging_remove(path);
}

void host_cleanup_remove_temps(void)
{
    for (int i = HOST_CLEANUP_MAX_TEMPS; i-- > 0;) /* the newest first */
        if (temp_used[i]) {
            remove_path(temp_paths[i]);
            temp_used[i] = 0;
        }
}

/* ------------------------------------------------- async-signal-safe bits */

static void put(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = write(2, s, n);
        if (k <= 0 && errno != EINTR)
            return;
        if (k > 0)
            s += k, n -= (size_t)k;
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* One line of /proc/self/maps: 1 when addr lies in it and it maps a file
 * (then its path, NUL-terminated, is copied into path). */
static int line_maps_file(const char *line, uintptr_t addr, char *path, size_t size)
{
    uintptr_t lo = 0, hi = 0;
    const char *p = line;
    int d;
    while ((d = hexval(*p)) >= 0)
        lo = lo * 16 + (uintptr_t)d, p++;
    if (*p++ != '-')
        return 0;
    while ((d = hexval(*p)) >= 0)
        hi = hi * 16 + (uintptr_t)d, p++;
    if (addr < lo || addr >= hi)
        return 0;
    const char *slash = strchr(p, '/');
    if (!slash)
        return 0; /* anonymous, [heap], [stack]: not a file */
    size_t n = strlen(slash);
    if (n >= size)
        n = size - 1;
    memcpy(path, slash, n);
    path[n] = 0;
    return 1;
}

/* The file mapped at addr, from /proc/self/maps (open/read only). */
static int mapped_file(uintptr_t addr, char *path, size_t size)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[1024], line[PATH_MAX + 256];
    size_t ll = 0;
    int found = 0;
    ssize_t k;
    while (!found && (k = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < k && !found; i++) {
            if (buf[i] != '\n') {
                if (ll < sizeof line - 1)
                    line[ll++] = buf[i];
                continue;
            }
            line[ll] = 0;
            ll = 0;
            found = line_maps_file(line, addr, path, size);
        }
    }
    close(fd);
    return found;
}

static void reraise(int sig)
{
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

static void on_stop(int sig)
{
    host_cleanup_remove_temps();
    reraise(sig);
}

/* Told the exit code before the SIGBUS handler ends the process. */
static void (*exiting)(int code);

static void on_bus(int sig, siginfo_t *info, void *ctx)
{
    host_cleanup_remove_temps();
    static char path[PATH_MAX]; /* a signal handler's own buffer: no stack-hungry arrays */
    if (info && mapped_file((uintptr_t)info->si_addr, path, sizeof path)) {
        put("passhost: ");
        put(path);
        put(": the file changed while it was being read (was it truncated?); nothing written\n");
        if (exiting)
            exiting(HOST_EXIT_MODEL); /* e.g. a supervisor, which passes the code on as it is */
        _exit(HOST_EXIT_MODEL);
    }
    if (old_bus.sa_flags & SA_SIGINFO && old_bus.sa_sigaction) {
        old_bus.sa_sigaction(sig, info, ctx);
        return;
    }
    if (old_bus.sa_handler != SIG_DFL && old_bus.sa_handler != SIG_IGN && old_bus.sa_handler) {
        old_bus.sa_handler(sig);
        return;
    }
    reraise(sig);
}

void host_cleanup_install(void (*on_exit_code)(int code))
{
    exiting = on_exit_code;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    const int stops[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started passhost stays ignored */
        if (sigaction(stops[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(stops[i], &sa, NULL);
    }
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &sa, &old_bus);
}
