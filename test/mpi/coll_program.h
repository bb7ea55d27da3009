/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The frame of the MPI test programs that check one area each (coll_user_op,
 * coll_derived, coll_neighbor, coll_intercomm): MPI started as the options ask,
 * the options they all take, and at the end the ranks' checks and failures
 * summed, said and turned into the exit status. Each program reads its own
 * options through a callback.
 */

#ifndef COLL_PROGRAM_H
#define COLL_PROGRAM_H

/* The options every program takes; the caller sets the defaults. */
struct coll_program_options {
    int use_counters;    /* --expect-component=yes|no: check the MPI_T counters */
    int verbose;         /* --verbose: say each call */
    int max_count;       /* --max-count C */
    /* --forms LIST (comma-separated): marks form_enabled[i] for each of the
     * num_forms form_names that LIST names, and only those. */
    const char *const *form_names;
    int *form_enabled, num_forms;
};

/* Reads argument argv[i] of the program's own: how many arguments it took (1 or
 * 2), 0 when it is not one of them. */
typedef int (*coll_program_option_fn)(int argc, char **argv, int i, void *context);

/* Starts MPI (MPI_THREAD_MULTIPLE with --thread-multiple, aborting when it is
 * not provided) and reads the arguments: the common ones into opt, the others
 * through own (may be NULL). 1, or 0 after an argument neither knows: then rank
 * 0 has printed "usage: NAME [the common options] USAGE", MPI is finalized and
 * the program exits with 2. */
int coll_program_start(const char *name, const char *usage, int *argc, char ***argv,
                       struct coll_program_options *opt, coll_program_option_fn own,
                       void *context);

/* Marks enabled[i] for each of the count names that LIST names, and only those.
 * 0 when LIST names something else. */
int coll_program_list(const char *list, const char *const *names, int count, int *enabled);

/* Whether the environment variable asks to corrupt a reference ("1"), so that
 * test/run can prove the program fails. */
int coll_program_break(const char *variable);

/* Sums checks and failures over MPI_COMM_WORLD, prints "NAME: X checks, Y
 * failures (N ranks NOTE)" on rank 0, finalizes MPI and returns the exit status
 * (0 only when no rank failed). note may be "". */
int coll_program_finish(const char *name, long checks, long failures, const char *note);

#endif /* COLL_PROGRAM_H */
