/* tests/test_schema.c - passhost/schema.h, the operator schemas generated at
 * build time from libonnx:
 *   - lookups by domain, name and opset, the version history, attributes,
 *     formal parameters and their types, and domains, against facts of the
 *     ONNX spec;
 *   - the whole table against python3-onnx's own schemas (the same release
 *     of ONNX in Debian): every version of every operator with its input
 *     and output counts, parameters and attributes, line for line (skipped
 *     when python3-onnx is not installed). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passhost/passhost.h"

START_TEST(lookups_follow_the_spec)
{
    ck_assert_str_eq(ph_schema_onnx_version(), "1.12.0");
    /* Transpose: versions 1 and 13; the one in force at each opset */
    const ph_schema *t1 = ph_schema_first("", "Transpose");
    ck_assert_ptr_nonnull(t1);
    ck_assert_int_eq(ph_schema_since_version(t1), 1);
    const ph_schema *t13 = ph_schema_next(t1);
    ck_assert_ptr_nonnull(t13);
    ck_assert_int_eq(ph_schema_since_version(t13), 13);
    ck_assert_ptr_null(ph_schema_next(t13));
    ck_assert_ptr_eq(ph_schema_find("", "Transpose", 12), t1);
    ck_assert_ptr_eq(ph_schema_find("ai.onnx", "Transpose", 13), t13);
    ck_assert_ptr_eq(ph_schema_find(NULL, "Transpose", 17), t13);
    ck_assert_ptr_null(ph_schema_find("", "Transpose", 0));
    ck_assert_str_eq(ph_schema_name(t13), "Transpose");
    ck_assert_str_eq(ph_schema_domain(t13), "");
    long k = ph_schema_attr_find(t13, "perm");
    ck_assert_int_ge(k, 0);
    ck_assert_int_eq(ph_schema_attr_type(t13, (size_t)k), 7);
    ck_assert_str_eq(ph_attr_type_name(ph_schema_attr_type(t13, (size_t)k)), "INTS");
    ck_assert_int_eq(ph_schema_attr_required(t13, (size_t)k), 0);
    ck_assert_int_eq(ph_schema_attr_find(t13, "perms"), -1);
    /* Conv: optional bias, attributes sorted by name */
    const ph_schema *conv = ph_schema_find("", "Conv", 17);
    int lo, hi;
    ph_schema_input_range(conv, &lo, &hi);
    ck_assert_int_eq(lo, 2);
    ck_assert_int_eq(hi, 3);
    ck_assert_int_eq(ph_schema_input_count(conv), 3);
    ck_assert_str_eq(ph_schema_input_name(conv, 0), "X");
    ck_assert_int_eq(ph_schema_input_option(conv, 1), PH_PARAM_SINGLE);
    ck_assert_int_eq(ph_schema_input_option(conv, 2), PH_PARAM_OPTIONAL);
    for (size_t i = 1; i < ph_schema_attr_count(conv); i++)
        ck_assert_int_lt(strcmp(ph_schema_attr_name(conv, i - 1), ph_schema_attr_name(conv, i)), 0);
    /* Concat: variadic, unbounded; axis required since version 4 */
    const ph_schema *cat = ph_schema_find("", "Concat", 13);
    ph_schema_input_range(cat, &lo, &hi);
    ck_assert_int_eq(lo, 1);
    ck_assert_int_eq(hi, -1);
    ck_assert_int_eq(ph_schema_input_option(cat, 0), PH_PARAM_VARIADIC);
    ck_assert_int_eq(ph_schema_attr_required(cat, (size_t)ph_schema_attr_find(cat, "axis")), 1);
    /* not yet, not at all */
    ck_assert_ptr_null(ph_schema_find("", "LayerNormalization", 16));
    ck_assert_ptr_nonnull(ph_schema_find("", "LayerNormalization", 17));
    ck_assert_ptr_null(ph_schema_first("", "NoSuchOp"));
    ck_assert_ptr_null(ph_schema_first("com.microsoft", "FusedConv"));
    /* another domain ONNX defines */
    ck_assert_ptr_nonnull(ph_schema_find("ai.onnx.ml", "TreeEnsembleClassifier", 3));
    int64_t mn = 0, mx = 0;
    ck_assert(ph_schema_domain_known("", &mn, &mx) && mn == 1 && mx == 17);
    ck_assert(ph_schema_domain_known("ai.onnx", NULL, NULL));
    ck_assert(ph_schema_domain_known("ai.onnx.ml", NULL, &mx) && mx == 3);
    ck_assert(!ph_schema_domain_known("com.microsoft", NULL, NULL));
    /* every schema in order */
    ck_assert_uint_gt(ph_schema_count(), 400);
    for (size_t i = 1; i < ph_schema_count(); i++) {
        const ph_schema *a = ph_schema_at(i - 1), *b = ph_schema_at(i);
        int c = strcmp(ph_schema_domain(a), ph_schema_domain(b));
        if (!c)
            c = strcmp(ph_schema_name(a), ph_schema_name(b));
        ck_assert(c < 0 || (c == 0 && ph_schema_since_version(a) < ph_schema_since_version(b)));
    }
    ck_assert_ptr_null(ph_schema_at(ph_schema_count()));
    ck_assert_str_eq(ph_attr_type_name(0), "UNDEFINED");
    ck_assert_str_eq(ph_attr_type_name(99), "UNKNOWN");
}
END_TEST

/* One line per schema: domain name since min_in max_in min_out max_out
 * deprecated, the inputs and outputs (name:option) and attributes
 * (name:type:required). */
static void dump(FILE *f)
{
    for (size_t i = 0; i < ph_schema_count(); i++) {
        const ph_schema *s = ph_schema_at(i);
        int a, b, c, d;
        ph_schema_input_range(s, &a, &b);
        ph_schema_output_range(s, &c, &d);
        fprintf(f, "%s|%s|%lld|%d|%d|%d|%d|%d|", ph_schema_domain(s), ph_schema_name(s),
                (long long)ph_schema_since_version(s), a, b, c, d, ph_schema_deprecated(s));
        for (size_t k = 0; k < ph_schema_input_count(s); k++)
            fprintf(f, "%s:%d,", ph_schema_input_name(s, k), ph_schema_input_option(s, k));
        fputc('|', f);
        for (size_t k = 0; k < ph_schema_output_count(s); k++)
            fprintf(f, "%s:%d,", ph_schema_output_name(s, k), ph_schema_output_option(s, k));
        fputc('|', f);
        for (size_t k = 0; k < ph_schema_attr_count(s); k++)
            fprintf(f, "%s:%d:%d,", ph_schema_attr_name(s, k), ph_schema_attr_type(s, k),
                    ph_schema_attr_required(s, k));
        fputc('\n', f);
    }
}

static const char python_dump[] =
    "import onnx.defs as d\n"
    "M = 2**31 - 1\n"
    "def opt(p): return int(p.option.value) if hasattr(p.option, 'value') else int(p.option)\n"
    "def lim(v): return -1 if v == M else v\n"
    "rows = sorted(d.get_all_schemas_with_history(), key=lambda s: (s.domain, s.name, s.since_version))\n"
    "for s in rows:\n"
    "    ins = ''.join('%s:%d,' % (p.name, opt(p)) for p in s.inputs)\n"
    "    outs = ''.join('%s:%d,' % (p.name, opt(p)) for p in s.outputs)\n"
    "    at = ''.join('%s:%d:%d,' % (n, int(a.type), int(a.required)) for n, a in sorted(s.attributes.items()))\n"
    "    print('%s|%s|%d|%d|%d|%d|%d|%d|%s|%s|%s' % (s.domain, s.name, s.since_version, s.min_input,\n"
    "          lim(s.max_input), s.min_output, lim(s.max_output), int(s.deprecated), ins, outs, at))\n";

/* Formal parameters' types: type variables shared between parameters, and
 * the dtypes each allows, as the spec writes them. */
START_TEST(parameter_types_follow_the_spec)
{
    const ph_schema *r = ph_schema_find("", "Reshape", 14);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(ph_schema_input_type(r, 0), "T");
    ck_assert_str_eq(ph_schema_output_type(r, 0), "T");
    ck_assert_str_eq(ph_schema_input_type(r, 1), "tensor(int64)");
    ck_assert_uint_eq(ph_schema_input_dtypes(r, 1), 1ull << PH_DT_INT64);
    ck_assert(ph_schema_input_dtypes(r, 0) & (1ull << PH_DT_INT32));
    ck_assert(ph_schema_input_dtypes(r, 0) & (1ull << PH_DT_STRING));
    ck_assert_ptr_null(ph_schema_input_type(r, 2));
    ck_assert_uint_eq(ph_schema_input_dtypes(r, 2), 0);
    /* Shape's output is int64 only; Gather's indices int32 or int64 */
    const ph_schema *sh = ph_schema_find("", "Shape", 15);
    ck_assert_uint_eq(ph_schema_output_dtypes(sh, 0), 1ull << PH_DT_INT64);
    const ph_schema *g = ph_schema_find("", "Gather", 13);
    ck_assert_uint_eq(ph_schema_input_dtypes(g, 1), (1ull << PH_DT_INT32) | (1ull << PH_DT_INT64));
    /* Add-14 computes int32 and int64 in one variable; Add-6 too */
    const ph_schema *a = ph_schema_find("", "Add", 14);
    ck_assert_str_eq(ph_schema_input_type(a, 1), ph_schema_output_type(a, 0));
    ck_assert(ph_schema_output_dtypes(a, 0) & (1ull << PH_DT_INT32));
    /* Concat's variadic input: actual input 5 fills formal 0 */
    const ph_schema *c = ph_schema_find("", "Concat", 13);
    ck_assert_int_eq(ph_schema_input_formal(c, 5), 0);
    ck_assert_int_eq(ph_schema_input_formal(r, 1), 1);
    ck_assert_int_eq(ph_schema_input_formal(r, 2), -1);
    /* TopK-11: K int64 only, indices int64 only */
    const ph_schema *t = ph_schema_find("", "TopK", 11);
    ck_assert_uint_eq(ph_schema_input_dtypes(t, 1), 1ull << PH_DT_INT64);
    ck_assert_uint_eq(ph_schema_output_dtypes(t, 1), 1ull << PH_DT_INT64);
}
END_TEST

static char *slurp(FILE *f)
{
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 4096)
            buf = realloc(buf, cap *= 2);
    }
    buf[n] = 0;
    return buf;
}

START_TEST(table_matches_python_onnx)
{
    if (system("/usr/bin/python3 -c 'import onnx.defs' 2>/dev/null") != 0) {
        fprintf(stderr, "table_matches_python_onnx: skipped (no python3-onnx)\n");
        return;
    }
    char script[] = "/tmp/ph_schema_dump.XXXXXX";
    int fd = mkstemp(script);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, python_dump, sizeof python_dump - 1), (ssize_t)(sizeof python_dump - 1));
    close(fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", script);
    FILE *py = popen(cmd, "r");
    ck_assert_ptr_nonnull(py);
    char *theirs = slurp(py);
    ck_assert_int_eq(pclose(py), 0);
    unlink(script);
    char *ours_buf = NULL;
    size_t ours_len = 0;
    FILE *mem = open_memstream(&ours_buf, &ours_len);
    dump(mem);
    fclose(mem);
    /* the first line that differs, if any */
    const char *a = ours_buf, *b = theirs;
    size_t line = 1;
    while (*a && *b && *a == *b) {
        line += *a == '\n';
        a++, b++;
    }
    ck_assert_msg(!*a && !*b, "line %zu differs:\n  ours:   %.200s\n  python: %.200s", line, a, b);
    ck_assert_uint_gt(line, 400);
    free(ours_buf);
    free(theirs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("schema");
    TCase *tc = tcase_create("schema");
    tcase_add_test(tc, lookups_follow_the_spec);
    tcase_add_test(tc, parameter_types_follow_the_spec);
    tcase_add_test(tc, table_matches_python_onnx);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
