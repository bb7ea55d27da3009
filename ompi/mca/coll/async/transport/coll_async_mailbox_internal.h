/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the shared-memory transport's insides (coll_async_mailbox.h), shared
 * by its files: the mailbox's layout in the memfd, the descriptors its ring
 * carries, and the transport's private state. coll_async_mailbox.c owns set-up,
 * peers (mapping, liveness, failure) and tear-down; coll_async_mailbox_ring.c the
 * ring and the descriptors' seals; coll_async_mailbox_transfer.c the protocol.
 */

#ifndef MCA_COLL_ASYNC_MAILBOX_INTERNAL_H
#define MCA_COLL_ASYNC_MAILBOX_INTERNAL_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "coll_async_mailbox.h"

#define MAILBOX_MAGIC 0x6d61696c626f7831ULL /* "mailbox1" */
#define MAILBOX_VERSION 1
#define MAILBOX_HEADER_BYTES 4096
#define MAILBOX_SLOTS 1024u /* ring descriptors: a power of two */
#define MAILBOX_DRAIN 256 /* descriptors taken in per progress call */
#define MAILBOX_NO_CHUNK UINT64_MAX
#define MAILBOX_MAX_CHUNKS 4096u
#define MAILBOX_MAX_CHUNK_SIZE (64u << 20)
#define MAILBOX_MAX_INCOMING 4096 /* transfers a peer may start before their receives */
#define MAILBOX_MAX_UNADDED 4096 /* descriptors a process may send before it is added */
#define MAILBOX_EARLY_LIMIT (64u << 20) /* bytes copied out for receives not posted yet */
#define MAILBOX_CMA_PIECE (1u << 20)        /* one process_vm_readv */
#define MAILBOX_CMA_BUDGET (4u << 20)       /* pulled per progress call, all peers */
#define MAILBOX_LIVENESS_NS 100000000ull    /* how often a waited-on peer is checked */
#define MAILBOX_CMA_REFUSED 1               /* DONE's status: pull refused, send staged */

/* The owner's header: what a peer checks before it trusts the rest. */
struct mailbox_header {
    uint64_t magic;
    uint32_t version, pid;
    uint64_t nonce;
    uint64_t chunk_size;
    uint32_t chunks, slots;
    uint64_t token; /* MAC under the owner's key of the fields above */
    alignas(64) uint64_t tail; /* producers' next ticket */
};

enum mailbox_type {
    DESC_DATA = 1, /* tag, offset, length, total; arg: the sender's chunk */
    DESC_CREDIT,   /* arg: the receiver's copy of the chunk is done */
    DESC_RTS,      /* tag, total; arg: the sender's buffer, to pull with CMA */
    DESC_DONE,     /* tag; arg: the receive's status (int64), or MAILBOX_CMA_REFUSED */
    DESC_BYE,      /* the sender destroyed its transport: nothing more comes */
};

struct mailbox_desc {
    uint32_t type, from;
    uint64_t tag, offset, total, arg;
    uint32_t length;
    uint32_t serial; /* per sender and receiver: a replay shows */
    uint64_t mac;    /* under the receiver's key, of the fields above */
};

struct mailbox_slot {
    uint64_t seq; /* the ticket it waits for; ticket + 1 once published */
    struct mailbox_desc desc;
};
_Static_assert(64 == sizeof(struct mailbox_slot), "a slot is a cache line");

/* The layout of a mailbox of these staging sizes. */
size_t mailbox_ring_offset(void);
size_t mailbox_staging_offset(void);
size_t mailbox_length(uint64_t chunk_size, uint32_t chunks);

/* A mapped mailbox, ours or a peer's. */
struct mailbox_map {
    char *base;
    size_t length;
    struct mailbox_header *header;
    struct mailbox_slot *ring;
    char *staging;
    uint64_t chunk_size;
    uint32_t chunks;
};

/* A piece of a staged transfer that came before its receive. */
struct mailbox_piece {
    struct mailbox_piece *next;
    uint64_t offset, chunk;
    uint32_t length;
};

/* A transfer the peer started towards us: its DATA or RTS came. */
struct mailbox_incoming {
    struct mailbox_incoming *next;
    uint64_t tag, total, received;
    bool cma;            /* pulled from address, else staged pieces */
    bool discard;        /* longer than the receive: pieces dropped until the last */
    uint64_t address;
    struct coll_async_transfer *recv; /* matched, or NULL */
    char *early; /* before the receive: pieces copied out here, their chunks credited */
    uint64_t early_end; /* past the furthest piece copied to early */
    struct mailbox_piece *pieces, **pieces_tail; /* held: no receive, no room for early */
    uint32_t npieces;
};

/* Sealed descriptors from a process not added yet, in its order: a
 * communicator's ranks add each other when each gets there, and the first may
 * send at once. They count (serial, dispatch) once it is added. */
struct mailbox_unadded {
    struct mailbox_desc *descs;
    uint32_t n, capacity;
    bool overflow; /* more than MAILBOX_MAX_UNADDED: it fails when added */
};

struct mailbox_peer {
    uint32_t id;
    struct mailbox_peer *next; /* every added peer */
    struct coll_async_key key;
    uint32_t pid, fd_number;
    uint64_t nonce, chunk_size;
    uint32_t chunks;
    bool cma;           /* its owner tries CMA */
    bool cma_refused;   /* a pull of ours failed there: staged only */
    bool mapped;
    bool replay; /* descriptors it sent before it was added wait in mb->unadded */
    int pidfd;
    struct mailbox_map map;
    uint32_t serial_out, serial_in;
    uint64_t next_check_ns;

    struct coll_async_transfer_queue sends; /* in flight, in post order */
    struct coll_async_transfer_queue recvs; /* posted, not matched */
    struct mailbox_incoming *incoming;
    int nincoming;
    uint32_t pieces; /* held pieces of its chunks, all transfers */
    uint32_t holds;  /* our chunks it holds: at most half, so that one peer slow to
                        copy out cannot stop the others */

    struct mailbox_desc *out; /* sealed, waiting for room in its ring */
    size_t nout, out_first, out_capacity;

    int failed; /* 0, or the -errno every transfer with it fails with */
    char error[224];
    char too_long[128], too_short[128]; /* one transfer's -EMSGSIZE, naming the peer */
};

struct mailbox {
    struct coll_async_transport base; /* first: the transport it is */
    struct coll_async_mailbox_config config;
    int memfd;
    struct mailbox_map map;
    uint64_t nonce;
    uint64_t head; /* the next ticket this process pops */
    struct mailbox_peer **peers; /* by id, NULL where not added */
    struct mailbox_peer *all;
    struct mailbox_unadded *unadded; /* by id; NULL until one not added sends */
    uint32_t nreplay; /* peers added with descriptors held: the next drain takes them first */
    uint32_t *free_chunks, nfree;
    uint32_t *chunk_holder; /* per chunk: the peer it was sent to, or UINT32_MAX */
    size_t early_bytes; /* the incoming transfers' early buffers, all peers */
    uint32_t max_holds; /* chunks one peer may hold: half, at least one */
    struct coll_async_transfer_queue done;
    struct coll_async_mailbox_stats stats;
    int fail_cma; /* tests: the -errno every pull of ours fails with, 0: none */
    char error[160];
};

/* Transfer state. */
struct mailbox_send {
    struct mailbox_peer *peer;
    uint64_t tag;
    const char *data;
    size_t length, staged; /* bytes handed to chunks so far */
    bool announced;        /* the RTS, or the DATA of a zero length, went */
    bool cma;
};
coll_async_transfer_state_fits(struct mailbox_send);

struct mailbox_recv {
    struct mailbox_peer *peer;
    uint64_t tag;
    char *buffer;
    size_t length;
    struct mailbox_incoming *incoming;
};
coll_async_transfer_state_fits(struct mailbox_recv);

static inline struct mailbox_send *mailbox_send_of(struct coll_async_transfer *t)
{
    return (struct mailbox_send *) t->state;
}

static inline struct mailbox_recv *mailbox_recv_of(struct coll_async_transfer *t)
{
    return (struct mailbox_recv *) t->state;
}

/* coll_async_mailbox.c: peers. */
int mailbox_peer_ready(struct mailbox *mb, struct mailbox_peer *peer);
void mailbox_peer_fail(struct mailbox *mb, struct mailbox_peer *peer, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void mailbox_peer_check_alive(struct mailbox *mb, struct mailbox_peer *peer, uint64_t now_ns);
void mailbox_finish(struct mailbox *mb, struct coll_async_transfer *t, int result,
                    const char *error);

/* coll_async_mailbox_ring.c: the ring and the seals. */
bool mailbox_ring_push(struct mailbox_map *map, const struct mailbox_desc *desc);
bool mailbox_ring_pop(struct mailbox_map *map, uint64_t *head, struct mailbox_desc *desc);
void mailbox_seal(const struct coll_async_key *key, struct mailbox_desc *desc);
bool mailbox_seal_valid(const struct coll_async_key *key, const struct mailbox_desc *desc);
/* Seals desc for peer and pushes it, behind what already waits for room. */
int mailbox_post(struct mailbox *mb, struct mailbox_peer *peer, struct mailbox_desc *desc);
/* Pushes what waits for room; true when nothing waits any more. */
bool mailbox_flush(struct mailbox_peer *peer);

/* coll_async_mailbox_transfer.c: the protocol. */
int mailbox_send(struct coll_async_transport *transport, uint32_t peer, uint64_t tag,
                 const void *data, size_t length, struct coll_async_transfer *transfer);
int mailbox_recv(struct coll_async_transport *transport, uint32_t peer, uint64_t tag,
                 void *buffer, size_t length, struct coll_async_transfer *transfer);
int mailbox_progress(struct coll_async_transport *transport);
void mailbox_drop_incoming(struct mailbox *mb, struct mailbox_peer *peer);

/* Tests: every pull of this transport fails with rc (-EPERM: refused), 0: none. */
void coll_async_mailbox_test_fail_cma(struct coll_async_transport *transport, int rc);
/* Tests: seals desc as this process's and pushes it into peer's ring. */
int coll_async_mailbox_test_push(struct coll_async_transport *transport, uint32_t peer,
                                 struct mailbox_desc *desc);

#endif /* MCA_COLL_ASYNC_MAILBOX_INTERNAL_H */
