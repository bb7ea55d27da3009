/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: moving bytes through a segment (coll_async_shm.h): copies into
 * slots, streamed past the cache where the reader is another core, and CMA
 * straight between two processes' memory.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#endif

#include "coll_async_shm.h"

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

#if defined(__x86_64__)
/* Below this, memcpy is as fast and the string move's start-up is not paid. */
#define STRING_MOVE_FROM 4096

/* Whether the CPU says its string move is fast: ERMS (CPUID leaf 7, EBX bit 9).
 * Asked once; threads racing at the first copy find and store the same. */
static bool string_move_fast(void)
{
    static int fast = -1;
    int known = __atomic_load_n(&fast, __ATOMIC_RELAXED);
    unsigned eax, ebx, ecx, edx;

    if (known < 0) {
        known = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & (1u << 9));
        __atomic_store_n(&fast, known, __ATOMIC_RELAXED);
    }
    return known > 0;
}
#endif

void coll_async_shm_copy(void *to, const void *from, size_t length)
{
#if defined(__x86_64__)
    if (length >= STRING_MOVE_FROM && string_move_fast()) {
        __asm__ __volatile__("rep movsb" : "+D"(to), "+S"(from), "+c"(length) : : "memory");
        return;
    }
#endif
    memcpy(to, from, length);
}

void coll_async_shm_copy_in(void *to, const void *from, size_t length, bool streaming)
{
#if defined(__x86_64__)
    char *out = to;
    const char *in = from;
    size_t head = (size_t) (-(uintptr_t) out & 15);

    if (!streaming || length < head + 64) {
        coll_async_shm_copy(to, from, length);
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
    coll_async_shm_copy(to, from, length);
#endif
}
