/*
 * Unit tests: forked processes as the ranks of a test.
 *
 * The children must not use cmocka (a failed assert would longjmp into a copy of
 * the runner): they report through their exit status, CHECK naming the line on
 * stderr, and the parent asserts on waitpid. alarm() turns a hang into a failure.
 * Include after <cmocka.h>.
 */

#ifndef COLL_ASYNC_FORKED_RANKS_H
#define COLL_ASYNC_FORKED_RANKS_H

#include <stdio.h>
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

#endif /* COLL_ASYNC_FORKED_RANKS_H */
