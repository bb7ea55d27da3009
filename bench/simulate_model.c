/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The model under bench/simulate. See simulate_model.h.
 *
 * Every rank's plan is built by the component's own coll_async_internode_start()
 * and copied into a compact list (a plan of 4096 ranks' ring runs 8190 rounds
 * each). Rounds are then priced step by step: every rank numbers its rounds by
 * steps in increasing order, and a send meets its receive at the same step, so
 * when step s is priced every rank's earlier rounds are: a rank starts its first
 * round `call` after the collective began, each later one when its previous one
 * ended, and
 *   the send ends at       start + o + bytes G                   (its NIC is free)
 *   the data arrives at    the sender's start + o + L + bytes G
 *   the receive ends at    max(start, arrival) + o
 *   the round ends at      max(send end, receive end) + reduced bytes * reduce.
 * One send and one receive per round, and a NIC full duplex: no NIC is shared.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "simulate_model.h"
#include "../ompi/mca/coll/async/coll_async_multicast.h"

/* coll_async_internode.c reduces only while it runs rounds, which the model
 * never does; this stands in for coll_async_reduction.c, which needs Open MPI.
 * Weak: a test that runs the rounds links its own. */
__attribute__((weak)) void coll_async_reduce(const struct coll_async_reduction *reduction,
                                             void *inout, const void *in, size_t count)
{
    (void) reduction;
    (void) inout;
    (void) in;
    (void) count;
}

static const struct coll_async_reduction element = {.size = SIM_ELEMENT_BYTES};

struct sim_round {
    uint64_t send, recv;
    uint16_t step;
    int16_t to, from;
    uint8_t reduces;
};

struct sim_plan {
    struct sim_round *rounds;
    int count;
};

static bool reduces(enum coll_async_family family)
{
    return COLL_ASYNC_FAMILY_ALLREDUCE == family || COLL_ASYNC_FAMILY_REDUCE == family;
}

/* The plans of every rank, or NULL with *error set. The buffers are address
 * space only: planning takes addresses in them and never touches them. */
static struct sim_plan *build_plans(const struct sim_case *c, struct sim_result *result)
{
    int n = c->nodes;
    size_t total = COLL_ASYNC_FAMILY_ALLGATHER == c->family ? c->bytes * (size_t) n : c->bytes;
    size_t *offset = calloc((size_t) n, sizeof(*offset));
    size_t *block = calloc((size_t) n, sizeof(*block));
    struct sim_plan *plans = calloc((size_t) n, sizeof(*plans));
    void *space = mmap(NULL, total + 1, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
    struct coll_async_leaders group = {.size = n};
    bool ok = NULL != offset && NULL != block && NULL != plans && MAP_FAILED != space;

    result->error = ok ? NULL : "out of memory";
    for (int r = 0; ok && r < n; ++r) {
        offset[r] = (size_t) r * c->bytes;
        block[r] = c->bytes;
    }
    for (int r = 0; ok && r < n; ++r) {
        struct coll_async_internode x = {
            .group = &group, .alg = c->alg, .buf = space, .reduction = &element,
            .count = reduces(c->family) ? c->bytes / SIM_ELEMENT_BYTES : 0,
            .bytes = c->bytes, .root = c->root, .block_offset = offset, .block_bytes = block};

        group.rank = r;
        if (0 != coll_async_internode_start(&x, c->family)) {
            result->error = "coll_async_internode_start failed";
            ok = false;
            break;
        }
        result->ran = x.alg;
        plans[r].count = x.round_count;
        plans[r].rounds = malloc(sizeof(*plans[r].rounds) * (size_t) (x.round_count + 1));
        ok = NULL != plans[r].rounds;
        for (int i = 0; ok && i < x.round_count; ++i) {
            struct coll_async_internode_round_plan q = coll_async_internode_round_plan(&x, i);

            plans[r].rounds[i] = (struct sim_round){
                .send = q.to >= 0 ? q.send_bytes : 0, .recv = q.from >= 0 ? q.recv_bytes : 0,
                .step = (uint16_t) q.step, .to = (int16_t) q.to, .from = (int16_t) q.from,
                .reduces = q.reduces};
        }
        coll_async_internode_fini(&x);
        if (!ok) {
            result->error = "out of memory";
        }
    }
    free(offset);
    free(block);
    if (MAP_FAILED != space) {
        munmap(space, total + 1);
    }
    if (!ok && NULL != plans) {
        for (int r = 0; r < n; ++r) {
            free(plans[r].rounds);
        }
        free(plans);
        plans = NULL;
    }
    return plans;
}

static double later(double a, double b)
{
    return a > b ? a : b;
}

/* Whether rank r's round at cursor is at step s. */
static const struct sim_round *at_step(const struct sim_plan *plan, int cursor, int s)
{
    return cursor < plan->count && plan->rounds[cursor].step == s ? &plan->rounds[cursor] : NULL;
}

static int price(int n, const struct sim_plan *plans, const struct sim_params *p,
                 struct sim_result *result, struct sim_rank_counts *counts)
{
    double *ready = calloc((size_t) n, sizeof(*ready));
    double *start = calloc((size_t) n, sizeof(*start));
    int *cursor = calloc((size_t) n, sizeof(*cursor));
    int last_step = -1;

    result->error = NULL;
    result->rounds = 0;
    if (NULL == ready || NULL == start || NULL == cursor) {
        result->error = "out of memory";
    }
    for (int r = 0; NULL == result->error && r < n; ++r) {
        ready[r] = p->call;
        result->rounds = plans[r].count > result->rounds ? plans[r].count : result->rounds;
        for (int i = 0; i < plans[r].count; ++i) {
            last_step = plans[r].rounds[i].step > last_step ? plans[r].rounds[i].step : last_step;
        }
    }
    for (int s = 0; NULL == result->error && s <= last_step; ++s) {
        for (int r = 0; r < n; ++r) {
            start[r] = NULL != at_step(&plans[r], cursor[r], s) ? ready[r] : -1.0;
        }
        for (int r = 0; r < n && NULL == result->error; ++r) {
            const struct sim_round *round = at_step(&plans[r], cursor[r], s);
            double send_end, recv_end;

            if (NULL == round) {
                continue;
            }
            send_end = recv_end = start[r];
            if (round->to >= 0) {
                const struct sim_round *peer = at_step(&plans[round->to], cursor[round->to], s);

                if (NULL == peer || peer->from != r || peer->recv != round->send) {
                    result->error = "a send meets no receive of its step and length";
                    break;
                }
                send_end = start[r] + p->overhead + (double) round->send * p->gap;
            }
            if (round->from >= 0) {
                const struct sim_round *peer = at_step(&plans[round->from], cursor[round->from], s);
                double arrival;

                if (NULL == peer || peer->to != r || peer->send != round->recv) {
                    result->error = "a receive meets no send of its step and length";
                    break;
                }
                arrival = start[round->from] + p->overhead + p->latency
                          + (double) round->recv * p->gap;
                recv_end = later(start[r], arrival) + p->overhead;
            }
            ready[r] = later(send_end, recv_end)
                       + (round->reduces ? (double) round->recv * p->reduce : 0.0);
            if (NULL != counts) {
                counts[r].rounds += 1;
                counts[r].sends += round->to >= 0;
                counts[r].receives += round->from >= 0;
                counts[r].sent += round->send;
                counts[r].received += round->recv;
                counts[r].reduced += round->reduces ? round->recv : 0;
            }
        }
        for (int r = 0; r < n; ++r) {
            cursor[r] += start[r] >= 0.0;
        }
    }
    result->time = 0.0;
    for (int r = 0; NULL == result->error && r < n; ++r) {
        if (cursor[r] != plans[r].count) {
            result->error = "a rank's steps do not increase";
        }
        result->time = later(result->time, ready[r]);
    }
    result->steps = last_step + 1;
    free(ready);
    free(start);
    free(cursor);
    return NULL == result->error ? 0 : -1;
}

int sim_plans(const struct sim_case *c, const struct sim_params *p, struct sim_result *result,
              struct sim_rank_counts *counts)
{
    struct sim_plan *plans;
    int rc;

    *result = (struct sim_result){.ran = c->alg};
    if (c->nodes < 1 || c->nodes > INT16_MAX) {
        result->error = "nodes out of range";
        return -1;
    }
    if (NULL != counts) {
        memset(counts, 0, sizeof(*counts) * (size_t) c->nodes);
    }
    plans = build_plans(c, result);
    if (NULL == plans) {
        return -1;
    }
    rc = price(c->nodes, plans, p, result, counts);
    for (int r = 0; r < c->nodes; ++r) {
        free(plans[r].rounds);
    }
    free(plans);
    return rc;
}

double sim_multicast(int nodes, size_t bytes, const struct sim_params *p)
{
    double packets = ceil((double) bytes / SIM_MCAST_PACKET_BYTES);
    double acks = later(1.0, ceil(packets / SIM_MCAST_ACK_EVERY));
    double receivers = nodes - 1;

    if (nodes < 2) {
        return 0.0;
    }
    /* After its fixed cost per call, the root streams the packets while it takes
     * the receivers' cumulative acknowledgements (all but the last of each); the
     * last packet reaches the receivers; their final acknowledgements come back
     * and are taken one by one. */
    return p->call + p->overhead
           + later((double) bytes * p->gap, receivers * (acks - 1) * p->ack)
           + p->latency + p->overhead + p->overhead + p->latency + receivers * p->ack;
}

enum coll_async_alg sim_auto(const struct sim_case *c, const struct sim_params *p)
{
    size_t total = COLL_ASYNC_FAMILY_ALLGATHER == c->family ? c->bytes * (size_t) c->nodes
                                                             : c->bytes;
    size_t count = reduces(c->family) ? c->bytes / SIM_ELEMENT_BYTES : c->bytes;

    if (COLL_ASYNC_FAMILY_BCAST == c->family
        && c->bytes >= coll_async_decision_multicast_from(
               COLL_ASYNC_ALG_AUTO, c->nodes, SIM_MCAST_MIN_NODES, SIM_MCAST_MAX_NODES,
               SIM_MCAST_MIN_BYTES,
               p->verbs && c->nodes <= COLL_ASYNC_MULTICAST_MAX_NODES)) {
        return COLL_ASYNC_ALG_MULTICAST;
    }
    return coll_async_decision_between(c->family, COLL_ASYNC_ALG_AUTO, total, count, c->nodes);
}
