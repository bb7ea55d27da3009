/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: where Open MPI hands the component's objects from one thread to
 * another through its own synchronization, which ThreadSanitizer cannot see when
 * Open MPI is not built with it (configure --enable-sanitizers=thread): a module
 * enabled by the thread that ran Open MPI's progress engine is called, then freed,
 * by others. These tell it; they compile to nothing otherwise. The same goes for
 * Open MPI's inline code compiled into the component (its lock-free free list,
 * which validates racy reads with a compare-and-swap; a request's completion,
 * which signals a condition on the waiter's stack that the waiter tears down): the
 * component's thread ignores its own accesses while in it.
 */

#ifndef MCA_COLL_ASYNC_HANDOFF_H
#define MCA_COLL_ASYNC_HANDOFF_H

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
/* The thread that filled object hands it over to whichever takes it next. */
#    define COLL_ASYNC_HANDED_OVER(object) __tsan_release((void *) (object))
#    define COLL_ASYNC_TAKEN_OVER(object) __tsan_acquire((void *) (object))
/* Around a call of Open MPI's inline code. */
#    define COLL_ASYNC_IN_OMPI(call)                                             \
        do {                                                                   \
            __tsan_ignore_thread_begin();                                      \
            call;                                                              \
            __tsan_ignore_thread_end();                                        \
        } while (0)
#else
#    define COLL_ASYNC_HANDED_OVER(object) ((void) (object))
#    define COLL_ASYNC_TAKEN_OVER(object) ((void) (object))
#    define COLL_ASYNC_IN_OMPI(call) call
#endif

#endif /* MCA_COLL_ASYNC_HANDOFF_H */
