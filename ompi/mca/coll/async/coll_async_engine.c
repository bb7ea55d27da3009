/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: op queue, executor and progress thread. See coll_async_engine.h.
 *
 * Posting is a lock-free push onto a LIFO (compare-and-swap on its head); the
 * driver takes the whole LIFO with one exchange and reverses it, which restores
 * posting order. The driver is whichever thread holds engine.driving: the
 * progress thread, or an application thread waiting in MPI progress, which
 * would otherwise only yield its core to a progress thread that shares it. The
 * progress thread sleeps on a futex when no op is in flight, or, when a
 * transport is watched, in poll() on the transport's descriptor and an eventfd
 * that posts write: a peer's connection or message then wakes it too.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "coll_async_backoff.h"
#include "coll_async_engine.h"
#include "coll_async_handoff.h"
#include "transport/coll_async_clock.h"

/* Ask the application for its Open MPI progress every this many waiting rounds. */
#define PROGRESS_EVERY 64
/* How long the progress thread leaves the ops to an application thread that helps. */
#define STEP_ASIDE_NS 50000
/* How long the idle progress thread watches for a post before it sleeps. */
#define IDLE_SPIN_NS 200000

static struct {
    struct coll_async_op *volatile posted; /* LIFO of new ops, any thread pushes */
    volatile int32_t wake;                 /* futex word: bumped on every post */
    volatile int32_t sleeping;             /* SLEEP_ON_FUTEX or SLEEP_IN_POLL, else 0 */
    struct coll_async_engine_watch watch;  /* a transport the driver polls */
    int wake_fd;                           /* eventfd that wakes a poll() */
    volatile int32_t in_flight;            /* posted, not finished */
    bool stop; /* atomic */
    volatile int32_t driving;              /* 1 while a thread runs the streams */
    volatile uint64_t helped;              /* application threads' calls to help */
    struct coll_async_stream *ready;       /* streams with ops, the driver only */
    pthread_t thread;
    cpu_set_t creator_cpus;                /* where the thread that started it may run */
    pthread_mutex_t start_lock;
    bool started;
    struct coll_async_cpuset cpus;
    bool oversubscribed;                   /* waiters yield at once */
} engine = {.start_lock = PTHREAD_MUTEX_INITIALIZER,
            .cpus = {.mode = COLL_ASYNC_CPUS_NONE},
            .watch = {.fd = -1},
            .wake_fd = -1};

enum { SLEEP_ON_FUTEX = 1, SLEEP_IN_POLL = 2 };

void coll_async_stream_init(struct coll_async_stream *stream)
{
    memset(stream, 0, sizeof(*stream));
}

void coll_async_engine_configure(const struct coll_async_cpuset *cpus)
{
    engine.cpus = *cpus;
}

void coll_async_engine_oversubscribed(bool oversubscribed)
{
    engine.oversubscribed = oversubscribed;
}

/* How an application thread starts to wait for peers: measured at 4 ranks on 2
 * cores, spinning first made a small allreduce 1.5x slower than yielding. */
static struct coll_async_backoff waiter_backoff(void)
{
    struct coll_async_backoff backoff = COLL_ASYNC_BACKOFF_INIT;

    if (engine.oversubscribed) {
        backoff.rounds = COLL_ASYNC_BACKOFF_SPINS;
    }
    return backoff;
}

int coll_async_engine_watch(const struct coll_async_engine_watch *watch)
{
    if (engine.started || engine.wake_fd >= 0) {
        return -EBUSY;
    }
    engine.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (engine.wake_fd < 0) {
        return -errno;
    }
    engine.watch = *watch;
    return 0;
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

/* One round of an application thread waiting for posted ops: it runs them when
 * no other thread is, and waits a round when that finished none. While the
 * watched transport has work (a multicast's packets are each handled here), it
 * waits not, and starts its wait afresh after. */
static void help_or_wait(struct coll_async_backoff *backoff, unsigned *rounds,
                         void (*progress)(void))
{
    switch (coll_async_engine_help()) {
    case COLL_ASYNC_HELP_FINISHED:
        return;
    case COLL_ASYNC_HELP_MOVED:
        *backoff = waiter_backoff();
        return;
    default:
        wait_round(backoff, rounds, progress);
    }
}

void coll_async_stream_drain(struct coll_async_stream *stream, void (*progress)(void))
{
    struct coll_async_backoff backoff = waiter_backoff();
    unsigned rounds = 0;

    while (0 != __atomic_load_n(&stream->posted, __ATOMIC_ACQUIRE)) {
        help_or_wait(&backoff, &rounds, progress);
    }
}

/* One step of op, its begin first at the first step once its stream is settled;
 * none where its stream is abandoned. */
static int step(struct coll_async_op *op)
{
    struct coll_async_stream *stream = op->stream;
    int status;

    if (NULL != stream->abandoned && 0 != (status = stream->abandoned(stream->owner))) {
        return status;
    }
    if (NULL != op->begin && NULL != stream->settle
        && 0 != (status = stream->settle(stream, op))) {
        return status;
    }
    if (NULL != op->begin) {
        op->begin(op);
        op->begin = NULL;
    }
    return op->step(op);
}

int coll_async_engine_run(struct coll_async_op *op, void (*progress)(void))
{
    struct coll_async_backoff backoff = waiter_backoff();
    unsigned rounds = 0;
    int rc;

    /* MPI orders the collectives of a communicator: those posted before go first. */
    coll_async_stream_drain(op->stream, progress);
    COLL_ASYNC_TAKEN_OVER(op->stream);
    while (COLL_ASYNC_AGAIN == (rc = step(op))) {
        wait_round(&backoff, &rounds, progress);
    }
    /* The communicator's next collective may be started by another thread, after
     * Open MPI's own synchronization with this one. */
    COLL_ASYNC_HANDED_OVER(op->stream);
    return rc;
}

/* The progress thread */

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

/* The driver's exclusion: one thread at a time touches the watched transport and
 * runs the posted ops. */
static bool try_drive(void)
{
    return !__atomic_exchange_n(&engine.driving, 1, __ATOMIC_ACQUIRE);
}

static void end_drive(void)
{
    __atomic_store_n(&engine.driving, 0, __ATOMIC_RELEASE);
}

/* The driver's pass over the watched transport and everything posted; true if an
 * op finished. *moved: the transport did work; *busy: ops are left waiting for
 * peers. */
static bool drive_pass(bool *moved, bool *busy)
{
    bool progressed;

    *moved = NULL != engine.watch.progress && 0 < engine.watch.progress(engine.watch.context);
    take_posted();
    progressed = advance_all();
    *busy = NULL != engine.ready;
    return progressed;
}

/* A pass, unless another thread is driving (then false). */
static bool drive(bool *progressed, bool *moved, bool *busy)
{
    if (!try_drive()) {
        return false;
    }
    *progressed = drive_pass(moved, busy);
    end_drive();
    return true;
}

/* The calling thread drives while it steps its blocking op, with the posted ops
 * alongside. Handing the op to the progress thread instead cost a wake-up and a
 * second thread on the rank's core: 2 nodes x 2 ranks on 2 cores, an 8-byte
 * allreduce took 43-53 us that way and takes 17-21 us so. */
int coll_async_engine_run_driven(struct coll_async_op *op, void (*progress)(void))
{
    struct coll_async_backoff backoff = waiter_backoff();
    unsigned rounds = 0;
    int rc = COLL_ASYNC_AGAIN;

    coll_async_stream_drain(op->stream, progress);
    for (;;) {
        bool progressed = false, moved = false, busy;

        if (try_drive()) {
            /* The progress thread steps aside while this thread drives. */
            __atomic_add_fetch(&engine.helped, 1, __ATOMIC_RELAXED);
            progressed = drive_pass(&moved, &busy);
            rc = step(op);
            end_drive();
        }
        if (COLL_ASYNC_AGAIN != rc) {
            return rc;
        }
        if (progressed || moved) {
            backoff = waiter_backoff();
        } else {
            wait_round(&backoff, &rounds, progress);
        }
    }
}

void coll_async_engine_hold(void)
{
    struct coll_async_backoff backoff = waiter_backoff();

    while (!try_drive()) {
        coll_async_backoff_wait(&backoff);
    }
}

void coll_async_engine_release(void)
{
    end_drive();
}

enum coll_async_help coll_async_engine_help(void)
{
    bool progressed = false, moved, busy;

    if (0 == __atomic_load_n(&engine.in_flight, __ATOMIC_ACQUIRE)) {
        return COLL_ASYNC_HELP_IDLE;
    }
    __atomic_add_fetch(&engine.helped, 1, __ATOMIC_RELAXED);
    if (!drive(&progressed, &moved, &busy)) {
        return COLL_ASYNC_HELP_TAKEN;
    }
    return progressed ? COLL_ASYNC_HELP_FINISHED
         : moved      ? COLL_ASYNC_HELP_MOVED
                      : COLL_ASYNC_HELP_WAITING;
}

static long futex(volatile int32_t *word, int operation, int32_t value,
                  const struct timespec *timeout)
{
    return syscall(SYS_futex, word, operation, value, timeout, NULL, 0);
}

/* Waits in poll() for a post (the eventfd) or the watched transport, for at
 * most timeout (NULL: no limit). */
static void poll_until_posted(const struct timespec *timeout)
{
    struct pollfd fds[2] = {{.fd = engine.wake_fd, .events = POLLIN},
                            {.fd = engine.watch.fd, .events = POLLIN}};
    uint64_t drained;

    if (ppoll(fds, 2, timeout, NULL) > 0 && 0 != (fds[0].revents & POLLIN)) {
        (void) !read(engine.wake_fd, &drained, sizeof(drained));
    }
}

/* Sleeps until a post, or for at most timeout (NULL: no limit); true if woken by a
 * post. The post bumps the futex word after pushing, so a push that happens
 * between the check and the wait makes futex_wait return at once (and the
 * eventfd keeps a write made before the poll). Ops an application thread took
 * from the LIFO but left unfinished count as in flight, so the thread does not
 * sleep without limit on them. */
static bool sleep_until_posted(const struct timespec *timeout)
{
    int32_t seen = __atomic_load_n(&engine.wake, __ATOMIC_ACQUIRE);
    bool watched = engine.wake_fd >= 0;

    __atomic_store_n(&engine.sleeping, watched ? SLEEP_IN_POLL : SLEEP_ON_FUTEX,
                     __ATOMIC_SEQ_CST);
    if ((NULL != timeout || 0 == __atomic_load_n(&engine.in_flight, __ATOMIC_SEQ_CST))
        && !__atomic_load_n(&engine.stop, __ATOMIC_ACQUIRE)) {
        if (!watched) {
            futex(&engine.wake, FUTEX_WAIT_PRIVATE, seen, timeout);
        } else if (seen == __atomic_load_n(&engine.wake, __ATOMIC_SEQ_CST)) {
            poll_until_posted(timeout);
        }
    }
    __atomic_store_n(&engine.sleeping, 0, __ATOMIC_RELAXED);
    return seen != __atomic_load_n(&engine.wake, __ATOMIC_ACQUIRE);
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

/* Whether this thread may run on a CPU its application thread is bound to. */
static bool shares_creator_cpu(void)
{
    cpu_set_t mine, shared;

    if (0 != sched_getaffinity(0, sizeof(mine), &mine)) {
        return true;
    }
    CPU_AND(&shared, &mine, &engine.creator_cpus);
    return 0 != CPU_COUNT(&shared);
}

/* How the progress thread waits while its ops wait for peers. On a CPU of its own
 * it spins a little (a peer on another core answers within a cache-line round
 * trip); on a CPU it shares with its rank it yields instead, which costs nothing
 * while the rank sleeps and hands the core back while the rank computes. Then it
 * sleeps in growing steps that a new post cuts short. */
struct thread_wait {
    bool shared;          /* the thread may run where its rank runs */
    struct coll_async_backoff backoff;
    uint64_t helped_seen; /* engine.helped at the last look */
    int32_t posts_seen;   /* engine.wake at the last look */
};

static void thread_wait_reset(struct thread_wait *wait)
{
    wait->backoff.rounds = wait->shared ? COLL_ASYNC_BACKOFF_SPINS : 0;
    wait->backoff.sleep_ns = 0;
    wait->helped_seen = __atomic_load_n(&engine.helped, __ATOMIC_RELAXED);
    wait->posts_seen = __atomic_load_n(&engine.wake, __ATOMIC_RELAXED);
}

/* An application thread that has helped since the last look, and posted nothing
 * since (a post means it has left MPI), is waiting in MPI and drives itself:
 * running here too would only take turns with it, so the thread steps aside
 * until the next post or for STEP_ASIDE_NS. */
static void wait_for_work(struct thread_wait *wait)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = STEP_ASIDE_NS};
    uint64_t helped = __atomic_load_n(&engine.helped, __ATOMIC_RELAXED);
    int32_t posts = __atomic_load_n(&engine.wake, __ATOMIC_RELAXED);

    if (posts != wait->posts_seen) {
        wait->posts_seen = posts;
        wait->helped_seen = helped;
    }
    if (helped == wait->helped_seen) {
        switch (coll_async_backoff_next(&wait->backoff)) {
        case COLL_ASYNC_BACKOFF_SPIN:
            coll_async_cpu_relax();
            return;
        case COLL_ASYNC_BACKOFF_YIELD:
            sched_yield();
            return;
        case COLL_ASYNC_BACKOFF_SLEEP: /* a sleep a post cuts short, below */
            pause.tv_nsec = wait->backoff.sleep_ns;
            break;
        }
    }
    if (sleep_until_posted(&pause)) {
        thread_wait_reset(wait);
    } else {
        /* Only help given after this look says the helper is still there. */
        wait->helped_seen = __atomic_load_n(&engine.helped, __ATOMIC_RELAXED);
    }
}

/* On a CPU of its own the idle thread watches for a post for IDLE_SPIN_NS before it
 * sleeps: collectives come in bursts, and a post that finds the thread awake costs
 * no system call to wake it nor a wait for the scheduler. True if a post came. */
static bool await_post(const struct thread_wait *wait)
{
    uint64_t until = coll_async_now_ns() + IDLE_SPIN_NS;

    if (wait->shared) {
        return false;
    }
    do {
        for (int i = 0; i < 64; ++i) {
            if (0 != __atomic_load_n(&engine.in_flight, __ATOMIC_ACQUIRE)
                || __atomic_load_n(&engine.stop, __ATOMIC_ACQUIRE)) {
                return true;
            }
            coll_async_cpu_relax();
        }
    } while (coll_async_now_ns() < until);
    return false;
}

/* SCHED_BATCH: a woken batch thread does not preempt the running one, so a post
 * does not hand the rank's core to this thread while the rank goes on to compute
 * (it ran the whole collective first: iallreduce of 1 MiB with a sleeping rank
 * overlapped 40-75 %, 86-94 % as a batch thread). It runs when the rank sleeps,
 * blocks or yields, with the same share of the CPU as before. */
static void run_as_batch(void)
{
    struct sched_param param = {.sched_priority = 0};

    (void) pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
}

static void *progress_thread(void *unused)
{
    struct thread_wait wait = {.shared = false};

    (void) unused;
    run_as_batch();
    pin();
    /* Linux stretches timed sleeps by 50 us by default; these pauses are a few us. */
    (void) prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    wait.shared = shares_creator_cpu();
    thread_wait_reset(&wait);
    for (;;) {
        bool progressed = false, moved = false, busy = true;

        if (!drive(&progressed, &moved, &busy) || (!progressed && !moved && busy)) {
            wait_for_work(&wait);
        } else if (progressed || moved) {
            thread_wait_reset(&wait);
        } else if (__atomic_load_n(&engine.stop, __ATOMIC_ACQUIRE)) {
            return NULL;
        } else if (!await_post(&wait)) {
            sleep_until_posted(NULL);
            thread_wait_reset(&wait);
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
        __atomic_store_n(&engine.stop, false, __ATOMIC_RELEASE);
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
    static const uint64_t one = 1;

    __atomic_add_fetch(&engine.wake, 1, __ATOMIC_SEQ_CST);
    switch (__atomic_load_n(&engine.sleeping, __ATOMIC_SEQ_CST)) {
    case SLEEP_ON_FUTEX:
        futex(&engine.wake, FUTEX_WAKE_PRIVATE, 1, NULL);
        break;
    case SLEEP_IN_POLL:
        (void) !write(engine.wake_fd, &one, sizeof(one));
        break;
    }
}

int coll_async_engine_post(struct coll_async_op *op)
{
    struct coll_async_op *head;
    int rc = start_once();

    if (0 != rc) {
        return rc;
    }
    COLL_ASYNC_TAKEN_OVER(op->stream);
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

void coll_async_engine_fini(void)
{
    if (engine.started) {
        __atomic_store_n(&engine.stop, true, __ATOMIC_RELEASE);
        wake();
        pthread_join(engine.thread, NULL);
        engine.started = false;
    }
    if (engine.wake_fd >= 0) {
        close(engine.wake_fd);
        engine.wake_fd = -1;
        engine.watch = (struct coll_async_engine_watch){.fd = -1};
    }
}
