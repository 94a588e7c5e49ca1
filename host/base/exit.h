/* host/base/exit.h - the documented exit codes of the passhost program.
 *
 * Every host function that can fail returns 0 or one of these codes and
 * fills a caller-owned ph_error with a one-line message; main() prints the
 * message as `passhost: <message>` and exits with the code.  The table is
 * also what `passhost --help` and docs/config.md print.
 */
#ifndef PASSHOST_HOST_EXIT_H
#define PASSHOST_HOST_EXIT_H

/* X(name, value, meaning) */
#define HOST_EXIT_TABLE(X)                                                             \
    X(HOST_EXIT_OK, 0, "success")                                                      \
    X(HOST_EXIT_USAGE, 1, "bad command line")                                          \
    X(HOST_EXIT_CONFIG, 2, "configuration error (INI syntax, key, value, pass name, "  \
                           "pass parameter, input shape, custom_config, "              \
                           "pipeline.txt, --max-rewrites number, --verify-data "       \
                           "folder, --verify-range)")                                  \
    X(HOST_EXIT_MODEL, 3, "the input model cannot be loaded (or changed while read)")  \
    X(HOST_EXIT_PLUGIN, 4, "a pass plugin cannot be loaded")                           \
    X(HOST_EXIT_PASS, 5, "a pass failed or broke the graph, or order hints form a "    \
                         "cycle or contradict pipeline.txt")                          \
    X(HOST_EXIT_OUTPUT, 6, "the output model cannot be written")                       \
    X(HOST_EXIT_MISMATCH, 7, "numeric verification: the rewritten model computes "         \
                             "different outputs (--verify, --verify-each, --bisect)")       \
    X(HOST_EXIT_NOVERIFY, 8, "numeric verification cannot run: the evaluator does not "     \
                             "support an operator or dtype of the model, or an input would " \
                             "be too large")                                                  \
    X(HOST_EXIT_CRASH, 9, "a pass crashed, ran longer than pass_timeout_s or called exit(); " \
                          "the run was contained: no output, the input untouched")      \
    X(HOST_EXIT_TARGET, 10, "a target profile violation remains: after the adapt stage "   \
                            "with --strict-target (no output written), or --check-target " \
                            "with --strict-target")

enum host_exit {
#define HOST_X_ENUM(name, value, desc) name = value,
    HOST_EXIT_TABLE(HOST_X_ENUM)
#undef HOST_X_ENUM
};

#endif
