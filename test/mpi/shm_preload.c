/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * shm_preload: an LD_PRELOAD shim over shm_open for test/run's checks of the
 * shared-memory set-up, which play what no test could arrange otherwise: a file
 * at the segment's secret name before its creator, and a rank held inside the
 * set-up so that a rank can be killed there. It acts only on coll/async's names
 * (/coll_async-...), as told by the environment:
 *
 *   SHM_PRELOAD_PLANT=nobody|0644   before a creator's shm_open (O_CREAT), make
 *       a file at the name: mode 0600 owned by uid 65534 (root only), or mode
 *       0644 owned by this user; its path goes to stderr ("planted PATH").
 *   SHM_PRELOAD_STALL_RANK=R   the rank whose OMPI_COMM_WORLD_RANK is R sleeps
 *       SHM_PRELOAD_STALL_SECONDS (default 60) before its first shm_open of an
 *       existing segment (an attacher's), after writing "stalls in set-up" to
 *       stderr.
 *
 * Built by test/run: cc -shared -fPIC -o shm_preload.so shm_preload.c -ldl
 */

#define _GNU_SOURCE

#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PREFIX "/coll_async-"

static void plant(const char *name, const char *how)
{
    bool nobody = 0 == strcmp(how, "nobody");
    char path[256];
    int fd;

    snprintf(path, sizeof(path), "/dev/shm%s", name);
    fd = open(path, O_CREAT | O_EXCL | O_WRONLY, nobody ? 0600 : 0644);
    if (fd < 0) {
        return;
    }
    (void) fchmod(fd, nobody ? 0600 : 0644);
    if (nobody) {
        (void) fchown(fd, 65534, 65534);
    }
    (void) ftruncate(fd, 4096);
    close(fd);
    fprintf(stderr, "shm_preload: planted %s\n", path);
}

static void stall(void)
{
    static int done;
    const char *rank = getenv("SHM_PRELOAD_STALL_RANK");
    const char *me = getenv("OMPI_COMM_WORLD_RANK");
    const char *seconds = getenv("SHM_PRELOAD_STALL_SECONDS");

    if (done || NULL == rank || NULL == me || 0 != strcmp(rank, me)) {
        return;
    }
    done = 1;
    fprintf(stderr, "shm_preload: rank %s stalls in set-up\n", me);
    sleep(NULL == seconds ? 60 : (unsigned) atoi(seconds));
}

int shm_open(const char *name, int oflag, mode_t mode)
{
    static int (*real)(const char *, int, mode_t);
    const char *how = getenv("SHM_PRELOAD_PLANT");

    if (NULL == real) {
        real = (int (*)(const char *, int, mode_t)) dlsym(RTLD_NEXT, "shm_open");
    }
    if (0 == strncmp(name, PREFIX, strlen(PREFIX))) {
        if ((oflag & O_CREAT) && NULL != how) {
            plant(name, how);
        } else if (!(oflag & O_CREAT)) {
            stall();
        }
    }
    return real(name, oflag, mode);
}
