/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the engine that executes collectives.
 *
 * A collective in flight is an op: a resumable step function (the schedule, as a
 * state machine over mapper operations) and what the engine needs to run it. The
 * schedule's arguments and position are its own: it embeds the op in a larger
 * struct and finds that from the op its step is given. The executor calls the
 * step until it reports done. Blocking collectives run it inline in the calling
 * thread; nonblocking ones are posted through a lock-free queue to the progress
 * thread, which runs the ops of every communicator side by side and those of one
 * communicator in the order they were posted, as MPI orders them.
 *
 * The progress thread starts with the first nonblocking collective, sleeps when it
 * has nothing to do, and is joined at MPI_Finalize. It touches only the
 * component's own state (docs/architecture.md, Threads).
 */

#ifndef MCA_COLL_ASYNC_ENGINE_H
#define MCA_COLL_ASYNC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_async_parse.h"

struct coll_async_op;
struct coll_async_failure;

/* What a step returns besides OMPI_SUCCESS (done) and errors (done, failed). */
#define COLL_ASYNC_AGAIN 1

typedef int (*coll_async_step_fn)(struct coll_async_op *op);

/* The engine's view of one communicator: its nonblocking ops in posting order. */
struct coll_async_stream {
    struct coll_async_op *head, *tail;    /* progress thread only */
    struct coll_async_stream *next_ready; /* progress thread only */
    bool listed;                          /* progress thread only */
    volatile int32_t posted;              /* posted and not yet finished */
    /* Asked before each step of the stream's ops, by whichever thread steps them:
     * nonzero ends the op with that status (a communicator whose processes have
     * failed, coll_async_module.c). NULL: never. */
    int (*abandoned)(void *owner);
    void *owner;
    /* Asked, while set, before each op's first step, by whichever thread steps
     * it: COLL_ASYNC_AGAIN holds the op (and those after it) back, an error ends
     * it with that status, 0 lets it begin. The communicator's channels are
     * settled here (coll_async_settle.c), which clears it once they are. */
    int (*settle)(struct coll_async_stream *stream, struct coll_async_op *op);
};

struct coll_async_op {
    struct coll_async_op *next;
    struct coll_async_stream *stream;
    /* Called once, by the thread that executes the op, when its turn on its stream
     * has come (the ops before it are finished): the schedule takes its place in the
     * communicator's sequence there, as its length may depend on the peers. */
    void (*begin)(struct coll_async_op *op);
    coll_async_step_fn step;
    /* Called once when a posted op finishes, with its status, on the progress thread. */
    void (*finished)(struct coll_async_op *op, int status);

    /* What the schedule keeps off the op (per-peer arguments, a run's stages),
     * freed with free_plan; the schedule's own arguments and position live in
     * the struct that embeds the op (coll_async_schedule.h). */
    void *plan;
    void (*free_plan)(void *plan);
    /* Set by a schedule that failed with something to say (coll_async_failure.h),
     * for the thread that completes the op to report; the memory is the plan's. */
    const struct coll_async_failure *failure;
};

/* Frees op's plan, if any. */
static inline void coll_async_op_free_plan(const struct coll_async_op *op)
{
    if (NULL != op->plan) {
        op->free_plan(op->plan);
    }
}

void coll_async_stream_init(struct coll_async_stream *stream);

/* Waits until the progress thread has finished every op posted on stream. */
void coll_async_stream_drain(struct coll_async_stream *stream, void (*progress)(void));

/* Runs op in the calling thread after the nonblocking ops posted before it. The
 * wait calls opal_progress now and then: the application thread must keep Open
 * MPI's point-to-point traffic moving while it waits for peers. */
int coll_async_engine_run(struct coll_async_op *op, void (*progress)(void));

/* Queues op for the progress thread; op->finished reports its end. */
int coll_async_engine_post(struct coll_async_op *op);

/* Runs op in the calling thread, as coll_async_engine_run does, while the thread
 * is the engine's driver: for ops on a transport that only the driver may touch
 * (coll_async_engine_watch). */
int coll_async_engine_run_driven(struct coll_async_op *op, void (*progress)(void));

/* A transport the driver polls on each pass (progress(context), under the
 * driver's exclusion, so the transport needs no lock) and whose descriptor wakes
 * the sleeping progress thread, so that a peer's connection or message is
 * answered while no op is in flight. */
struct coll_async_engine_watch {
    int fd;
    int (*progress)(void *context);
    void *context;
};

/* Set once, before the first post; 0 or -errno. */
int coll_async_engine_watch(const struct coll_async_engine_watch *watch);

/* Takes and gives back the driver's exclusion, to call into the watched
 * transport from outside a step (adding peers, say). */
void coll_async_engine_hold(void);
void coll_async_engine_release(void);

/* Where the progress thread runs (mode NONE: where it is created; LIST: those
 * CPUs); set before the first post. */
void coll_async_engine_configure(const struct coll_async_cpuset *cpus);

/* With more ranks than CPUs a peer needs this thread's CPU to answer: application
 * threads that wait then yield at once instead of spinning first. */
void coll_async_engine_oversubscribed(bool oversubscribed);

enum coll_async_help {
    COLL_ASYNC_HELP_IDLE,     /* nothing in flight */
    COLL_ASYNC_HELP_FINISHED, /* ran the ops, and some finished */
    COLL_ASYNC_HELP_MOVED,    /* ran the ops, none finished, the watched transport did work */
    COLL_ASYNC_HELP_WAITING,  /* ran the ops, which all wait for peers */
    COLL_ASYNC_HELP_TAKEN,    /* another thread is running them */
};

/* Lets an application thread that waits for posted ops run them itself, when no
 * other thread is running them at that moment. */
enum coll_async_help coll_async_engine_help(void);

/* Stops and joins the progress thread, once every posted op has finished, and
 * forgets the watched transport. */
void coll_async_engine_fini(void);

#endif /* MCA_COLL_ASYNC_ENGINE_H */
