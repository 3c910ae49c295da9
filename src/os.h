/*
 * os.h - the seam to the kernel.  os.c (memory) and os_proc.c (the clock,
 * CPUs, futexes, threads, messages) are the only files of smpalloc that
 * make a system call or read the auxiliary vector.
 *
 * Contract for every function here: errno is the same on return as on entry
 * (callers set ENOMEM themselves at the API boundary); sizes and addresses
 * are multiples of os_page_size() unless said otherwise; failure is a
 * return value, never an abort; nothing allocates (but os_thread_start,
 * whose pthread_create does), uses stdio or reads the
 * environment, so every function is safe before libc is initialised and
 * while an allocator lock is held (though callers avoid that: no system
 * call under a lock).
 *
 * A libc function the program itself never calls costs resident memory
 * when we call it: its page of libc is mapped at the first call, with up to
 * 15 neighbours (the kernel's fault-around, 64 KiB).  So the start-up path
 * makes its system calls through syscall(), whose page libc's own start-up
 * maps, not through their wrappers (os_cpu_count, os_reserve_readonly), and
 * the clock is first read when a second thread starts or memory goes to the
 * pool (init.c): a program that mallocs once is about 70 KB smaller for it.
 *
 * Memory from os_map and os_map_guarded is committed under the kernel's
 * overcommit accounting (no MAP_NORESERVE): a request beyond what the kernel
 * will back fails here, with NULL, as glibc's malloc does, instead of
 * succeeding and being OOM-killed later.  Reservations (os_reserve) are
 * made only where that accounting is not strict: under the kernel's
 * default heuristic mode a mapping is refused only when it alone exceeds
 * the machine's memory and swap, which a 4 MiB chunk never does.
 */
#ifndef SMP_OS_H
#define SMP_OS_H

#include "base.h"

/* The kernel's page size (AT_PAGESZ), read once. */
SMP_HIDDEN size_t os_page_size(void);

/* Fresh zeroed read-write memory of size bytes, aligned to align (a power
 * of two; at least the page size is used).  NULL if the kernel refuses.
 * With apart, it is placed align bytes away from the last mapping rather
 * than right against it, so that the kernel cannot merge the two into one
 * area (chunk.c: a merge waits for every fault in progress in the other
 * one). */
SMP_HIDDEN void *os_map(size_t size, size_t align, bool apart);
/* Fresh zeroed read-write memory of size bytes with an inaccessible guard
 * page right before and right after it (for metadata: a user block that
 * runs over its end faults instead of reaching allocator state).  Never
 * unmapped.  NULL if the kernel refuses. */
SMP_HIDDEN void *os_map_guarded(size_t size);
/* Address space of size bytes that reads as zero and cannot be written,
 * with a guard page on each side; no memory is committed until os_commit.
 * NULL if the kernel refuses, or when the process has an address-space
 * limit (RLIMIT_AS, `ulimit -v`): a reservation would eat into it. */
SMP_HIDDEN void *os_reserve_readonly(size_t size);
/* Address space for the heap to grow into: size bytes (a multiple of
 * align, a power of two), aligned, readable and writable, with no commit
 * charge (MAP_NORESERVE), not counted as mapped until os_use: a page
 * becomes resident when it is first written.  The caller carves pieces
 * from it, so that a new chunk costs no system call: a mapping takes the
 * address space's lock for writing, and so waits for every populate and
 * page fault under that lock in progress in the process, and every thread
 * that waits for the grower waits with it (chunk.c, chunk_map).  NULL where
 * the kernel would charge the whole reservation (vm.overcommit_memory 2,
 * strict accounting, which ignores MAP_NORESERVE), where the process has an
 * address-space limit (RLIMIT_AS) or a data limit (RLIMIT_DATA, which
 * counts every writable private mapping), or if the kernel refuses. */
SMP_HIDDEN void *os_reserve(size_t size, size_t align);
/* Give back [p, p+size) of a reservation, never carved (not counted). */
SMP_HIDDEN void os_unreserve(void *p, size_t size);
/* mlockall(2) itself, by its system call (override.c takes the libc name):
 * 0, or -1 with errno the kernel's (the one function here that sets it). */
SMP_HIDDEN int os_mlockall(int flags);
/* Count size bytes carved from a reservation as mapped (os_counters);
 * false, counting nothing, where a test build fails maps on purpose
 * (SMP_FAULT_INJECTION): carving stands for mapping. */
SMP_HIDDEN bool os_use(size_t size);
/* Make [p, p+size) of a reservation writable (committed under the
 * accounting, counted as metadata); false if the kernel refuses. */
SMP_HIDDEN bool os_commit(void *p, size_t size);
/* Unmap what os_map_guarded(size) returned, guards included. */
SMP_HIDDEN void os_unmap_guarded(void *p, size_t size);
/* Give [p, p+size) back to the kernel. */
SMP_HIDDEN void os_unmap(void *p, size_t size);
/* Resize the mapping at p from old_size to new_size bytes in place; false
 * (mapping unchanged) if the pages after it are taken or memory is short. */
SMP_HIDDEN bool os_resize(void *p, size_t old_size, size_t new_size);
/* Move the pages of the mapping at p (old_size bytes) to dest, a mapping of
 * new_size bytes from os_map that they replace, growing or shrinking it to
 * new_size.  False (both unchanged) on failure. */
SMP_HIDDEN bool os_move(void *p, size_t old_size, size_t new_size, void *dest);
/* Fault in [p, p+size) now, writable (a hint: failure is ignored). */
SMP_HIDDEN void os_populate(void *p, size_t size);
/* How many of the first pages of [p, p+size), at most 64, are resident
 * (mincore); SIZE_MAX if the kernel cannot tell. */
SMP_HIDDEN size_t os_resident(void *p, size_t size);
/* The size of a transparent huge page, or 0 when the kernel gives none
 * (mode "never", or no THP support). */
SMP_HIDDEN size_t os_huge_size(void);
/* Ask for huge pages on [p, p+size) (MADV_HUGEPAGE): a first fault in an
 * untouched aligned huge page's range then maps all of it at once.  False
 * if the kernel refuses. */
SMP_HIDDEN bool os_hugepage(void *p, size_t size);
/* Take that back (MADV_NOHUGEPAGE): faults map 4 KiB pages again (huge
 * pages already there stay). */
SMP_HIDDEN void os_smallpages(void *p, size_t size);
/* Is the kernel's mode "always" (every anonymous mapping gets huge pages
 * unless advised otherwise)?  Then os_smallpages_unless_asked advises
 * [p, p+size) for small pages, so that smpalloc's memory gets huge pages
 * where it asks for them (os_hugepage) and nowhere else, as in the
 * "madvise" mode: otherwise a sparse chunk, the page map and a block mapped
 * alone would be faulted in 2 MiB at a time (the workloads of
 * tests/mem/t_mem_end_pages.sh and the seed: 17.5 MiB and 7.9 MB of peak
 * RSS instead of 5.6 MiB and 5.7 MB).  os_huge_always_set overrides the
 * mode read (for tests). */
SMP_HIDDEN bool os_huge_always(void);
SMP_HIDDEN void os_huge_always_set(bool all);
SMP_HIDDEN void os_smallpages_unless_asked(void *p, size_t size);
/* Return the pages of [p, p+size) to the kernel; they read as zero after. */
SMP_HIDDEN void os_decommit(void *p, size_t size);
/* Bytes mapped now (os_map, os_map_guarded, resizes), bytes returned to the
 * kernel so far (unmapped or decommitted), and of the mapped bytes those of
 * os_map_guarded (metadata). */
SMP_HIDDEN void os_counters(size_t *mapped, size_t *returned, size_t *calls, size_t *guarded);

/* Up to len - 1 bytes of the file at path (/proc/self/maps, a sysfs
 * value) into buf, NUL-terminated: how many (0 if it cannot be read). */
SMP_HIDDEN size_t os_read_file(const char *path, char *buf, size_t len);
/* Make [p, p+size) readable and writable (access) or inaccessible; false
 * if the kernel refuses.  Inaccessible pages keep their contents. */
SMP_HIDDEN bool os_protect(void *p, size_t size, bool access);
/* Advise [p, p+size) against huge pages (MADV_NOHUGEPAGE). */
SMP_HIDDEN void os_nohugepage(void *p, size_t size);
/* The file at path mapped read-only, its size in *size; NULL if it cannot
 * be opened or mapped.  os_unmap_file gives it back. */
SMP_HIDDEN void *os_map_file(const char *path, size_t *size);
SMP_HIDDEN void os_unmap_file(void *p, size_t size);

/* A millisecond clock (coarse, monotonic; no kernel entry: vDSO). */
SMP_HIDDEN uint32_t os_now_ms(void);
/* 64 random bits from the kernel (AT_RANDOM), without a system call. */
SMP_HIDDEN uint64_t os_random(void);
/* Number of CPUs this process may run on (affinity mask, cgroup quota),
 * at least 1. */
SMP_HIDDEN unsigned os_cpu_count(void);

/* Block until *addr != val or a wake-up; wake up to n waiters of addr. */
SMP_HIDDEN void os_futex_wait(_Atomic int *addr, int val);
SMP_HIDDEN void os_futex_wake(_Atomic int *addr, int n);
/* The same, waking after ms milliseconds at the latest. */
SMP_HIDDEN void os_futex_wait_ms(_Atomic int *addr, int val, uint32_t ms);
/* The calling thread's id (gettid). */
SMP_HIDDEN int os_gettid(void);
/* Is thread tid of this process blocked in a system call now
 * (/proc/self/task/TID/syscall names one)?  False when it runs, is
 * runnable, waits outside a system call (a page fault), or the kernel
 * cannot tell. */
SMP_HIDDEN bool os_task_in_syscall(int tid);
/* Start a detached thread running fn, with every signal blocked in it,
 * named name; false if it could not be made. */
SMP_HIDDEN bool os_thread_start(void *(*fn)(void *), const char *name);

/* A close-on-exec duplicate of stderr (or 2 if that fails): the at-exit
 * report still reaches the terminal when the program closed its stderr. */
SMP_HIDDEN int os_dup_stderr(void);
/* Write len bytes to stderr (messages, statistics). */
SMP_HIDDEN void os_write_err(const char *s, size_t len);
/* A new file at path, truncated, write-only (close-on-exec): its
 * descriptor, or -1.  Then os_write_fd (the whole of len bytes, or as much
 * as the file takes) and os_close. */
SMP_HIDDEN int os_file_create(const char *path);
SMP_HIDDEN void os_write_fd(int fd, const char *s, size_t len);
SMP_HIDDEN void os_close(int fd);
/* The process id (getpid). */
SMP_HIDDEN int os_getpid(void);
/* Catch signal sig with fn (SA_SIGINFO, SA_RESTART, SA_ONSTACK), keeping
 * the handler it replaces for os_signal_forward; false if sigaction
 * refuses.  fn's info and ctx are the siginfo_t and ucontext of the
 * signal. */
typedef void os_signal_fn(int sig, void *info, void *ctx);
SMP_HIDDEN bool os_signal_catch(int sig, os_signal_fn *fn);
/* Hand the signal on to the handler os_signal_catch replaced; where that
 * was the default action, restore it: when the handler returns, the
 * faulting instruction runs again and takes the default action. */
SMP_HIDDEN void os_signal_forward(int sig, void *info, void *ctx);
/* The address a SIGSEGV's info names (si_addr). */
SMP_HIDDEN uintptr_t os_fault_addr(const void *info);
/* os_fatal (declared in base.h): one line "smpalloc: CALL(): WHAT 0xADDR"
 * on stderr, then abort. */

#endif /* SMP_OS_H */
