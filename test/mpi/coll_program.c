/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The frame of the MPI test programs. See coll_program.h.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "coll_program.h"

static int has_argument(int argc, char **argv, const char *wanted)
{
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], wanted)) {
            return 1;
        }
    }
    return 0;
}

/* How many arguments the common option at argv[i] takes; 0: not one of them. */
static int common_option(int argc, char **argv, int i, struct coll_program_options *opt)
{
    const char *arg = argv[i];
    int has_value = i + 1 < argc;

    if (0 == strcmp(arg, "--expect-component=yes") || 0 == strcmp(arg, "--expect-component=no")) {
        opt->use_counters = 0 == strcmp(arg, "--expect-component=yes");
        return 1;
    }
    if (0 == strcmp(arg, "--verbose") || 0 == strcmp(arg, "--thread-multiple")) {
        opt->verbose |= 0 == strcmp(arg, "--verbose");
        return 1;
    }
    if (0 == strcmp(arg, "--max-count") && has_value) {
        opt->max_count = atoi(argv[i + 1]);
        return 2;
    }
    if (0 == strcmp(arg, "--forms") && has_value) {
        return coll_program_list(argv[i + 1], opt->form_names, opt->num_forms, opt->form_enabled)
                   ? 2
                   : 0;
    }
    return 0;
}

int coll_program_start(const char *name, const char *usage, int *argc, char ***argv,
                       struct coll_program_options *opt, coll_program_option_fn own,
                       void *context)
{
    int multiple = has_argument(*argc, *argv, "--thread-multiple"), provided, rank;

    MPI_Init_thread(argc, argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (multiple && MPI_THREAD_MULTIPLE != provided) {
        fprintf(stderr, "%s: MPI_THREAD_MULTIPLE not provided\n", name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 1; i < *argc;) {
        int took = common_option(*argc, *argv, i, opt);

        if (0 == took && NULL != own) {
            took = own(*argc, *argv, i, context);
        }
        if (0 == took) {
            if (0 == rank) {
                fprintf(stderr, "usage: %s [--expect-component=yes|no] [--max-count C] "
                        "[--forms blocking,nonblocking,persistent] [--verbose] "
                        "[--thread-multiple] %s\n", name, usage);
            }
            MPI_Finalize();
            return 0;
        }
        i += took;
    }
    return 1;
}

int coll_program_list(const char *list, const char *const *names, int count, int *enabled)
{
    char *copy = strdup(list), *save = NULL;
    int ok = NULL != copy;

    for (int i = 0; i < count; ++i) {
        enabled[i] = 0;
    }
    for (char *tok = ok ? strtok_r(copy, ",", &save) : NULL; NULL != tok;
         tok = strtok_r(NULL, ",", &save)) {
        int found = 0;

        for (int i = 0; i < count; ++i) {
            if (0 == strcmp(tok, names[i])) {
                enabled[i] = found = 1;
            }
        }
        ok = ok && found;
    }
    free(copy);
    return ok;
}

int coll_program_break(const char *variable)
{
    const char *value = getenv(variable);

    return NULL != value && 0 == strcmp(value, "1");
}

int coll_program_finish(const char *name, long checks, long failures, const char *note)
{
    long mine[2] = {checks, failures}, totals[2];
    int rank, size;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(mine, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s: %ld checks, %ld failures (%d ranks%s)\n", name, totals[0], totals[1], size,
               note);
    }
    MPI_Finalize();
    return 0 == totals[1] ? 0 : 1;
}
