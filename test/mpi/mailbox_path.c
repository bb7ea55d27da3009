/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Alltoalls of large blocks on MPI_COMM_WORLD, every block checked, and how the
 * blocks between ranks of one node crossed: between (virtual) nodes each rank
 * sends its node's other ranks their blocks over the node's mailbox, staged or
 * pulled with CMA (coll_async_mailbox_cma_sends). Rank 0 prints
 *
 *   mailbox_path: CALLS calls right, cma sends SUM
 *
 * with SUM over all ranks; a wrong block aborts.
 *
 *   mailbox_path BLOCK_BYTES CALLS
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "pvar_counter.h"

static unsigned char byte_of(int from, int to, size_t i, int call)
{
    return (unsigned char) (from * 31 + to * 7 + i + (size_t) call * 13);
}

int main(int argc, char **argv)
{
    int me, size, provided;
    size_t block;
    int calls;
    unsigned char *send, *recv;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    unsigned long long cma, total = 0;

    if (3 != argc || (block = strtoul(argv[1], NULL, 10)) == 0 || block > (1u << 30)
        || (calls = atoi(argv[2])) <= 0) {
        fprintf(stderr, "usage: mailbox_path BLOCK_BYTES CALLS\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&session);
    handle = pvar_counter(session, "coll_async_mailbox_cma_sends", "mailbox_path");
    send = malloc(block * (size_t) size);
    recv = malloc(block * (size_t) size);
    if (NULL == send || NULL == recv) {
        fprintf(stderr, "mailbox_path: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int call = 0; call < calls; ++call) {
        for (int to = 0; to < size; ++to) {
            for (size_t i = 0; i < block; ++i) {
                send[(size_t) to * block + i] = byte_of(me, to, i, call);
            }
        }
        MPI_Alltoall(send, (int) block, MPI_BYTE, recv, (int) block, MPI_BYTE, MPI_COMM_WORLD);
        for (int from = 0; from < size; ++from) {
            for (size_t i = 0; i < block; ++i) {
                if (recv[(size_t) from * block + i] != byte_of(from, me, i, call)) {
                    fprintf(stderr, "mailbox_path: rank %d, call %d: byte %zu from rank %d wrong\n",
                            me, call, i, from);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        }
    }
    cma = pvar_counter_read(session, handle);
    MPI_Reduce(&cma, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == me) {
        printf("mailbox_path: %d calls right, cma sends %llu\n", calls, total);
    }
    MPI_T_pvar_handle_free(session, &handle);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
