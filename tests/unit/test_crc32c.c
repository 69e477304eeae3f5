/* test_crc32c.c: CRC-32C known vectors, hardware == software on random
 * buffers of every length up to 1000 at every alignment, and chaining. */
#include "rmq_crc32c.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define BUF_MAX 1000

/* Fills buf with deterministic pseudo-random bytes from seed. */
static void fill_random(unsigned char *buf, size_t len, uint32_t seed)
{
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (unsigned char)x;
    }
}

START_TEST(test_check_vector)
{
    ck_assert_uint_eq(rmq_crc32c(0, "123456789", 9), 0xE3069283u);
    ck_assert_uint_eq(rmq_crc32c_sw(0, "123456789", 9), 0xE3069283u);
}
END_TEST

START_TEST(test_known_vectors)
{
    unsigned char zeros[32] = { 0 }, ones[32];
    memset(ones, 0xff, sizeof(ones));
    ck_assert_uint_eq(rmq_crc32c(0, zeros, sizeof(zeros)), 0x8A9136AAu);
    ck_assert_uint_eq(rmq_crc32c(0, ones, sizeof(ones)), 0x62A8AB43u);
    ck_assert_uint_eq(rmq_crc32c_sw(0, zeros, sizeof(zeros)), 0x8A9136AAu);
    ck_assert_uint_eq(rmq_crc32c_sw(0, ones, sizeof(ones)), 0x62A8AB43u);
}
END_TEST

START_TEST(test_empty_keeps_crc)
{
    ck_assert_uint_eq(rmq_crc32c(0, "", 0), 0);
    ck_assert_uint_eq(rmq_crc32c(0x12345678u, "", 0), 0x12345678u);
    ck_assert_uint_eq(rmq_crc32c_sw(0x12345678u, "", 0), 0x12345678u);
}
END_TEST

START_TEST(test_hw_equals_sw_all_lengths_and_alignments)
{
    unsigned char *buf = malloc(BUF_MAX + 8);
    ck_assert_ptr_nonnull(buf);
    fill_random(buf, BUF_MAX + 8, 0xC0FFEEu);
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len <= BUF_MAX; len++)
            ck_assert_uint_eq(rmq_crc32c(0, buf + off, len), rmq_crc32c_sw(0, buf + off, len));
    free(buf);
}
END_TEST

START_TEST(test_chaining_equals_one_call)
{
    unsigned char buf[300];
    fill_random(buf, sizeof(buf), 42);
    uint32_t whole = rmq_crc32c(0, buf, sizeof(buf));
    ck_assert_uint_eq(whole, rmq_crc32c_sw(0, buf, sizeof(buf)));
    for (size_t cut = 0; cut <= sizeof(buf); cut++) {
        uint32_t hw = rmq_crc32c(rmq_crc32c(0, buf, cut), buf + cut, sizeof(buf) - cut);
        uint32_t sw = rmq_crc32c_sw(rmq_crc32c_sw(0, buf, cut), buf + cut, sizeof(buf) - cut);
        ck_assert_uint_eq(hw, whole);
        ck_assert_uint_eq(sw, whole);
    }
}
END_TEST

START_TEST(test_chaining_bytewise)
{
    const char *s = "123456789";
    uint32_t crc = 0;
    for (size_t i = 0; i < 9; i++)
        crc = rmq_crc32c(crc, s + i, 1);
    ck_assert_uint_eq(crc, 0xE3069283u);
}
END_TEST

static Suite *crc32c_suite(void)
{
    Suite *s = suite_create("crc32c");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_check_vector);
    tcase_add_test(tc, test_known_vectors);
    tcase_add_test(tc, test_empty_keeps_crc);
    tcase_add_test(tc, test_hw_equals_sw_all_lengths_and_alignments);
    tcase_add_test(tc, test_chaining_equals_one_call);
    tcase_add_test(tc, test_chaining_bytewise);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(crc32c_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
