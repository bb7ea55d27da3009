/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The simulator's parameter file: what bench/fit_model (bench/tune_model.c)
 * measured on a machine, read by bench/simulate --params. Text, one
 * `name value unit` per line after a version line; '#' starts a comment line:
 *
 *   coll_async_model 1
 *   latency_us 12.5 us
 *   overhead_us 4.1 us
 *   gap_ns_per_byte 0.31 ns/B
 *   reduce_ns_per_byte 0.12 ns/B
 *   ack_us 4.1 us
 *   call_us 0 us
 *   verbs no
 *   transport tcp
 *
 * Every name once, all of them; verbs and transport take no unit. The reader is
 * strict: anything else is an error naming the file and line.
 *
 * Pure C, no MPI.
 */

#ifndef BENCH_SIMULATE_PARAMS_H
#define BENCH_SIMULATE_PARAMS_H

#include <stdio.h>

#include "simulate_model.h"

#define SIM_PARAMS_VERSION 1
#define SIM_PARAMS_TRANSPORT_MAX 32
#define SIM_PARAMS_ERROR_MAX 320

struct sim_params_file {
    struct sim_params params;                   /* seconds, as the model takes them */
    char transport[SIM_PARAMS_TRANSPORT_MAX];   /* what carried the measured messages */
};

/* Reads path into out. 0, or -1 with error holding "path:line: what is wrong"
 * (or "path: ..." for what no line says, such as a missing name). */
int sim_params_read(const char *path, struct sim_params_file *out,
                    char error[SIM_PARAMS_ERROR_MAX]);

/* Writes the version line and the parameters (no comments) to f, in the form
 * sim_params_read() reads. 0, or -1 when f fails. */
int sim_params_write(FILE *f, const struct sim_params_file *in);

#endif /* BENCH_SIMULATE_PARAMS_H */
