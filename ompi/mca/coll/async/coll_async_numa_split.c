/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: splitting a communicator of one node by NUMA domain. See
 * coll_async_numa.h.
 *
 * At the communicator's creation every rank reads every rank's domain from its
 * card (the domain of its binding, or its pretend one under
 * coll_async_virtual_numa: coll_async_node.c) and all compute the same split;
 * then each domain opens its channel and the leaders theirs, before the
 * communicator's own channel. A channel's ranks reach one outcome together, but
 * two domains may not (one /dev/shm full for one of them): each rank votes with
 * its join of the communicator's channel whether it opened all it needs, and at
 * the first collective, once that channel is settled, all run flat unless all
 * voted yes (coll_async_settle.c).
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"

#include "coll_async.h"
#include "coll_async_card.h"
#include "coll_async_groups.h"
#include "coll_async_numa.h"
#include "coll_async_schedule.h"

int coll_async_numa_local_index(const struct coll_async_numa *numa, int rank)
{
    return coll_async_groups_index(numa->domain_of, numa->domain_first, numa->domain_ranks, rank);
}

void mca_coll_async_numa_close(struct coll_async_numa *numa)
{
    if (NULL == numa) {
        return;
    }
    if (numa->has_domain) {
        coll_async_channel_close(&numa->domain_channel);
    }
    if (numa->leads) {
        coll_async_channel_close(&numa->leaders_channel);
    }
    free(numa->domain_of);
    free(numa->domain_first);
    free(numa->domain_ranks);
    free(numa->leaders);
    free(numa);
}

/* The ranks split: count ranks of comm (ascending; NULL: all of comm), this
 * process the one at index. Indices into them are the split's ranks. */
struct members {
    struct ompi_communicator_t *comm;
    const int *ranks;
    int count, index;
};

static int comm_rank(const struct members *m, int i)
{
    return NULL == m->ranks ? i : m->ranks[i];
}

/* Every member's domain, renumbered in the order of the members (the first one's
 * is 0); the count of domains, or -1 where a member is in none (unbound on a
 * machine of several) or has no card. */
static int read_domains(const struct members *m, int *domain_of)
{
    int size = m->count, count = 0;
    int *seen = malloc(sizeof(int) * (size_t) size); /* the cards' domain of each */

    if (NULL == seen) {
        return -1;
    }
    for (int rank = 0; rank < size; ++rank) {
        const struct coll_async_card *card =
            mca_coll_async_card_of(ompi_comm_peer_lookup(m->comm, comm_rank(m, rank)));
        int domain = 0;

        if (NULL == card || card->numa < 0) {
            count = -1;
            break;
        }
        while (domain < count && seen[domain] != card->numa) {
            ++domain;
        }
        if (domain == count) {
            seen[count++] = card->numa;
        }
        domain_of[rank] = domain;
    }
    free(seen);
    return count;
}

/* Groups the ranks by domain, ascending within one, and chooses each domain's
 * lowest rank to lead it. */
static void group_by_domain(struct coll_async_numa *numa)
{
    numa->rank_ordered = coll_async_groups_sort(numa->domain_of, numa->size, numa->domain_count,
                                                numa->domain_first, numa->domain_ranks);
    numa->even = true;
    for (int domain = 0; domain < numa->domain_count; ++domain) {
        numa->leaders[domain] = numa->domain_ranks[numa->domain_first[domain]];
        numa->even &= coll_async_numa_domain_size(numa, domain)
                      == coll_async_numa_domain_size(numa, 0);
    }
    numa->domain = numa->domain_of[numa->rank];
    numa->local_index = coll_async_numa_local_index(numa, numa->rank);
    numa->leads = numa->leaders[numa->domain] == numa->rank;
}

static struct coll_async_numa *split(const struct members *m)
{
    struct coll_async_numa *numa = calloc(1, sizeof(*numa));
    int size = m->count;

    if (NULL == numa) {
        return NULL;
    }
    numa->size = size;
    numa->rank = m->index;
    numa->domain_of = calloc(size, sizeof(int));
    numa->domain_ranks = calloc(size, sizeof(int));
    numa->domain_count = NULL == numa->domain_of ? -1 : read_domains(m, numa->domain_of);
    if (NULL == numa->domain_ranks || numa->domain_count < 2) {
        mca_coll_async_numa_close(numa);
        return NULL;
    }
    numa->domain_first = calloc(numa->domain_count + 1, sizeof(int));
    numa->leaders = calloc(numa->domain_count, sizeof(int));
    if (NULL == numa->domain_first || NULL == numa->leaders) {
        mca_coll_async_numa_close(numa);
        return NULL;
    }
    group_by_domain(numa);
    return numa;
}

/* The channel of count members listed at (indices), this process at index. */
static bool open_among(struct coll_async_channel *channel, const struct members *m,
                       const int *members, int count, int index,
                       enum coll_async_segment_role role,
                       const struct coll_async_channel_config *config)
{
    int *ranks = malloc(sizeof(int) * (size_t) count);
    int rc = OMPI_ERR_OUT_OF_RESOURCE;

    for (int i = 0; i < count && NULL != ranks; ++i) {
        ranks[i] = comm_rank(m, members[i]);
    }
    if (NULL != ranks) {
        rc = mca_coll_async_segment_open(channel, config, m->comm, ranks, count, index, role,
                                         true);
    }
    free(ranks);
    /* Failed for this rank alone: it votes no, and nobody uses the channel. */
    return OMPI_SUCCESS == rc && !coll_async_channel_failed(channel);
}

/* This rank's domain's channel and, when it leads, the leaders'; whether it
 * prepared all it needs (its vote). Both are prepared whatever the first gives.
 * What a rank meets when it makes or attaches them, at its first collective,
 * fails the collective, as on the node's channel. */
static bool open_channels(struct coll_async_numa *numa, const struct members *m,
                          const struct coll_async_channel_config *config)
{
    int count = coll_async_numa_domain_size(numa, numa->domain);
    bool leads = numa->leads;

    numa->leads = false;
    if (count > 1) {
        numa->has_domain = open_among(&numa->domain_channel, m,
                                      &numa->domain_ranks[numa->domain_first[numa->domain]],
                                      count, numa->local_index, COLL_ASYNC_SEGMENT_NUMA_DOMAIN,
                                      config);
    }
    if (leads) {
        numa->leads = open_among(&numa->leaders_channel, m, numa->leaders, numa->domain_count,
                                 numa->domain, COLL_ASYNC_SEGMENT_NUMA_LEADERS, config);
    }
    return (count < 2 || numa->has_domain) && (!leads || numa->leads);
}

/* One line: the domains, their leaders, and what runs in NUMA stages. */
static void report(const struct coll_async_numa *numa, const struct members *m,
                   const struct coll_async_config *config)
{
    int level = 0 == numa->rank ? 1 : 2;
    char leaders[160] = "", families[96] = "", sizes[160] = "";
    size_t used = 0, listed = 0, counted = 0;

    if (opal_output_get_verbosity(mca_coll_async_output) < level) {
        return;
    }
    for (int domain = 0; domain < numa->domain_count; ++domain) {
        if (used < sizeof(leaders)) {
            used += (size_t) snprintf(leaders + used, sizeof(leaders) - used, "%s%d",
                                      0 == domain ? "" : ",",
                                      comm_rank(m, numa->leaders[domain]));
        }
        if (counted < sizeof(sizes)) {
            counted += (size_t) snprintf(sizes + counted, sizeof(sizes) - counted, "%s%d",
                                         0 == domain ? "" : "+",
                                         coll_async_numa_domain_size(numa, domain));
        }
    }
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES && listed < sizeof(families);
         ++family) {
        if (numa->staged[family]) {
            listed += (size_t) snprintf(families + listed, sizeof(families) - listed, " %s",
                                        coll_async_family_name(family));
        }
    }
    opal_output_verbose(level, mca_coll_async_output,
                        "coll:async: %s (cid %u, size %d, rank %d): %s%d NUMA domains (%s ranks, "
                        "%s), leaders ranks %s; in NUMA stages (rank -> domain leader -> node "
                        "and back):%s", m->comm->c_name, coll_async_comm_cid(m->comm),
                        ompi_comm_size(m->comm), ompi_comm_rank(m->comm),
                        NULL == m->ranks ? "" : "this node: ", numa->domain_count, sizes,
                        config->virtual_numa > 0 ? "pretend: coll_async_virtual_numa"
                                                 : "of the ranks' bindings",
                        leaders, families);
}

struct coll_async_numa *mca_coll_async_numa_open(struct ompi_communicator_t *comm,
                                                const int *ranks, int count, int index,
                                                const struct coll_async_config *config)
{
    const struct members m = {.comm = comm, .ranks = ranks, .count = count, .index = index};
    struct coll_async_numa *numa;

    if (!coll_async_decision_numa_wanted(config->algorithm)) {
        return NULL;
    }
    /* Every member reads the same cards: all split alike, or none does. */
    numa = split(&m);
    if (NULL == numa) {
        return NULL;
    }
    numa->opened = open_channels(numa, &m, &config->channel);
    if (!numa->opened) {
        opal_output_verbose(1, mca_coll_async_output,
                            "coll:async: %s (cid %u, size %d, rank %d): %d NUMA domains, but "
                            "this rank's domain or the leaders have no shared memory of their "
                            "own: all flat", comm->c_name, coll_async_comm_cid(comm),
                            ompi_comm_size(comm), ompi_comm_rank(comm), numa->domain_count);
    }
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        numa->staged[family] = coll_async_decision_numa(family, config->algorithm[family],
                                                        numa->domain_count);
    }
    report(numa, &m, config);
    return numa;
}
