/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * bench/simulate's model fitted to this machine: its parameters measured
 * through coll/async's own transports between nodes (not Open MPI's BTLs) and
 * written as a parameter file (simulate_params.h) that simulate --params reads.
 *
 * On the first two leaders, with the algorithms forced by the communicator's
 * hints (coll_async_bcast_algorithm binomial, coll_async_allreduce_algorithm and
 * coll_async_allgather_algorithm recursive_doubling, and a second communicator
 * with coll_async_allreduce_algorithm ring; until every build takes them, the
 * same MCA parameters given to mpirun do it for the first), interleaved size by
 * size and run by run, each collective after a barrier and timed alone (as
 * bench/coll_latency times them), the median of each point's runs of the slower
 * rank's mean:
 *   - an allgather of n bytes a rank, over a sweep of sizes: one exchange, both
 *     ends sending at once as in every round of ring, recursive doubling and
 *     Rabenseifner, call + L + 2o + n G; its slope is G;
 *   - an allreduce (float sum) of n bytes by recursive doubling, one exchange
 *     and one reduction, call + L + 2o + n (G + reduce): its slope less G is
 *     reduce;
 *   - the same allreduce by ring: two exchanges of n / 2 bytes, call + 2 (L +
 *     2o) + n (G + reduce / 2): at small sizes its excess over recursive
 *     doubling is a later round, L + 2o, and the allgather's one round less
 *     that is call, the fixed cost per collective;
 *   - a bcast of n bytes bounced between the two: a lone message, whose fit is
 *     written beside (where the ends share cores it costs less than an exchange);
 *   - m bcasts of 8 bytes back to back, then one back, m = 1..64: the slope is
 *     call + o, the busier end's cost per call, which splits L from o;
 *   - Open MPI's own MPI_Send/MPI_Recv ping-pong, for comparison (a comment).
 * coll/async's MPI_T counters must show that every timed call ran in the
 * component, and the ring allreduces as ring. The transport is named from what
 * the mapper would pick (verbs where every leader has an active RDMA port and
 * verbs is not excluded, else TCP); bench/model-check shows the component's own
 * verbose line beside it.
 */

#ifndef BENCH_TUNE_MODEL_H
#define BENCH_TUNE_MODEL_H

#include <mpi.h>

/* Collective over leaders, one rank per node (the nodes' first ranks), at
 * least 2. quick: 6 sizes rather than 11, and shorter runs (about 5 seconds
 * rather than 30 on the development VM; as many runs per point).
 * Rank 0 writes params_path. 0 on every rank, or -1 on every rank with a
 * one-line message on stderr. */
int tune_model_run(MPI_Comm leaders, int quick, const char *params_path);

#endif /* BENCH_TUNE_MODEL_H */
