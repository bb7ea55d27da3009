/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the TCP transport.
 *
 * Owns this process's TCP endpoints and its connections to peers. It listens on
 * one socket per selected IPv4 interface (coll_async_tcp_if.h picks them) and
 * describes them in an address blob that the caller publishes (the modex) and
 * hands to the peers' transports. A peer is a process id in [0, nprocs).
 *
 * Connections open on first use, only to the peers used: one per "link", an
 * interface pair the two sides share (same subnet), up to max_links. Link 0
 * carries the eager messages; bulk transfers use every link. When both sides
 * connect the same link at once, the connection opened by the lower id wins: a
 * connection carries data only after the acceptor has answered the connector's
 * hello, and the higher id answers the lower one's hello even while its own
 * attempt is under way (it drops its own), the lower id refuses the higher one's
 * while its own is under way.
 *
 * Two kinds of traffic:
 *  - eager messages (tag, up to eager_limit bytes), ordered per sender ->
 *    receiver, read into transport-owned buffers and handed to on_eager, so the
 *    receiver never posts a receive for them;
 *  - bulk transfers of any length, cut into chunk_size pieces that each link
 *    pulls while its socket drains (a faster link carries more), written straight
 *    from the sender's buffer and read straight into the buffer the receiver
 *    posted for (peer, tag). Chunks that arrive before that receive is posted
 *    land in a staging buffer of the transfer's length, copied once on the post:
 *    the receiver never stalls a link (which would stall the eager messages and
 *    other transfers behind it), and the common case costs no copy.
 *
 * Every operation is asynchronous: it completes inside coll_async_tcp_progress(),
 * which does a bounded amount of nonblocking work on one epoll instance; a thread
 * with nothing to do can sleep on coll_async_tcp_fd(). A peer whose connection
 * fails (closed, reset, refused, not established within connect_timeout_ms)
 * fails every operation on it with -errno and a message naming the peer, the
 * link's addresses and the cause; later posts to it fail at once.
 *
 * Trust: a connection is a peer's link only once both sides have proved they
 * hold the other's key (coll_async_tcp_handshake.h); strangers are refused,
 * said through on_refused, and never disturb a peer. A proven peer's frames are
 * held to their bounds; staging for receives not posted yet is bounded by
 * staging_limit, past which the transport stops reading the connection until
 * the receive is posted.
 *
 * Not thread-safe: one thread at a time calls in (the engine's driver).
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_TCP_H
#define MCA_COLL_ASYNC_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_auth.h"
#include "coll_async_refusals.h"
#include "coll_async_tcp_if.h"

#define COLL_ASYNC_TCP_MAX_LINKS COLL_ASYNC_TCP_MAX_IFS
#define COLL_ASYNC_TCP_ADDRESS_MAX (4 + 8 * COLL_ASYNC_TCP_MAX_IFS) /* blob bytes */
#define COLL_ASYNC_TCP_PENDING 1 /* op status while in flight */

struct coll_async_tcp;

/* One listening endpoint as the address blob carries it. */
struct coll_async_tcp_addr {
    struct in_addr addr; /* network byte order */
    uint16_t port;       /* host byte order */
    uint8_t prefix;      /* the interface's netmask length: links pair up by subnet */
};

typedef void (*coll_async_tcp_eager_fn)(void *context, uint32_t peer, uint64_t tag,
                                        const void *data, size_t length);

struct coll_async_tcp_config {
    const struct coll_async_tcp_if *ifs; /* where to listen, in the order links prefer */
    int nifs;                            /* 1 .. COLL_ASYNC_TCP_MAX_IFS */
    uint32_t self, nprocs;               /* this process's id; ids are below nprocs */
    struct coll_async_key key;           /* this process's: a connector proves it knows it */
    size_t eager_limit;                  /* largest eager message; 0: 64 KiB */
    size_t chunk_size;                   /* bulk striping unit; 0: 128 KiB */
    int max_links;                       /* connections per peer; 0: as many as pairs */
    int connect_timeout_ms;              /* 0: 10 s; also how long an accepted connection
                                          * may take to prove itself */
    int max_unproven;                    /* accepted connections not proven yet; past it
                                          * the oldest is closed; 0: 64 */
    size_t staging_limit;                /* bytes staged for receives not posted yet,
                                          * all peers together; 0: 64 MiB */
    coll_async_refused_fn on_refused;    /* NULL: refusals are only counted */
    /* Runs inside progress for each eager message; data is valid until it returns.
     * It may post operations. */
    coll_async_tcp_eager_fn on_eager;
    void *context;
};

/*
 * An operation, owned by the caller and left alone until it completes. status is
 * COLL_ASYNC_TCP_PENDING until then, and 0 or -errno after; on failure, error
 * says why (owned by the transport, valid until it is destroyed). complete, when
 * set, runs inside progress right after status is final; the op may be reused or
 * freed from it.
 */
struct coll_async_tcp_op {
    void (*complete)(struct coll_async_tcp_op *op);
    void *context;
    int status;
    const char *error;
    size_t bytes; /* bulk receive: the length the sender sent */

    /* Private to the transport. */
    struct coll_async_tcp_op *next;
    struct coll_async_tcp_peer *peer;
    uint64_t tag;
    char *buffer;
    size_t length;
    size_t offset;   /* bulk send: next byte to hand to a link */
    size_t received; /* bulk receive: bytes arrived */
    char *staging;   /* bulk receive: where chunks landed before the post */
    int result;
    int in_flight;   /* chunks a link is writing */
    bool queued;     /* on the peer's send queue: chunks left to hand out */
    bool has_total;  /* bulk receive: bytes is known */
};

/* Per-link counters, for tests and verbose output. */
struct coll_async_tcp_link_stats {
    bool connected;  /* a socket is open (established or being set up) */
    bool established;
    uint64_t bytes_sent, bytes_received; /* frames and payload, since the connection opened */
};

/* Opens the listening sockets. 0 or -errno. */
int coll_async_tcp_create(struct coll_async_tcp **tcp, const struct coll_async_tcp_config *config);

/* Closes everything; operations still in flight complete with -ECANCELED. */
void coll_async_tcp_destroy(struct coll_async_tcp *tcp);

/* Writes this process's address blob into blob (size bytes); its length or -ENOSPC. */
int coll_async_tcp_address(const struct coll_async_tcp *tcp, void *blob, size_t size);

/* The blob format: versioned, byte-order independent. Length or -ENOSPC / -EINVAL. */
int coll_async_tcp_address_encode(const struct coll_async_tcp_addr *addrs, int count, void *blob,
                                  size_t size);
int coll_async_tcp_address_decode(const void *blob, size_t length,
                                  struct coll_async_tcp_addr *addrs, int max);

/*
 * Tells the transport where peer listens, and its key (what this process proves
 * it knows when it connects). Opens no connection. A peer that connects first
 * needs no call, but this process can reach it only after one. 0, -EINVAL (bad
 * id or blob), -EEXIST or -ENOMEM.
 */
int coll_async_tcp_add_peer(struct coll_async_tcp *tcp, uint32_t peer,
                            const struct coll_async_key *key, const void *blob, size_t length);

/*
 * Posts operations. 0: the op completes later through progress. -errno: it was
 * not posted (bad argument, -EMSGSIZE, or the peer already failed: op->error
 * says why) and will not complete.
 */
int coll_async_tcp_send_eager(struct coll_async_tcp *tcp, uint32_t peer, uint64_t tag,
                              const void *data, size_t length, struct coll_async_tcp_op *op);
int coll_async_tcp_send_bulk(struct coll_async_tcp *tcp, uint32_t peer, uint64_t tag,
                             const void *data, size_t length, struct coll_async_tcp_op *op);
/* Receives the bulk transfer that peer sends with tag, of at most length bytes.
 * A tag names one transfer at a time per direction: the sender reuses it only
 * once the receiver has consumed the previous one (sequence-numbered tags never
 * repeat). */
int coll_async_tcp_recv_bulk(struct coll_async_tcp *tcp, uint32_t peer, uint64_t tag,
                             void *buffer, size_t length, struct coll_async_tcp_op *op);

/* Bounded nonblocking work; completes operations. Returns how much it did (0: idle). */
int coll_async_tcp_progress(struct coll_async_tcp *tcp);

/* Readable (poll/epoll) while progress has something to do. */
int coll_async_tcp_fd(const struct coll_async_tcp *tcp);

/* Number of sockets open to peers, being set up or established. */
int coll_async_tcp_connections(const struct coll_async_tcp *tcp);

/* What strangers and staging cost, for tests and verbose output. */
struct coll_async_tcp_guard_stats {
    int unproven;     /* accepted connections not proven yet */
    uint64_t refused; /* connections refused so far */
    int stalled;      /* connections not read until staging has room */
    size_t staged;    /* bytes staged for receives not posted yet */
};

void coll_async_tcp_guard_stats(const struct coll_async_tcp *tcp,
                                struct coll_async_tcp_guard_stats *stats);

/* Fills stats for peer's links (at most max); returns how many links it has (0: none yet). */
int coll_async_tcp_link_stats(const struct coll_async_tcp *tcp, uint32_t peer,
                              struct coll_async_tcp_link_stats *stats, int max);

#endif /* MCA_COLL_ASYNC_TCP_H */
