/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * fit_model - bench/simulate's parameters measured on this machine through
 * coll/async (tune_model.h), written to FILE for simulate --params:
 *
 *   mpirun -np N --mca coll async,tuned,libnbc,basic ... fit_model [-q] -o FILE
 *
 *   -q   quick: fewer sizes and repetitions
 *   -o   the parameter file (written by world rank 0)
 *
 * The nodes are coll/async's: with coll_async_virtual_nodes = V > 0, world rank
 * r is on node r / ceil(size / V); otherwise the ranks that share memory. The
 * first rank of each node measures; the others wait. Exit 0, or 1 with a
 * one-line message.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "tune_model.h"

/* coll_async_virtual_nodes as coll/async read it; 0 where it has none. */
static int virtual_nodes(void)
{
    MPI_T_cvar_handle handle;
    int index, count, value = 0, ignored;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &ignored);
    if (MPI_SUCCESS == MPI_T_cvar_get_index("coll_async_virtual_nodes", &index)
        && MPI_SUCCESS == MPI_T_cvar_handle_alloc(index, NULL, &handle, &count)) {
        if (1 == count) {
            MPI_T_cvar_read(handle, &value);
        }
        MPI_T_cvar_handle_free(&handle);
    }
    MPI_T_finalize();
    return value;
}

/* This rank's node: the ranks coll/async takes to share one. */
static MPI_Comm node_of_rank(void)
{
    int rank, size, nodes = virtual_nodes();
    MPI_Comm node;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (nodes > 0) {
        int per_node = (size + nodes - 1) / nodes;

        MPI_Comm_split(MPI_COMM_WORLD, rank / per_node, rank, &node);
    } else {
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    }
    return node;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int quick = 0, opt, rank, node_rank, nodes, rc = -1;
    MPI_Comm node, leaders;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    while (-1 != (opt = getopt(argc, argv, "qo:h"))) {
        switch (opt) {
        case 'q': quick = 1; break;
        case 'o': path = optarg; break;
        default: path = NULL; optind = argc + 1; break;
        }
    }
    if (NULL == path || optind != argc) {
        if (0 == rank) {
            fprintf(stderr, "usage: mpirun ... fit_model [-q] -o FILE\n");
        }
        MPI_Finalize();
        return 2;
    }
    node = node_of_rank();
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_split(MPI_COMM_WORLD, 0 == node_rank ? 0 : MPI_UNDEFINED, rank, &leaders);
    if (MPI_COMM_NULL != leaders) {
        MPI_Comm_size(leaders, &nodes);
        if (nodes < 2 && 0 == rank) {
            fprintf(stderr, "fit_model: all ranks are on one node: run on 2 nodes or more "
                            "(on one machine: --mca coll_async_virtual_nodes 2)\n");
        }
        rc = nodes < 2 ? -1 : tune_model_run(leaders, quick, path);
        MPI_Comm_free(&leaders);
    }
    /* World rank 0 leads node 0: its verdict is everyone's. */
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    if (0 == rc && 0 == rank) {
        printf("fit_model: wrote %s\n", path);
    }
    MPI_Finalize();
    return 0 == rc ? 0 : 1;
}
