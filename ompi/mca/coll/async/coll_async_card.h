/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: what each process tells the others through the modex, its card.
 *
 * One key per process, always published at component open (before Open MPI's
 * modex), whatever the process has: a lookup of a key that a process did not
 * publish waits for the launcher to give up, about 2 s per peer in Open MPI 4.1,
 * which made MPI_Init grow by seconds per process. With one card, set-up costs
 * one lookup per peer, made once per process and cached.
 *
 * A card carries the process's secret key (transport/coll_async_auth.h), its
 * place (node name, NUMA domain), and the address blobs of its transports
 * between nodes (none where it opened none).
 */

#ifndef MCA_COLL_ASYNC_CARD_H
#define MCA_COLL_ASYNC_CARD_H

#include <stddef.h>
#include <stdint.h>

#include "transport/coll_async_auth.h"

struct ompi_proc_t;

enum coll_async_card_blob {
    COLL_ASYNC_CARD_TCP,   /* coll_async_tcp_address() */
    COLL_ASYNC_CARD_VERBS, /* coll_async_verbs_address() */
    COLL_ASYNC_CARD_SHM,   /* the mailbox's (coll_async_mailbox.h) */
    COLL_ASYNC_CARD_NUM_BLOBS
};

#define COLL_ASYNC_CARD_BLOB_MAX 512

/* A process's card as read from the modex. */
struct coll_async_card {
    struct coll_async_key key;
    int node;   /* its node: equal for the processes of one node (real or virtual),
                   numbered by this process in the order it met them */
    int numa;   /* NUMA domain of its binding, or COLL_ASYNC_TOPOLOGY_NUMA_SEVERAL */
    uint16_t blob_length[COLL_ASYNC_CARD_NUM_BLOBS]; /* 0: none */
    uint8_t *blob[COLL_ASYNC_CARD_NUM_BLOBS];
    /* The digest of the tuning file's rows it read (coll_async_tuning.h), 0: none. */
    uint64_t tuning;
};

/* Draws this process's key and notes its place; before any other call. */
int mca_coll_async_card_init(void);

/* This process's card, to add blobs to before it is published. */
struct coll_async_card *mca_coll_async_card_mine(void);
int mca_coll_async_card_set_blob(enum coll_async_card_blob which, const void *blob,
                                 size_t length);

/* Publishes this process's card in the modex. */
int mca_coll_async_card_publish(void);

/* proc's card (this process's own included), read once and kept until
 * mca_coll_async_card_fini; NULL when proc published none (it has no
 * coll/async) or an unreadable one. Thread-safe. */
const struct coll_async_card *mca_coll_async_card_of(struct ompi_proc_t *proc);

void mca_coll_async_card_fini(void);

#endif /* MCA_COLL_ASYNC_CARD_H */
