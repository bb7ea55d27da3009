/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: random keys and SipHash-2-4. See coll_async_auth.h.
 */

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "coll_async_auth.h"

int coll_async_random(void *buffer, size_t length)
{
    char *p = buffer;

    while (length > 0) {
        ssize_t got = getrandom(p, length, 0);

        if (got < 0) {
            if (EINTR == errno) {
                continue;
            }
            return -errno;
        }
        p += got;
        length -= (size_t) got;
    }
    return 0;
}

static uint64_t rotl(uint64_t x, int bits)
{
    return x << bits | x >> (64 - bits);
}

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t value = 0;

    for (int i = 7; i >= 0; --i) {
        value = value << 8 | p[i];
    }
    return value;
}

struct sip {
    uint64_t v0, v1, v2, v3;
};

static void sip_rounds(struct sip *s, int rounds)
{
    while (rounds-- > 0) {
        s->v0 += s->v1;
        s->v1 = rotl(s->v1, 13) ^ s->v0;
        s->v0 = rotl(s->v0, 32);
        s->v2 += s->v3;
        s->v3 = rotl(s->v3, 16) ^ s->v2;
        s->v0 += s->v3;
        s->v3 = rotl(s->v3, 21) ^ s->v0;
        s->v2 += s->v1;
        s->v1 = rotl(s->v1, 17) ^ s->v2;
        s->v2 = rotl(s->v2, 32);
    }
}

static void sip_absorb(struct sip *s, uint64_t word)
{
    s->v3 ^= word;
    sip_rounds(s, 2);
    s->v0 ^= word;
}

uint64_t coll_async_mac(const struct coll_async_key *key, const void *data, size_t length)
{
    uint64_t k0 = load_le64(key->bytes), k1 = load_le64(key->bytes + 8);
    struct sip s = {.v0 = k0 ^ 0x736f6d6570736575ULL,
                    .v1 = k1 ^ 0x646f72616e646f6dULL,
                    .v2 = k0 ^ 0x6c7967656e657261ULL,
                    .v3 = k1 ^ 0x7465646279746573ULL};
    const uint8_t *p = data;
    size_t left = length;
    uint8_t last[8] = {0};

    for (; left >= 8; left -= 8, p += 8) {
        sip_absorb(&s, load_le64(p));
    }
    memcpy(last, p, left);
    last[7] = (uint8_t) length;
    sip_absorb(&s, load_le64(last));
    s.v2 ^= 0xff;
    sip_rounds(&s, 4);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

bool coll_async_tags_equal(uint64_t a, uint64_t b)
{
    uint64_t diff = a ^ b;

    /* Folded without a branch on the data. */
    diff |= diff >> 32;
    diff |= diff >> 16;
    diff |= diff >> 8;
    return 0 == (diff & 0xff);
}
