/*
 * config.h - every tunable of smpalloc in one place, one line of why each.
 * Override any of them with -DNAME=value; impossible combinations fail here.
 */
#ifndef SMP_CONFIG_H
#define SMP_CONFIG_H

/* log2 of the slab size: 64 KiB slabs, as SmpAllocator.  Small enough that a
 * lightly used class wastes little, large enough that slab refills are rare. */
#ifndef SMP_SLAB_SHIFT
#define SMP_SLAB_SHIFT 16
#endif

/* Slabs are carved from chunks of this many bytes mapped at once: one mmap
 * per 64 slabs, and the page map's leaves are touched once per chunk. */
#ifndef SMP_CHUNK_SIZE
#define SMP_CHUNK_SIZE (4u << 20)
#endif

/* Largest request served from slabs; beyond it blocks are mapped alone.  Half
 * a slab, so every slab holds at least two blocks. */
#ifndef SMP_SMALL_MAX
#define SMP_SMALL_MAX (32u << 10)
#endif

/* Upper bound on slots (SmpAllocator's 128).  The live count is the number of
 * CPUs the process may run on, capped by this. */
#ifndef SMP_MAX_SLOTS
#define SMP_MAX_SLOTS 128
#endif

/* How many times a thread walks around all slots with try-lock before it
 * blocks (futex) on its own slot: beyond this, spinning only burns CPU. */
#ifndef SMP_SPIN_ROUNDS
#define SMP_SPIN_ROUNDS 2
#endif

/* A thread that finds its slot busy polls it (SMP_LOCK_SPIN times) before
 * trying the others, except every SMP_SLOT_PATIENCE-th time, when it moves
 * to the next free one at once.  Against rotating at once every time
 * (SmpAllocator's rule): mstress 0.49-0.50x -> 0.44-0.46x glibc's time and
 * 1.63-1.69x -> 1.48-1.53x its peak RSS, larson 1.49-1.78x -> 1.43-1.71x,
 * prodcons-rss unchanged (0.09-0.12x); polling every time made larson
 * 8-10 % faster still but prodcons-rss 10-20 % slower (docs/design.md,
 * "Slots and locks"). */
#ifndef SMP_SLOT_PATIENCE
#define SMP_SLOT_PATIENCE 16u
#endif

/* A lock found held is polled this many times (with a CPU pause between)
 * before the thread sleeps on it.  Our locks guard short sections (a batch
 * of blocks, a pool list), and a futex sleep and wake-up cost two context
 * switches, far more than the wait: spinning first made mstress, larson,
 * xmalloc-test and 1,000 threads 15-25 % faster on 2 CPUs.  No spinning
 * with one CPU, where it could only delay the holder. */
#ifndef SMP_LOCK_SPIN
#define SMP_LOCK_SPIN 200
#endif

/* Thread caches hold classes up to this size (all of them): mid-size blocks
 * are common in real programs (glibc-thread: 16 B - 32 KiB), and a slot lock
 * per call costs them as much as the rest of malloc. */
#ifndef SMP_TCACHE_MAX
#define SMP_TCACHE_MAX (32u << 10)
#endif

/* A bin gets room for this many blocks at its first miss, and its room
 * doubles each time it misses or overflows (the first miss too: the fill
 * takes half the room).  One: a thread's first malloc of a class fetches
 * just the block it hands out.  With 4 it fetched four, and each of 1,000
 * threads cached three blocks of each of the 24 classes it used:
 * threads-1000 peaked at 1.64-1.67x glibc's RSS, with 2 at 1.42-1.46x,
 * with 1 at 1.33x; the other workloads within noise (t_internal checks
 * that a new thread holds one block after a malloc and a free). */
#ifndef SMP_TCACHE_START
#define SMP_TCACHE_START 1u
#endif

/* A thread cache's header (128 bytes) lies this many bytes into a page
 * (tcache.c): the bins of the classes to 512 bytes of the last pair of
 * rows lie in the 1,600 bytes before it, and the arrays grow from its end,
 * so a thread whose row is in the last pair (every thread, with one or
 * two slots) that uses those classes and caches up to 2.3 KiB of pointers
 * touches one page of cache, not two or three (threads-1000 on 2 CPUs:
 * 34.1 MiB -> 30.2 MiB peak RSS; docs/design.md, "Where the peak RSS
 * goes"; t_internal checks the pages). */
#ifndef SMP_TCACHE_HEAD_AT
#define SMP_TCACHE_HEAD_AT 1664u
#endif

/* Per class, a thread cache holds about this many bytes of free blocks... */
#ifndef SMP_TCACHE_BYTES
#define SMP_TCACHE_BYTES 8192u
#endif

/* ...but never more than this many blocks (and never fewer than 2).  128
 * rather than 64: a refill of a growing heap of small blocks takes 64
 * under one lock instead of 32 (the seed: 141.6 M -> 138.7 M instructions,
 * no peak RSS changed; docs/design.md, "Thread caches"). */
#ifndef SMP_TCACHE_COUNT
#define SMP_TCACHE_COUNT 128u
#endif

/* A big heap's thread caches hold more: once the heap holds SMP_HUGE_HEAP
 * granules in slabs and runs (16 MiB), and SMP_TCACHE_BIG_PER_THREAD
 * granules (8 MiB) for each thread with a cache, a bin that misses or
 * overflows may grow to about SMP_TCACHE_BIG_BYTES of blocks, and to at
 * least SMP_TCACHE_BIG_MIN blocks (still at most SMP_TCACHE_COUNT).
 * glibc-thread (2 threads replacing blocks of 16 B - 32 KiB at random in
 * a 30 MiB heap) otherwise refills a bin of 2 blocks of 4 KiB or more
 * every few mallocs: 0.67-0.73x -> 0.56-0.64x glibc's time (mimalloc
 * 2.4.1: 0.49-0.53x), at 1.22x -> 1.31-1.35x its peak RSS (at least 8
 * blocks: 0.59-0.65x at 1.30x; 2026-12-02).  With every bin full a thread
 * caches 3.8 MiB instead of 650 KiB, under half of its 8 MiB share of the
 * heap, however many threads there are (threads-1000 never qualifies;
 * a share of 4 MiB bought glibc-thread nothing).  The small heaps (the
 * seed, the suite's 1-6 MiB ones) keep the limits above.  A bin keeps
 * the room it grew to when the heap shrinks again. */
#ifndef SMP_TCACHE_BIG_BYTES
#define SMP_TCACHE_BIG_BYTES (32u << 10)
#endif
#ifndef SMP_TCACHE_BIG_MIN
#define SMP_TCACHE_BIG_MIN 16u
#endif
#ifndef SMP_TCACHE_BIG_PER_THREAD
#define SMP_TCACHE_BIG_PER_THREAD 128u
#endif

/* Empty slabs wait this long (ms) before their pages go back to the kernel
 * (default of the SMPALLOC_PURGE_DELAY_MS option). */
#ifndef SMP_PURGE_DELAY_MS
#define SMP_PURGE_DELAY_MS 100u
#endif

/* ...unless more than this many bytes of free granules are held for each
 * two threads that run at once (purge.c, cap; or half the granules in use,
 * if more): then at once, the oldest first, down to half.
 * Default of SMPALLOC_PURGE_THRESHOLD; also what the large-block cache may
 * hold beyond half the large memory in use.  It bounds what a
 * program that frees a lot and then makes no allocator call (nothing runs
 * the delayed purge) keeps.  Below it a busy heap keeps the free memory it
 * will use again: an 8 MiB cap returned, in realloc-grow, the runs that
 * interleaved growing arrays leave behind, only to fault them back in
 * (0.52x glibc's wall; 0.22x with 64 MiB, at the same peak RSS). */
#ifndef SMP_PURGE_THRESHOLD
#define SMP_PURGE_THRESHOLD (64u << 20)
#endif

/* A thread with free memory past the floor looks at the purge policy on
 * one allocator slow path in this many (purge.h, purge_maintain). */
#ifndef SMP_PURGE_EVERY
#define SMP_PURGE_EVERY 8u
#endif

/* The background purge thread (purge.c) starts once the heap holds this
 * many granules in slabs and runs, or this much in large blocks (32 MiB):
 * a small heap has little to return and does without the thread's stack
 * (started for any free memory past the floor, it took glibc-simple from
 * 1.14x to 1.25x glibc's peak RSS). */
#ifndef SMP_BG_HEAP
#define SMP_BG_HEAP 512u
#endif

/* The background thread empties the cache of a thread that has left no
 * slow path for this long, once it is blocked in a system call (tcache.c,
 * tcache_reclaim), and looks again this often while a cache may turn
 * idle: one wake-up a second at most for a working program. */
#ifndef SMP_CACHE_IDLE_MS
#define SMP_CACHE_IDLE_MS 1000u
#endif

/* Empty slabs that stay resident however long they wait: this many, or an
 * eighth of the slabs in use if more (1 MiB: an emptied heap falls to it). */
#ifndef SMP_PURGE_KEEP_SLABS
#define SMP_PURGE_KEEP_SLABS 16u
#endif

/* The default of SMPALLOC_HUGEPAGES: 0 no transparent huge pages; 1 for
 * the slabs of busy classes and a big heap's runs (below); 2 eager, for
 * every slab and run from the start.  Blocks mapped alone never get them:
 * advised, malloc-large (5-25 MiB blocks, a byte written per 64 KiB) took
 * 0.76x glibc's wall instead of 0.54x, at 11.7x its peak RSS. */
#ifndef SMP_HUGEPAGES
#define SMP_HUGEPAGES 1
#endif

/* A size class's fresh slabs come from chunks advised for transparent
 * huge pages (faulted 2 MiB at a time) once the class holds this many
 * slabs over all slots, two huge pages' worth: a partly used huge page then
 * costs at most half of what the class holds already.  (32, one huge
 * page's worth, until 2026-12-02: on the current test machine, where a
 * 4 KiB fault costs about 1 us and a huge page's first touch 0.16-2.4 ms,
 * the seed's 62 slabs of 8-byte blocks ran 7.9 ms on average, against
 * 7.4 ms with 64, at 0.35x glibc's peak RSS against 0.33x; the workload
 * suite did not change.  From the second slab on: small multi-threaded
 * heaps 20-30 % more RSS.)  Below it, a slot's second and later fresh
 * slabs of a class are faulted in with one MADV_POPULATE_WRITE each.
 * (Both for classes written whole: SMP_PROBE_FROM.) */
/* Classes of blocks of this size and more (two pages or more) are faulted
 * in ahead, or get huge pages, only once a full slab of theirs showed the
 * program writing more than SMP_WHOLE_EIGHTHS of its pages (slab.c,
 * class_use): a program may use only the ends of a big block
 * (glibc-thread: 1.31x -> 0.96-0.98x glibc's peak RSS, 0.56x -> 0.60x its
 * time), or write it whole (realloc-grow, whose heap keeps its huge pages:
 * 0.79x -> 0.78x). */
#ifndef SMP_PROBE_FROM
#define SMP_PROBE_FROM 8192u
#endif
#ifndef SMP_HUGE_AFTER
#define SMP_HUGE_AFTER 64u
#endif

/* ...or, for every busy class, once the heap holds this many granules in
 * slabs and runs (24 MiB): a partly used huge page is then at most a
 * twelfth of it, and a big heap's random access misses the TLB far less in
 * huge pages (glibc-thread: about 28 MB live over 62 classes, 2 threads x
 * 2,048 blocks of 6.8 KB on average).  16 MiB put a producer/consumer
 * pair with 16 MiB live (t_mem_prodcons) in huge pages: 1.27x its live
 * bytes instead of 1.15x (docs/design.md, "Page faults and huge pages"). */
#ifndef SMP_HUGE_SLAB_HEAP
#define SMP_HUGE_SLAB_HEAP 384u
#endif

/* Runs are dense, and thread caches grow bigger (SMP_TCACHE_BIG_BYTES),
 * once the heap holds this many granules in slabs and runs (16 MiB):
 * realloc-grow faults in 3,100 pages instead of 11,400 (at 24 MiB: 0.73x
 * glibc's wall instead of 0.54x). */
#ifndef SMP_HUGE_HEAP
#define SMP_HUGE_HEAP 256u
#endif

/* A class of SMP_PROBE_FROM bytes and more is written whole, and its
 * slabs worth faulting in ahead or in huge pages, where a probe found more
 * than this many eighths of a full slab's pages resident (slab.c); runs
 * are dense (huge pages) past SMP_RUN_EIGHTHS of their probes' pages
 * (large.c).  5/8 for slabs: blocks of 8 KiB written at their first byte
 * leave half of a slab's pages resident, and at 3/8 (until 2026-12-07)
 * their slabs were faulted in whole, in huge pages: the sweep's
 * medium/T8/W50000 ran 1.91 s at 2,316 MB, 1.24 s at 2,062 MB at 5/8
 * (glibc 1.64 s at 1,394 MB; medians of 3, one interleaved run); a mark
 * for faulting in ahead at 3/8 and one for huge pages at 5/8 read 1.46 s
 * at 2,216 MB.  3/8 for runs: at 5/8 realloc-grow, whose growing arrays
 * are written 3/8-5/8 when probed, faulted 10.4 K pages instead of 4.7 K
 * (0.87x glibc's wall instead of 0.71x). */
#ifndef SMP_WHOLE_EIGHTHS
#define SMP_WHOLE_EIGHTHS 5u
#endif
#ifndef SMP_RUN_EIGHTHS
#define SMP_RUN_EIGHTHS 3u
#endif

/* Runs are dense (huge pages) only while probes show the program writing
 * more than SMP_RUN_EIGHTHS of their pages (large.c): one run allocation
 * in this many is a probe, measured when freed; the counts of pages
 * probed halve past SMP_RUN_PROBE_PAGES (and a quarter of it makes a
 * verdict). */
#ifndef SMP_RUN_PROBE_EVERY
#define SMP_RUN_PROBE_EVERY 16u
#endif
#ifndef SMP_RUN_PROBE_PAGES
#define SMP_RUN_PROBE_PAGES 4096u
#endif

/* Chunks are carved from reservations of address space (os_reserve), one
 * for sparse chunks and one for dense ones, so that a new chunk costs no
 * system call (chunk.c, chunk_map): the first of a kind is of this many
 * bytes, each next one twice the last, up to SMP_REGION_MAX.  A reservation
 * costs address space only; its pages become resident as they are used. */
#ifndef SMP_REGION_MIN
#define SMP_REGION_MIN ((size_t)64 << 20)
#endif
#ifndef SMP_REGION_MAX
#define SMP_REGION_MAX ((size_t)1 << 30)
#endif

/* Where no reservation is made (os_reserve), each chunk is mapped alone.
 * Dense chunks (advised for huge pages) are then mapped apart from each other,
 * each an area of the kernel's own, up to this many of them (4 GiB);
 * later ones side by side (chunk.c, chunk_map). */
#ifndef SMP_APART_CHUNKS
#define SMP_APART_CHUNKS 1024u
#endif

/* Large blocks up to this size are runs of granules carved from chunks,
 * reused without system calls; bigger ones get mappings of their own. */
#ifndef SMP_RUN_MAX
#define SMP_RUN_MAX (1u << 20)
#endif

/* A thread keeps the runs it frees for its next requests of the same
 * lengths (large.h, large_runs_t): up to an eighth of the heap in use over
 * the threads, at least SMP_RUN_CACHE and at most SMP_RUN_CACHE_MAX
 * granules a thread. */
#ifndef SMP_RUN_CACHE
#define SMP_RUN_CACHE 16u
#endif
#ifndef SMP_RUN_CACHE_MAX
#define SMP_RUN_CACHE_MAX 256u
#endif

/* The pool remembers where the last this many runs of each length were
 * freed, and puts a run of that length there again when the room is free
 * (chunk.c, recent_take).  128 against 8 (of 2 granules and more):
 * run/T1/W100 13.2 K -> 5.4 K page faults and 61 -> 31 MB peak RSS
 * (glibc 36), run/T2/W100 21.3 K -> 8.9 K and 85 -> 35 MB (glibc 68),
 * run/T1/W5000 80.9 K -> 72.4 K and 325 -> 292 MB, for 5 % more
 * instructions there and 2 % more on run/T1/W100 (callgrind: the scans).
 * A power of two. */
#ifndef SMP_RUN_RECENT
#define SMP_RUN_RECENT 128u
#endif

/* A mapped block of more than SMP_LARGE_ALONE bytes gets an aligned region
 * of SMP_LARGE_REGION bytes to itself (when the address space allows), so
 * that unmapping or moving one never touches the page tables above
 * another.  On a paravirtualized machine (this project's 2-core PVM) a
 * munmap or mremap makes every page in the same 1 GiB fault again
 * (invisibly: the hypervisor rebuilds its shadow page tables): 200 MB read
 * again took 250 ms instead of 0.7 ms after a 16 MiB munmap beside it
 * (a munmap of 6 MiB or more does it, of 4 MiB or less not; an mremap that
 * moves a 2 MiB-aligned block of 2.5 MiB or more does it, of 2 MiB not:
 * hence the mark).
 * malloc-large (5-25 MiB blocks): 0.75x glibc's wall -> 0.45-0.55x.  The cost
 * is address space (1 GiB per block, of 128 TiB) and a page-table page per
 * block (4 KiB per block of over 2 MiB). */
#ifndef SMP_LARGE_ALONE
#define SMP_LARGE_ALONE (2u << 20)
#endif
#ifndef SMP_LARGE_REGION
#define SMP_LARGE_REGION ((size_t)1 << 30)
#endif

/* Blocks over SMP_RUN_MAX and up to SMP_EXTENT_MAX come from arenas of
 * SMP_EXTENT_ARENA bytes of address space, first fit by address,
 * coalescing (extent.c):
 * a block freed and one of another size asked for next reuse the same
 * pages, with no system call (the sweep's big/T1/W100, 1-32 MiB replaced
 * at random: glibc serves them from its heap).  Bigger blocks, and those
 * aligned beyond 64 KiB, are mapped alone. */
#ifndef SMP_EXTENT_MAX
#define SMP_EXTENT_MAX (32u << 20)
#endif
#ifndef SMP_EXTENT_ARENA
#define SMP_EXTENT_ARENA ((size_t)256 << 20)
#endif

/* Freed large blocks up to this size wait in a cache for reuse (no system
 * call, no page faults)... */
#ifndef SMP_LARGE_CACHE_MAX
#define SMP_LARGE_CACHE_MAX (32u << 20)
#endif

/* ...holding at most this many bytes in all (and at most the purge
 * threshold or half the large memory in use, whichever is more); purged
 * like empty slabs (docs/design.md, "Returning memory"). */
#ifndef SMP_LARGE_CACHE_BYTES
#define SMP_LARGE_CACHE_BYTES ((size_t)1 << 30)
#endif

/* A thread gives freed blocks of other slots' slabs back in batches of
 * this many. */
#ifndef SMP_REMOTE_BATCH
#define SMP_REMOTE_BATCH 32u
#endif

/* At most this many batches, of at most this many bytes in all, wait in
 * a slot's inbox for a thread of the slot (slot.c). */
#ifndef SMP_INBOX_DEPTH
#define SMP_INBOX_DEPTH 8u
#endif
#ifndef SMP_INBOX_BYTES
#define SMP_INBOX_BYTES (256u << 10)
#endif

/* Cache line size used to pad per-slot state against false sharing. */
#ifndef SMP_CACHE_LINE
#define SMP_CACHE_LINE 64
#endif

/* Metadata (descriptors, bitmaps, thread caches) comes from regions of this
 * many bytes, each with a guard page at both ends: a user block that
 * overflows can never reach allocator state.  Each next region is twice the
 * last, up to SMP_META_REGION_MAX (region.c, meta_alloc): mapping one
 * takes the address space's lock for writing (os.h, os_reserve). */
#ifndef SMP_META_REGION
#define SMP_META_REGION (256u << 10)
#endif
#ifndef SMP_META_REGION_MAX
#define SMP_META_REGION_MAX (4u << 20)
#endif

/* Freed mappings the large-block cache can hold at most (it is searched
 * linearly, under its lock, on a large malloc). */
#ifndef SMP_LARGE_CACHE_ENTRIES
#define SMP_LARGE_CACHE_ENTRIES 256u
#endif


/* Checked mode fills a freed block with a pattern up to this many bytes
 * (the whole block for every class: 32 KiB) and verifies it when the block
 * leaves its slab or the slab empties. */
#ifndef SMP_CHECKED_FILL_MAX
#define SMP_CHECKED_FILL_MAX (32u << 10)
#endif

/* Threads that wait on the lock of a contended slot re-read the CPU count
 * at most this often (ms): taskset or a cgroup change is noticed. */
#ifndef SMP_RECOUNT_MS
#define SMP_RECOUNT_MS 1000u
#endif

/* ---- derived, not tunable ---------------------------------------------- */
#define SMP_SLAB_SIZE ((size_t)1 << SMP_SLAB_SHIFT)
#define SMP_CHUNK_SLABS (SMP_CHUNK_SIZE / SMP_SLAB_SIZE)
#define SMP_RUN_KMAX (SMP_RUN_MAX / SMP_SLAB_SIZE)
/* The smallest page size we build for; the kernel's is read at start-up
 * (os_page_size) and must divide the slab size. */
#define SMP_MIN_PAGE 4096u
/* Blocks of 16 bytes or more are 16-aligned (alignof(max_align_t) on
 * x86-64 and aarch64); 8-byte blocks are 8-aligned. */
#define SMP_ALIGN_MIN 16u

#if SMP_SMALL_MAX > (1u << SMP_SLAB_SHIFT) / 2
#error "SMP_SMALL_MAX must be at most half a slab"
#endif
#if SMP_SMALL_MAX != (32u << 10)
#error "the class table in sizeclass.c is laid out for SMP_SMALL_MAX == 32 KiB"
#endif
#if SMP_CHECKED_FILL_MAX < 8
#error "SMP_CHECKED_FILL_MAX must cover at least the first word"
#endif
#if SMP_CHUNK_SIZE % (1u << SMP_SLAB_SHIFT) != 0
#error "SMP_CHUNK_SIZE must be a multiple of the slab size"
#endif
#if SMP_RUN_MAX % (1u << SMP_SLAB_SHIFT) != 0 || SMP_RUN_MAX > SMP_CHUNK_SIZE
#error "SMP_RUN_MAX must be a multiple of the slab size, at most a chunk"
#endif
#if SMP_MAX_SLOTS < 1 || SMP_MAX_SLOTS > 128
#error "SMP_MAX_SLOTS must be in 1..128 (a descriptor holds the owner in 8 bits)"
#endif

/* The heap profiler's mean sampling interval in bytes (SMPALLOC_PROF_SAMPLE;
 * 0 off) and the guard pool's one allocation in N (SMPALLOC_GUARD_SAMPLE;
 * 0 off): on by default only where their cost fits the budget (README,
 * "Heap profiles"). */
#ifndef SMP_PROF_SAMPLE
#define SMP_PROF_SAMPLE 0
#endif
#ifndef SMP_GUARD_SAMPLE
#define SMP_GUARD_SAMPLE 0
#endif

#endif /* SMP_CONFIG_H */
