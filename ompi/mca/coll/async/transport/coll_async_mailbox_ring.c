/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the mailbox's ring of descriptors (coll_async_mailbox_internal.h).
 *
 * Many producers, one consumer, bounded: a producer takes the ticket in the
 * header's tail only when the slot it names is free (its seq equals the ticket),
 * with a compare-and-swap, so a full ring is a failed push, never a wait; it
 * publishes the slot by setting seq to ticket + 1, and the owner frees it by
 * setting seq to ticket + slots. Every producer's descriptors stay in its order.
 * Nothing read from the ring is trusted: a descriptor counts only with a valid
 * seal, a MAC under the owner's key, and the next serial of its sender.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_async_mailbox_internal.h"

size_t mailbox_ring_offset(void)
{
    return MAILBOX_HEADER_BYTES;
}

size_t mailbox_staging_offset(void)
{
    return MAILBOX_HEADER_BYTES + (size_t) MAILBOX_SLOTS * sizeof(struct mailbox_slot);
}

size_t mailbox_length(uint64_t chunk_size, uint32_t chunks)
{
    return mailbox_staging_offset() + (size_t) chunk_size * chunks;
}

bool mailbox_ring_push(struct mailbox_map *map, const struct mailbox_desc *desc)
{
    uint64_t *tail = &map->header->tail;
    uint64_t ticket = __atomic_load_n(tail, __ATOMIC_ACQUIRE);

    /* Bounded: a tail others keep moving (or garbage) costs a retry, not a hang. */
    for (int tries = 0; tries < 64; ++tries) {
        struct mailbox_slot *slot = &map->ring[ticket & (MAILBOX_SLOTS - 1)];
        uint64_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);

        if (seq == ticket) {
            if (__atomic_compare_exchange_n(tail, &ticket, ticket + 1, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                memcpy(&slot->desc, desc, sizeof(*desc));
                __atomic_store_n(&slot->seq, ticket + 1, __ATOMIC_RELEASE);
                return true;
            }
        } else if ((int64_t) (seq - ticket) < 0) {
            return false; /* the slot still holds the previous round: full */
        } else {
            ticket = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
        }
    }
    return false;
}

bool mailbox_ring_pop(struct mailbox_map *map, uint64_t *head, struct mailbox_desc *desc)
{
    struct mailbox_slot *slot = &map->ring[*head & (MAILBOX_SLOTS - 1)];

    if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != *head + 1) {
        return false;
    }
    memcpy(desc, &slot->desc, sizeof(*desc));
    __atomic_store_n(&slot->seq, *head + MAILBOX_SLOTS, __ATOMIC_RELEASE);
    ++*head;
    return true;
}

void mailbox_seal(const struct coll_async_key *key, struct mailbox_desc *desc)
{
    desc->mac = coll_async_mac(key, desc, offsetof(struct mailbox_desc, mac));
}

bool mailbox_seal_valid(const struct coll_async_key *key, const struct mailbox_desc *desc)
{
    return coll_async_tags_equal(desc->mac,
                                 coll_async_mac(key, desc, offsetof(struct mailbox_desc, mac)));
}

int mailbox_post(struct mailbox *mb, struct mailbox_peer *peer, struct mailbox_desc *desc)
{
    desc->from = mb->config.self;
    desc->serial = peer->serial_out++;
    mailbox_seal(&peer->key, desc);
    if (0 == peer->nout && mailbox_ring_push(&peer->map, desc)) {
        return 0;
    }
    if (peer->out_first + peer->nout == peer->out_capacity) {
        if (peer->out_first > 0) { /* room at the front: slide down */
            memmove(peer->out, peer->out + peer->out_first, peer->nout * sizeof(*desc));
            peer->out_first = 0;
        } else {
            size_t capacity = 0 == peer->out_capacity ? 64 : 2 * peer->out_capacity;
            struct mailbox_desc *grown = realloc(peer->out, capacity * sizeof(*grown));

            if (NULL == grown) {
                return -ENOMEM;
            }
            peer->out = grown;
            peer->out_capacity = capacity;
        }
    }
    peer->out[peer->out_first + peer->nout++] = *desc;
    return 0;
}

bool mailbox_flush(struct mailbox_peer *peer)
{
    while (peer->nout > 0 && mailbox_ring_push(&peer->map, &peer->out[peer->out_first])) {
        ++peer->out_first;
        --peer->nout;
    }
    if (0 == peer->nout) {
        peer->out_first = 0;
    }
    return 0 == peer->nout;
}
