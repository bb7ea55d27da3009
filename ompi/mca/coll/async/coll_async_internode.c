/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the leaders' algorithms between nodes. See coll_async_internode.h.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_async_internode.h"
#include "transport/coll_async_scratch.h"

/* One round of this rank: at most one send and one receive, posted together,
 * then, once both are done, reduce_into op= recv. */
struct coll_async_internode_round {
    int step;
    int to, from; /* group indices, -1: none */
    const char *send;
    size_t send_bytes;
    char *recv;
    size_t recv_bytes;
    char *reduce_into;
    size_t reduce_count;
};

/* The transport's ops of a round, on the heap: after a failure they may stay in
 * the transport's hands (see fini). */
struct coll_async_internode_transfers {
    struct coll_async_transfer send, recv;
};

/* Planning */

struct plan {
    struct coll_async_internode *x;
    int capacity;
    size_t size; /* bytes per element: 1 for data movement */
    char *data;
};

static struct coll_async_internode_round *add_round(struct plan *plan, int step)
{
    struct coll_async_internode *x = plan->x;
    struct coll_async_internode_round *round = &x->rounds[x->round_count++];

    *round = (struct coll_async_internode_round){.step = step, .to = -1, .from = -1};
    return round;
}

/* Element range of block i of n over count elements. */
static size_t block_first(size_t count, int n, int i)
{
    size_t base = count / (size_t) n, extra = count % (size_t) n;

    return base * (size_t) i + ((size_t) i < extra ? (size_t) i : extra);
}

static size_t block_count(size_t count, int n, int i)
{
    return block_first(count, n, i + 1) - block_first(count, n, i);
}

static char *at_element(const struct plan *plan, size_t element)
{
    return plan->data + element * plan->size;
}

static void send_to(struct coll_async_internode_round *round, int peer, const char *data,
                    size_t bytes)
{
    round->to = peer;
    round->send = data;
    round->send_bytes = bytes;
}

static void recv_from(struct coll_async_internode_round *round, int peer, char *data,
                      size_t bytes)
{
    round->from = peer;
    round->recv = data;
    round->recv_bytes = bytes;
}

/* recv into scratch, then reduce into data. */
static void recv_reduce(const struct plan *plan, struct coll_async_internode_round *round,
                        int peer, char *into, size_t count)
{
    recv_from(round, peer, plan->x->scratch, count * plan->size);
    round->reduce_into = into;
    round->reduce_count = count;
}

static int ring_index(const struct coll_async_leaders *group, int position)
{
    int n = group->size;

    position = (position % n + n) % n;
    return NULL != group->ring ? group->ring[position] : position;
}

static int ring_position(const struct coll_async_leaders *group)
{
    for (int position = 0; NULL != group->ring && position < group->size; ++position) {
        if (group->ring[position] == group->rank) {
            return position;
        }
    }
    return group->rank;
}

/* Ring allreduce: reduce-scatter of n blocks around the ring, then allgather.
 * Block b belongs to ring position b. */
static void plan_ring_allreduce(struct plan *plan)
{
    const struct coll_async_leaders *g = plan->x->group;
    size_t count = plan->x->count;
    int n = g->size, p = ring_position(g);
    int right = ring_index(g, p + 1), left = ring_index(g, p - 1);

    for (int s = 0; s < n - 1; ++s) {
        struct coll_async_internode_round *round = add_round(plan, s);
        int out = ((p - s) % n + n) % n, in = ((p - s - 1) % n + n) % n;

        send_to(round, right, at_element(plan, block_first(count, n, out)),
                block_count(count, n, out) * plan->size);
        recv_reduce(plan, round, left, at_element(plan, block_first(count, n, in)),
                    block_count(count, n, in));
    }
    for (int s = 0; s < n - 1; ++s) {
        struct coll_async_internode_round *round = add_round(plan, n - 1 + s);
        int out = ((p + 1 - s) % n + n) % n, in = ((p - s) % n + n) % n;

        send_to(round, right, at_element(plan, block_first(count, n, out)),
                block_count(count, n, out) * plan->size);
        recv_from(round, left, at_element(plan, block_first(count, n, in)),
                  block_count(count, n, in) * plan->size);
    }
}

/* Ring reduce_scatter: group index i's block (block_offset, block_bytes, whole
 * elements) ends reduced at i; each step hands the block met one step earlier
 * to the right, which folds its own in. */
static void plan_ring_reduce_scatter(struct plan *plan)
{
    const struct coll_async_internode *x = plan->x;
    const struct coll_async_leaders *g = x->group;
    int n = g->size, p = ring_position(g);
    int right = ring_index(g, p + 1), left = ring_index(g, p - 1);

    for (int s = 0; s < n - 1; ++s) {
        struct coll_async_internode_round *round = add_round(plan, s);
        int out = ring_index(g, p - s - 1), in = ring_index(g, p - s - 2);

        send_to(round, right, plan->data + x->block_offset[out], x->block_bytes[out]);
        recv_reduce(plan, round, left, plan->data + x->block_offset[in],
                    x->block_bytes[in] / plan->size);
    }
}

/*
 * Groups of any size for the doubling algorithms: with p the largest power of
 * two <= n and r = n - p, the first 2r ranks pair up and the even one of each
 * pair hands its vector to the odd one (step 0), which takes part as rank / 2;
 * ranks from 2r take part as rank - r. The odd ones hand the result back last.
 */
struct fold {
    int p, r;
    int virtual_rank; /* -1: folded out */
};

static struct fold fold_of(int n, int rank)
{
    struct fold fold = {.p = 1};

    while (2 * fold.p <= n) {
        fold.p *= 2;
    }
    fold.r = n - fold.p;
    if (rank < 2 * fold.r) {
        fold.virtual_rank = rank % 2 ? rank / 2 : -1;
    } else {
        fold.virtual_rank = rank - fold.r;
    }
    return fold;
}

static int unfold(const struct fold *fold, int virtual_rank)
{
    return virtual_rank < fold->r ? 2 * virtual_rank + 1 : virtual_rank + fold->r;
}

static int log2_of(int p)
{
    int k = 0;

    while ((1 << k) < p) {
        ++k;
    }
    return k;
}

/* Step 0 (in) and the last step (out) of a fold; true if this rank takes part
 * in between. */
static bool fold_in(struct plan *plan, const struct fold *fold)
{
    const struct coll_async_leaders *g = plan->x->group;
    size_t count = plan->x->count;

    if (g->rank >= 2 * fold->r) {
        return true;
    }
    if (g->rank % 2) {
        recv_reduce(plan, add_round(plan, 0), g->rank - 1, plan->data, count);
        return true;
    }
    send_to(add_round(plan, 0), g->rank + 1, plan->data, count * plan->size);
    return false;
}

static void fold_out(struct plan *plan, const struct fold *fold, int last_step)
{
    const struct coll_async_leaders *g = plan->x->group;
    size_t bytes = plan->x->count * plan->size;

    if (g->rank < 2 * fold->r) {
        struct coll_async_internode_round *round = add_round(plan, last_step);

        if (g->rank % 2) {
            send_to(round, g->rank - 1, plan->data, bytes);
        } else {
            recv_from(round, g->rank + 1, plan->data, bytes);
        }
    }
}

static void plan_recursive_doubling_allreduce(struct plan *plan)
{
    struct fold fold = fold_of(plan->x->group->size, plan->x->group->rank);
    int levels = log2_of(fold.p);

    if (fold_in(plan, &fold)) {
        for (int k = 0; k < levels && fold.virtual_rank >= 0; ++k) {
            struct coll_async_internode_round *round = add_round(plan, 1 + k);
            int partner = unfold(&fold, fold.virtual_rank ^ (1 << k));

            send_to(round, partner, plan->data, plan->x->count * plan->size);
            recv_reduce(plan, round, partner, plan->data, plan->x->count);
        }
    }
    fold_out(plan, &fold, 1 + levels);
}

/* Rabenseifner: among the p ranks, recursive halving hands each a 1/p share
 * reduced, recursive doubling gathers the shares back. Block b of p. */
static void plan_rabenseifner_allreduce(struct plan *plan)
{
    struct fold fold = fold_of(plan->x->group->size, plan->x->group->rank);
    size_t count = plan->x->count;
    int levels = log2_of(fold.p), lo = 0, hi = fold.p;
    int v = fold.virtual_rank;

    if (fold_in(plan, &fold) && v >= 0) {
        for (int k = levels - 1; k >= 0; --k) { /* halving: partner at distance 2^k */
            struct coll_async_internode_round *round = add_round(plan, 1 + (levels - 1 - k));
            int partner = unfold(&fold, v ^ (1 << k)), mid = lo + (hi - lo) / 2;
            int keep_lo = v & (1 << k) ? mid : lo, keep_hi = v & (1 << k) ? hi : mid;
            int give_lo = v & (1 << k) ? lo : mid, give_hi = v & (1 << k) ? mid : hi;
            size_t give = block_first(count, fold.p, give_lo);
            size_t keep = block_first(count, fold.p, keep_lo);

            send_to(round, partner, at_element(plan, give),
                    (block_first(count, fold.p, give_hi) - give) * plan->size);
            recv_reduce(plan, round, partner, at_element(plan, keep),
                        block_first(count, fold.p, keep_hi) - keep);
            lo = keep_lo;
            hi = keep_hi;
        }
        for (int k = 0; k < levels; ++k) { /* doubling: the partner's range joins */
            struct coll_async_internode_round *round = add_round(plan, 1 + levels + k);
            int partner = unfold(&fold, v ^ (1 << k)), width = hi - lo;
            int other_lo = v & (1 << k) ? lo - width : hi, other_hi = other_lo + width;
            size_t mine = block_first(count, fold.p, lo);
            size_t theirs = block_first(count, fold.p, other_lo);

            send_to(round, partner, at_element(plan, mine),
                    (block_first(count, fold.p, hi) - mine) * plan->size);
            recv_from(round, partner, at_element(plan, theirs),
                      (block_first(count, fold.p, other_hi) - theirs) * plan->size);
            lo = lo < other_lo ? lo : other_lo;
            hi = hi > other_hi ? hi : other_hi;
        }
    }
    fold_out(plan, &fold, 1 + 2 * levels);
}

/* Binomial trees over ranks relative to the root: relative rank v receives from
 * v - 2^k at step k (2^k its highest bit) and sends to v + 2^j for j above k. */
static int relative(const struct coll_async_internode *x, int rank)
{
    return (rank - x->root + x->group->size) % x->group->size;
}

static int absolute(const struct coll_async_internode *x, int v)
{
    return (v + x->root) % x->group->size;
}

static void plan_binomial_bcast(struct plan *plan)
{
    struct coll_async_internode *x = plan->x;
    int n = x->group->size, v = relative(x, x->group->rank), k = 0;

    while ((1 << k) <= v) {
        ++k;
    }
    if (v > 0) {
        recv_from(add_round(plan, k - 1), absolute(x, v - (1 << (k - 1))), plan->data, x->bytes);
    }
    for (; v + (1 << k) < n; ++k) {
        send_to(add_round(plan, k), absolute(x, v + (1 << k)), plan->data, x->bytes);
    }
}

/* Reduce: relative rank v gathers from v + 2^k while bit k of v is clear, then
 * hands its partial result to v - 2^k. */
static void plan_binomial_reduce(struct plan *plan)
{
    struct coll_async_internode *x = plan->x;
    int n = x->group->size, v = relative(x, x->group->rank);

    for (int k = 0; (1 << k) < n; ++k) {
        if (v & (1 << k)) {
            send_to(add_round(plan, k), absolute(x, v - (1 << k)), plan->data,
                    x->count * plan->size);
            return;
        }
        if (v + (1 << k) < n) {
            recv_reduce(plan, add_round(plan, k), absolute(x, v + (1 << k)), plan->data,
                        x->count);
        }
    }
}

/* Scatter of n blocks (block b for relative rank b) down a binomial tree, then a
 * ring allgather over relative ranks. The root has every block: the ring neither
 * sends to it nor receives for it (a send nobody receives would wait for ever for
 * a rendezvous, or sit staged at the root). */
static void plan_scatter_allgather_bcast(struct plan *plan)
{
    struct coll_async_internode *x = plan->x;
    int n = x->group->size, v = relative(x, x->group->rank), top = 1, levels;
    size_t bytes = x->bytes;

    while (top * 2 < n) {
        top *= 2;
    }
    levels = log2_of(top) + 1;
    for (int mask = top, level = 0; mask >= 1; mask /= 2, ++level) {
        if (0 == v % (2 * mask) && v + mask < n) {
            int last = v + 2 * mask < n ? v + 2 * mask : n;
            size_t from = block_first(bytes, n, v + mask);

            send_to(add_round(plan, level), absolute(x, v + mask), plan->data + from,
                    block_first(bytes, n, last) - from);
        } else if (mask == v % (2 * mask)) {
            int last = v + mask < n ? v + mask : n;
            size_t from = block_first(bytes, n, v);

            recv_from(add_round(plan, level), absolute(x, v - mask), plan->data + from,
                      block_first(bytes, n, last) - from);
        }
    }
    for (int s = 0; s < n - 1; ++s) {
        struct coll_async_internode_round *round = add_round(plan, levels + s);
        int out = ((v - s) % n + n) % n, in = ((v - s - 1) % n + n) % n;

        if (v + 1 < n) {
            send_to(round, absolute(x, v + 1), plan->data + block_first(bytes, n, out),
                    block_count(bytes, n, out));
        }
        if (v > 0) {
            recv_from(round, absolute(x, v - 1), plan->data + block_first(bytes, n, in),
                      block_count(bytes, n, in));
        }
    }
}

static void plan_dissemination_barrier(struct plan *plan)
{
    const struct coll_async_leaders *g = plan->x->group;
    int n = g->size;

    for (int k = 0; (1 << k) < n; ++k) {
        struct coll_async_internode_round *round = add_round(plan, k);

        send_to(round, (g->rank + (1 << k)) % n, plan->x->scratch, 1);
        recv_from(round, (g->rank - (1 << k) % n + n) % n, plan->x->scratch + 1, 1);
    }
}

/* Allgather blocks: the bytes of group indices [lo, hi), adjacent in buf. */
static char *blocks_at(const struct plan *plan, int lo)
{
    return plan->data + plan->x->block_offset[lo];
}

static size_t blocks_bytes(const struct plan *plan, int lo, int hi)
{
    const struct coll_async_internode *x = plan->x;

    return lo >= hi ? 0 : x->block_offset[hi - 1] + x->block_bytes[hi - 1] - x->block_offset[lo];
}

static void plan_ring_allgather(struct plan *plan)
{
    const struct coll_async_leaders *g = plan->x->group;
    int n = g->size, p = ring_position(g);
    int right = ring_index(g, p + 1), left = ring_index(g, p - 1);

    for (int s = 0; s < n - 1; ++s) {
        struct coll_async_internode_round *round = add_round(plan, s);
        int out = ring_index(g, p - s), in = ring_index(g, p - s - 1);

        send_to(round, right, blocks_at(plan, out), plan->x->block_bytes[out]);
        recv_from(round, left, blocks_at(plan, in), plan->x->block_bytes[in]);
    }
}

/* Recursive doubling allgather for a power-of-two group: at step k the ranks
 * exchange the aligned 2^k blocks each holds. */
static void plan_recursive_doubling_allgather(struct plan *plan)
{
    const struct coll_async_leaders *g = plan->x->group;

    for (int k = 0; (1 << k) < g->size; ++k) {
        struct coll_async_internode_round *round = add_round(plan, k);
        int width = 1 << k, partner = g->rank ^ width;
        int mine = g->rank & ~(width - 1), theirs = partner & ~(width - 1);

        send_to(round, partner, blocks_at(plan, mine), blocks_bytes(plan, mine, mine + width));
        recv_from(round, partner, blocks_at(plan, theirs),
                  blocks_bytes(plan, theirs, theirs + width));
    }
}

/* Gather and scatter: block_offset and block_bytes by relative rank (the root's
 * 0), the blocks of consecutive relative ranks adjacent in buf, so a subtree's
 * blocks (from blocks_at() of its first) cross as one message. */
static size_t subtree_bytes(const struct plan *plan, int v, int width)
{
    int n = plan->x->group->size, end = v + width < n ? v + width : n;

    return blocks_bytes(plan, v, end);
}

/* Binomial gather: relative rank v takes the subtree of v + 2^k while bit k of
 * v is clear, then hands its whole subtree to v - 2^k at step k. */
static void plan_binomial_gather(struct plan *plan)
{
    struct coll_async_internode *x = plan->x;
    int n = x->group->size, v = relative(x, x->group->rank);

    for (int k = 0; (1 << k) < n; ++k) {
        if (v & (1 << k)) {
            send_to(add_round(plan, k), absolute(x, v - (1 << k)), blocks_at(plan, v),
                    subtree_bytes(plan, v, 1 << k));
            return;
        }
        if (v + (1 << k) < n) {
            recv_from(add_round(plan, k), absolute(x, v + (1 << k)),
                      blocks_at(plan, v + (1 << k)),
                      subtree_bytes(plan, v + (1 << k), 1 << k));
        }
    }
}

/* Binomial scatter, the gather backwards: v receives its subtree from v - 2^k
 * (2^k its lowest set bit) at step levels - 1 - k, then hands v + 2^j the
 * subtree of v + 2^j for j from k - 1 down to 0. */
static void plan_binomial_scatter(struct plan *plan)
{
    struct coll_async_internode *x = plan->x;
    int n = x->group->size, v = relative(x, x->group->rank), levels = log2_of(n), k = levels;

    if (v > 0) {
        for (k = 0; !(v & (1 << k)); ++k) {
        }
        recv_from(add_round(plan, levels - 1 - k), absolute(x, v - (1 << k)),
                  blocks_at(plan, v), subtree_bytes(plan, v, 1 << k));
    }
    for (int j = k - 1; j >= 0; --j) {
        if (v + (1 << j) < n) {
            send_to(add_round(plan, levels - 1 - j), absolute(x, v + (1 << j)),
                    blocks_at(plan, v + (1 << j)),
                    subtree_bytes(plan, v + (1 << j), 1 << j));
        }
    }
}

/* Pairwise alltoall: at step s - 1 each leader sends its block for the leader s
 * ahead and receives the block of the leader s behind; block b of buf goes to
 * leader b, block b of recv_buf comes from it (the same offsets and sizes). */
static void plan_pairwise_alltoall(struct plan *plan)
{
    struct coll_async_internode *x = plan->x;
    int n = x->group->size, me = x->group->rank;
    char *recv = x->recv_buf;

    for (int s = 1; s < n; ++s) {
        struct coll_async_internode_round *round = add_round(plan, s - 1);
        int to = (me + s) % n, from = (me - s + n) % n;

        send_to(round, to, blocks_at(plan, to), x->block_bytes[to]);
        recv_from(round, from, recv + x->block_offset[from], x->block_bytes[from]);
    }
}

static bool reduces_in(enum coll_async_family family)
{
    return COLL_ASYNC_FAMILY_ALLREDUCE == family || COLL_ASYNC_FAMILY_REDUCE == family
           || COLL_ASYNC_FAMILY_REDUCE_SCATTER == family;
}

size_t coll_async_internode_bytes(const struct coll_async_internode *x,
                                  enum coll_async_family family)
{
    int n = x->group->size;
    bool blocks = COLL_ASYNC_FAMILY_ALLGATHER == family || COLL_ASYNC_FAMILY_GATHER == family
                  || COLL_ASYNC_FAMILY_SCATTER == family || COLL_ASYNC_FAMILY_ALLTOALL == family;

    return reduces_in(family)  ? x->count * x->reduction->size
           : blocks && n > 0 ? x->block_offset[n - 1] + x->block_bytes[n - 1]
                             : x->bytes;
}

int coll_async_internode_start(struct coll_async_internode *x, enum coll_async_family family)
{
    int n = x->group->size;
    bool reduces = reduces_in(family);
    struct plan plan = {.x = x, .size = reduces ? x->reduction->size : 1, .data = x->buf};
    size_t bytes = coll_async_internode_bytes(x, family);

    x->rounds = NULL;
    x->round_count = x->at = x->posted = 0;
    x->scratch = NULL;
    x->transfers = NULL;
    x->error = NULL;
    x->alg = COLL_ASYNC_FAMILY_REDUCE_SCATTER == family
                 ? COLL_ASYNC_ALG_RING /* the only one */
                 : coll_async_decision_between(family, x->alg, bytes, x->count, n);
    if (n < 2 || (0 == bytes && COLL_ASYNC_FAMILY_BARRIER != family)) {
        return 0;
    }
    /* Rounds: at most 2n + 2 log n + 2; scratch: a whole vector for reductions, two
     * bytes for the barrier's tokens. */
    x->rounds = calloc(2 * (size_t) n + 64, sizeof(*x->rounds));
    x->scratch = coll_async_scratch_take(reduces ? bytes : 2);
    x->transfers = calloc(1, sizeof(*x->transfers));
    if (NULL == x->rounds || NULL == x->scratch || NULL == x->transfers) {
        coll_async_internode_fini(x);
        return -ENOMEM;
    }
    if (!reduces) {
        memset(x->scratch, 0, 2); /* the tokens' bytes are sent */
    }
    switch (x->alg) {
    case COLL_ASYNC_ALG_RING:
        (COLL_ASYNC_FAMILY_ALLREDUCE == family        ? plan_ring_allreduce
         : COLL_ASYNC_FAMILY_REDUCE_SCATTER == family ? plan_ring_reduce_scatter
                                                      : plan_ring_allgather)(&plan);
        break;
    case COLL_ASYNC_ALG_RECURSIVE_DOUBLING:
        (COLL_ASYNC_FAMILY_ALLREDUCE == family ? plan_recursive_doubling_allreduce
                                                : plan_recursive_doubling_allgather)(&plan);
        break;
    case COLL_ASYNC_ALG_RABENSEIFNER:
        plan_rabenseifner_allreduce(&plan);
        break;
    case COLL_ASYNC_ALG_BINOMIAL:
        switch (family) {
        case COLL_ASYNC_FAMILY_BCAST: plan_binomial_bcast(&plan); break;
        case COLL_ASYNC_FAMILY_GATHER: plan_binomial_gather(&plan); break;
        case COLL_ASYNC_FAMILY_SCATTER: plan_binomial_scatter(&plan); break;
        default: plan_binomial_reduce(&plan); break;
        }
        break;
    case COLL_ASYNC_ALG_SCATTER_ALLGATHER:
        plan_scatter_allgather_bcast(&plan);
        break;
    case COLL_ASYNC_ALG_PAIRWISE:
        plan_pairwise_alltoall(&plan);
        break;
    default:
        plan_dissemination_barrier(&plan);
        break;
    }
    for (int i = 0; i < x->round_count; ++i) {
        if (x->rounds[i].step >= COLL_ASYNC_INTERNODE_TAG_STEPS) {
            coll_async_internode_fini(x); /* it would take the next collective's tags */
            x->error = "more steps than a collective's tags hold";
            return -E2BIG;
        }
    }
    return 0;
}

struct coll_async_internode_round_plan
coll_async_internode_round_plan(const struct coll_async_internode *x, int i)
{
    const struct coll_async_internode_round *round = &x->rounds[i];

    return (struct coll_async_internode_round_plan){
        .step = round->step, .to = round->to, .from = round->from,
        .send_bytes = round->send_bytes, .recv_bytes = round->recv_bytes,
        .reduces = NULL != round->reduce_into && 0 < round->reduce_count};
}

/* Running the rounds */

static int post(struct coll_async_internode *x, const struct coll_async_internode_round *round)
{
    const struct coll_async_leaders *g = x->group;
    struct coll_async_internode_transfers *t = x->transfers;
    uint64_t tag = x->tag + (uint64_t) round->step;
    int rc = 0;

    t->send.status = t->recv.status = 0;
    if (round->to >= 0) {
        rc = coll_async_net_send_bulk(g->net, g->peer[round->to], tag, round->send,
                                      round->send_bytes, &t->send);
        if (0 != rc) {
            x->error = t->send.error;
            return rc;
        }
    }
    if (round->from >= 0) {
        rc = coll_async_net_recv_bulk(g->net, g->peer[round->from], tag, round->recv,
                                      round->recv_bytes, &t->recv);
        if (0 != rc) {
            x->error = t->recv.error;
            /* The send may still be in flight: its memory stays (fini). */
            return rc;
        }
    }
    return 0;
}

static bool pending(const struct coll_async_transfer *op)
{
    return COLL_ASYNC_TRANSFER_PENDING == op->status;
}

int coll_async_internode_progress(struct coll_async_internode *x)
{
    while (x->at < x->round_count) {
        const struct coll_async_internode_round *round = &x->rounds[x->at];
        struct coll_async_internode_transfers *t = x->transfers;
        int rc;

        if (!x->posted) {
            rc = post(x, round);
            if (0 != rc) {
                return rc;
            }
            x->posted = 1;
        }
        if (0 > t->send.status || 0 > t->recv.status) {
            x->error = 0 > t->send.status ? t->send.error : t->recv.error;
            return 0 > t->send.status ? t->send.status : t->recv.status;
        }
        if (pending(&t->send) || pending(&t->recv)) {
            return COLL_ASYNC_INTERNODE_AGAIN;
        }
        if (NULL != round->reduce_into && 0 < round->reduce_count) {
            coll_async_reduce(x->reduction, round->reduce_into, round->recv,
                              round->reduce_count);
        }
        x->posted = 0;
        ++x->at;
    }
    return 0;
}

void coll_async_internode_fini(struct coll_async_internode *x)
{
    struct coll_async_internode_transfers *t = x->transfers;

    free(x->rounds);
    x->rounds = NULL;
    if (NULL != t && (pending(&t->send) || pending(&t->recv))) {
        /* A failed collective: a transfer to or from a peer that never answers
         * still points at these; they are left to it, not freed under it. */
        x->transfers = NULL;
        x->scratch = NULL;
        return;
    }
    free(t);
    coll_async_scratch_give(x->scratch);
    x->transfers = NULL;
    x->scratch = NULL;
}
