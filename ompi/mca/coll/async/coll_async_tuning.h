/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the tuning file (coll_async_tuning_file, docs/tuning-file.md), part
 * of the decision layer: rows that choose the leaders' algorithm between nodes
 * by family, number of nodes and size, where the family's parameter leaves it to
 * auto; the built-in thresholds (coll_async_decision.c) decide where no row does.
 *
 *   coll_async_tuning 1
 *   # FAMILY   NODES  BYTES     ALGORITHM
 *   allreduce  2-*    0-1023    ring
 *   allreduce  2-*    1K-*      recursive_doubling
 *
 * Pure C, no Open MPI header: the parser reads a buffer (or a file, bounded
 * before it is read) and says what is wrong with it and on which line; the unit
 * tests pin it (test_tuning.c). The glue reads the file once per process and
 * says the error (coll_async_params.c); a communicator uses the rows only where
 * every rank read the same ones (the digest on the cards, coll_async_hier.c).
 */

#ifndef MCA_COLL_ASYNC_TUNING_H
#define MCA_COLL_ASYNC_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_collectives.h"
#include "coll_async_decision.h"

/* The format's version, the first line's number. */
#define COLL_ASYNC_TUNING_VERSION 1
/* Bounds, checked before a file is read whole: its bytes, its rows, a line's bytes. */
#define COLL_ASYNC_TUNING_MAX_BYTES (1024 * 1024)
#define COLL_ASYNC_TUNING_MAX_ROWS 4096
#define COLL_ASYNC_TUNING_MAX_LINE 1024

/* One row: the family's calls among nodes_min..nodes_max leaders (nodes) of
 * bytes_min..bytes_max bytes (both ends included; INT_MAX, SIZE_MAX: no bound)
 * run alg between nodes. */
struct coll_async_tuning_row {
    enum coll_async_family family;
    int nodes_min, nodes_max;
    size_t bytes_min, bytes_max;
    enum coll_async_alg alg;
    int line; /* in the file, from 1 */
    int index; /* among the file's rows, from 0 */
};

struct coll_async_tuning {
    int row_count;
    struct coll_async_tuning_row *rows; /* by family, each family's in the file's order */
    int first[COLL_ASYNC_NUM_FAMILIES + 1]; /* family f's rows: first[f] .. first[f + 1] - 1 */
    uint64_t digest; /* of the rows as understood, never 0 (coll_async_tuning_digest) */
};

/* What is wrong with a file: the line (0: the file as a whole) and why. */
struct coll_async_tuning_error {
    int line;
    char why[256];
};

/* Whether the file may steer family's leaders (it has several algorithms between
 * nodes): allreduce, bcast, allgather, allgatherv, reduce_scatter(_block). */
bool coll_async_tuning_steers(enum coll_async_family family);

/* Parses length bytes of text: the rows, or NULL with *error filled (a file that is
 * wrong anywhere is refused whole). */
struct coll_async_tuning *coll_async_tuning_parse(const char *text, size_t length,
                                                  struct coll_async_tuning_error *error);

/* Reads and parses the file at path: refuses what is not a regular file or is
 * larger than COLL_ASYNC_TUNING_MAX_BYTES before reading it, and never blocks on
 * a FIFO. NULL with *error filled (line 0 for the file as a whole). */
struct coll_async_tuning *coll_async_tuning_load(const char *path,
                                                 struct coll_async_tuning_error *error);

void coll_async_tuning_free(struct coll_async_tuning *tuning);

/* The row of family for nodes and bytes, or NULL where the file has none. */
const struct coll_async_tuning_row *coll_async_tuning_lookup(const struct coll_async_tuning *tuning,
                                                             enum coll_async_family family,
                                                             int nodes, size_t bytes);

/* Whether any row of family for nodes leaders names alg (whatever its sizes):
 * bcast's multicast group is set up at creation where one names multicast. */
bool coll_async_tuning_names(const struct coll_async_tuning *tuning,
                             enum coll_async_family family, enum coll_async_alg alg, int nodes);

/* The row that chooses the leaders' algorithm of a run of family `rows_of`
 * (whose rows apply) whose leaders run `family` among nodes leaders for bytes,
 * the parameters leaving them at leaders_alg (coll_async_decision_leaders: the
 * file applies only where that is auto, and where family runs the row's
 * algorithm); NULL: the built-in thresholds decide (also where tuning is NULL). */
const struct coll_async_tuning_row *coll_async_tuning_choose(const struct coll_async_tuning *tuning,
                                                             enum coll_async_family rows_of,
                                                             enum coll_async_family family,
                                                             enum coll_async_alg leaders_alg,
                                                             int nodes, size_t bytes);

/* The row as the file would say it: "allreduce 2-* 0-1023 ring" (snprintf's contract). */
int coll_async_tuning_row_text(const struct coll_async_tuning_row *row, char *buf, size_t len);

#endif /* MCA_COLL_ASYNC_TUNING_H */
