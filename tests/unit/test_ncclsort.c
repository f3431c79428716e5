/* test_ncclsort — ncclsched_sort_sends, the sort of a picosecond's sends
 * (coll/ncclsched.h), against GLib's g_array_sort by key, its oracle:
 * every length around the insertion sort's bound and up to thousands,
 * keys that differ in one byte, in a few, in all eight, given shuffled,
 * in the order made and reversed; each send keeps its connection and data. */
#include "coll/ncclsched.h"

#include "testmain.h"

#include <check.h>
#include <glib.h>

static int key_cmp(gconstpointer a, gconstpointer b)
{
    uint64_t x = ((const Send *)a)->key, y = ((const Send *)b)->key;
    return (x > y) - (x < y);
}

/* n sends with distinct keys `key(i)`, shuffled (order 0), as made (1)
 * or reversed (2); asserts the sort gives g_array_sort's order, payloads
 * attached. */
static void check_sort(GRand *rng, size_t n, uint64_t (*key)(size_t i, GRand *rng), int order)
{
    GArray *want = g_array_new(FALSE, FALSE, sizeof(Send));
    GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    uint64_t *keys = g_new(uint64_t, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        do
            keys[i] = key(i, rng);
        while (g_hash_table_contains(seen, &keys[i]));
        g_hash_table_add(seen, &keys[i]);
        Send x = {.key = keys[i], .conn = (int32_t)i, .data = keys[i] ^ UINT64_C(0x5555)};
        g_array_append_val(want, x);
    }
    for (size_t i = n; i > 1; i--) {
        size_t j = order == 0 ? (size_t)g_rand_int_range(rng, 0, (gint32)i) : order == 2 ? n - i : i - 1;
        if (order == 2 && j >= i - 1)
            break;
        Send t = g_array_index(want, Send, i - 1);
        g_array_index(want, Send, i - 1) = g_array_index(want, Send, j);
        g_array_index(want, Send, j) = t;
    }
    Send *got = g_memdup2(want->data, n * sizeof(Send) + 1), *tmp = g_new(Send, n ? n : 1);
    g_array_sort(want, key_cmp);
    ncclsched_sort_sends(got, n, tmp);
    for (size_t i = 0; i < n; i++) {
        const Send *w = &g_array_index(want, Send, i);
        ck_assert_uint_eq(got[i].key, w->key);
        ck_assert_int_eq(got[i].conn, w->conn);
        ck_assert_uint_eq(got[i].data, w->data);
    }
    g_free(got);
    g_free(tmp);
    g_free(keys);
    g_hash_table_destroy(seen);
    g_array_free(want, TRUE);
}

static uint64_t key_random(size_t i, GRand *rng)
{
    (void)i;
    return (uint64_t)g_rand_int(rng) << 32 | g_rand_int(rng);
}

static uint64_t key_low_byte(size_t i, GRand *rng)   /* keys differ in their lowest byte only */
{
    (void)rng;
    return UINT64_C(0xabcdef0123456700) | (i & 0xff);
}

static uint64_t key_top_bit(size_t i, GRand *rng)   /* the lowest byte, and the top bit of the next */
{
    (void)rng;
    return UINT64_C(0x1200) | ((uint64_t)(i >> 8) & 1) << 15 | (i & 0xff);
}

static uint64_t key_tie_shaped(size_t i, GRand *rng)   /* tie_key's shape: rank, channel, kind, send, orbit */
{
    uint64_t k = (uint64_t)g_rand_int_range(rng, 0, 65536);
    return ((((k * 64 + i % 16) * 8 + i % 3) * 8 + i % 4) * 64 + (uint64_t)g_rand_int_range(rng, 0, 8));
}

static uint64_t key_ascending(size_t i, GRand *rng)
{
    (void)rng;
    return (uint64_t)i * 1000003;
}

static uint64_t key_high_bytes(size_t i, GRand *rng)   /* differ in the top byte and the lowest */
{
    (void)rng;
    return (uint64_t)(i % 200) << 56 | (uint64_t)(i / 200);
}

START_TEST(test_against_glib)
{
    GRand *rng = g_rand_new_with_seed(34);
    uint64_t (*keys[])(size_t, GRand *) = {key_random, key_tie_shaped, key_ascending, key_high_bytes};
    size_t lens[] = {0, 1, 2, 3, 23, 24, 25, 26, 100, 257, 1000, 5000};
    for (size_t k = 0; k < G_N_ELEMENTS(keys); k++)
        for (size_t l = 0; l < G_N_ELEMENTS(lens); l++)
            for (int order = 0; order < 3; order++)
                check_sort(rng, lens[l], keys[k], order);
    for (size_t n = 0; n <= 256; n += 37)
        check_sort(rng, n, key_low_byte, 0);
    for (size_t n = 250; n <= 512; n += 131)
        check_sort(rng, n, key_top_bit, 0);
    g_rand_free(rng);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ncclsort");
    TCase *tc = testmain_case(s, "oracle");
    tcase_add_test(tc, test_against_glib);
    return testmain_run(s);
}
