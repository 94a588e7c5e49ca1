/* tests/test_fixpoint.c - the default stages settle: on every bundled model
 * the passes on by default (every built plugin) reach their fixpoint in a few
 * rounds, far under the stage's cap, and a second run of passhost on its own
 * output changes nothing.  Passes that undo each other would show here as a
 * stage that runs to its cap. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clirun.h"
#include "tmpdir.h"

enum { MAX_ROUNDS = 6 }; /* the default cap (max_iterations) is 16 */

static void setup(void) { tk_tmpdir_make("fixpoint"); }
static void teardown(void) { tk_tmpdir_remove(); }

/* The "stage optimize: N rounds" figure of a report, or -1. */
static int rounds_of(const char *report)
{
    const char *s = strstr(report, "stage optimize: ");
    int n = -1;
    if (s && sscanf(s, "stage optimize: %d round", &n) != 1)
        n = -1;
    return n;
}

/* The rewrite count of the summary line "...: N passes, R rewrites, ...". */
static long rewrites_of(const char *report)
{
    const char *s = strstr(report, " rewrites, nodes");
    if (!s)
        return -1;
    while (s > report && s[-1] >= '0' && s[-1] <= '9')
        s--;
    return strtol(s, NULL, 10);
}

START_TEST(default_stages_settle_and_stay_settled)
{
    static const char *const models[] = {"cnn_small.onnx", "transformer_block.onnx", "control_flow.onnx"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char from[600];
        snprintf(from, sizeof from, "%s/tests/models/%s", PH_SOURCE_DIR, models[i]);
        if (!tk_exists(from))
            snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, models[i]);
        char in[600], once[600];
        snprintf(in, sizeof in, "%s", tk_tpath(models[i]));
        snprintf(once, sizeof once, "%s", tk_tpath("once.onnx"));
        tk_copy_file(from, in);
        tk_cli_result r = TK_CLI("-i", in, "-o", once);
        ck_assert_msg(r.status == 0, "%s: %s", models[i], r.err);
        const char *report = *r.out ? r.out : r.err;
        int n = rounds_of(report);
        ck_assert_msg(n >= 1 && n <= MAX_ROUNDS, "%s: optimize stage took %d rounds:\n%s", models[i], n, report);
        tk_cli_free(&r);
        /* the output is a fixpoint: a second run rewrites nothing */
        r = TK_CLI("-i", once, "-o", tk_tpath("twice.onnx"));
        ck_assert_msg(r.status == 0, "%s (second run): %s", models[i], r.err);
        report = *r.out ? r.out : r.err;
        ck_assert_msg(rewrites_of(report) == 0, "%s: a second run rewrote again:\n%s", models[i], report);
        tk_cli_free(&r);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fixpoint");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, default_stages_settle_and_stay_settled);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
