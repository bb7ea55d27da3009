/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests: forked processes as the ranks of a test.
 *
 * The children must not use cmocka (a failed assert would longjmp into a copy of
 * the runner): they report through their exit status, CHECK naming the line on
 * stderr, and the parent asserts on waitpid. alarm() turns a hang into a failure,
 * and a crash kills the child (not cmocka's handler, which would go on to run the
 * next tests in it).
 * Include after <cmocka.h>.
 */

#ifndef COLL_ASYNC_FORKED_RANKS_H
#define COLL_ASYNC_FORKED_RANKS_H

#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKED_RANK_TIMEOUT_S 20

static int my_rank = -1;

static _Noreturn void child_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: rank %d: %s failed\n", file, line, my_rank, what);
    _exit(1);
}

#define CHECK(cond)                                                  \
    do {                                                             \
        if (!(cond)) {                                               \
            child_fail(__FILE__, __LINE__, "CHECK(" #cond ")");      \
        }                                                            \
    } while (0)

/* Forks one rank, which runs body(rank, context) and exits 0 when it returns. */
static pid_t spawn_rank(int rank, void (*body)(int rank, void *context), void *context)
{
    pid_t pid;

    fflush(NULL); /* the children must not repeat the runner's buffered output */
    pid = fork();
    assert_true(pid >= 0);
    if (0 == pid) {
        const int crashes[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

        for (size_t i = 0; i < sizeof(crashes) / sizeof(crashes[0]); ++i) {
            signal(crashes[i], SIG_DFL);
        }
        my_rank = rank;
        alarm(FORKED_RANK_TIMEOUT_S);
        body(rank, context);
        _exit(0);
    }
    return pid;
}

static void wait_ranks(int nranks, const pid_t *pids, int *status)
{
    for (int rank = 0; rank < nranks; ++rank) {
        assert_int_equal(waitpid(pids[rank], &status[rank], 0), pids[rank]);
    }
}

static void assert_exited_cleanly(pid_t pid, int status)
{
    if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
        fail_msg("child %d: %s %d", (int) pid, WIFEXITED(status) ? "exit" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    }
}

static void assert_ranks_exited_cleanly(int nranks, const pid_t *pids, const int *status)
{
    for (int rank = 0; rank < nranks; ++rank) {
        assert_exited_cleanly(pids[rank], status[rank]);
    }
}

/*
 * A barrier of forked ranks, in memory mapped MAP_SHARED before the fork. The
 * last rank to arrive opens the next generation; the others call wait(context)
 * until it is open (NULL: sleep 100 us), which lets a rank keep its transport
 * moving, so that peers still get what they wait for.
 */
struct forked_barrier {
    int arrived, generation;
};

static inline void forked_barrier_wait(struct forked_barrier *barrier, int nranks,
                                       void (*wait)(void *context), void *context)
{
    int generation = __atomic_load_n(&barrier->generation, __ATOMIC_ACQUIRE);

    if (nranks == __atomic_add_fetch(&barrier->arrived, 1, __ATOMIC_ACQ_REL)) {
        __atomic_store_n(&barrier->arrived, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&barrier->generation, 1, __ATOMIC_ACQ_REL);
        return;
    }
    while (generation == __atomic_load_n(&barrier->generation, __ATOMIC_ACQUIRE)) {
        if (NULL != wait) {
            wait(context);
        } else {
            usleep(100);
        }
    }
}

/*
 * A rank killed on cue. The parent opens the cue (victim_cue_open) and spawns
 * rank 0, the survivor, and rank 1, the victim; the victim gives the cue once it
 * is where the test wants it to die (victim_cue_then_wait), and
 * kill_victim_time_survivor kills it then, waits for both, asserts that the
 * survivor exited cleanly and the victim died of the kill, and returns the
 * seconds the survivor took to end after the kill.
 */
static int victim_cue[2];

static inline void victim_cue_open(void)
{
    assert_int_equal(pipe(victim_cue), 0);
}

static inline _Noreturn void victim_cue_then_wait(void)
{
    CHECK(1 == write(victim_cue[1], "k", 1));
    for (;;) {
        pause();
    }
}

static inline long kill_victim_time_survivor(const pid_t pids[2])
{
    struct timespec start, end;
    int status;
    char byte;

    close(victim_cue[1]);
    assert_int_equal(read(victim_cue[0], &byte, 1), 1);
    close(victim_cue[0]);
    kill(pids[1], SIGKILL);
    clock_gettime(CLOCK_MONOTONIC, &start);
    assert_int_equal(waitpid(pids[0], &status, 0), pids[0]);
    clock_gettime(CLOCK_MONOTONIC, &end);
    assert_exited_cleanly(pids[0], status);
    assert_int_equal(waitpid(pids[1], &status, 0), pids[1]);
    assert_true(WIFSIGNALED(status) && SIGKILL == WTERMSIG(status));
    return (long) (end.tv_sec - start.tv_sec);
}

#endif /* COLL_ASYNC_FORKED_RANKS_H */
