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
 * hands to the peers' transports. A peer is a process id in [0, nprocs), the
 * caller's numbering; on the wire, where processes of several jobs meet
 * (MPI_Comm_spawn, connect/accept), a process is named by what every job
 * agrees on, through the caller's names (with none, a name is the id).
 *
 * A transport of coll_async_transport.h: create hands back a struct
 * coll_async_tcp, whose transport (coll_async_tcp_transport) the mapper drives
 * through its table of functions; what remains typed here is for tests and
 * verbose output.
 *
 * Connections open on first use, only to the peers used: one per "link", an
 * interface pair the two sides share (same subnet), up to max_links; bulk
 * transfers use every link. When both sides
 * connect the same link at once, the connection opened by the lower name wins: a
 * connection carries data only after the acceptor has answered the connector's
 * hello, and the higher name answers the lower one's hello even while its own
 * attempt is under way (it drops its own), the lower name refuses the higher
 * one's while its own is under way. (Names, not ids: the two sides of a link
 * between jobs number each other differently.)
 *
 * Bulk transfers of any length, matched by (peer, tag), are cut into chunk_size
 * pieces that each link pulls while its socket drains (a faster link carries
 * more), written straight from the sender's buffer and read straight into the
 * buffer the receiver posted for (peer, tag). Chunks that arrive before that
 * receive is posted land in a staging buffer of the transfer's length, copied
 * once on the post: the receiver never stalls a link (which would stall the
 * other transfers behind it), and the common case costs no copy.
 *
 * Every transfer is asynchronous: it completes inside the transport's progress,
 * which does a bounded amount of nonblocking work on one epoll instance; a thread
 * with nothing to do can sleep on its fd. A peer whose connection
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
#include "coll_async_transport.h"

#define COLL_ASYNC_TCP_MAX_LINKS COLL_ASYNC_TCP_MAX_IFS
#define COLL_ASYNC_TCP_ADDRESS_MAX (4 + 8 * COLL_ASYNC_TCP_MAX_IFS) /* blob bytes */

struct coll_async_tcp;

/* One listening endpoint as the address blob carries it. */
struct coll_async_tcp_addr {
    struct in_addr addr; /* network byte order */
    uint16_t port;       /* host byte order */
    uint8_t prefix;      /* the interface's netmask length: links pair up by subnet */
};

/* How processes are named on the wire (coll_async_tcp_handshake.h): each
 * id's name, the same in every job, and back. */
struct coll_async_tcp_names {
    uint64_t (*name_of)(void *context, uint32_t id);
    /* The id of a process that proved it holds this process's key (a peer
     * that connected before it was added): may assign one. 0, or -errno when
     * there is none for it. */
    int (*id_of)(void *context, uint64_t name, uint32_t *id);
    void *context;
};

struct coll_async_tcp_config {
    const struct coll_async_tcp_if *ifs; /* where to listen, in the order links prefer */
    int nifs;                            /* 1 .. COLL_ASYNC_TCP_MAX_IFS */
    uint32_t self, nprocs;               /* this process's id; ids are below nprocs */
    struct coll_async_key key;           /* this process's: a connector proves it knows it */
    size_t chunk_size;                   /* bytes a frame carries, the striping unit; 0: 512 KiB */
    int max_links;                       /* connections per peer; 0: as many as pairs */
    int connect_timeout_ms;              /* 0: 10 s; also how long an accepted connection
                                          * may take to prove itself */
    int max_unproven;                    /* accepted connections not proven yet; past it
                                          * the oldest is closed; 0: 64 */
    size_t staging_limit;                /* bytes staged for receives not posted yet,
                                          * all peers together; 0: 64 MiB */
    size_t rendezvous_bytes;             /* sends this long or longer wait for the
                                          * receiver's answer; 0: never */
    coll_async_refused_fn on_refused;    /* NULL: refusals are only counted */
    void *context;                       /* on_refused's */
    struct coll_async_tcp_names names;   /* NULL functions: a process's name is its id */
};

/* Per-link counters, for tests and verbose output. */
struct coll_async_tcp_link_stats {
    bool connected;  /* a socket is open (established or being set up) */
    bool established;
    uint64_t bytes_sent, bytes_received; /* frames and payload, since the connection opened */
};

/* Opens the listening sockets. 0 or -errno. */
int coll_async_tcp_create(struct coll_async_tcp **tcp, const struct coll_async_tcp_config *config);

/* The transport tcp is: send, recv, add_peer (the blob is coll_async_tcp_address_encode's;
 * a peer that connects first needs no add_peer, but this process reaches it only
 * after one), progress, fd, address, destroy. */
static inline struct coll_async_transport *coll_async_tcp_transport(struct coll_async_tcp *tcp)
{
    return (struct coll_async_transport *) tcp; /* its first member */
}

/* The blob format: versioned, byte-order independent. Length or -ENOSPC / -EINVAL. */
int coll_async_tcp_address_encode(const struct coll_async_tcp_addr *addrs, int count, void *blob,
                                  size_t size);
int coll_async_tcp_address_decode(const void *blob, size_t length,
                                  struct coll_async_tcp_addr *addrs, int max);

/* Number of sockets open to peers, being set up or established. */
int coll_async_tcp_connections(const struct coll_async_tcp *tcp);

/* What strangers and staging cost, for tests and verbose output. */
struct coll_async_tcp_guard_stats {
    int unproven;     /* accepted connections not proven yet */
    uint64_t refused; /* connections refused so far */
    int stalled;      /* connections not read until staging has room */
    size_t staged;    /* bytes staged for receives not posted yet */
    uint64_t staging_copied; /* bytes copied from staging to receives posted late */
    int announced;           /* transfers announced (RTS) before their receives */
};

void coll_async_tcp_guard_stats(const struct coll_async_tcp *tcp,
                                struct coll_async_tcp_guard_stats *stats);

/* Fills stats for peer's links (at most max); returns how many links it has (0: none yet). */
int coll_async_tcp_link_stats(const struct coll_async_tcp *tcp, uint32_t peer,
                              struct coll_async_tcp_link_stats *stats, int max);

#endif /* MCA_COLL_ASYNC_TCP_H */
