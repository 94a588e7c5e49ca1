/* fuzz/support/fuzz_support.c - scratch files and plugins for the fuzzers
 * (see fuzz_support.h). */
#include "fuzz_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "config/plan.h"

static char scratch[512];

static void remove_scratch(void)
{
    DIR *d = opendir(scratch);
    if (!d)
        return;
    for (struct dirent *de; (de = readdir(d));) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", scratch, de->d_name);
        if (unlink(p) != 0)
            rmdir(p); /* the folder of make_special_files */
    }
    closedir(d);
    rmdir(scratch);
}

/* Every kind of file an external-data location can name (the corpus's
 * external_kinds model points at each): a FIFO with no writer, a folder,
 * a socket, a character device (made here when we may, never the real
 * /dev/null), an empty file, links inside and outside the folder. */
static void make_special_files(void)
{
    mkfifo(fz_path("fifo"), 0600);
    mkdir(fz_path("folder"), 0700);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (sock >= 0 && strlen(fz_path("sock")) < sizeof sa.sun_path) {
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", fz_path("sock"));
        bind(sock, (struct sockaddr *)&sa, sizeof sa);
    }
    if (sock >= 0)
        close(sock);
    mknod(fz_path("null"), S_IFCHR | 0600, makedev(1, 3));
    fz_write(fz_path("empty.bin"), (const uint8_t *)"", 0);
    symlink("fifo", fz_path("link_fifo"));
    symlink("external_data.bin", fz_path("link_data"));
    symlink("/etc/hostname", fz_path("link_outside"));
}

const char *fz_dir(void)
{
    if (scratch[0])
        return scratch;
    struct stat st;
    const char *base = getenv("TMPDIR");
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
        base = "/dev/shm";
    else if (!base || !*base)
        base = "/tmp";
    snprintf(scratch, sizeof scratch, "%s/ph_fuzz.XXXXXX", base);
    if (!mkdtemp(scratch)) {
        fprintf(stderr, "fuzz: cannot make a scratch folder in %s: %s\n", base, strerror(errno));
        exit(2);
    }
    atexit(remove_scratch);
    /* the data file of the corpus's external-data models */
    uint8_t data[4224];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 37u + 11u);
    fz_write(fz_path("external_data.bin"), data, sizeof data);
    make_special_files();
    return scratch;
}

const char *fz_path(const char *name)
{
    static char ring[8][600];
    static unsigned next;
    char *p = ring[next++ % 8];
    snprintf(p, sizeof ring[0], "%s/%s", fz_dir(), name);
    return p;
}

void fz_write(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
    while (size > 0) {
        ssize_t w = write(fd, data, size);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
            exit(2);
        }
        data += w;
        size -= (size_t)w;
    }
    close(fd);
}

static host_registry *registry;

static void free_registry(void)
{
    host_registry_free(registry);
    registry = NULL;
}

const host_registry *fz_plugins(void)
{
    if (registry)
        return registry;
    ph_error e = {0};
    registry = host_registry_new();
    if (!registry || host_load_plugins(registry, NULL, &e) != 0 || host_registry_count(registry) == 0) {
        fprintf(stderr, "fuzz: no pass plugins loaded: %s\n", e.message[0] ? e.message : "none found");
        exit(2);
    }
    atexit(free_registry);
    return registry;
}

void fz_quiet_log(void *user, ph_log_level level, const char *pass, const char *message)
{
    (void)user, (void)level, (void)pass, (void)message;
}

const char *fz_current_input;

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz: ", stderr);
    if (fz_current_input)
        fprintf(stderr, "%s: ", fz_current_input);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

int fz_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}
