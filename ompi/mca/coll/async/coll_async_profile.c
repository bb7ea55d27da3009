/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the ring of a communicator's leaders, ordered by measured
 * bandwidth (coll_async_profile_ring), in the spirit of profile-based ring search.
 *
 * Once, when the communicator is created, each group of leaders (one per node
 * and slot) on its own: every leader exchanges a probe with every other, pair by
 * pair in rounds where each meets one partner (the circle method), and times
 * it; the group allgathers the rows of the bandwidth matrix and every leader
 * computes the same ring, greedily: from node 0, each next node is the unvisited
 * one with the fastest link (both directions' slower) to the last. Only the
 * mapper between nodes is used, driven here, as no Open MPI message may be
 * awaited while a communicator is created (coll_async_hier.c).
 */

#include "ompi_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"

#include "coll_async.h"
#include "transport/coll_async_clock.h"

#define PROBE_BYTES (1024 * 1024)
#define PROBE_REPEATS 2

/* The partner of node in round (circle method over an even count of places; the
 * extra place of an odd count is nobody: -1). */
static int partner_of(int node, int round, int nodes)
{
    int places = nodes + nodes % 2, last = places - 1, partner;

    if (node == last) {
        partner = round;
    } else if (node == round) {
        partner = last;
    } else {
        partner = ((2 * round - node) % last + last) % last;
    }
    return partner < nodes ? partner : -1;
}

/* Exchanges the probe with peer both ways; bytes per second, or 0 on failure. */
static double exchange(struct coll_async_net *net, uint32_t peer, uint64_t tag, bool first,
                       char *out, char *in)
{
    struct coll_async_transfer send = {0}, recv = {0};
    uint64_t start = coll_async_now_ns();

    /* Each direction its own tag: the lower side sends on tag, the other on tag+1.
     * A post that fails leaves nothing behind that points into this frame. */
    if (0 != coll_async_net_send_bulk(net, peer, tag + (first ? 0 : 1), out, PROBE_BYTES,
                                      &send)) {
        return 0;
    }
    if (0 != coll_async_net_recv_bulk(net, peer, tag + (first ? 1 : 0), in, PROBE_BYTES, &recv)) {
        recv.status = -EIO;
    }
    while (COLL_ASYNC_TRANSFER_PENDING == send.status
           || COLL_ASYNC_TRANSFER_PENDING == recv.status) {
        coll_async_net_progress(net);
    }
    if (0 != send.status || 0 != recv.status) {
        return 0;
    }
    return 2e9 * PROBE_BYTES / (double) (coll_async_now_ns() - start);
}

/* This leader's row: bandwidth to every node (0 for itself). The caller holds the
 * driver's exclusion. */
static void measure(struct coll_async_hier *hier, uint64_t tag, double *row)
{
    int rounds = hier->node_count - 1 + hier->node_count % 2;
    char *out = malloc(PROBE_BYTES), *in = malloc(PROBE_BYTES);

    if (NULL == out || NULL == in) {
        free(out);
        free(in);
        return;
    }
    memset(out, 0x5a, PROBE_BYTES);
    for (int repeat = 0; repeat < PROBE_REPEATS; ++repeat) {
        for (int round = 0; round < rounds; ++round) {
            int partner = partner_of(hier->node, round, hier->node_count);
            uint64_t step = 2 * (uint64_t) (repeat * rounds + round);
            double bw;

            if (partner >= 0) {
                bw = exchange(hier->peers.net, hier->group_peer[partner], tag + step,
                              hier->node < partner, out, in);
                row[partner] = bw > row[partner] ? bw : row[partner];
            }
        }
    }
    free(out);
    free(in);
}

/* The group's rows, into bw (node_count x node_count). */
static int share(struct coll_async_hier *hier, uint64_t tag, double *bw)
{
    int nodes = hier->node_count;
    size_t *offset = malloc(sizeof(size_t) * (size_t) nodes);
    size_t *bytes = malloc(sizeof(size_t) * (size_t) nodes);
    struct coll_async_internode x = {.group = &hier->group, .tag = tag, .buf = bw,
                                     .alg = COLL_ASYNC_ALG_RING};
    int rc = NULL == offset || NULL == bytes ? -ENOMEM : 0;

    for (int node = 0; node < nodes && 0 == rc; ++node) {
        offset[node] = sizeof(double) * (size_t) (node * nodes);
        bytes[node] = sizeof(double) * (size_t) nodes;
    }
    x.block_offset = offset;
    x.block_bytes = bytes;
    if (0 == rc) {
        rc = coll_async_internode_start(&x, COLL_ASYNC_FAMILY_ALLGATHER);
    }
    if (0 == rc) {
        while (COLL_ASYNC_INTERNODE_AGAIN == (rc = coll_async_internode_progress(&x))) {
            coll_async_net_progress(hier->peers.net);
        }
    }
    if (0 != rc) {
        opal_output_verbose(1, mca_coll_async_output,
                            "coll:async: %s: sharing the measured bandwidths failed: %s",
                            hier->name, NULL != x.error ? x.error : strerror(-rc));
    }
    coll_async_internode_fini(&x);
    free(offset);
    free(bytes);
    return rc;
}

/* The greedy ring over the matrix; ring[position] = node. */
static void order(const double *bw, int nodes, int *ring)
{
    bool *visited = calloc(nodes, sizeof(bool));

    ring[0] = 0;
    for (int position = 1; position < nodes && NULL != visited; ++position) {
        int last = ring[position - 1], best = -1;
        double best_bw = -1;

        visited[last] = true;
        for (int node = 0; node < nodes; ++node) {
            double slower = bw[last * nodes + node] < bw[node * nodes + last]
                                ? bw[last * nodes + node] : bw[node * nodes + last];

            if (!visited[node] && slower > best_bw) {
                best = node;
                best_bw = slower;
            }
        }
        ring[position] = best;
    }
    free(visited);
}

static void report(const struct coll_async_hier *hier, struct ompi_communicator_t *comm,
                   const int *ring, const double *bw)
{
    char line[512];
    size_t used = 0;

    for (int position = 0; position < hier->node_count && used < sizeof(line); ++position) {
        int node = ring[position], next = ring[(position + 1) % hier->node_count];

        used += (size_t) snprintf(line + used, sizeof(line) - used, "node %d -(%.0f MB/s)-> ",
                                  node, bw[node * hier->node_count + next] / 1e6);
    }
    opal_output_verbose(0 == hier->rank ? 1 : 2, mca_coll_async_output,
                        "coll:async: %s (cid %u): ring of leaders by measured bandwidth: %snode %d",
                        comm->c_name, coll_async_comm_cid(comm), line, ring[0]);
}

int mca_coll_async_profile_ring(struct ompi_communicator_t *comm, struct coll_async_hier *hier,
                                int **ring)
{
    int nodes = hier->node_count, rc;
    uint64_t tag = coll_async_peers_next_tag(&hier->peers); /* every rank takes it */
    double *bw;
    int *order_of;

    *ring = NULL;
    /* The probes' steps and the allgather's share one tag's 4096 steps. */
    if (hier->slot < 0 || nodes < 2 || 4 * PROBE_REPEATS * nodes >= 2048) {
        return OMPI_SUCCESS;
    }
    bw = calloc((size_t) nodes * (size_t) nodes, sizeof(double));
    order_of = malloc(sizeof(int) * (size_t) nodes);
    if (NULL == bw || NULL == order_of) {
        free(bw);
        free(order_of);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    coll_async_engine_hold();
    measure(hier, tag, &bw[hier->node * nodes]);
    rc = share(hier, tag + 2048, bw);
    coll_async_engine_release();
    if (0 != rc) {
        /* bw stays: a transfer of the failed allgather may still point into it. */
        free(order_of);
        return OMPI_ERROR;
    }
    order(bw, nodes, order_of);
    report(hier, comm, order_of, bw);
    free(bw);
    *ring = order_of;
    return OMPI_SUCCESS;
}
