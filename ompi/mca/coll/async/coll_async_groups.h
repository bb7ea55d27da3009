/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a communicator's ranks grouped, by node (coll_async_hier.h) or by
 * NUMA domain on a node (coll_async_numa.h).
 *
 * Each of size ranks is in one of count groups, of[rank]; ranks lists them group
 * after group, group g's at ranks[first[g] .. first[g + 1]), ascending; a rank's
 * index among its group's is its rank on that group's channel. No MPI.
 */

#ifndef MCA_COLL_ASYNC_GROUPS_H
#define MCA_COLL_ASYNC_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Fills first (count + 1 entries, zeroed by the caller) and ranks (size) from of:
 * a counting sort, linear in the ranks whatever the number of groups (group g's
 * count goes to first[g + 1], then its start, then, as its ranks are placed, its
 * end, where group g + 1 starts). Whether ranks is 0 .. size - 1: the ranks of
 * each group consecutive, the groups in order. */
static inline bool coll_async_groups_sort(const int *of, int size, int count, int *first,
                                          int *ranks)
{
    bool rank_ordered = true;
    int start = 0;

    for (int rank = 0; rank < size; ++rank) {
        ++first[of[rank] + 1];
    }
    for (int g = 0; g < count; ++g) {
        int members = first[g + 1];

        first[g + 1] = start;
        start += members;
    }
    for (int rank = 0; rank < size; ++rank) {
        int at = first[of[rank] + 1]++;

        rank_ordered &= rank == at;
        ranks[at] = rank;
    }
    return rank_ordered;
}

/* The index of rank among the ranks of its group; -1 when it is not listed. */
static inline int coll_async_groups_index(const int *of, const int *first, const int *ranks,
                                          int rank)
{
    int g = of[rank];

    for (int i = first[g]; i < first[g + 1]; ++i) {
        if (ranks[i] == rank) {
            return i - first[g];
        }
    }
    return -1;
}

/* size blocks of bytes each, in group order at from (block i is ranks[i]'s), to
 * rank order at to. */
static inline void coll_async_groups_permute(const int *ranks, int size, const void *from,
                                             void *to, size_t bytes)
{
    for (int i = 0; i < size; ++i) {
        memcpy((char *) to + (size_t) ranks[i] * bytes, (const char *) from + (size_t) i * bytes,
               bytes);
    }
}

#endif /* MCA_COLL_ASYNC_GROUPS_H */
