/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * numa_lines: the cache lines one call moves between NUMA domains, flat (every
 * rank of the node on one channel) against NUMA-staged (coll_async_numa.c: inside
 * each domain, between the domains' leaders, inside each domain again), for n
 * ranks of a node in d domains of consecutive ranks. No MPI.
 *
 *   numa_lines [-n RANKS] [-d DOMAINS] [-s BYTES[,BYTES...]] [--check]
 *
 * The schedule of each channel is the one the component runs there: asked of
 * the real decision table (coll_async_decision_shm, with the default slot of
 * 256 KiB, small reductions up to 4 KiB, CMA on), slices cut by the real
 * schedule_slice. Each schedule's pattern is who reads which lines of whom, as
 * coll_async_allreduce.c, coll_async_bcast.c, coll_async_allgather.c and
 * coll_async_barrier.c read them: a wait for all ranks reads each other rank's
 * control line once (flags only grow, schedule_all_of resumes), a slot or a
 * buffer read reads its lines once. A line read by a rank of another domain
 * than its writer's crosses the socket link once. Polls that find a flag not
 * yet set, and the lines a writer takes back for its next write (a line moves
 * back to its writer's cache after a remote read), are not counted: both
 * scale with the reads that are, as each read line is written again next
 * call.
 *
 * --check: exits non-zero unless, for every family and size, the staged run's
 * crossings are those of its leaders' channel alone and no more than flat's
 * (a unit check of the model, run by test/run).
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ompi/mca/coll/async/coll_async_schedule.h"

#define LINE 64
#define SLOT_SIZE (256 * 1024)
#define SMALL_REDUCE 4096
#define MAX_RANKS 4096

struct tally {
    unsigned long long lines, cross;
};

/* A channel: its ranks (node ranks), and the domain of every node rank. */
struct channel {
    int k;
    const int *member;
    const int *domain_of;
    struct tally *tally;
};

static size_t lines_of(size_t bytes)
{
    return (bytes + LINE - 1) / LINE;
}

/* reader (channel index) reads count lines last written by owner. */
static void reads(const struct channel *c, int reader, int owner, size_t count)
{
    if (reader == owner || 0 == count) {
        return;
    }
    c->tally->lines += count;
    if (c->domain_of[c->member[reader]] != c->domain_of[c->member[owner]]) {
        c->tally->cross += count;
    }
}

/* Every rank waits for every other's control line. */
static void wait_all(const struct channel *c)
{
    for (int r = 0; r < c->k; ++r) {
        for (int j = 0; j < c->k; ++j) {
            reads(c, r, j, 1);
        }
    }
}

/* Every rank reads `lines` lines of each other rank. */
static void read_all(const struct channel *c, size_t lines)
{
    for (int r = 0; r < c->k; ++r) {
        for (int j = 0; j < c->k; ++j) {
            reads(c, r, j, lines);
        }
    }
}

static enum coll_async_shm_schedule decide(enum coll_async_family family, size_t bytes, int root,
                                           int k)
{
    struct coll_async_decision_shm shm = {.nranks = k,
                                          .slot_size = SLOT_SIZE,
                                          .single_copy = true,
                                          .reduce_mode = COLL_ASYNC_REDUCE_AUTO,
                                          .small_reduce_bytes = SMALL_REDUCE,
                                          .has_atomic = true,
                                          .forced = COLL_ASYNC_ALG_AUTO};

    return coll_async_decision_shm(family, bytes, root, &shm);
}

/* allreduce (root < 0) or reduce of bytes (4-byte elements) on channel c. */
static void reduction(const struct channel *c, size_t bytes, int root)
{
    enum coll_async_family family = root < 0 ? COLL_ASYNC_FAMILY_ALLREDUCE
                                             : COLL_ASYNC_FAMILY_REDUCE;
    int first = root < 0 ? 0 : root;
    size_t count = bytes / 4, chunk = SLOT_SIZE / 4;

    if (c->k < 2) {
        return;
    }
    switch (decide(family, bytes, root, c->k)) {
    case COLL_ASYNC_SHM_SMALL_EACH: /* may write; arrivals; every slot */
        wait_all(c);
        wait_all(c);
        read_all(c, lines_of(bytes));
        return;
    case COLL_ASYNC_SHM_SMALL_ROOT: /* may write; the first rank reduces, all read it */
        wait_all(c);
        for (int j = 0; j < c->k; ++j) {
            reads(c, first, j, 1 + lines_of(bytes));
        }
        for (int r = 0; root < 0 && r < c->k; ++r) {
            reads(c, r, first, 1 + lines_of(bytes));
        }
        return;
    case COLL_ASYNC_SHM_SINGLE_COPY:
        chunk = count; /* one pass, from the peers' own buffers */
        /* fall through */
    default: /* STAGED, ROOTED_CHUNKS: slot-sized chunks, the same reads per chunk */
        for (size_t at = 0; at < count; at += chunk) {
            size_t n = count - at < chunk ? count - at : chunk;

            wait_all(c); /* arrivals (and, staged, the slot free) */
            for (int r = 0; r < c->k; ++r) {
                size_t f, share;

                if (root >= 0 && COLL_ASYNC_SHM_SINGLE_COPY != decide(family, bytes, root, c->k)) {
                    /* rooted chunks: the root reduces every chunk */
                    if (r == root) {
                        for (int j = 0; j < c->k; ++j) {
                            reads(c, r, j, lines_of(n * 4));
                        }
                    }
                    continue;
                }
                schedule_slice(n, 4, c->k, r, &f, &share);
                for (int j = 0; j < c->k; ++j) { /* slice r of every input */
                    reads(c, r, j, lines_of(share * 4));
                }
                if (root >= 0) { /* its slice written into the root's buffer */
                    reads(c, root, r, lines_of(share * 4));
                }
            }
            wait_all(c); /* slices ready */
            for (int r = 0; root < 0 && r < c->k; ++r) {
                for (int j = 0; j < c->k; ++j) {
                    size_t f, share;

                    schedule_slice(n, 4, c->k, j, &f, &share);
                    reads(c, r, j, lines_of(share * 4));
                }
            }
            wait_all(c); /* done */
        }
        return;
    }
}

static void bcast(const struct channel *c, size_t bytes, int root)
{
    size_t chunk = bytes > 0 ? bytes : 1; /* single copy: from the root's buffer at once */

    if (c->k < 2) {
        return;
    }
    if (COLL_ASYNC_SHM_SINGLE_COPY != decide(COLL_ASYNC_FAMILY_BCAST, bytes, root, c->k)) {
        chunk = SLOT_SIZE; /* through the root's slot */
    }
    for (size_t at = 0; at < bytes || 0 == at; at += chunk) {
        size_t n = bytes - at < chunk ? bytes - at : chunk;

        for (int r = 0; r < c->k; ++r) {
            reads(c, r, root, 1 + lines_of(n)); /* its flag, then its data */
            reads(c, root, r, 1);               /* the root waits for the readers */
        }
        if (0 == bytes) {
            break;
        }
    }
}

static void allgather(const struct channel *c, size_t block)
{
    if (c->k < 2) {
        return;
    }
    wait_all(c);
    read_all(c, lines_of(block));
    wait_all(c);
}

static void barrier(const struct channel *c)
{
    if (c->k >= 2) {
        wait_all(c);
    }
}

/* The node: n ranks, domain of rank i = i * d / n (as coll_async_virtual_numa
 * splits), the channels of the whole node, of each domain and of the leaders. */
struct node {
    int n, d;
    int domain_of[MAX_RANKS], all[MAX_RANKS], by_domain[MAX_RANKS], first[MAX_RANKS + 1];
    int leaders[MAX_RANKS];
};

static void node_init(struct node *node, int n, int d)
{
    node->n = n;
    node->d = d;
    memset(node->first, 0, sizeof(node->first));
    for (int i = 0; i < n; ++i) {
        node->all[i] = node->by_domain[i] = i;
        node->domain_of[i] = (int) ((long) i * d / n);
        ++node->first[node->domain_of[i] + 1];
    }
    for (int e = 0; e < d; ++e) {
        node->first[e + 1] += node->first[e];
        node->leaders[e] = node->first[e];
    }
}

static struct channel whole(const struct node *node, struct tally *t)
{
    return (struct channel){node->n, node->all, node->domain_of, t};
}

static struct channel domain(const struct node *node, int e, struct tally *t)
{
    return (struct channel){node->first[e + 1] - node->first[e], &node->by_domain[node->first[e]],
                            node->domain_of, t};
}

static struct channel leaders(const struct node *node, struct tally *t)
{
    return (struct channel){node->d, node->leaders, node->domain_of, t};
}

enum family { ALLREDUCE, REDUCE, BCAST, ALLGATHER, BARRIER, FAMILIES };
static const char *const family_names[FAMILIES] = {"allreduce", "reduce", "bcast", "allgather",
                                                   "barrier"};

static void flat(const struct node *node, enum family f, size_t bytes, struct tally *t)
{
    struct channel c = whole(node, t);

    switch (f) {
    case ALLREDUCE: reduction(&c, bytes, -1); break;
    case REDUCE: reduction(&c, bytes, 0); break;
    case BCAST: bcast(&c, bytes, 0); break;
    case ALLGATHER: allgather(&c, bytes); break;
    default: barrier(&c); break;
    }
}

/* coll_async_numa.c's plans, roots at node rank 0 (domain 0's leader); the
 * leaders' stages tallied apart in *between. */
static void staged(const struct node *node, enum family f, size_t bytes, struct tally *t,
                   struct tally *between)
{
    struct channel l = leaders(node, between);
    size_t total = bytes * (size_t) node->n;

    for (int e = 0; e < node->d; ++e) {
        struct channel c = domain(node, e, t);

        switch (f) {
        case ALLREDUCE:
        case REDUCE: reduction(&c, bytes, 0); break;
        case ALLGATHER: allgather(&c, bytes); break;
        case BARRIER: barrier(&c); break;
        default: break;
        }
    }
    switch (f) {
    case ALLREDUCE: reduction(&l, bytes, -1); break;
    case REDUCE: reduction(&l, bytes, 0); break;
    case BCAST: bcast(&l, bytes, 0); break;
    case BARRIER: barrier(&l); break;
    default:
        if (0 == node->n % node->d) {
            allgather(&l, bytes * (size_t) (node->n / node->d));
        }
        for (int e = 0; 0 != node->n % node->d && e < node->d; ++e) {
            bcast(&l, bytes * (size_t) (node->first[e + 1] - node->first[e]), e);
        }
        break;
    }
    for (int e = 0; e < node->d && REDUCE != f; ++e) {
        struct channel c = domain(node, e, t);

        bcast(&c, ALLGATHER == f ? total : BARRIER == f ? 1 : bytes, 0);
    }
    t->lines += between->lines;
    t->cross += between->cross;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: numa_lines [-n RANKS] [-d DOMAINS] [-s BYTES[,BYTES...]] [--check]\n");
}

int main(int argc, char **argv)
{
    int n = 64, d = 2, failures = 0;
    bool check = false;
    char sizes_text[256] = "8,4096,65536,1048576";
    static struct node node;

    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "-n") && i + 1 < argc) {
            n = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "-d") && i + 1 < argc) {
            d = atoi(argv[++i]);
        } else if (0 == strcmp(argv[i], "-s") && i + 1 < argc) {
            snprintf(sizes_text, sizeof(sizes_text), "%s", argv[++i]);
        } else if (0 == strcmp(argv[i], "--check")) {
            check = true;
        } else {
            usage(0 == strcmp(argv[i], "-h") ? stdout : stderr);
            return 0 == strcmp(argv[i], "-h") ? 0 : 2;
        }
    }
    if (n < 1 || n > MAX_RANKS || d < 1 || d > n) {
        usage(stderr);
        return 2;
    }
    node_init(&node, n, d);
    printf("# %d ranks, %d NUMA domains; cache lines (64 B) read per call, all and across "
           "domains; allgather: bytes per rank\n", n, d);
    printf("%-10s %10s %12s %12s %12s %12s %8s\n", "family", "bytes", "flat_all", "flat_cross",
           "numa_all", "numa_cross", "ratio");
    for (int f = 0; f < FAMILIES; ++f) {
        char copy[256], *save = NULL;

        snprintf(copy, sizeof(copy), "%s", sizes_text);
        for (char *s = strtok_r(copy, ",", &save); NULL != s; s = strtok_r(NULL, ",", &save)) {
            size_t bytes = BARRIER == f ? 0 : strtoul(s, NULL, 10);
            struct tally a = {0}, b = {0}, between = {0};

            flat(&node, f, bytes, &a);
            staged(&node, f, bytes, &b, &between);
            printf("%-10s %10zu %12llu %12llu %12llu %12llu %8.1f\n", family_names[f], bytes,
                   a.lines, a.cross, b.lines, b.cross,
                   b.cross > 0 ? (double) a.cross / (double) b.cross : 0.0);
            if (b.cross != between.cross || (b.cross > a.cross && d > 1)) {
                fprintf(stderr, "numa_lines: %s %zu B: staged crosses %llu lines (leaders %llu), "
                        "flat %llu\n", family_names[f], bytes, b.cross, between.cross, a.cross);
                ++failures;
            }
            if (BARRIER == f) {
                break;
            }
        }
    }
    return check && failures > 0 ? 1 : 0;
}
