/* tests/test_hashmap.c - the public hash map (passhost/hashmap.h): keys
 * compared by the caller's function or by pointer, collisions, growth,
 * iteration, and the hashing helpers. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/passhost.h"

static int same_string(const void *a, const void *b, void *user)
{
    (*(int *)user)++;
    return strcmp(a, b) == 0;
}

START_TEST(strings_by_content)
{
    int calls = 0;
    ph_hmap *m = ph_hmap_new(same_string, &calls);
    ck_assert_ptr_nonnull(m);
    char a1[] = "alpha", a2[] = "alpha", b[] = "beta";
    uint64_t ha = ph_hash_bytes(0, "alpha", 5), hb = ph_hash_bytes(0, "beta", 4);
    ck_assert(ha != hb);
    ck_assert_ptr_null(ph_hmap_get(m, ha, a1)); /* empty map */
    int created;
    void **slot = ph_hmap_slot(m, ha, a1, &created);
    ck_assert(slot && created);
    *slot = (void *)1;
    slot = ph_hmap_slot(m, ha, a2, &created); /* another pointer, same string */
    ck_assert(slot && !created);
    ck_assert_ptr_eq(*slot, (void *)1);
    ck_assert_ptr_eq(ph_hmap_key(m, ha, a2), a1); /* the stored key */
    ck_assert_int_eq(ph_hmap_put(m, hb, b, (void *)2), 0);
    ck_assert_ptr_eq(ph_hmap_get(m, hb, "beta"), (void *)2);
    ck_assert_ptr_null(ph_hmap_get(m, ha, "alphx")); /* equal hash claimed, other key */
    ck_assert_uint_eq(ph_hmap_count(m), 2);
    ck_assert_int_gt(calls, 0);
    ph_hmap_clear(m);
    ck_assert_uint_eq(ph_hmap_count(m), 0);
    ck_assert_ptr_null(ph_hmap_get(m, ha, a1));
    ph_hmap_free(m);
}
END_TEST

/* Every key hashed alike: probing must still tell them apart; pointers as
 * keys (eq NULL); growth keeps every entry; iteration sees each once. */
START_TEST(collisions_growth_iteration)
{
    ph_hmap *m = ph_hmap_new(NULL, NULL);
    enum { N = 1000 };
    static int keys[N];
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(ph_hmap_put(m, i % 3 ? ph_hash_ptr(&keys[i]) : 42, &keys[i], (void *)(uintptr_t)(i + 1)), 0);
    ck_assert_uint_eq(ph_hmap_count(m), N);
    for (int i = 0; i < N; i++)
        ck_assert_ptr_eq(ph_hmap_get(m, i % 3 ? ph_hash_ptr(&keys[i]) : 42, &keys[i]), (void *)(uintptr_t)(i + 1));
    ck_assert_ptr_null(ph_hmap_get(m, 42, &keys[1])); /* right key, wrong hash */
    size_t pos = 0, seen = 0;
    const void *k;
    void *v;
    uint64_t sum = 0;
    while (ph_hmap_next(m, &pos, &k, &v)) {
        seen++;
        sum += (uintptr_t)v;
        ck_assert_ptr_eq(k, &keys[(uintptr_t)v - 1]);
    }
    ck_assert_uint_eq(seen, N);
    ck_assert_uint_eq(sum, (uint64_t)N * (N + 1) / 2);
    /* a NULL key is a key like any other */
    ck_assert_int_eq(ph_hmap_put(m, 7, NULL, (void *)3), 0);
    ck_assert_ptr_eq(ph_hmap_get(m, 7, NULL), (void *)3);
    ck_assert_ptr_null(ph_hmap_key(m, 7, NULL));
    ck_assert_int_eq(ph_hmap_reserve(m, 5000), 0);
    ck_assert_uint_eq(ph_hmap_count(m), N + 1);
    ck_assert_ptr_eq(ph_hmap_get(m, 42, &keys[0]), (void *)1);
    ph_hmap_free(m);
    ph_hmap_free(NULL);
}
END_TEST

START_TEST(hash_helpers)
{
    /* any alignment and length; order matters; seeds differ */
    char buf[80];
    for (int i = 0; i < 80; i++)
        buf[i] = (char)i;
    ck_assert(ph_hash_bytes(1, buf, 64) == ph_hash_bytes(1, buf, 64));
    ck_assert(ph_hash_bytes(1, buf, 64) != ph_hash_bytes(2, buf, 64));
    ck_assert(ph_hash_bytes(1, buf, 63) != ph_hash_bytes(1, buf, 64));
    char moved[81];
    memcpy(moved + 1, buf, 80);
    ck_assert(ph_hash_bytes(5, moved + 1, 77) == ph_hash_bytes(5, buf, 77));
    ck_assert(ph_hash_mix(ph_hash_mix(0, 1), 2) != ph_hash_mix(ph_hash_mix(0, 2), 1));
    ck_assert(ph_hash_ptr(buf) != ph_hash_ptr(buf + 1));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hashmap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, strings_by_content);
    tcase_add_test(tc, collisions_growth_iteration);
    tcase_add_test(tc, hash_helpers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
