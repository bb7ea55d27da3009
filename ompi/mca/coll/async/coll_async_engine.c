/*
 * coll/async: op queue, executor and progress thread. See coll_async_engine.h.
 *
 * Posting is a lock-free push onto a LIFO (compare-and-swap on its head); the
 * driver takes the whole LIFO with one exchange and reverses it, which restores
 * posting order. The driver is whichever thread holds engine.driving: the
 * progress thread, or an application thread waiting in MPI progress, which
 * would otherwise only yield its core to a progress thread that shares it. The
 * progress thread sleeps on a futex when no op is in flight.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "coll_async_backoff.h"
#include "coll_async_engine.h"

/* Ask the application for its Open MPI progress every this many waiting rounds. */
#define PROGRESS_EVERY 64
/* How long the progress thread leaves the ops to an application thread that helps. */
#define STEP_ASIDE_NS 50000

static struct {
    struct coll_async_op *volatile posted; /* LIFO of new ops, any thread pushes */
    volatile int32_t wake;                 /* futex word: bumped on every post */
    volatile int32_t sleeping;
    volatile int32_t in_flight;            /* posted, not finished */
    volatile bool stop;
    volatile int32_t driving;              /* 1 while a thread runs the streams */
    volatile uint64_t helped;              /* application threads' calls to help */
    struct coll_async_stream *ready;       /* streams with ops, the driver only */
    pthread_t thread;
    cpu_set_t creator_cpus;                /* where the thread that started it may run */
    pthread_mutex_t start_lock;
    bool started;
    struct coll_async_cpuset cpus;
} engine = {.start_lock = PTHREAD_MUTEX_INITIALIZER, .cpus = {.mode = COLL_ASYNC_CPUS_NONE}};

void coll_async_stream_init(struct coll_async_stream *stream)
{
    memset(stream, 0, sizeof(*stream));
}

void coll_async_engine_configure(const struct coll_async_cpuset *cpus)
{
    engine.cpus = *cpus;
}

/* One round of an application thread's wait for peers or for the progress thread. */
static void wait_round(struct coll_async_backoff *backoff, unsigned *rounds,
                       void (*progress)(void))
{
    if (0 == ++*rounds % PROGRESS_EVERY && NULL != progress) {
        progress();
    }
    coll_async_backoff_wait(backoff);
}

void coll_async_stream_drain(struct coll_async_stream *stream, void (*progress)(void))
{
    struct coll_async_backoff backoff = COLL_ASYNC_BACKOFF_INIT;
    unsigned rounds = 0;

    while (0 != __atomic_load_n(&stream->posted, __ATOMIC_ACQUIRE)) {
        if (!coll_async_engine_help()) {
            wait_round(&backoff, &rounds, progress);
        }
    }
}

/* One step of op, its begin first at the first step. */
static int step(struct coll_async_op *op)
{
    if (NULL != op->begin) {
        op->begin(op);
        op->begin = NULL;
    }
    return op->step(op);
}

int coll_async_engine_run(struct coll_async_op *op, void (*progress)(void))
{
    struct coll_async_backoff backoff = COLL_ASYNC_BACKOFF_INIT;
    unsigned rounds = 0;
    int rc;

    /* MPI orders the collectives of a communicator: those posted before go first. */
    coll_async_stream_drain(op->stream, progress);
    while (COLL_ASYNC_AGAIN == (rc = step(op))) {
        wait_round(&backoff, &rounds, progress);
    }
    return rc;
}

/* The progress thread */

static long futex(volatile int32_t *word, int operation, int32_t value)
{
    return syscall(SYS_futex, word, operation, value, NULL, NULL, 0);
}

/* Moves newly posted ops, in posting order, to the queues of their streams. */
static void take_posted(void)
{
    struct coll_async_op *op = __atomic_exchange_n(&engine.posted, NULL, __ATOMIC_ACQUIRE);
    struct coll_async_op *ordered = NULL;

    while (NULL != op) {
        struct coll_async_op *next = op->next;
        op->next = ordered;
        ordered = op;
        op = next;
    }
    for (op = ordered; NULL != op;) {
        struct coll_async_op *next = op->next;
        struct coll_async_stream *stream = op->stream;

        op->next = NULL;
        if (NULL == stream->head) {
            stream->head = op;
        } else {
            stream->tail->next = op;
        }
        stream->tail = op;
        if (!stream->listed) {
            stream->listed = true;
            stream->next_ready = engine.ready;
            engine.ready = stream;
        }
        op = next;
    }
}

/* Runs the ops of one stream as far as they go; true if any finished. */
static bool advance(struct coll_async_stream *stream)
{
    bool finished = false;
    struct coll_async_op *op;
    int rc;

    while (NULL != (op = stream->head) && COLL_ASYNC_AGAIN != (rc = step(op))) {
        stream->head = op->next;
        if (NULL == stream->head) {
            stream->tail = NULL;
        }
        /* The stream is free for a blocking collective before the request completes. */
        __atomic_sub_fetch(&stream->posted, 1, __ATOMIC_RELEASE);
        __atomic_sub_fetch(&engine.in_flight, 1, __ATOMIC_RELEASE);
        op->finished(op, rc);
        finished = true;
    }
    return finished;
}

/* One pass over the streams with work; drops those left empty. */
static bool advance_all(void)
{
    struct coll_async_stream **link = &engine.ready;
    bool progressed = false;

    while (NULL != *link) {
        struct coll_async_stream *stream = *link;

        progressed |= advance(stream);
        if (NULL == stream->head) {
            stream->listed = false;
            *link = stream->next_ready;
        } else {
            link = &stream->next_ready;
        }
    }
    return progressed;
}

/* One pass over everything posted, unless another thread is making it; *busy:
 * ops are left waiting for peers. False when another thread drives. */
static bool drive(bool *progressed, bool *busy)
{
    if (__atomic_exchange_n(&engine.driving, 1, __ATOMIC_ACQUIRE)) {
        return false;
    }
    take_posted();
    *progressed = advance_all();
    *busy = NULL != engine.ready;
    __atomic_store_n(&engine.driving, 0, __ATOMIC_RELEASE);
    return true;
}

bool coll_async_engine_help(void)
{
    bool progressed = false, busy;

    if (0 == __atomic_load_n(&engine.in_flight, __ATOMIC_ACQUIRE)) {
        return false;
    }
    __atomic_add_fetch(&engine.helped, 1, __ATOMIC_RELAXED);
    return drive(&progressed, &busy) && progressed;
}

/* Sleeps until a post; the post bumps the futex word after pushing, so a push that
 * happens between the check and the wait makes futex_wait return at once. Ops an
 * application thread took from the LIFO but left unfinished count as in flight,
 * so the thread does not sleep on them. */
static void sleep_until_posted(void)
{
    int32_t seen = __atomic_load_n(&engine.wake, __ATOMIC_ACQUIRE);

    __atomic_store_n(&engine.sleeping, 1, __ATOMIC_SEQ_CST);
    if (0 == __atomic_load_n(&engine.in_flight, __ATOMIC_SEQ_CST) && !engine.stop) {
        futex(&engine.wake, FUTEX_WAIT_PRIVATE, seen);
    }
    __atomic_store_n(&engine.sleeping, 0, __ATOMIC_RELAXED);
}

static void pin(void)
{
    size_t size = CPU_ALLOC_SIZE(COLL_ASYNC_MAX_CPUS);
    cpu_set_t *set;

    if (COLL_ASYNC_CPUS_LIST != engine.cpus.mode
        || NULL == (set = CPU_ALLOC(COLL_ASYNC_MAX_CPUS))) {
        return;
    }
    CPU_ZERO_S(size, set);
    for (int cpu = 0; cpu < COLL_ASYNC_MAX_CPUS; ++cpu) {
        if (coll_async_cpuset_has(&engine.cpus, cpu)) {
            CPU_SET_S(cpu, size, set);
        }
    }
    /* A CPU outside the job's cgroup is refused; then the thread stays unpinned. */
    (void) pthread_setaffinity_np(pthread_self(), size, set);
    CPU_FREE(set);
}

/* The progress thread's wait while ops wait for peers or another thread drives.
 * An application thread that has helped since the last look is waiting in MPI
 * and drives itself: running here would only take turns with it on a shared
 * core, so the thread steps aside for a while and looks again. */
static void wait_for_work(struct coll_async_backoff *backoff, uint64_t *helped_seen)
{
    uint64_t helped = __atomic_load_n(&engine.helped, __ATOMIC_RELAXED);

    if (helped != *helped_seen) {
        struct timespec pause = {.tv_sec = 0, .tv_nsec = STEP_ASIDE_NS};

        *helped_seen = helped;
        nanosleep(&pause, NULL);
        return;
    }
    coll_async_backoff_wait(backoff);
}

/* Whether this thread can only run on the one CPU its application thread is bound
 * to (no free core was found for it). */
static bool shares_creator_cpu(void)
{
    cpu_set_t mine, outside;

    if (0 != sched_getaffinity(0, sizeof(mine), &mine) || 1 != CPU_COUNT(&engine.creator_cpus)) {
        return false;
    }
    CPU_XOR(&outside, &mine, &engine.creator_cpus);
    return 0 == CPU_COUNT(&outside);
}

static void *progress_thread(void *unused)
{
    struct coll_async_backoff fresh = COLL_ASYNC_BACKOFF_INIT, backoff;
    uint64_t helped_seen = 0;

    (void) unused;
    pin();
    /* On a shared CPU spinning holds off the very thread it waits for: yield at once. */
    if (shares_creator_cpu()) {
        fresh.rounds = COLL_ASYNC_BACKOFF_SPINS;
    }
    backoff = fresh;
    for (;;) {
        bool progressed = false, busy = true;

        if (!drive(&progressed, &busy) || (!progressed && busy)) {
            wait_for_work(&backoff, &helped_seen);
        } else if (progressed) {
            backoff = fresh;
        } else if (engine.stop) {
            return NULL;
        } else {
            sleep_until_posted();
            backoff = fresh;
        }
    }
}

static int start_once(void)
{
    int rc = 0;

    if (__atomic_load_n(&engine.started, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    pthread_mutex_lock(&engine.start_lock);
    if (!engine.started) {
        engine.stop = false;
        if (0 != sched_getaffinity(0, sizeof(engine.creator_cpus), &engine.creator_cpus)) {
            CPU_ZERO(&engine.creator_cpus);
        }
        rc = pthread_create(&engine.thread, NULL, progress_thread, NULL);
        if (0 == rc) {
            __atomic_store_n(&engine.started, true, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&engine.start_lock);
    return -rc;
}

static void wake(void)
{
    __atomic_add_fetch(&engine.wake, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&engine.sleeping, __ATOMIC_SEQ_CST)) {
        futex(&engine.wake, FUTEX_WAKE_PRIVATE, 1);
    }
}

int coll_async_engine_post(struct coll_async_op *op)
{
    struct coll_async_op *head;
    int rc = start_once();

    if (0 != rc) {
        return rc;
    }
    __atomic_add_fetch(&op->stream->posted, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&engine.in_flight, 1, __ATOMIC_SEQ_CST);
    head = __atomic_load_n(&engine.posted, __ATOMIC_RELAXED);
    do {
        op->next = head;
    } while (!__atomic_compare_exchange_n(&engine.posted, &head, op, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    wake();
    return 0;
}

int32_t coll_async_engine_in_flight(void)
{
    return __atomic_load_n(&engine.in_flight, __ATOMIC_RELAXED);
}

void coll_async_engine_fini(void)
{
    if (!engine.started) {
        return;
    }
    engine.stop = true;
    wake();
    pthread_join(engine.thread, NULL);
    engine.started = false;
}
