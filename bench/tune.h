/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench/tune: what its parts share. tune.c runs the job (nodes, node counts,
 * candidates, progress), tune_collectives.c calls and checks one family,
 * tune_measure.c times a candidate at a size, tune_file.c chooses the winners,
 * writes the tuning file and reads it back through the component's parser.
 */

#ifndef BENCH_TUNE_H
#define BENCH_TUNE_H

#include <stdbool.h>
#include <stddef.h>

#include <mpi.h>

#include "../ompi/mca/coll/async/coll_async_collectives.h"
#include "../ompi/mca/coll/async/coll_async_decision.h"

/* The families the tuning file steers, in the file's order. */
enum tune_family {
    TUNE_ALLREDUCE,
    TUNE_BCAST,
    TUNE_ALLGATHER,
    TUNE_ALLGATHERV,
    TUNE_REDUCE_SCATTER,
    TUNE_REDUCE_SCATTER_BLOCK,
    TUNE_NUM_FAMILIES
};

#define TUNE_MAX_ALGS 3       /* a family's leaders' algorithms between nodes */
#define TUNE_MAX_CANDIDATES 8 /* those, auto, and the schedules inside a node */
#define TUNE_MAX_SIZES 16
#define TUNE_MAX_NODE_COUNTS 24
#define TUNE_MAX_BATCHES 31

struct tune_family_info {
    const char *name; /* also the hint's: coll_async_<name>_algorithm */
    enum coll_async_family family;
    int alg_count;
    enum coll_async_alg algs[TUNE_MAX_ALGS];
    bool in_node_schedules; /* single_copy and staged may be forced inside a node */
};

extern const struct tune_family_info tune_families[TUNE_NUM_FAMILIES];

/* One call's shape: what the family moves for a nominal size on a communicator
 * of `ranks` ranks. `bytes` is the size the component chooses the leaders'
 * algorithm by (docs/tuning-file.md), `count` the elements it reduces. */
struct tune_shape {
    size_t bytes; /* the decision size */
    size_t count; /* reductions: int elements of the whole vector; else bytes per rank */
    size_t send_bytes, recv_bytes; /* buffers this rank needs */
};

struct tune_shape tune_shape_of(enum tune_family family, size_t nominal, int ranks);

/* Buffers for every call of a run, as large as the largest shape. */
struct tune_buffers {
    char *send, *recv;
    int *counts, *displs; /* per rank: the v forms' */
    size_t bytes;
};

int tune_buffers_init(struct tune_buffers *b, size_t bytes, int ranks);
void tune_buffers_free(struct tune_buffers *b);

/* One call of family on comm, the buffers filled by tune_fill. */
int tune_call(enum tune_family family, const struct tune_shape *shape, struct tune_buffers *b,
              MPI_Comm comm);
/* Known inputs, the same every call (so a check can follow any call). */
void tune_fill(enum tune_family family, const struct tune_shape *shape, struct tune_buffers *b,
               MPI_Comm comm);
/* Whether this rank's result is the reference's; else fills why. */
bool tune_check(enum tune_family family, const struct tune_shape *shape,
                const struct tune_buffers *b, MPI_Comm comm, char *why, size_t len);

/* A candidate's time at a size: the median of its batches and their spread, in
 * seconds per call, each batch the slowest rank's. */
struct tune_timing {
    double median, min, max;
    double q1, q3; /* the batches' quartiles: q3 - q1 is the spread compared against */
    int batches, iterations;
    bool wrong; /* its result was checked and was wrong */
};

struct tune_timing_plan {
    int batches;
    double batch_seconds; /* each batch runs about this long */
    int max_iterations;
};

/* Times family at shape on each of count communicators (the candidates; collective
 * over them), then checks one result of each against the reference; a wrong
 * result is said on stderr by the rank that saw it (with the candidate's label)
 * and marks its timing wrong on every rank. */
void tune_measure(enum tune_family family, const struct tune_shape *shape,
                  struct tune_buffers *b, const MPI_Comm *comms, int count,
                  const struct tune_timing_plan *plan, const char *const *labels,
                  struct tune_timing *out);

/* A candidate: the hint value it forces ("auto" included) and its measurements. */
struct tune_candidate {
    const char *value;          /* coll_async_<family>_algorithm on its communicator */
    enum coll_async_alg alg;    /* the leaders' algorithm it names (AUTO for auto, others) */
    bool between_nodes;         /* a row of the file may name it */
    struct tune_timing at[TUNE_MAX_SIZES];
};

/* All the measurements of a family at one node count. */
struct tune_point {
    enum tune_family family;
    int nodes, ranks;
    int size_count;
    size_t nominal[TUNE_MAX_SIZES]; /* the grid's size each was made from */
    size_t bytes[TUNE_MAX_SIZES]; /* the decision sizes, increasing */
    size_t count[TUNE_MAX_SIZES];
    int candidate_count;
    struct tune_candidate candidates[TUNE_MAX_CANDIDATES];
    /* bcast: the multicast candidate was timed, but its bcasts went point to
     * point (coll_async_between_multicast did not rise): dropped. */
    bool multicast_unavailable;
};

/* What auto runs between nodes for family at bytes (count elements) on `nodes`
 * nodes of ranks in rank order, by the built-in thresholds; sets *by_node false
 * where it does not go through the leaders at all (the flat exchange). */
enum coll_async_alg tune_auto_pick(enum tune_family family, size_t bytes, size_t count, int ranks,
                                   int nodes, bool *by_node);

/* The file */

struct tune_run_info {
    const char *command_line;
    int ranks, nodes, numa_domains;
    const char *ompi_version;
    int batches;
};

/* Writes the tuning file from points (k >= 2 ones make rows; the others,
 * comments), then reads it back through the component's parser and checks each
 * measured size looks up the row it meant. 0, or -1 with a message on stderr. */
int tune_file_write(const char *path, const struct tune_run_info *info,
                    const struct tune_point *points, int point_count);

/* Prints, per family and node count, where auto lost beyond the spread. */
void tune_print_auto_losses(const struct tune_point *points, int point_count);

/* MPI_T (tune_mpit.c): 0, or -1 where the variable is not there. */
int tune_mpit_init(void);
void tune_mpit_finalize(void);
int tune_cvar_int(const char *name, int *value);
int tune_cvar_string(const char *name, char *buf, int len);
struct tune_counter {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
};
int tune_counter_open(const char *name, struct tune_counter *c);
int tune_counter_read(struct tune_counter *c, unsigned long long *value);
void tune_counter_close(struct tune_counter *c);

/* Formats seconds as microseconds for tables. */
double tune_us(double seconds);

#endif /* BENCH_TUNE_H */
