/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: this process's endpoint on the mapper (shared memory to the peers
 * of this node and, when the job may span nodes, TCP and, where there is an RDMA
 * port, verbs), opened at component open; their addresses ride this process's
 * card (coll_async_card.h).
 */

#ifndef MCA_COLL_ASYNC_NETWORK_H
#define MCA_COLL_ASYNC_NETWORK_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/coll_async_net.h"

struct coll_async_config;

struct ompi_proc_t;

/* Opens the transports; OMPI_ERR_BAD_PARAM for a bad interface list, else
 * OMPI_SUCCESS (without a mapper when no transport could open, and with one that
 * reaches only this node when no network could: communicators across nodes are
 * then delegated, and a message says why). */
int mca_coll_async_network_open(const struct coll_async_config *config);
void mca_coll_async_network_close(void);

/* The mapper, or NULL when this job has none. */
struct coll_async_net *mca_coll_async_network(void);

/* "verbs over mlx5_0:1; TCP over eth0 10.0.0.1/24, eth1 10.0.1.1/24": what it uses. */
const char *mca_coll_async_network_interfaces(void);

/* Sends of this process over the node's mailbox that their receiver pulled with CMA. */
uint64_t mca_coll_async_network_mailbox_cma_sends(void);

/* Makes count processes reachable, writing their transport ids to ids: this
 * job's vpid, or for a process of another job (MPI_Comm_spawn,
 * connect/accept) an id from the job's size on (coll_async_network.c). Fails
 * past the bound on such processes. */
int mca_coll_async_network_add(struct ompi_proc_t *const *procs, int count, uint32_t *ids);

/* Whether proc can meet this process over TCP, the only transport to another
 * job's: both opened it (proc's card carries a TCP address). */
bool mca_coll_async_network_tcp_with(struct ompi_proc_t *proc);

/* Whether the process with transport id (this one, or one added) published a
 * verbs address: it has an active RDMA port. Every process reads the same from
 * the modex. */
bool mca_coll_async_network_has_verbs(uint32_t id);

#endif /* MCA_COLL_ASYNC_NETWORK_H */
