/*
 * Unit tests of coll_async_auth.c: SipHash-2-4 against the reference vectors of
 * its paper (key 00..0f, messages 00, 00 01, ..., of 0 to 63 bytes), and the
 * random source.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/transport/coll_async_auth.h"

static struct coll_async_key reference_key(void)
{
    struct coll_async_key key;

    for (int i = 0; i < COLL_ASYNC_KEY_BYTES; ++i) {
        key.bytes[i] = (uint8_t) i;
    }
    return key;
}

/* Messages of 0, 1, 7, 8, 15 and 63 bytes: every path through the word loop
 * and the tail. */
static void test_reference_vectors(void **state)
{
    static const struct {
        size_t length;
        uint64_t tag;
    } vectors[] = {
        {0, 0x726fdb47dd0e0e31ULL},  {1, 0x74f839c593dc67fdULL},
        {7, 0xab0200f58b01d137ULL},  {8, 0x93f5f5799a932462ULL},
        {15, 0xa129ca6149be45e5ULL}, {63, 0x958a324ceb064572ULL},
    };
    struct coll_async_key key = reference_key();
    uint8_t message[64];

    (void) state;
    for (int i = 0; i < 64; ++i) {
        message[i] = (uint8_t) i;
    }
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); ++i) {
        assert_int_equal(coll_async_mac(&key, message, vectors[i].length), vectors[i].tag);
    }
}

/* One bit of the key or the message changes the tag. */
static void test_tag_depends_on_key_and_data(void **state)
{
    struct coll_async_key key = reference_key(), other = key;
    const char data[] = "hello, rank 3";
    char changed[sizeof(data)];
    uint64_t tag = coll_async_mac(&key, data, sizeof(data));

    (void) state;
    other.bytes[5] ^= 0x10;
    assert_int_not_equal(coll_async_mac(&other, data, sizeof(data)), tag);
    memcpy(changed, data, sizeof(data));
    changed[7] ^= 1;
    assert_int_not_equal(coll_async_mac(&key, changed, sizeof(changed)), tag);
}

static void test_random_differs(void **state)
{
    struct coll_async_key a, b;

    (void) state;
    assert_int_equal(coll_async_random(&a, sizeof(a)), 0);
    assert_int_equal(coll_async_random(&b, sizeof(b)), 0);
    assert_memory_not_equal(&a, &b, sizeof(a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_vectors),
        cmocka_unit_test(test_tag_depends_on_key_and_data),
        cmocka_unit_test(test_random_differs),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
