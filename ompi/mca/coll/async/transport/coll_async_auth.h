/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the secrets that keep the job's transports to the job.
 *
 * Every process draws a random key at start-up and publishes it only through
 * Open MPI's modex, which only the processes of the job (and of jobs connected
 * to it) and their launcher can read. A peer proves it belongs by answering a
 * fresh challenge with a MAC keyed by the key of the process it talks to, so
 * the key itself never crosses the network; names and group addresses derived
 * from a key cannot be guessed ahead of time by another user.
 *
 * The MAC is SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed pseudo-random
 * function with a 128-bit key and a 64-bit tag, made for short inputs.
 *
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_AUTH_H
#define MCA_COLL_ASYNC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLL_ASYNC_KEY_BYTES 16

struct coll_async_key {
    uint8_t bytes[COLL_ASYNC_KEY_BYTES];
};

/* Fills key (or any buffer: a challenge, a nonce) from the kernel's random
 * source. 0 or -errno. */
int coll_async_random(void *buffer, size_t length);

/* SipHash-2-4 of data under key. */
uint64_t coll_async_mac(const struct coll_async_key *key, const void *data, size_t length);

/* Tags compared in constant time: how far a guess matched must not show. */
bool coll_async_tags_equal(uint64_t a, uint64_t b);

#endif /* MCA_COLL_ASYNC_AUTH_H */
