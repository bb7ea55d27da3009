/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * An outsider at a running job's coll/async TCP listeners, as an audit of an
 * earlier build was: it finds the listening sockets of the processes named (their fds in
 * /proc/PID/fd, their ports in /proc/net/tcp), keeps those that speak first
 * with a coll/async challenge, and at each
 *   - sends forged hellos (right protocol, made-up key) claiming every pair of
 *     processes below 4 of the job (named jobid << 32 | vpid, the jobid read
 *     from the first process's environment where Open MPI 4 puts it, else 0),
 *     and a version-1 hello: each must be closed;
 *   - sends data headers (an eager message of 4 GiB, a chunk of a 4 GiB
 *     transfer, the announcement of one) without proving anything, and 64 bytes of garbage: each must
 *     be closed;
 *   - sends half a header and nothing more: it must be closed within 6 s (run
 *     the job with coll_async_tcp_connect_timeout 2);
 *   - opens 100 connections that say nothing: at most 64 may stay open.
 * It prints what it saw and exits 0 when the listeners held, 1 when not, 2 when
 * it found no listener. Run it while the job works (test/run checks that the
 * job's results stay right and it ends normally).
 *
 *   tcp_attack PID...
 */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../ompi/mca/coll/async/transport/coll_async_tcp_handshake.h"
#include "tcp_frames.h"

#define MAX_LISTENERS 32
#define IDLE 100
#define CAP 64
#define TRUNCATED_WAIT_MS 6000

struct endpoint {
    struct in_addr addr;
    uint16_t port;
};

/* The inodes of pid's sockets. */
static int socket_inodes(const char *pid, unsigned long *inodes, int max)
{
    char path[64], link[64];
    struct dirent *entry;
    DIR *dir;
    int count = 0;

    snprintf(path, sizeof(path), "/proc/%s/fd", pid);
    if (NULL == (dir = opendir(path))) {
        return 0;
    }
    while (count < max && NULL != (entry = readdir(dir))) {
        char fd_path[320];
        ssize_t n;

        snprintf(fd_path, sizeof(fd_path), "%s/%s", path, entry->d_name);
        n = readlink(fd_path, link, sizeof(link) - 1);
        if (n > 0) {
            link[n] = '\0';
            if (1 == sscanf(link, "socket:[%lu]", &inodes[count])) {
                ++count;
            }
        }
    }
    closedir(dir);
    return count;
}

/* pid's listening IPv4 endpoints, from /proc/net/tcp (state 0A: LISTEN). */
static int listeners_of(const char *pid, struct endpoint *out, int max)
{
    unsigned long inodes[4096];
    int ninodes = socket_inodes(pid, inodes, 4096), count = 0;
    FILE *f = fopen("/proc/net/tcp", "r");
    char line[512];

    while (NULL != f && NULL != fgets(line, sizeof(line), f) && count < max) {
        unsigned addr, port, state;
        unsigned long inode;

        if (4 != sscanf(line, " %*d: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &addr,
                        &port, &state, &inode)
            || 0x0a != state) {
            continue;
        }
        for (int i = 0; i < ninodes; ++i) {
            if (inodes[i] == inode) {
                out[count].addr.s_addr = addr; /* /proc prints the raw word */
                out[count++].port = (uint16_t) port;
            }
        }
    }
    if (NULL != f) {
        fclose(f);
    }
    return count;
}

static int dial(const struct endpoint *e)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = e->addr,
                             .sin_port = htons(e->port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd >= 0 && 0 != connect(fd, (struct sockaddr *) &sa, sizeof(sa))) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads exactly length bytes within ms; false on timeout, close or error. */
static bool read_within(int fd, uint8_t *buffer, size_t length, int ms)
{
    size_t have = 0;

    while (have < length) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (poll(&p, 1, ms) <= 0 || (n = recv(fd, buffer + have, length - have, 0)) <= 0) {
            return false;
        }
        have += (size_t) n;
    }
    return true;
}

/* True when the listener closes fd within ms (end of stream or reset). */
static bool closed_within(int fd, int ms)
{
    uint8_t byte;

    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};

        if (poll(&p, 1, ms) <= 0) {
            return false;
        }
        if (recv(fd, &byte, 1, 0) <= 0) {
            return true;
        }
    }
}

/* Connects and reads the challenge; -1 when this is no coll/async listener. */
static int challenged(const struct endpoint *e, uint8_t *challenge)
{
    uint8_t frame[32 + COLL_ASYNC_TCP_CHALLENGE_BYTES];
    int fd = dial(e);

    if (fd < 0) {
        return -1;
    }
    if (!read_within(fd, frame, sizeof(frame), 1000) || TEST_FRAME_CHALLENGE != frame[4]
        || 0 != coll_async_tcp_challenge_decode(frame + 32, challenge)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The job's id, as Open MPI 4 hands it to its processes (OMPI_MCA_ess_base_jobid
 * in pid's environment); 0 where it is not found: the forged hellos then name
 * no process of the job, and are refused before their MAC is checked. */
static uint64_t jobid_of(const char *pid)
{
    static const char var[] = "OMPI_MCA_ess_base_jobid=";
    char path[64], env[65536];
    uint64_t jobid = 0;
    size_t length;
    FILE *file;

    snprintf(path, sizeof(path), "/proc/%s/environ", pid);
    file = fopen(path, "r");
    if (NULL == file) {
        return 0;
    }
    length = fread(env, 1, sizeof(env) - 1, file);
    fclose(file);
    env[length] = '\0';
    for (size_t at = 0; at < length; at += strlen(env + at) + 1) {
        if (0 == strncmp(env + at, var, sizeof(var) - 1)) {
            jobid = strtoull(env + at + sizeof(var) - 1, NULL, 10);
        }
    }
    return jobid;
}

/* A forged hello claiming to be process from, connecting to process to, on link
 * 0; true when refused. */
static bool forged_hello(const struct endpoint *e, uint64_t from, uint64_t to)
{
    struct coll_async_key guess;
    struct coll_async_tcp_hello hello = {.from = from, .to = to, .link = 0, .nlinks = 1};
    uint8_t challenge[COLL_ASYNC_TCP_NONCE_BYTES], frame[32 + COLL_ASYNC_TCP_HELLO_BYTES];
    int fd = challenged(e, challenge);
    bool refused;

    if (fd < 0) {
        return false;
    }
    memset(&guess, (int) from, sizeof(guess));
    memset(hello.nonce, 0x33, sizeof(hello.nonce));
    hello.tag = coll_async_tcp_hello_tag(&guess, &hello, challenge);
    test_frame_header(frame, TEST_FRAME_HELLO, COLL_ASYNC_TCP_HELLO_BYTES, 0, 0, 0);
    coll_async_tcp_hello_encode(&hello, frame + 32);
    refused = sizeof(frame) == send(fd, frame, sizeof(frame), MSG_NOSIGNAL)
              && closed_within(fd, 3000);
    close(fd);
    return refused;
}

/* A frame sent before any proof; true when refused. */
static bool unproven_frame(const struct endpoint *e, const uint8_t *frame, size_t length,
                           int wait_ms)
{
    uint8_t challenge[COLL_ASYNC_TCP_NONCE_BYTES];
    int fd = challenged(e, challenge);
    bool refused;

    if (fd < 0) {
        return false;
    }
    refused = (ssize_t) length == send(fd, frame, length, MSG_NOSIGNAL)
              && closed_within(fd, wait_ms);
    close(fd);
    return refused;
}

/* IDLE silent connections; how many the listener keeps open. */
static int idle_kept(const struct endpoint *e)
{
    int fds[IDLE], kept = 0;

    for (int i = 0; i < IDLE; ++i) {
        fds[i] = dial(e);
        usleep(2000);
    }
    usleep(500000);
    for (int i = 0; i < IDLE; ++i) {
        if (fds[i] >= 0 && !closed_within(fds[i], 0)) {
            ++kept;
        }
    }
    for (int i = 0; i < IDLE; ++i) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
    }
    return kept;
}

int main(int argc, char **argv)
{
    struct endpoint found[MAX_LISTENERS];
    int nfound = 0, attacked = 0, failures = 0;
    uint64_t job = argc > 1 ? jobid_of(argv[1]) << 32 : 0;

    for (int i = 1; i < argc; ++i) {
        nfound += listeners_of(argv[i], found + nfound, MAX_LISTENERS - nfound);
    }
    for (int i = 0; i < nfound; ++i) {
        uint8_t challenge[COLL_ASYNC_TCP_NONCE_BYTES], frame[64];
        char where[INET_ADDRSTRLEN];
        int fd = challenged(&found[i], challenge), refused = 0, forged = 0, kept;
        bool old_hello, big_eager, big_chunk, big_rts, garbage, truncated;

        if (fd < 0) {
            continue; /* not coll/async's */
        }
        close(fd);
        ++attacked;
        inet_ntop(AF_INET, &found[i].addr, where, sizeof(where));
        /* The listener's vpid is unknown: one of the pairs names it. */
        for (uint32_t from = 0; from < 4; ++from) {
            for (uint32_t to = 0; to < 4; ++to) {
                forged += from != to;
                refused += from != to && forged_hello(&found[i], job | from, job | to);
            }
        }
        /* Version 1's hello: process 1, link 0 of 1, the old magic. */
        test_frame_header(frame, TEST_FRAME_HELLO, 0, 1, (uint64_t) 1 << 32,
                          0x636f6c6c74637001ULL);
        old_hello = unproven_frame(&found[i], frame, 32, 3000);
        test_frame_header(frame, TEST_FRAME_EAGER, UINT32_MAX, 1, 0, 0);
        big_eager = unproven_frame(&found[i], frame, 32, 3000);
        test_frame_header(frame, TEST_FRAME_CHUNK, 1 << 20, 1, 0, (uint64_t) 4 << 30);
        big_chunk = unproven_frame(&found[i], frame, 32, 3000);
        test_frame_header(frame, TEST_FRAME_RTS, 0, 1, 0, (uint64_t) 4 << 30);
        big_rts = unproven_frame(&found[i], frame, 32, 3000);
        memset(frame, 0xa5, sizeof(frame));
        garbage = unproven_frame(&found[i], frame, sizeof(frame), 3000);
        test_frame_header(frame, TEST_FRAME_HELLO, COLL_ASYNC_TCP_HELLO_BYTES, 0, 0, 0);
        /* Closed at the job's deadline, which a rank keeps when it next drives its
         * network: on a loaded machine, seconds late. */
        truncated = unproven_frame(&found[i], frame, 16, TRUNCATED_WAIT_MS);
        kept = idle_kept(&found[i]);
        printf("tcp_attack: %s:%u: forged hellos refused %d/%d, version-1 hello %s, 4 GiB eager "
               "header %s, 4 GiB chunk header %s, 4 GiB RTS %s, garbage %s, half a header %s, "
               "%d of %d silent connections kept (cap %d)\n",
               where, found[i].port, refused, forged, old_hello ? "refused" : "TAKEN",
               big_eager ? "refused" : "TAKEN", big_chunk ? "refused" : "TAKEN",
               big_rts ? "refused" : "TAKEN", garbage ? "refused" : "TAKEN", truncated ? "closed" : "KEPT", kept, IDLE, CAP);
        failures += refused != forged || !old_hello || !big_eager || !big_chunk || !big_rts || !garbage
                    || !truncated || kept > CAP;
    }
    if (0 == attacked) {
        fprintf(stderr, "tcp_attack: no coll/async listener among %d of the processes'\n", nfound);
        return 2;
    }
    return 0 == failures ? 0 : 1;
}
