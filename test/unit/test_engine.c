/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_engine.c: the inline executor, the progress thread's
 * per-stream ordering and cross-stream concurrency, concurrent posters, the idle
 * sleep, pinning, and fini.
 *
 * The engine is process-global and pins its thread only when it starts, so the
 * tests run in the order of main()'s table: the pinning tests first, each ending
 * with fini so that the next start reads the new configuration.
 */

#define _GNU_SOURCE

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/coll_async_engine.h"

#define THREADS 4
#define STREAMS 4
#define OPS_PER_THREAD 1000
#define TIMEOUT_MS 5000

/* A stream plus what the tests observe of it. */
struct test_stream {
    struct coll_async_stream stream;
    struct test_op *running;     /* op whose steps have begun and not ended */
    int last_index[THREADS + 1]; /* last finished index, per posting thread */
    int overlaps, reorders;      /* ordering violations seen */
};

struct test_op {
    struct coll_async_op op; /* first: the engine hands back &op */
    struct test_stream *ts;
    int steps_left;          /* AGAIN this many times before done */
    int steps_again;         /* how many times it returned AGAIN so */
    int status;              /* returned when done */
    volatile int *gate;      /* if set, AGAIN until *gate != 0 */
    struct test_op *after;   /* if set, must have ended before this op's first step */
    int thread, index;       /* posting thread and its posting order */
    pid_t tid;               /* where the step last ran */
    pthread_t self;
    int step_done;           /* the step returned done */
    int finishes;            /* calls of finished */
    int finish_status;
    struct timespec finished_at;
};

static int finished_total;

static pid_t gettid_(void)
{
    return (pid_t) syscall(SYS_gettid);
}

static double elapsed_ms(const struct timespec *from, const struct timespec *to)
{
    return (double) (to->tv_sec - from->tv_sec) * 1e3 + (double) (to->tv_nsec - from->tv_nsec) / 1e6;
}

static void sleep_ms(int ms)
{
    struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000};
    nanosleep(&pause, NULL);
}

/* Polls *word until it reaches value; false after TIMEOUT_MS (a bug, not a slow host). */
static bool wait_for(int *word, int value)
{
    for (int ms = 0; ms < TIMEOUT_MS; ++ms) {
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) >= value) {
            return true;
        }
        sleep_ms(1);
    }
    return false;
}

static int step(struct coll_async_op *base)
{
    struct test_op *t = (struct test_op *) base;
    struct test_op *running = __atomic_load_n(&t->ts->running, __ATOMIC_RELAXED);

    t->tid = gettid_();
    t->self = pthread_self();
    /* A stream runs one op at a time: no step of the next before the previous ends. */
    if ((NULL != running && t != running)
        || (NULL != t->after && !__atomic_load_n(&t->after->step_done, __ATOMIC_ACQUIRE))) {
        ++t->ts->overlaps;
    }
    __atomic_store_n(&t->ts->running, t, __ATOMIC_RELAXED);
    if (NULL != t->gate && 0 == __atomic_load_n(t->gate, __ATOMIC_ACQUIRE)) {
        return COLL_ASYNC_AGAIN;
    }
    if (t->steps_left > 0) {
        --t->steps_left;
        ++t->steps_again;
        return COLL_ASYNC_AGAIN;
    }
    __atomic_store_n(&t->ts->running, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&t->step_done, 1, __ATOMIC_RELEASE);
    return t->status;
}

static void finished(struct coll_async_op *base, int status)
{
    struct test_op *t = (struct test_op *) base;

    if (t->index <= t->ts->last_index[t->thread]) {
        ++t->ts->reorders;
    }
    t->ts->last_index[t->thread] = t->index;
    t->finish_status = status;
    clock_gettime(CLOCK_MONOTONIC, &t->finished_at);
    __atomic_add_fetch(&t->finishes, 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&finished_total, 1, __ATOMIC_RELEASE);
}

static void stream_init(struct test_stream *ts)
{
    memset(ts, 0, sizeof(*ts));
    coll_async_stream_init(&ts->stream);
    for (int i = 0; i <= THREADS; ++i) {
        ts->last_index[i] = -1;
    }
}

static void op_init(struct test_op *t, struct test_stream *ts, int thread, int index)
{
    memset(t, 0, sizeof(*t));
    t->op.stream = &ts->stream;
    t->op.step = step;
    t->op.finished = finished;
    t->ts = ts;
    t->thread = thread;
    t->index = index;
}

static void post(struct test_op *t)
{
    assert_int_equal(coll_async_engine_post(&t->op), 0);
}

/* Posts one ungated op and waits for it: returns it, with the progress thread's ids. */
static struct test_op *round_trip(void)
{
    static struct test_stream ts;
    static struct test_op t;

    stream_init(&ts);
    op_init(&t, &ts, 0, 0);
    post(&t);
    assert_true(wait_for(&t.finishes, 1));
    return &t;
}

static bool task_exists(pid_t tid)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/self/task/%d", (int) tid);
    return 0 == access(path, F_OK);
}

/* After fini the thread is joined: its task leaves /proc soon after the join. */
static void assert_thread_gone(pid_t tid)
{
    for (int ms = 0; ms < TIMEOUT_MS && task_exists(tid); ++ms) {
        sleep_ms(1);
    }
    assert_false(task_exists(tid));
}

/* Sets *gate after ms milliseconds, from another thread. */
struct release {
    pthread_t thread;
    int *gate;
    int ms;
};

static void *release_main(void *arg)
{
    struct release *r = arg;

    sleep_ms(r->ms);
    __atomic_store_n(r->gate, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void release_later(struct release *r, int *gate, int ms)
{
    r->gate = gate;
    r->ms = ms;
    assert_int_equal(pthread_create(&r->thread, NULL, release_main, r), 0);
}

/* (a) Inline runs */

static int progress_calls;

static void count_progress(void)
{
    ++progress_calls;
}

static void run_inline(int steps, int status)
{
    struct test_stream ts;
    struct test_op t;

    stream_init(&ts);
    op_init(&t, &ts, 0, 0);
    t.steps_left = steps;
    t.status = status;
    progress_calls = 0;
    assert_int_equal(coll_async_engine_run(&t.op, count_progress), status);
    assert_int_equal(t.steps_again, steps); /* every phase ran, in this thread */
    assert_int_equal(t.tid, gettid_());
    assert_int_equal(t.finishes, 0);     /* finished is for posted ops only */
    /* Long waits hand the application its Open MPI progress. */
    assert_true(progress_calls > 0);
}

static void test_run_success(void **state)
{
    (void) state;
    run_inline(1000, 0);
}

static void test_run_error(void **state)
{
    (void) state;
    run_inline(1000, -5);
}

/* (f) Pinning; (g) fini joins and a later post restarts the thread */

static void get_affinity(pid_t tid, cpu_set_t *set)
{
    CPU_ZERO(set);
    assert_int_equal(sched_getaffinity(tid, sizeof(*set), set), 0);
}

/* Starts the thread under cpus, returns its tid and affinity, stops it. */
static pid_t start_with(const struct coll_async_cpuset *cpus, cpu_set_t *affinity)
{
    struct test_op *t;
    pid_t tid;

    coll_async_engine_configure(cpus);
    t = round_trip();
    tid = t->tid;
    assert_int_not_equal(tid, gettid_());
    get_affinity(tid, affinity);
    coll_async_engine_fini();
    assert_thread_gone(tid);
    return tid;
}

static void cpuset_of(struct coll_async_cpuset *cpus, int cpu)
{
    char text[16], why[128];

    snprintf(text, sizeof(text), "%d", cpu);
    assert_int_equal(coll_async_parse_cpus(text, cpus, why, sizeof(why)), 0);
}

/* LIST pins the thread to exactly those CPUs (the last one this process may use). */
static void test_pin_list(void **state)
{
    struct coll_async_cpuset cpus;
    cpu_set_t mine, affinity;
    int cpu = CPU_SETSIZE - 1;

    (void) state;
    get_affinity(0, &mine);
    while (!CPU_ISSET(cpu, &mine)) {
        --cpu;
    }
    cpuset_of(&cpus, cpu);
    start_with(&cpus, &affinity);
    assert_int_equal(CPU_COUNT(&affinity), 1);
    assert_true(CPU_ISSET(cpu, &affinity));
}

/* A CPU the process may not use is refused: the thread keeps the creator's CPUs.
 * (pin() drops CPUs >= CPU_SETSIZE, so the unusable CPU is taken below it.)
 * Also shows that fini leaves the engine restartable: a new thread, newly pinned. */
static void test_pin_refused_and_restart(void **state)
{
    struct coll_async_cpuset cpus = {.mode = COLL_ASYNC_CPUS_NONE};
    cpu_set_t mine, affinity;
    pid_t first, second;

    (void) state;
    get_affinity(0, &mine);
    assert_false(CPU_ISSET(CPU_SETSIZE - 1, &mine)); /* no such CPU here */
    first = start_with(&cpus, &affinity);
    assert_true(CPU_EQUAL(&mine, &affinity));
    cpuset_of(&cpus, CPU_SETSIZE - 1);
    second = start_with(&cpus, &affinity);
    assert_true(CPU_EQUAL(&mine, &affinity));
    assert_int_not_equal(first, second);
    cpus.mode = COLL_ASYNC_CPUS_NONE;
    coll_async_engine_configure(&cpus);
}

/* (b) One stream in order, streams side by side */

static void test_streams_interleave(void **state)
{
    enum { A_OPS = 3, B_OPS = 10 };
    struct test_stream a, b;
    struct test_op ops_a[A_OPS], ops_b[B_OPS];
    int gate = 0;

    (void) state;
    stream_init(&a);
    stream_init(&b);
    for (int i = 0; i < B_OPS; ++i) {
        if (i < A_OPS) {
            op_init(&ops_a[i], &a, 0, i);
            ops_a[i].steps_left = i; /* multi-phase ops, too */
        }
        op_init(&ops_b[i], &b, 0, i);
        ops_b[i].steps_left = i % 3;
    }
    ops_a[0].gate = &gate; /* blocks stream a until the test opens it */
    for (int i = 0; i < B_OPS; ++i) {
        if (i < A_OPS) {
            post(&ops_a[i]);
        }
        post(&ops_b[i]);
    }
    assert_true(wait_for(&ops_b[B_OPS - 1].finishes, 1));
    for (int i = 0; i < A_OPS; ++i) {
        assert_int_equal(__atomic_load_n(&ops_a[i].finishes, __ATOMIC_ACQUIRE), 0);
    }
    assert_int_equal(a.stream.posted, A_OPS);
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    assert_true(wait_for(&ops_a[A_OPS - 1].finishes, 1));
    for (int i = 0; i < B_OPS; ++i) {
        assert_int_equal(ops_b[i].finishes, 1);
        assert_int_equal(ops_b[i].finish_status, 0);
        assert_int_equal(ops_b[i].steps_again, i % 3);
    }
    assert_int_equal(a.overlaps + b.overlaps, 0);
    assert_int_equal(a.reorders + b.reorders, 0);
    assert_int_equal(a.stream.posted + b.stream.posted, 0);
}

/* (c) A blocking op waits for the stream's posted ops */

static void test_run_waits_for_posted(void **state)
{
    struct test_stream ts;
    struct test_op posted, inline_op;
    struct release release;
    struct timespec start, end;
    int gate = 0;

    (void) state;
    stream_init(&ts);
    op_init(&posted, &ts, 0, 0);
    posted.gate = &gate;
    op_init(&inline_op, &ts, 0, 1);
    inline_op.after = &posted;
    post(&posted);
    release_later(&release, &gate, 100);
    clock_gettime(CLOCK_MONOTONIC, &start);
    progress_calls = 0;
    assert_int_equal(coll_async_engine_run(&inline_op.op, count_progress), 0);
    clock_gettime(CLOCK_MONOTONIC, &end);
    pthread_join(release.thread, NULL);
    /* The inline op's first step came after the posted op's last (no overlap). */
    assert_int_equal(ts.overlaps, 0);
    assert_true(elapsed_ms(&start, &end) >= 90);
    assert_true(progress_calls > 0);
    assert_true(wait_for(&posted.finishes, 1));
}

/* (d) Concurrent posters, which also run the posted ops themselves between posts,
 * as application threads waiting in MPI do: one driver at a time, so each op
 * still runs once and in its stream's order. */

static struct test_op many[THREADS][OPS_PER_THREAD];
static struct test_stream many_streams[STREAMS];
static pthread_barrier_t posters_ready;

static void *poster_main(void *arg)
{
    int thread = (int) (intptr_t) arg;

    pthread_barrier_wait(&posters_ready);
    for (int i = 0; i < OPS_PER_THREAD; ++i) {
        struct test_op *t = &many[thread][i];

        op_init(t, &many_streams[(thread + i) % STREAMS], thread, i);
        t->steps_left = 0 == i % 7 ? 2 : 0; /* some ops take several steps */
        t->status = -(thread * OPS_PER_THREAD + i);
        if (0 != coll_async_engine_post(&t->op)) {
            return (void *) 1;
        }
        (void) coll_async_engine_help();
    }
    return NULL;
}

static void test_concurrent_posts(void **state)
{
    pthread_t threads[THREADS];
    pid_t progress_tid = round_trip()->tid;
    int base, helped = 0;

    (void) state;
    for (int s = 0; s < STREAMS; ++s) {
        stream_init(&many_streams[s]);
    }
    base = __atomic_load_n(&finished_total, __ATOMIC_ACQUIRE);
    pthread_barrier_init(&posters_ready, NULL, THREADS);
    for (int i = 0; i < THREADS; ++i) {
        assert_int_equal(pthread_create(&threads[i], NULL, poster_main, (void *) (intptr_t) i), 0);
    }
    for (int i = 0; i < THREADS; ++i) {
        void *failed;
        pthread_join(threads[i], &failed);
        assert_null(failed);
    }
    pthread_barrier_destroy(&posters_ready);
    assert_true(wait_for(&finished_total, base + THREADS * OPS_PER_THREAD));
    sleep_ms(20); /* room for a duplicate finish to show */
    assert_int_equal(finished_total, base + THREADS * OPS_PER_THREAD);
    for (int thread = 0; thread < THREADS; ++thread) {
        for (int i = 0; i < OPS_PER_THREAD; ++i) {
            assert_int_equal(many[thread][i].finishes, 1);
            assert_int_equal(many[thread][i].finish_status, many[thread][i].status);
            helped += many[thread][i].tid != progress_tid;
        }
    }
    assert_true(helped > 0); /* the posters did run ops */
    for (int s = 0; s < STREAMS; ++s) {
        assert_int_equal(many_streams[s].overlaps, 0);
        assert_int_equal(many_streams[s].reorders, 0);
        assert_int_equal(many_streams[s].stream.posted, 0);
    }
}

/* (e) The idle thread sleeps, and a post wakes it */

static double thread_cpu_ms(pthread_t thread)
{
    clockid_t clock;
    struct timespec now, zero = {0, 0};

    assert_int_equal(pthread_getcpuclockid(thread, &clock), 0);
    assert_int_equal(clock_gettime(clock, &now), 0);
    return elapsed_ms(&zero, &now);
}

/* Field 3 of /proc/<tid>/stat: 'S' while blocked in the futex, 'R' when spinning. */
static char thread_state(pid_t tid)
{
    char path[64], state = '?';
    FILE *file;

    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int) tid);
    file = fopen(path, "r");
    assert_non_null(file);
    assert_int_equal(fscanf(file, "%*d (%*[^)]) %c", &state), 1);
    fclose(file);
    return state;
}

static void test_idle_sleeps_and_wakes(void **state)
{
    struct test_op *t = round_trip();
    pthread_t thread = t->self;
    pid_t tid = t->tid;
    struct timespec posted_at;
    double before, after;

    (void) state;
    sleep_ms(50); /* let it reach the futex */
    before = thread_cpu_ms(thread);
    sleep_ms(300);
    after = thread_cpu_ms(thread);
    assert_true(after - before < 20.0);
    assert_int_equal(thread_state(tid), 'S');

    clock_gettime(CLOCK_MONOTONIC, &posted_at);
    t = round_trip();
    assert_int_equal(t->tid, tid); /* the same thread, woken */
    assert_true(elapsed_ms(&posted_at, &t->finished_at) < 100.0);
}

/* (g) fini waits for the posted ops, then joins */

static void test_fini_waits_for_posted(void **state)
{
    struct test_stream ts;
    struct test_op t;
    struct release release;
    int gate = 0;

    (void) state;
    stream_init(&ts);
    op_init(&t, &ts, 0, 0);
    t.gate = &gate;
    post(&t);
    release_later(&release, &gate, 100);
    coll_async_engine_fini();
    assert_int_equal(__atomic_load_n(&t.finishes, __ATOMIC_ACQUIRE), 1);
    pthread_join(release.thread, NULL);
    assert_thread_gone(t.tid);
    coll_async_engine_fini(); /* a second fini is harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_success),
        cmocka_unit_test(test_run_error),
        cmocka_unit_test(test_pin_list), /* before any other post: see the top */
        cmocka_unit_test(test_pin_refused_and_restart),
        cmocka_unit_test(test_streams_interleave),
        cmocka_unit_test(test_run_waits_for_posted),
        cmocka_unit_test(test_concurrent_posts),
        cmocka_unit_test(test_idle_sleeps_and_wakes),
        cmocka_unit_test(test_fini_waits_for_posted),
    };

    alarm(60); /* a hang (say, fini never joining) fails instead of blocking the suite */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
