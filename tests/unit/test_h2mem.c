/* test_h2mem.c: the HTTP/2 connection's allocator (rmq_h2mem.c): blocks
 * of every size class and past them, realloc keeping the bytes, calloc
 * zeroing, a freed block handed back to the next request of its class
 * (not under AddressSanitizer, where the pool caches nothing), and the
 * pool outliving its release while blocks are out (a leak would show
 * under LeakSanitizer). */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "rmq_h2mem.h"

START_TEST(test_sizes_and_bytes)
{
    rmq_h2mem_t *pool = rmq_h2mem_new();
    static const size_t sizes[] = { 0, 1, 31, 32, 33, 100, 512, 4095, 4096, 4097, 70000 };
    uint8_t *p[sizeof(sizes) / sizeof(sizes[0])];

    ck_assert_ptr_nonnull(pool);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        p[i] = rmq_h2mem_alloc(pool, sizes[i]);
        ck_assert_ptr_nonnull(p[i]);
        ck_assert_uint_eq((uintptr_t)p[i] % _Alignof(max_align_t), 0);
        memset(p[i], (int)i, sizes[i]);
    }
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (size_t j = 0; j < sizes[i]; j++)
            ck_assert_uint_eq(p[i][j], i);
        rmq_h2mem_free(pool, p[i]);
    }
    rmq_h2mem_free(pool, NULL);
    rmq_h2mem_release(pool);
}
END_TEST

START_TEST(test_realloc_and_calloc)
{
    rmq_h2mem_t *pool = rmq_h2mem_new();
    uint8_t *p = rmq_h2mem_realloc(pool, NULL, 20);

    for (int i = 0; i < 20; i++)
        p[i] = (uint8_t)i;
    p = rmq_h2mem_realloc(pool, p, 10);        /* shrinks in place */
    p = rmq_h2mem_realloc(pool, p, 5000);      /* a small block becomes a large one */
    for (int i = 0; i < 20; i++)
        ck_assert_uint_eq(p[i], i);
    p = rmq_h2mem_realloc(pool, p, 9000);
    for (int i = 0; i < 20; i++)
        ck_assert_uint_eq(p[i], i);
    rmq_h2mem_free(pool, p);
    uint8_t *z = rmq_h2mem_alloc(pool, 64);
    memset(z, 0xff, 64);
    rmq_h2mem_free(pool, z);
    z = rmq_h2mem_calloc(pool, 8, 8);
    for (int i = 0; i < 64; i++)
        ck_assert_uint_eq(z[i], 0);
    rmq_h2mem_free(pool, z);
    ck_assert_ptr_null(rmq_h2mem_calloc(pool, SIZE_MAX / 2, 4));
    rmq_h2mem_release(pool);
}
END_TEST

START_TEST(test_freed_block_comes_back)
{
#ifndef __SANITIZE_ADDRESS__
    rmq_h2mem_t *pool = rmq_h2mem_new();
    void *a = rmq_h2mem_alloc(pool, 100);
    void *b = rmq_h2mem_alloc(pool, 100);

    rmq_h2mem_free(pool, a);
    ck_assert_ptr_eq(rmq_h2mem_alloc(pool, 120), a);   /* the same class: 128 bytes */
    void *other = rmq_h2mem_alloc(pool, 300);
    ck_assert_ptr_ne(other, a);
    rmq_h2mem_free(pool, a);
    rmq_h2mem_free(pool, b);
    rmq_h2mem_free(pool, other);
    rmq_h2mem_release(pool);
#endif
}
END_TEST

/* nghttp2 buffers (an rcbuf a call keeps) can outlive the session: the
 * pool stays until the last of them comes back. */
START_TEST(test_release_with_blocks_out)
{
    rmq_h2mem_t *pool = rmq_h2mem_new();
    nghttp2_mem *mem = rmq_h2mem_mem(pool);
    void *kept = mem->malloc(40, mem->mem_user_data);
    void *big = mem->calloc(1, 10000, mem->mem_user_data);
    void *cached = mem->malloc(40, mem->mem_user_data);

    mem->free(cached, mem->mem_user_data);
    rmq_h2mem_release(pool);
    memset(kept, 1, 40);
    mem->free(big, mem->mem_user_data);
    mem->free(kept, mem->mem_user_data);   /* the last one: the pool goes */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("h2mem");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, test_sizes_and_bytes);
    tcase_add_test(tc, test_realloc_and_calloc);
    tcase_add_test(tc, test_freed_block_comes_back);
    tcase_add_test(tc, test_release_with_blocks_out);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
