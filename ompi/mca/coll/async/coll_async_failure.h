/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: what a collective that failed has to say. A schedule records it
 * where it fails, which may be the progress thread, and points its op at it
 * (coll_async_op's failure); the thread that completes the collective (the
 * blocking call, or the MPI_Test/MPI_Wait that completes the request) reports
 * it as a help message (mca_coll_async_say_failure), since Open MPI's help
 * messages are not for the progress thread. No MPI here.
 */

#ifndef MCA_COLL_ASYNC_FAILURE_H
#define MCA_COLL_ASYNC_FAILURE_H

#include <stdio.h>

struct coll_async_failure {
    const char *topic;        /* in help-coll-async.txt; NULL: nothing to say */
    const char *communicator; /* its name */
    int rank;                 /* this process's, in the communicator */
    char error[256];          /* what failed, naming the peer where one did */
};

/* Records the first failure of a collective; later ones add nothing. */
static inline void coll_async_failure_record(struct coll_async_failure *failure,
                                             const char *topic, const char *communicator,
                                             int rank, const char *error)
{
    if (NULL != failure->topic) {
        return;
    }
    failure->topic = topic;
    failure->communicator = communicator;
    failure->rank = rank;
    snprintf(failure->error, sizeof(failure->error), "%s", error);
}

#endif /* MCA_COLL_ASYNC_FAILURE_H */
