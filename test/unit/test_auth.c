/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_auth.c: SipHash-2-4 against the reference vectors of
 * its paper (key 00..0f, messages 00, 00 01, ..., of 0 to 63 bytes), and the
 * random source; of what the RDMA transports build on it, with no device: the
 * verbs handshake's encodings and tags (coll_async_verbs_handshake.c), the
 * multicast group's derivation, packet tags and source check
 * (coll_async_mcast_auth.c).
 *
 * test_auth --bench prints what a MAC costs against a copy, for a header and
 * for packet payloads (a report, not a test).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/transport/coll_async_auth.h"
#include "../../ompi/mca/coll/async/transport/coll_async_mcast_auth.h"
#include "../../ompi/mca/coll/async/transport/coll_async_verbs_handshake.h"

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

/* The verbs handshake */

static struct coll_async_verbs_request a_request(void)
{
    struct coll_async_verbs_request request = {.from = 3, .to = 7, .link = 1,
                                               .eager_limit = 8192};

    for (int i = 0; i < COLL_ASYNC_VERBS_NONCE_BYTES; ++i) {
        request.nonce[i] = (uint8_t) (0x40 + i);
    }
    return request;
}

/* What goes out comes back; what is short, or of another protocol, does not;
 * rdma_cm's zero padding is no harm. */
static void test_handshake_encodings(void **state)
{
    struct coll_async_verbs_request request = a_request(), read;
    struct coll_async_verbs_accept accept = {.receives = 2, .eager_limit = 8192,
                                             .tag = 0x0123456789abcdefULL}, got;
    uint8_t data[196] = {0};

    (void) state;
    assert_true(COLL_ASYNC_VERBS_REQUEST_BYTES <= 56 && COLL_ASYNC_VERBS_ACCEPT_BYTES <= 196);
    coll_async_verbs_request_encode(&request, data);
    assert_int_equal(coll_async_verbs_request_decode(data, 56, &read), 0);
    assert_true(read.from == 3 && read.to == 7 && read.link == 1 && read.eager_limit == 8192);
    assert_memory_equal(read.nonce, request.nonce, sizeof(read.nonce));
    assert_int_equal(coll_async_verbs_request_decode(data, COLL_ASYNC_VERBS_REQUEST_BYTES - 1,
                                                     &read),
                     -EPROTO);
    data[3] ^= 1; /* "cav1": the protocol without authentication */
    assert_int_equal(coll_async_verbs_request_decode(data, 56, &read), -EPROTO);

    memset(accept.nonce, 0x99, sizeof(accept.nonce));
    coll_async_verbs_accept_encode(&accept, data);
    assert_int_equal(coll_async_verbs_accept_decode(data, 196, &got), 0);
    assert_int_equal(got.receives, 2);
    assert_int_equal(got.eager_limit, 8192);
    assert_memory_equal(got.nonce, accept.nonce, sizeof(got.nonce));
    assert_true(got.tag == accept.tag);
    assert_int_equal(coll_async_verbs_accept_decode(data, 39, &got), -EPROTO);

    coll_async_verbs_reject_encode(COLL_ASYNC_VERBS_REJECT_BUSY, data);
    assert_int_equal(coll_async_verbs_reject_decode(data, 148), COLL_ASYNC_VERBS_REJECT_BUSY);
    assert_int_equal(coll_async_verbs_reject_decode(data, 4), 0);
    assert_non_null(strstr(coll_async_verbs_reject_text(0), "no coll/async listener"));
}

/* Each tag depends on the key and on every field it covers; ACCEPT never
 * stands for PROOF. */
static void test_handshake_tags(void **state)
{
    struct coll_async_key key = reference_key(), other = key;
    struct coll_async_verbs_request request = a_request(), changed;
    uint8_t nonce[COLL_ASYNC_VERBS_NONCE_BYTES], nonce2[COLL_ASYNC_VERBS_NONCE_BYTES];
    uint64_t proof, accept;

    (void) state;
    memset(nonce, 0x17, sizeof(nonce));
    memcpy(nonce2, nonce, sizeof(nonce));
    nonce2[15] ^= 0x80;
    proof = coll_async_verbs_proof_tag(&key, &request, nonce);
    accept = coll_async_verbs_accept_tag(&key, &request, nonce);
    assert_true(proof != accept);
    assert_true(proof == coll_async_verbs_proof_tag(&key, &request, nonce));
    other.bytes[15] ^= 1;
    assert_true(proof != coll_async_verbs_proof_tag(&other, &request, nonce));
    assert_true(proof != coll_async_verbs_proof_tag(&key, &request, nonce2)); /* a replay */
    for (int field = 0; field < 5; ++field) {
        changed = request;
        switch (field) {
        case 0: changed.from ^= 1; break;
        case 1: changed.to ^= 1; break;
        case 2: changed.link ^= 1; break;
        case 3: changed.eager_limit ^= 1; break;
        default: changed.nonce[0] ^= 1; break;
        }
        assert_true(proof != coll_async_verbs_proof_tag(&key, &changed, nonce));
        assert_true(accept != coll_async_verbs_accept_tag(&key, &changed, nonce));
    }
    assert_true(coll_async_tags_equal(proof, proof));
    assert_false(coll_async_tags_equal(proof, proof ^ (1ULL << 63)));
    assert_false(coll_async_tags_equal(proof, proof ^ 1));
}

/* Multicast groups */

/* The same secret and context id give the same group everywhere; another of
 * either, another group, its address (from the id's low bits) included. */
static void test_mcast_derive(void **state)
{
    struct coll_async_key secret = reference_key(), other = secret, k1, k2;
    uint64_t id1, id2;

    (void) state;
    coll_async_mcast_derive(&secret, 5, &id1, &k1);
    coll_async_mcast_derive(&secret, 5, &id2, &k2);
    assert_true(id1 == id2);
    assert_memory_equal(&k1, &k2, sizeof(k1));
    coll_async_mcast_derive(&secret, 6, &id2, &k2);
    assert_true(id1 != id2 && (id1 & 0x3ffff) != (id2 & 0x3ffff));
    assert_memory_not_equal(&k1, &k2, sizeof(k1));
    other.bytes[0] ^= 1;
    coll_async_mcast_derive(&other, 5, &id2, &k2);
    assert_true(id1 != id2);
    assert_memory_not_equal(&k1, &k2, sizeof(k1));
    assert_memory_not_equal(&k1, &secret, sizeof(k1));
}

/* A sealed packet passes; one changed bit in what the tag covers, or another
 * key, fails; the payload beyond it is not covered (the choice the header of
 * coll_async_mcast_auth.h explains). */
static void test_mcast_seal(void **state)
{
    enum { COVERED = 48, LENGTH = 1024, TAG_AT = 24 };
    struct coll_async_key key = reference_key(), other = key;
    uint8_t packet[LENGTH], copy[LENGTH];

    (void) state;
    for (int i = 0; i < LENGTH; ++i) {
        packet[i] = (uint8_t) (i * 7);
    }
    coll_async_mcast_seal(&key, packet, COVERED, TAG_AT);
    memcpy(copy, packet, LENGTH);
    assert_true(coll_async_mcast_tag_ok(&key, copy, COVERED, TAG_AT));
    for (int i = 0; i < COVERED * 8; ++i) {
        memcpy(copy, packet, LENGTH);
        copy[i / 8] ^= (uint8_t) (1 << (i % 8));
        assert_false(coll_async_mcast_tag_ok(&key, copy, COVERED, TAG_AT));
    }
    memcpy(copy, packet, LENGTH);
    copy[COVERED + 100] ^= 1;
    assert_true(coll_async_mcast_tag_ok(&key, copy, COVERED, TAG_AT));
    memcpy(copy, packet, LENGTH);
    other.bytes[3] ^= 4;
    assert_false(coll_async_mcast_tag_ok(&other, copy, COVERED, TAG_AT));
}

/* The source a RoCE receive's network header names: an IPv6 GRH's source GID,
 * or RoCE v2's IPv4 source for an IPv4-mapped GID. */
static void test_mcast_source(void **state)
{
    uint8_t grh[COLL_ASYNC_MCAST_GRH_BYTES] = {0}, gid[16] = {0}, v4[16] = {0};

    (void) state;
    for (int i = 0; i < 16; ++i) {
        gid[i] = (uint8_t) (0xfe - i);
    }
    assert_false(coll_async_mcast_source_is(grh, gid)); /* no header at all */
    grh[0] = 0x60;
    memcpy(grh + 8, gid, 16);
    assert_true(coll_async_mcast_source_is(grh, gid));
    grh[20] ^= 1;
    assert_false(coll_async_mcast_source_is(grh, gid));

    memset(grh, 0, sizeof(grh));
    v4[10] = v4[11] = 0xff;
    memcpy(v4 + 12, "\x0a\x4d\x00\x01", 4); /* 10.77.0.1 */
    grh[20] = 0x45;
    memcpy(grh + 32, v4 + 12, 4);
    assert_true(coll_async_mcast_source_is(grh, v4));
    grh[35] = 2; /* 10.77.0.2 */
    assert_false(coll_async_mcast_source_is(grh, v4));
    grh[35] = 1;
    v4[10] = 0; /* not IPv4-mapped: no IPv4 source can be it */
    assert_false(coll_async_mcast_source_is(grh, v4));
}

/* --bench */

static double seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int bench(void)
{
    static const size_t sizes[] = {48, 1024 - 48, 4096 - 48};
    static uint8_t data[4096], copy[4096];
    struct coll_async_key key = reference_key();
    volatile uint64_t sink = 0;

    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        const int rounds = 20000;
        double start, mac, memcpy_ns;

        for (int r = -rounds / 10; r < rounds; ++r) { /* a tenth to warm up */
            if (0 == r) {
                start = seconds();
            }
            data[0] = (uint8_t) r;
            sink += coll_async_mac(&key, data, sizes[s]);
        }
        mac = (seconds() - start) * 1e9 / rounds;
        start = seconds();
        for (int r = 0; r < rounds; ++r) {
            data[0] = (uint8_t) r;
            memcpy(copy, data, sizes[s]);
            sink += copy[sizes[s] - 1];
        }
        memcpy_ns = (seconds() - start) * 1e9 / rounds;
        printf("bench: %4zu bytes: SipHash-2-4 %7.0f ns (%.2f GB/s), memcpy %5.0f ns\n",
               sizes[s], mac, (double) sizes[s] / mac, memcpy_ns);
    }
    return 0 == sink; /* never: keeps the loops */
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_vectors),
        cmocka_unit_test(test_tag_depends_on_key_and_data),
        cmocka_unit_test(test_random_differs),
        cmocka_unit_test(test_handshake_encodings),
        cmocka_unit_test(test_handshake_tags),
        cmocka_unit_test(test_mcast_derive),
        cmocka_unit_test(test_mcast_seal),
        cmocka_unit_test(test_mcast_source),
    };

    if (argc > 1 && 0 == strcmp(argv[1], "--bench")) {
        return bench();
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
