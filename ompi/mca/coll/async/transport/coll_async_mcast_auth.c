/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: multicast group secrets and packet checks. See
 * coll_async_mcast_auth.h.
 */

#include <endian.h>
#include <string.h>

#include "coll_async_mcast_auth.h"

/* MAC(secret, label || cid): one derivation, labels apart. */
static uint64_t derive(const struct coll_async_key *secret, const char label[16], uint32_t cid)
{
    uint8_t input[20];

    memcpy(input, label, 16);
    input[16] = (uint8_t) (cid >> 24);
    input[17] = (uint8_t) (cid >> 16);
    input[18] = (uint8_t) (cid >> 8);
    input[19] = (uint8_t) cid;
    return coll_async_mac(secret, input, sizeof(input));
}

void coll_async_mcast_derive(const struct coll_async_key *secret, uint32_t cid,
                             uint64_t *group_id, struct coll_async_key *group_key)
{
    uint64_t halves[2] = {derive(secret, "cav mcast key 0\0", cid),
                          derive(secret, "cav mcast key 1\0", cid)};

    *group_id = derive(secret, "cav mcast group\0", cid);
    memcpy(group_key->bytes, halves, sizeof(group_key->bytes));
}

void coll_async_mcast_seal(const struct coll_async_key *key, uint8_t *packet, size_t covered,
                           size_t tag_at)
{
    uint64_t tag;

    memset(packet + tag_at, 0, 8);
    tag = htobe64(coll_async_mac(key, packet, covered));
    memcpy(packet + tag_at, &tag, 8);
}

bool coll_async_mcast_tag_ok(const struct coll_async_key *key, uint8_t *packet, size_t covered,
                             size_t tag_at)
{
    uint64_t tag, diff;

    memcpy(&tag, packet + tag_at, 8);
    memset(packet + tag_at, 0, 8);
    diff = be64toh(tag) ^ coll_async_mac(key, packet, covered);
    /* No early exit on the first byte that differs. */
    diff |= diff >> 32;
    diff |= diff >> 16;
    diff |= diff >> 8;
    return 0 == (diff & 0xff);
}

bool coll_async_mcast_source_is(const uint8_t *grh, const uint8_t *gid)
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    if (6 == grh[0] >> 4) {
        return 0 == memcmp(grh + 8, gid, 16);
    }
    if (4 == grh[20] >> 4) {
        return 0 == memcmp(gid, v4_mapped, sizeof(v4_mapped))
               && 0 == memcmp(grh + 20 + 12, gid + 12, 4);
    }
    return false;
}
