/*
 * coll/async: the shared-memory segment and CMA. See coll_async_shm.h.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "../coll_async_backoff.h"
#include "coll_async_shm.h"

#define SEGMENT_MAGIC 0x636f6c6c6173796eULL /* "collasyn" */

struct segment_header {
    volatile uint64_t magic; /* set last by the creator: the layout is ready */
    volatile int32_t attached;
} __attribute__((aligned(COLL_ASYNC_SHM_LINE)));

static size_t align_up(size_t value, size_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

static size_t layout(struct coll_async_shm_segment *segment)
{
    size_t offset = sizeof(struct segment_header);
    size_t control = offset;
    size_t accumulator = control + (size_t) segment->nranks * sizeof(struct coll_async_shm_control);
    size_t accumulator_data = accumulator + 2 * sizeof(struct coll_async_shm_accumulator);
    size_t slots = align_up(accumulator_data + 2 * segment->slot_size, 4096);
    char *base = segment->base;

    segment->control = (struct coll_async_shm_control *) (base + control);
    segment->accumulator = (struct coll_async_shm_accumulator *) (base + accumulator);
    segment->accumulator_data = base + accumulator_data;
    segment->slots = base + slots;
    return slots + (size_t) segment->nranks * 2 * segment->slot_size;
}

/* The first rank creates the file; a file left by a killed job of the same name is
 * replaced (names carry the job id, so it cannot belong to a live job). */
static int create_file(const char *name, size_t length)
{
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);

    if (fd < 0 && EEXIST == errno) {
        shm_unlink(name);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    }
    if (fd < 0) {
        return -errno;
    }
    if (0 != ftruncate(fd, (off_t) length)) {
        int rc = -errno;
        close(fd);
        shm_unlink(name);
        return rc;
    }
    return fd;
}

/* The others wait until the file exists and has its final length. */
static int open_file(const char *name, size_t length)
{
    struct coll_async_backoff backoff = COLL_ASYNC_BACKOFF_INIT;
    struct stat st;
    int fd;

    while ((fd = shm_open(name, O_RDWR, 0600)) < 0) {
        if (ENOENT != errno) {
            return -errno;
        }
        coll_async_backoff_wait(&backoff);
    }
    while (0 == fstat(fd, &st) && (size_t) st.st_size < length) {
        coll_async_backoff_wait(&backoff);
    }
    return fd;
}

static void wait_attached(struct segment_header *header, int nranks)
{
    struct coll_async_backoff backoff = COLL_ASYNC_BACKOFF_INIT;

    while (__atomic_load_n(&header->attached, __ATOMIC_ACQUIRE) < nranks) {
        coll_async_backoff_wait(&backoff);
    }
}

/*
 * CMA needs ptrace rights over the peer (Yama may restrict them to ancestors):
 * each rank allows all, reads its neighbour's pid field through CMA, publishes the
 * outcome, and CMA is used only when every rank succeeded.
 */
static void agree_on_cma(struct coll_async_shm_segment *segment, bool try_cma)
{
    struct coll_async_backoff backoff = COLL_ASYNC_BACKOFF_INIT;
    struct coll_async_shm_control *mine = &segment->control[segment->rank];
    int neighbour = (segment->rank + 1) % segment->nranks;
    int32_t probe = 0;
    bool all = true;

    if (try_cma) {
        (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    }
    mine->address[0] = (uint64_t) (uintptr_t) &mine->pid; /* the probe's target */
    mine->pid = getpid();
    mine->cma_ok = 0;
    __atomic_fetch_add(&((struct segment_header *) segment->base)->attached, 1, __ATOMIC_ACQ_REL);
    wait_attached(segment->base, 2 * segment->nranks);

    /* A peer's own mapping of its control line, read in its address space. */
    if (try_cma
        && 0 == coll_async_shm_cma_read(segment, neighbour, &probe,
                                        segment->control[neighbour].address[0], sizeof(probe))
        && probe == segment->control[neighbour].pid) {
        __atomic_store_n(&mine->cma_ok, 1, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(&mine->cma_ok, -1, __ATOMIC_RELEASE);
    }
    for (int rank = 0; rank < segment->nranks; ++rank) {
        int32_t ok;
        while (0 == (ok = __atomic_load_n(&segment->control[rank].cma_ok, __ATOMIC_ACQUIRE))) {
            coll_async_backoff_wait(&backoff);
        }
        all = all && 1 == ok;
    }
    segment->cma = all;
}

int coll_async_shm_attach(struct coll_async_shm_segment *segment, const char *name, int nranks,
                          int rank, size_t slot_size, size_t piece_size, bool try_cma)
{
    struct segment_header *header;
    size_t length;
    int fd;

    memset(segment, 0, sizeof(*segment));
    segment->nranks = nranks;
    segment->rank = rank;
    segment->slot_size = slot_size;
    segment->piece_size = piece_size;
    length = layout(segment); /* offsets only: base is still NULL */

    fd = 0 == rank ? create_file(name, length) : open_file(name, length);
    if (fd < 0) {
        return fd;
    }
    segment->base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == segment->base) {
        int rc = -errno;
        if (0 == rank) {
            shm_unlink(name);
        }
        segment->base = NULL;
        return rc;
    }
    segment->length = length;
    layout(segment);
    header = segment->base;

    if (0 == rank) {
        /* ftruncate zero-filled the file: every flag starts at 0. */
        __atomic_store_n(&header->magic, SEGMENT_MAGIC, __ATOMIC_RELEASE);
    } else {
        struct coll_async_backoff backoff = COLL_ASYNC_BACKOFF_INIT;
        while (SEGMENT_MAGIC != __atomic_load_n(&header->magic, __ATOMIC_ACQUIRE)) {
            coll_async_backoff_wait(&backoff);
        }
    }
    if (nranks == __atomic_add_fetch(&header->attached, 1, __ATOMIC_ACQ_REL)) {
        shm_unlink(name);
    }
    wait_attached(header, nranks);
    agree_on_cma(segment, try_cma);
    return 0;
}

void coll_async_shm_detach(struct coll_async_shm_segment *segment)
{
    if (NULL != segment->base) {
        munmap(segment->base, segment->length);
        segment->base = NULL;
    }
}

static int cma_transfer(const struct coll_async_shm_segment *segment, int rank, void *local,
                        uint64_t remote, size_t length, bool read)
{
    pid_t pid = segment->control[rank].pid;

    while (length > 0) {
        struct iovec here = {.iov_base = local, .iov_len = length};
        struct iovec there = {.iov_base = (void *) (uintptr_t) remote, .iov_len = length};
        ssize_t moved = read ? process_vm_readv(pid, &here, 1, &there, 1, 0)
                             : process_vm_writev(pid, &here, 1, &there, 1, 0);

        if (moved < 0) {
            if (EINTR == errno) {
                continue;
            }
            return -errno;
        }
        if (0 == moved) {
            return -EFAULT;
        }
        local = (char *) local + moved;
        remote += (uint64_t) moved;
        length -= (size_t) moved;
    }
    return 0;
}

int coll_async_shm_cma_read(const struct coll_async_shm_segment *segment, int rank, void *local,
                            uint64_t remote, size_t length)
{
    return cma_transfer(segment, rank, local, remote, length, true);
}

int coll_async_shm_cma_write(const struct coll_async_shm_segment *segment, int rank,
                             uint64_t remote, const void *local, size_t length)
{
    return cma_transfer(segment, rank, (void *) local, remote, length, false);
}

void coll_async_shm_copy_in(void *to, const void *from, size_t length, bool streaming)
{
#if defined(__x86_64__)
    char *out = to;
    const char *in = from;
    size_t head = (size_t) (-(uintptr_t) out & 15);

    if (!streaming || length < head + 64) {
        memcpy(to, from, length);
        return;
    }
    memcpy(out, in, head);
    out += head;
    in += head;
    length -= head;
    for (; length >= 64; length -= 64, out += 64, in += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *) in);
        __m128i b = _mm_loadu_si128((const __m128i *) (in + 16));
        __m128i c = _mm_loadu_si128((const __m128i *) (in + 32));
        __m128i d = _mm_loadu_si128((const __m128i *) (in + 48));

        _mm_stream_si128((__m128i *) out, a);
        _mm_stream_si128((__m128i *) (out + 16), b);
        _mm_stream_si128((__m128i *) (out + 32), c);
        _mm_stream_si128((__m128i *) (out + 48), d);
    }
    memcpy(out, in, length);
    _mm_sfence();
#else
    (void) streaming;
    memcpy(to, from, length);
#endif
}
