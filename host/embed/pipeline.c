/* host/embed/pipeline.c - the embedding API (passhost/pipeline.h): the program's
 * pipeline (job.h) behind a handful of C functions.
 *
 * A ph_pipeline keeps the options as the program's command-line words
 * ("--passes=a,b", "--set=optimize.pass_off=x", ...).  A run parses them
 * with the program's own parser (host_cli_parse), adds -q, -i and -o, and
 * runs host_job_configure, host_job_run and host_job_report as main() does,
 * with every stream pointed at one memory stream that becomes
 * ph_pipeline_log.  A model wanted as bytes is saved into a private
 * temporary folder, read back whole and the folder removed.
 */
#include "passhost/pipeline.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "config/config.h"
#include "base/exit.h"
#include "cli/job.h"
#include "io/output.h"
#include "report/report.h"
#include "base/util.h"

#define SAME_CODE(name) ((int)PH_PIPELINE_##name == (int)HOST_EXIT_##name)
_Static_assert(SAME_CODE(OK) && SAME_CODE(USAGE) && SAME_CODE(CONFIG) && SAME_CODE(MODEL) &&
               SAME_CODE(PLUGIN) && SAME_CODE(PASS) && SAME_CODE(OUTPUT) && SAME_CODE(MISMATCH) &&
               SAME_CODE(NOVERIFY) && SAME_CODE(CRASH),
               "pipeline.h's codes are the program's exit codes (exit.h)");
#undef SAME_CODE

/* The name a model given as bytes has in messages. */
#define MEMORY_NAME "<memory>"

struct ph_pipeline {
    char **words;        /* owned: the options, one command-line word each */
    size_t count;
    char *config_path;   /* owned, or NULL */
    char *config_text;   /* owned, or NULL */
    int full_report;
    char error[sizeof(((ph_error *)0)->message)];
    char *log;           /* owned: the last run's text, or NULL */
};

/* Runs take turns: the host keeps process state (model_io.c's save
 * settings, cleanup.c's temporary files). */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;

static int fail(ph_pipeline *p, int code, const char *fmt, ...) HOST_PRINTF(3, 4);
static int fail(ph_pipeline *p, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error, sizeof p->error, fmt, ap);
    va_end(ap);
    return code;
}

ph_pipeline *ph_pipeline_new(void)
{
    return calloc(1, sizeof(ph_pipeline));
}

void ph_pipeline_free(ph_pipeline *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->count; i++)
        free(p->words[i]);
    free(p->words);
    free(p->config_path);
    free(p->config_text);
    free(p->log);
    free(p);
}

static int set_text(ph_pipeline *p, char **slot, const char *value)
{
    p->error[0] = '\0';
    free(*slot);
    *slot = value ? host_xstrdup(value) : NULL;
    return 0;
}

int ph_pipeline_config_file(ph_pipeline *p, const char *path)
{
    if (path && !*path)
        return fail(p, HOST_EXIT_USAGE, "config file: empty path");
    return set_text(p, &p->config_path, path);
}

int ph_pipeline_config_text(ph_pipeline *p, const char *text)
{
    return set_text(p, &p->config_text, text);
}

void ph_pipeline_full_report(ph_pipeline *p, int on)
{
    p->full_report = on != 0;
}

/* ------------------------------------------------------------- options */

typedef enum { TAKES_NOTHING, TAKES_VALUE, TAKES_EITHER } takes;

/* The program's options a library run may use (cli.c knows them all). */
static const struct {
    const char *name;
    takes kind;
} allowed[] = {
    {"--set", TAKES_VALUE},         {"--passes", TAKES_VALUE},
    {"--skip", TAKES_VALUE},        {"--input-shape", TAKES_VALUE},
    {"--overwrite-input-shape", TAKES_VALUE}, {"--plugin-dir", TAKES_VALUE},
    {"--max-rewrites", TAKES_VALUE}, {"--dump-dir", TAKES_VALUE},
    {"--report-json", TAKES_VALUE}, {"--report-html", TAKES_VALUE},
    {"--no-fold", TAKES_NOTHING},   {"--verify-each", TAKES_NOTHING},
    {"--shapes", TAKES_NOTHING},    {"--verify", TAKES_EITHER},
    {"--level", TAKES_VALUE},       {"--inputs", TAKES_VALUE},
    {"--outputs", TAKES_VALUE},
    {"--verify-data", TAKES_VALUE}, {"--verify-range", TAKES_VALUE},
    {"--verify-atol", TAKES_VALUE}, {"--verify-rtol", TAKES_VALUE},
};

/* The option word's entry in allowed[], or -1; *value gets "X" of --opt=X. */
static int find_allowed(const char *word, const char **value)
{
    *value = NULL;
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
        size_t n = strlen(allowed[i].name);
        if (strncmp(word, allowed[i].name, n) != 0 || (word[n] != '\0' && word[n] != '='))
            continue;
        if (word[n] == '=')
            *value = word + n + 1;
        return (int)i;
    }
    return -1;
}

/* The option alone through the program's parser (and a --set through the
 * config's), so a bad value is refused now with the program's message. */
static int check_word(const char *word, const char *value, int is_set, ph_error *err)
{
    host_cli cli;
    char *argv[] = {"passhost", (char *)word, NULL};
    int rc = host_cli_parse(&cli, 2, argv, err);
    host_cli_free(&cli);
    if (!rc && is_set) {
        host_config *cfg = host_config_new();
        if (!cfg)
            return ph_error_set(err, HOST_EXIT_CONFIG, "out of memory");
        rc = host_config_set(cfg, value, err);
        host_config_free(cfg);
    }
    return rc;
}

int ph_pipeline_option(ph_pipeline *p, const char *option)
{
    p->error[0] = '\0';
    if (!option || !*option)
        return fail(p, HOST_EXIT_USAGE, "empty option");
    const char *value;
    int i = find_allowed(option, &value);
    if (i < 0)
        return fail(p, HOST_EXIT_USAGE,
                    "%.200s: not an option of the library (it takes --set, --passes, --skip, "
                    "--input-shape, --verify[=N], --verify-each, --verify-data, --verify-range, "
                    "--verify-atol, --verify-rtol, --no-fold, --shapes, "
                    "--max-rewrites, --plugin-dir, --dump-dir, --report-json, --report-html; "
                    "the model's paths or bytes are ph_pipeline_run's)", option);
    if (allowed[i].kind == TAKES_VALUE && !value)
        return fail(p, HOST_EXIT_USAGE, "%.200s needs a value: %.200s=VALUE", option, option);
    if (allowed[i].kind == TAKES_NOTHING && value)
        return fail(p, HOST_EXIT_USAGE, "%s takes no value", allowed[i].name);
    if (value && strcmp(value, "-") == 0 && strstr(allowed[i].name, "--report-"))
        return fail(p, HOST_EXIT_USAGE, "%s=-: a library run writes nothing to stdout; give a file",
                    allowed[i].name);
    ph_error e = {0};
    int rc = check_word(option, value, strcmp(allowed[i].name, "--set") == 0, &e);
    if (rc)
        return fail(p, rc, "%s", e.message);
    char **words = realloc(p->words, (p->count + 1) * sizeof *words);
    if (!words)
        return fail(p, HOST_EXIT_USAGE, "out of memory");
    p->words = words;
    p->words[p->count++] = host_xstrdup(option);
    return 0;
}

/* "--name=value" through ph_pipeline_option. */
static int option_with(ph_pipeline *p, const char *name, const char *value)
{
    if (!value)
        return fail(p, HOST_EXIT_USAGE, "no value (NULL)");
    char *word = host_xasprintf("%s=%s", name, value);
    int rc = ph_pipeline_option(p, word);
    free(word);
    return rc;
}

int ph_pipeline_set(ph_pipeline *p, const char *assignment)
{
    return option_with(p, "--set", assignment);
}

int ph_pipeline_passes(ph_pipeline *p, const char *names)
{
    return option_with(p, "--passes", names);
}

int ph_pipeline_skip(ph_pipeline *p, const char *names)
{
    return option_with(p, "--skip", names);
}

int ph_pipeline_input_shape(ph_pipeline *p, const char *spec)
{
    return option_with(p, "--input-shape", spec);
}

int ph_pipeline_plugin_dir(ph_pipeline *p, const char *dir)
{
    return option_with(p, "--plugin-dir", dir);
}

int ph_pipeline_verify(ph_pipeline *p, int runs)
{
    if (runs == 0)
        return ph_pipeline_option(p, "--verify");
    char word[32];
    snprintf(word, sizeof word, "--verify=%d", runs);
    return ph_pipeline_option(p, word);
}

/* ----------------------------------------------------------------- run */

/* Remove the folder of a bytes output and everything in it. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        char *path = host_xasprintf("%s/%s", dir, ent->d_name);
        unlink(path);
        free(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* A private folder for a bytes output (TMPDIR, else /tmp); caller frees. */
static char *make_dir(ph_error *err)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = host_xasprintf("%s/passhost-pipeline.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir))
        return dir;
    ph_error_set(err, HOST_EXIT_OUTPUT, "%s: cannot make a temporary folder: %s", dir,
                 strerror(errno));
    free(dir);
    return NULL;
}

/* The saved model at path into a new buffer.  0 or HOST_EXIT_OUTPUT. */
static int read_output(const char *path, void **data, size_t *size, ph_error *err)
{
    if (host_output_has_data_file(path)) /* one buffer cannot carry the data file the model names */
        return ph_error_set(err, HOST_EXIT_OUTPUT, "the model is larger than [model] "
                            "external_data_threshold and needs an external-data file beside it; "
                            "give an output path instead of a buffer");
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        int rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return rc;
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n ? n : 1);
    size_t got = buf ? fread(buf, 1, n, f) : 0;
    fclose(f);
    if (!buf || got != n) {
        free(buf);
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", path,
                            buf ? "read back short" : "out of memory for the output buffer");
    }
    *data = buf;
    *size = n;
    return 0;
}

/* The command line of a run: the options, then -v (full report), -i and -o.  Owned array
 * of borrowed words (caller frees the array only). */
static char **command_line(const ph_pipeline *p, const char *in, const char *out, int *argc)
{
    char **argv = host_xcalloc(p->count + 7, sizeof *argv);
    int n = 0;
    argv[n++] = "passhost";
    for (size_t i = 0; i < p->count; i++)
        argv[n++] = p->words[i];
    if (p->full_report)
        argv[n++] = "-v";
    if (in)
        argv[n++] = "-i", argv[n++] = (char *)in;
    if (out)
        argv[n++] = "-o", argv[n++] = (char *)out;
    argv[n] = NULL;
    *argc = n;
    return argv;
}

/* The job as main() runs it (main.c), minus the program's parts. */
static int run_job(ph_pipeline *p, host_job *j, int argc, char **argv, const void *data,
                   size_t size)
{
    int rc = host_cli_parse(&j->cli, argc, argv, &j->err);
    j->cli.verdicts_only = !p->full_report; /* warnings and verdicts into the log, no report */
    j->cli.config_path = p->config_path;
    j->cli.config_text = p->config_text;
    j->input_data = data;
    j->input_size = size;
    if (!rc) rc = host_job_configure(j);
    if (!rc) rc = host_job_run(j);
    return host_job_report(j, rc);
}

int ph_pipeline_run(ph_pipeline *p, const char *input_path, const void *input_data,
                    size_t input_size, const char *output_path, void **output_data,
                    size_t *output_size)
{
    if (output_data)
        *output_data = NULL;
    if (output_size)
        *output_size = 0;
    p->error[0] = '\0';
    free(p->log);
    p->log = NULL;
    if (input_path && input_data)
        return fail(p, HOST_EXIT_USAGE, "the input is given twice: a path and bytes");
    if (output_path && output_data)
        return fail(p, HOST_EXIT_USAGE, "the output is given twice: a path and a buffer");
    if (output_data && !output_size)
        return fail(p, HOST_EXIT_USAGE, "an output buffer needs output_size");
    if (input_path && !*input_path)
        return fail(p, HOST_EXIT_USAGE, "the input path is empty");
    if (output_path && !*output_path)
        return fail(p, HOST_EXIT_USAGE, "the output path is empty");

    pthread_mutex_lock(&run_lock);
    ph_error err = {0};
    char *dir = NULL, *temp_out = NULL;
    int rc = 0;
    if (output_data && !(dir = make_dir(&err)))
        rc = err.code;
    if (dir)
        temp_out = host_xasprintf("%s/model.onnx", dir);

    char *text = NULL;
    size_t text_len = 0;
    FILE *log = open_memstream(&text, &text_len); /* NULL (out of memory): no log */
    host_job j;
    host_job_init(&j, log);
    j.out = log;
    if (!rc) {
        int argc;
        char **argv = command_line(p, input_data ? MEMORY_NAME : input_path,
                                   output_data ? temp_out : output_path, &argc);
        rc = run_job(p, &j, argc, argv, input_data, input_size);
        if (!rc && output_data)
            rc = read_output(temp_out, output_data, output_size, &j.err);
        free(argv);
        err = j.err;
    }
    if (rc && log)
        host_log_fatal(&j.log, err.message); /* the program's last line, also into log_path */
    host_job_free(&j, 1);
    if (rc)
        snprintf(p->error, sizeof p->error, "%s", err.message);
    if (log) {
        fclose(log);
        p->log = text;
    }
    if (dir)
        remove_dir(dir);
    free(temp_out);
    free(dir);
    pthread_mutex_unlock(&run_lock);
    return rc;
}

void ph_pipeline_free_buffer(void *data)
{
    free(data);
}

const char *ph_pipeline_error(const ph_pipeline *p)
{
    return p->error;
}

const char *ph_pipeline_log(const ph_pipeline *p)
{
    return p->log ? p->log : "";
}

const char *ph_pipeline_version(void)
{
    return HOST_VERSION;
}
