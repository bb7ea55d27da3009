/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of transport/coll_async_tcp.c between processes of two jobs
 * (MPI_Comm_spawn, connect/accept) over loopback: each process numbers the
 * other job's processes its own way, past its job's size, in the order they
 * come (as coll_async_network.c does), while the wire names every process by
 * jobid << 32 | vpid (coll_async_tcp_handshake.h). Forked processes: job A's
 * two and job B's one, whose ids for each other disagree on purpose; a
 * simultaneous connect across the jobs (decided by names, not ids); a process
 * of the other job that connects before it was added. In one process: forged
 * hellos naming another job's process are refused, and a stranger gets no id.
 */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_keys.h"

#include "../../ompi/mca/coll/async/transport/coll_async_tcp.h"
#include "../../ompi/mca/coll/async/transport/coll_async_tcp_handshake.h"
#include "../tcp_frames.h"
#include "forked_ranks.h"
#include "tcp_plain_socket.h"

#define JOB_A 0x1230000u /* jobids: A's processes are named below B's */
#define JOB_B 0x4560000u
#define FOREIGN_MAX 8    /* ids past the job's size, for the other job */
#define NRANKS 3         /* test ranks: A's vpids 0 and 1, then B's vpid 0 */
#define BYTES ((1 << 20) + 3)

/* A test rank's job and vpid; its key is test_key(rank). */
static uint32_t job_of(int rank)
{
    return rank < 2 ? JOB_A : JOB_B;
}

static uint32_t vpid_of(int rank)
{
    return rank < 2 ? (uint32_t) rank : 0;
}

static uint64_t name_of_rank(int rank)
{
    return (uint64_t) job_of(rank) << 32 | vpid_of(rank);
}

/* This process's numbering: as coll_async_network.c's, in small. */
static struct {
    uint32_t job, nprocs;
    uint64_t foreign[FOREIGN_MAX];
    uint32_t nforeign;
} names;

static uint64_t name_of(void *context, uint32_t id)
{
    (void) context;
    return id < names.nprocs ? (uint64_t) names.job << 32 | id : names.foreign[id - names.nprocs];
}

static int id_of(void *context, uint64_t name, uint32_t *id)
{
    (void) context;
    if ((uint32_t) (name >> 32) == names.job) {
        *id = (uint32_t) name;
        return *id < names.nprocs ? 0 : -ENOENT;
    }
    for (uint32_t i = 0; i < names.nforeign; ++i) {
        if (names.foreign[i] == name) {
            *id = names.nprocs + i;
            return 0;
        }
    }
    if (FOREIGN_MAX == names.nforeign) {
        return -ENOSPC;
    }
    names.foreign[names.nforeign] = name;
    *id = names.nprocs + names.nforeign++;
    return 0;
}

static struct coll_async_tcp *open_as(int rank)
{
    struct coll_async_tcp_if ifs[1] = {{"lo", {0}, 8, true}};
    struct coll_async_tcp_config config = {
        .ifs = ifs, .nifs = 1, .self = vpid_of(rank), .key = test_key((uint32_t) rank),
        .connect_timeout_ms = 5000, .names = {.name_of = name_of, .id_of = id_of},
    };
    struct coll_async_tcp *tcp;

    memset(&names, 0, sizeof(names));
    names.job = job_of(rank);
    names.nprocs = JOB_A == names.job ? 2 : 1;
    config.nprocs = names.nprocs + FOREIGN_MAX;
    inet_pton(AF_INET, "127.0.0.1", &ifs[0].addr);
    if (0 != coll_async_tcp_create(&tcp, &config)) {
        return NULL;
    }
    return tcp;
}

static struct coll_async_transport *t_of(struct coll_async_tcp *tcp)
{
    return coll_async_tcp_transport(tcp);
}

/* Forked ranks: the pretend modex and barrier */

struct shared {
    struct forked_barrier barrier;
    size_t blob_length[NRANKS];
    uint8_t blob[NRANKS][COLL_ASYNC_TCP_ADDRESS_MAX];
};

static struct shared *shared;

static void step_any(void *tcp)
{
    step(tcp);
}

static void barrier(struct coll_async_tcp *tcp)
{
    forked_barrier_wait(&shared->barrier, NRANKS, NULL != tcp ? step_any : NULL, tcp);
}

/* Adds test rank peer under this process's id for it; returns the id. */
static uint32_t add(struct coll_async_tcp *tcp, int peer)
{
    uint32_t id;

    CHECK(0 == id_of(NULL, name_of_rank(peer), &id));
    CHECK(0 == t_of(tcp)->ops->add_peer(t_of(tcp), id, test_key_of((uint32_t) peer),
                                         shared->blob[peer], shared->blob_length[peer]));
    return id;
}

static uint8_t pattern(int sender, size_t i)
{
    return (uint8_t) (sender * 71 + i * 13);
}

static void fill(uint8_t *data, int sender)
{
    for (size_t i = 0; i < BYTES; ++i) {
        data[i] = pattern(sender, i);
    }
}

static bool holds(const uint8_t *data, int sender)
{
    for (size_t i = 0; i < BYTES; ++i) {
        if (data[i] != pattern(sender, i)) {
            return false;
        }
    }
    return true;
}

static void wait_op(struct coll_async_tcp *tcp, const struct coll_async_transfer *op)
{
    while (COLL_ASYNC_TRANSFER_PENDING == op->status) {
        step(tcp);
    }
    if (0 != op->status) {
        fprintf(stderr, "rank %d: %s\n", my_rank, NULL != op->error ? op->error : "?");
    }
    CHECK(0 == op->status);
}

/* Sends BYTES to id and receives BYTES from it, both at once, tag tag. */
static void exchange(struct coll_async_tcp *tcp, uint32_t id, int peer, uint64_t tag,
                     uint8_t *out, uint8_t *in)
{
    struct coll_async_transfer send = {0}, recv = {0};

    memset(in, 0, BYTES);
    CHECK(0 == t_of(tcp)->ops->recv(t_of(tcp), id, tag, in, BYTES, &recv));
    CHECK(0 == t_of(tcp)->ops->send(t_of(tcp), id, tag, out, BYTES, &send));
    wait_op(tcp, &send);
    wait_op(tcp, &recv);
    CHECK(holds(in, peer));
}

/*
 * Job A's process 0 adds A1 then B (B is id 2 there); B adds A1 then A0 (A0 is
 * id 2 there, A1 id 1), so both take themselves for the lower id: only names
 * settle their simultaneous connect. A1 adds B only after B's connection came
 * and was proven: its id for B was given out by the handshake, and the add
 * finds it.
 */
static void two_jobs(int rank, void *context)
{
    struct coll_async_tcp *tcp = open_as(rank);
    uint8_t *out = malloc(BYTES), *in = malloc(BYTES);
    struct coll_async_tcp_link_stats stats[1];
    struct coll_async_transfer send = {0}, recv = {0};
    uint32_t a0 = 0, b = 0, id;
    int length;

    (void) context;
    CHECK(NULL != tcp && NULL != out && NULL != in);
    fill(out, rank);
    length = t_of(tcp)->ops->address(t_of(tcp), shared->blob[rank], COLL_ASYNC_TCP_ADDRESS_MAX);
    CHECK(length > 0);
    shared->blob_length[rank] = (size_t) length;
    barrier(NULL);
    if (0 == rank) {
        CHECK(1 == add(tcp, 1));
        b = add(tcp, 2);
        CHECK(2 == b);
    } else if (2 == rank) {
        CHECK(1 == add(tcp, 1));
        a0 = add(tcp, 0);
        CHECK(2 == a0);
    } else {
        CHECK(0 == add(tcp, 0));
    }
    barrier(tcp);

    /* A0 and B, each sending first. */
    if (0 == rank) {
        exchange(tcp, b, 2, 1, out, in);
        CHECK(1 == coll_async_tcp_link_stats(tcp, b, stats, 1) && stats[0].established);
    } else if (2 == rank) {
        exchange(tcp, a0, 0, 1, out, in);
        CHECK(1 == coll_async_tcp_link_stats(tcp, a0, stats, 1) && stats[0].established);
    }
    barrier(tcp);
    /* Of the two connections, one remains on each side. */
    if (1 != rank) {
        while (1 != coll_async_tcp_connections(tcp)) {
            step(tcp);
        }
    }
    barrier(tcp);

    /* B to A1, which has not added B yet. */
    if (2 == rank) {
        CHECK(0 == t_of(tcp)->ops->send(t_of(tcp), 1, 2, out, BYTES, &send));
        wait_op(tcp, &send);
    } else if (1 == rank) {
        while (0 == names.nforeign) {
            step(tcp); /* the handshake gives B an id */
        }
        CHECK(0 == id_of(NULL, name_of_rank(2), &id) && 2 == id);
        CHECK(2 == add(tcp, 2));
        memset(in, 0, BYTES);
        CHECK(0 == t_of(tcp)->ops->recv(t_of(tcp), id, 2, in, BYTES, &recv));
        wait_op(tcp, &recv);
        CHECK(holds(in, 2));
    }
    barrier(tcp);

    /* And within job A, as before. */
    if (rank < 2) {
        exchange(tcp, (uint32_t) (1 - rank), 1 - rank, 3, out, in);
    }
    barrier(tcp);
    t_of(tcp)->ops->destroy(t_of(tcp));
    free(out);
    free(in);
}

static void test_two_jobs(void **state)
{
    pid_t pids[NRANKS];
    int status[NRANKS];

    (void) state;
    memset(shared, 0, sizeof(*shared));
    for (int rank = 0; rank < NRANKS; ++rank) {
        pids[rank] = spawn_rank(rank, two_jobs, NULL);
    }
    wait_ranks(NRANKS, pids, status);
    assert_ranks_exited_cleanly(NRANKS, pids, status);
}

/* Forged hellos, in this process: A0's transport and a plain socket */

/* A plain socket to tcp whose hello says it is from (see fake_hello). */
static int connect_as(struct coll_async_tcp *tcp, uint64_t from, uint64_t to,
                      const struct coll_async_key *key, struct coll_async_tcp_hello *hello,
                      uint8_t *challenge)
{
    int fd = connect_to(tcp);

    fake_hello(tcp, fd, from, to, key, hello, challenge);
    return fd;
}

static uint64_t refused(const struct coll_async_tcp *tcp)
{
    struct coll_async_tcp_guard_stats stats;

    coll_async_tcp_guard_stats(tcp, &stats);
    return stats.refused;
}

/* Claiming to be B's process with a wrong key, or naming A0 as one job's id
 * (version 2's way) or as another job's process: refused, and no id given out.
 * With A0's key (what B's process reads from A0's card), proven: the id is
 * given, and the ACK, under B's key, comes once A0 adds B. */
static void test_forged_foreign_hellos(void **state)
{
    struct coll_async_tcp *tcp = open_as(0);
    struct coll_async_key guess = test_key(7);
    struct coll_async_tcp_hello hello;
    uint8_t challenge[COLL_ASYNC_TCP_NONCE_BYTES], ack[32 + 8], blob[COLL_ASYNC_TCP_ADDRESS_MAX];
    struct coll_async_tcp_addr nowhere = {.port = 1, .prefix = 8};
    uint64_t tag;
    int fd, length;

    (void) state;
    assert_non_null(tcp);
    fd = connect_as(tcp, name_of_rank(2), name_of_rank(0), &guess, &hello, challenge);
    wait_closed(tcp, fd, 3);
    close(fd);
    assert_int_equal(refused(tcp), 1);
    fd = connect_as(tcp, name_of_rank(2), 0, test_key_of(0), &hello, challenge);
    wait_closed(tcp, fd, 3);
    close(fd);
    fd = connect_as(tcp, name_of_rank(2), (uint64_t) JOB_B << 32, test_key_of(0), &hello,
                    challenge);
    wait_closed(tcp, fd, 3);
    close(fd);
    fd = connect_as(tcp, name_of_rank(0), name_of_rank(0), test_key_of(0), &hello, challenge);
    wait_closed(tcp, fd, 3); /* itself */
    close(fd);
    assert_int_equal(refused(tcp), 4);
    assert_int_equal(names.nforeign, 0);
    assert_int_equal(coll_async_tcp_connections(tcp), 0);

    fd = connect_as(tcp, name_of_rank(2), name_of_rank(0), test_key_of(0), &hello, challenge);
    while (0 == names.nforeign) {
        step(tcp);
    }
    assert_true(names.foreign[0] == name_of_rank(2));
    assert_int_equal(refused(tcp), 4);
    assert_int_equal(recv(fd, ack, 1, MSG_DONTWAIT), -1); /* no ACK without B's key */
    inet_pton(AF_INET, "127.0.0.1", &nowhere.addr);
    length = coll_async_tcp_address_encode(&nowhere, 1, blob, sizeof(blob));
    assert_int_equal(t_of(tcp)->ops->add_peer(t_of(tcp), 2, test_key_of(2), blob,
                                              (size_t) length), 0);
    fake_read(tcp, fd, ack, sizeof(ack));
    assert_int_equal(ack[4], TEST_FRAME_ACK);
    memcpy(&tag, ack + 32, 8);
    assert_true(be64toh(tag) == coll_async_tcp_ack_tag(test_key_of(2), &hello, challenge));
    close(fd);
    t_of(tcp)->ops->destroy(t_of(tcp));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_jobs),
        cmocka_unit_test(test_forged_foreign_hellos),
    };

    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0);
    assert_true(MAP_FAILED != shared);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
