/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The model under bench/simulate: the leaders' own plans between nodes
 * (coll_async_internode_start() for every rank of a group of N, no network)
 * priced with a LogGP-style cost per message, and a model of the multicast bcast,
 * which has no plan of rounds. What the parameters stand for and where their
 * defaults come from: docs/performance.md, "Between nodes at scale".
 *
 * Pure C, no MPI.
 */

#ifndef BENCH_SIMULATE_MODEL_H
#define BENCH_SIMULATE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ompi/mca/coll/async/coll_async_internode.h"

/* Reductions are priced on 4-byte elements (float or int32). */
#define SIM_ELEMENT_BYTES 4

/* auto's multicast thresholds: the defaults of coll_async_mcast_min_nodes,
 * coll_async_mcast_max_nodes and coll_async_mcast_min_bytes (coll_async_params.c,
 * which needs Open MPI). */
#define SIM_MCAST_MIN_NODES 8
#define SIM_MCAST_MAX_NODES 128
#define SIM_MCAST_MIN_BYTES (64 * 1024)
/* The multicast transport's packets (an InfiniBand UD MTU) and how often a
 * receiver acknowledges: every window / 4 packets of a 128-packet window
 * (transport/coll_async_mcast.h). */
#define SIM_MCAST_PACKET_BYTES 4096
#define SIM_MCAST_ACK_EVERY 32

/* Seconds. */
struct sim_params {
    double latency;  /* L: a message's time on the wire and through the switches */
    double overhead; /* o: a CPU's cost per message, at the sender and at the receiver */
    double gap;      /* G: per byte, one NIC's direction (full duplex) */
    double reduce;   /* per byte reduced into the result */
    double ack;      /* multicast: the root's cost per acknowledgement it takes */
    double call;     /* each rank's fixed cost per collective, before its first round:
                        entering the call and the engine, planning the rounds (a
                        fitted machine's later rounds cost L + 2o, its first more) */
    bool verbs;      /* every leader has an RDMA port: auto may take multicast */
};

/* One collective among `nodes` leaders (one per node). */
struct sim_case {
    enum coll_async_family family;
    enum coll_async_alg alg; /* AUTO: what the table picks (multicast excluded) */
    int nodes;
    size_t bytes; /* allreduce, reduce: the vector; bcast: the message; allgather:
                     one node's block (the result is nodes times that) */
    int root;     /* bcast, reduce */
};

/* What one rank's rounds moved: the counts its round plans carry. */
struct sim_rank_counts {
    int rounds, sends, receives;
    uint64_t sent, received, reduced; /* bytes */
};

struct sim_result {
    enum coll_async_alg ran; /* what start() ran (a forced one may give way) */
    double time;             /* the last rank's end, seconds */
    int rounds;              /* the most rounds of any rank */
    int steps;               /* 1 + the highest step of any round */
    const char *error;       /* the plans did not pair up, or out of memory */
};

/* Plans every rank's rounds of c and prices them; per-rank counts into counts
 * (c->nodes entries) unless NULL. 0, or -1 with result->error saying why. */
int sim_plans(const struct sim_case *c, const struct sim_params *p, struct sim_result *result,
              struct sim_rank_counts *counts);

/* The multicast bcast of bytes to nodes - 1 receivers, from the root's post to
 * its last acknowledgement. */
double sim_multicast(int nodes, size_t bytes, const struct sim_params *p);

/* What auto runs for c: the table's choice, or multicast where the hierarchy
 * would take it (bcast, verbs, enough nodes and bytes). */
enum coll_async_alg sim_auto(const struct sim_case *c, const struct sim_params *p);

#endif /* BENCH_SIMULATE_MODEL_H */
