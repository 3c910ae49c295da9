/*
 * bench/seed.c - the project's seed workload, ported from Zig to C11.
 *
 * The original (Zig 0.14, std.heap.smp_allocator) is:
 *
 *   pub fn main() !void {
 *       const gpa = std.heap.smp_allocator;
 *       var thread_pool: std.Thread.Pool = undefined;
 *       try thread_pool.init(.{ .allocator = gpa,
 *                               .n_jobs = std.Thread.getCpuCount() catch @panic("cpu count") });
 *       defer thread_pool.deinit();
 *       var wg: std.Thread.WaitGroup = .{};
 *       defer wg.wait();
 *       for (0..1000) |i| { thread_pool.spawnWg(&wg, run, .{ gpa, i }); }
 *   }
 *   fn runFallible(gpa: Allocator, n: usize) !void {
 *       var numbers: std.ArrayListUnmanaged(usize) = .empty;
 *       defer numbers.deinit(gpa);
 *       for (0..n) |i| { try numbers.append(gpa, i); }
 *       var strings: std.AutoArrayHashMapUnmanaged(usize, []const u8) = .empty;
 *       defer { for (strings.values()) |v| gpa.free(v); strings.deinit(gpa); }
 *       for (numbers.items) |i| {
 *           try strings.put(gpa, n, try std.fmt.allocPrint(gpa, "{d}", .{i}));
 *       }
 *   }
 *
 * This port makes the same allocations, in the same order, from the same
 * threads, through plain malloc/realloc/free, so that the allocator under
 * test can be chosen with LD_PRELOAD.  What is modelled, and how:
 *
 * Thread pool (Zig 0.14 std.Thread.Pool):
 *   - one worker per CPU, counted like std.Thread.getCpuCount() on Linux:
 *     the number of CPUs in the sched_getaffinity(0) mask;
 *   - the worker array (std.Thread is one pointer, like pthread_t) is
 *     allocated with malloc by init and freed by deinit after the joins;
 *   - workers get Zig's default 16 MiB stack (SpawnConfig.default_stack_size);
 *     Zig maps thread stacks itself, glibc does too: neither uses malloc;
 *   - a mutex, a condition variable and a singly linked LIFO run queue:
 *     spawnWg takes the mutex, allocates the closure, prepends its run node
 *     and unlocks, then signals the condition variable; a worker pops the
 *     head, unlocks while it runs the job, then finishes the wait group and
 *     frees the closure *with the pool mutex held* (Zig does
 *     `mutex.lock(); pool.allocator.destroy(closure)`), and waits on the
 *     condition variable when the queue is empty and the pool is running;
 *   - the closure is 56 bytes like Zig's on x86_64: the arguments
 *     (std.mem.Allocator = 2 pointers, n), the pool pointer, the run node
 *     (next + runFn) and the wait-group pointer;
 *   - the wait group is Zig's: an atomic counter with an is_waiting bit and
 *     a futex-based reset event (no allocation);
 *   - main waits on the wait group, then deinit sets is_running = false
 *     under the mutex, broadcasts, joins every worker and frees the array.
 *
 * Job n:
 *   - `numbers`: std.ArrayListUnmanaged(usize).  Zig 0.14 grows it in
 *     ensureTotalCapacity with growCapacity(current, minimum):
 *         new = current; do new +|= new / 2 + init_capacity; while (new < minimum)
 *     where init_capacity = @max(1, std.atomic.cache_line / @sizeOf(T)).
 *     std.atomic.cache_line is 128 on x86_64 (not 64: Zig counts the
 *     adjacent-line prefetcher pair), so for 8-byte items init_capacity is
 *     128 / 8 = 16 and the capacities are 16, 40, 76, 130, 211, 332, 514,
 *     787, 1196 ...  (the issue text's "cap += cap/2 + 16" is right; the
 *     "64 / 8 = 8" alternative would be aarch64-with-64-byte-lines maths).
 *     Zig tries Allocator.remap first and falls back to alloc + copy +
 *     free; a C program uses realloc, and so do we.  Appends 0 .. n-1.
 *   - `strings`: std.AutoArrayHashMapUnmanaged(usize, []const u8).  Its
 *     entries live in a MultiArrayList of {key: usize, value: []const u8}
 *     (no stored hash for integer keys), whose fields share ONE allocation
 *     of capacity * (8 + 16) bytes.  MultiArrayList's init_capacity is
 *     cache_line / (largest field) = 128 / 16 = 8, so the first put
 *     allocates 8 * 24 = 192 bytes.  The map only adds an index header above
 *     linear_scan_max = min(128 / 1, 128 / 8) = 16 entries; it never holds
 *     more than one (every put uses key n), so no header is ever allocated,
 *     and later puts (ensureTotalCapacity(len + 1 = 2) <= 8) allocate
 *     nothing.  Each put stores a fresh allocPrint("{d}", i) string over the
 *     previous value, which leaks, exactly as in the original (n - 1 of the n
 *     strings of job n leak).
 *   - allocPrint("{d}", i) counts the digits, then allocates exactly that
 *     many bytes (1..3 here, no NUL terminator) and prints into them.
 *   - The defers run in reverse: free the map's one value (the last
 *     string), free the map's entries, free numbers.  Job 0 allocates
 *     nothing (Zig frees empty slices as no-ops; free(NULL) is the same).
 *
 * Output: nothing by default, like the original.  With -v one line whose
 * figures depend on every number and every string's content:
 *     seed jobs=J numbers=C numsum=S strings=C bytes=B digitsum=D errors=E
 * numsum sums the numbers read back from each list, bytes/digitsum sum the
 * length and digits of every string, read back once per string after at
 * least one later allocation (a replaced value when the next put replaces
 * it, the last one when the map is torn down); each string is also compared
 * with the expected digits and each list item with its index, and every
 * mismatch counts in errors.  None of it depends on the thread count or
 * scheduling.  Exit status 0, or 1 when errors > 0.
 *
 * Options: -v (print the line), -j N (workers, default: CPU count),
 *          -n N (jobs, default 1000).
 */

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_JOBS 1000
/* std.Thread.SpawnConfig.default_stack_size in Zig 0.14. */
#define ZIG_DEFAULT_STACK_SIZE ((size_t)16 * 1024 * 1024)
/* std.atomic.cache_line on x86_64 in Zig 0.14. */
#define ZIG_CACHE_LINE 128
/* ArrayListUnmanaged(usize): @max(1, cache_line / @sizeOf(usize)). */
#define LIST_INIT_CAPACITY (ZIG_CACHE_LINE / sizeof(size_t))
/* MultiArrayList(struct { key: usize, value: []const u8 }). */
#define ENTRY_BYTES (sizeof(size_t) + sizeof(struct slice))
#define MAP_INIT_CAPACITY (ZIG_CACHE_LINE / sizeof(struct slice))

static void panic(const char *msg)
{
    fprintf(stderr, "seed: panic: %s\n", msg);
    abort();
}

/* ------------------------------------------------------------------ */
/* Results, summed with relaxed atomics (order does not matter).       */

static atomic_ullong g_numbers, g_numsum, g_strings, g_bytes, g_digitsum,
    g_errors;

/* ------------------------------------------------------------------ */
/* std.Thread.WaitGroup + std.Thread.ResetEvent, futex based.          */

static long futex(atomic_uint *addr, int op, unsigned val)
{
    return syscall(SYS_futex, (unsigned *)addr, op, val, NULL, NULL, 0);
}

struct reset_event {
    atomic_uint state; /* 0 unset, 1 set */
};

static void reset_event_set(struct reset_event *ev)
{
    atomic_store_explicit(&ev->state, 1, memory_order_release);
    futex(&ev->state, FUTEX_WAKE_PRIVATE, INT_MAX);
}

static void reset_event_wait(struct reset_event *ev)
{
    while (atomic_load_explicit(&ev->state, memory_order_acquire) == 0) {
        long r = futex(&ev->state, FUTEX_WAIT_PRIVATE, 0);
        if (r != 0 && errno != EAGAIN && errno != EINTR)
            panic("futex wait");
    }
}

#define WG_IS_WAITING ((size_t)1)
#define WG_ONE_PENDING ((size_t)2)

struct wait_group {
    _Atomic size_t state;
    struct reset_event event;
};

static void wait_group_start(struct wait_group *wg)
{
    atomic_fetch_add_explicit(&wg->state, WG_ONE_PENDING,
                              memory_order_relaxed);
}

static void wait_group_finish(struct wait_group *wg)
{
    size_t state = atomic_fetch_sub_explicit(&wg->state, WG_ONE_PENDING,
                                             memory_order_acq_rel);
    if (state / WG_ONE_PENDING == 1 && (state & WG_IS_WAITING))
        reset_event_set(&wg->event);
}

static void wait_group_wait(struct wait_group *wg)
{
    size_t state = atomic_fetch_add_explicit(&wg->state, WG_IS_WAITING,
                                             memory_order_acquire);
    if (state / WG_ONE_PENDING > 0)
        reset_event_wait(&wg->event);
}

/* ------------------------------------------------------------------ */
/* std.Thread.Pool                                                     */

struct run_node {
    struct run_node *next;
    void (*run_fn)(struct run_node *);
};

struct pool {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    struct run_node *run_queue; /* head; LIFO */
    int is_running;
    pthread_t *threads;
    size_t n_threads;
};

/* Stands in for Zig's std.mem.Allocator argument (ptr + vtable) so that
 * the closure has the original's size; the C code calls malloc directly. */
struct allocator_iface {
    void *ptr;
    const void *vtable;
};

struct closure {
    struct {
        struct allocator_iface gpa;
        size_t n;
    } arguments;
    struct pool *pool;
    struct run_node run_node;
    struct wait_group *wait_group;
};

_Static_assert(sizeof(struct closure) == 56, "closure is 56 bytes as in Zig");

static void *worker(void *arg)
{
    struct pool *pool = arg;
    pthread_mutex_lock(&pool->mutex);
    for (;;) {
        struct run_node *node;
        while ((node = pool->run_queue) != NULL) {
            pool->run_queue = node->next;
            pthread_mutex_unlock(&pool->mutex);
            node->run_fn(node);
            pthread_mutex_lock(&pool->mutex);
        }
        if (!pool->is_running)
            break;
        pthread_cond_wait(&pool->cond, &pool->mutex);
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

static void pool_init(struct pool *pool, size_t n_jobs)
{
    pthread_attr_t attr;
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->cond, NULL);
    pool->run_queue = NULL;
    pool->is_running = 1;
    pool->n_threads = n_jobs;
    pool->threads = malloc(n_jobs * sizeof(pthread_t));
    if (!pool->threads)
        panic("OOM");
    if (pthread_attr_init(&attr) != 0 ||
        pthread_attr_setstacksize(&attr, ZIG_DEFAULT_STACK_SIZE) != 0)
        panic("pthread_attr");
    for (size_t t = 0; t < n_jobs; t++)
        if (pthread_create(&pool->threads[t], &attr, worker, pool) != 0)
            panic("pthread_create");
    pthread_attr_destroy(&attr);
}

static void pool_deinit(struct pool *pool)
{
    pthread_mutex_lock(&pool->mutex);
    pool->is_running = 0;
    pthread_mutex_unlock(&pool->mutex);
    pthread_cond_broadcast(&pool->cond);
    for (size_t t = 0; t < pool->n_threads; t++)
        pthread_join(pool->threads[t], NULL);
    free(pool->threads);
    pthread_cond_destroy(&pool->cond);
    pthread_mutex_destroy(&pool->mutex);
}

static void run(size_t n);

static void closure_run(struct run_node *node)
{
    struct closure *c =
        (struct closure *)((char *)node - offsetof(struct closure, run_node));
    struct pool *pool = c->pool;
    run(c->arguments.n);
    wait_group_finish(c->wait_group);
    /* "The thread pool's allocator is protected by the mutex." */
    pthread_mutex_lock(&pool->mutex);
    free(c);
    pthread_mutex_unlock(&pool->mutex);
}

static void pool_spawn_wg(struct pool *pool, struct wait_group *wg, size_t n)
{
    wait_group_start(wg);
    pthread_mutex_lock(&pool->mutex);
    struct closure *c = malloc(sizeof *c);
    if (!c) {
        pthread_mutex_unlock(&pool->mutex);
        run(n);
        wait_group_finish(wg);
        return;
    }
    c->arguments.gpa.ptr = NULL;
    c->arguments.gpa.vtable = NULL;
    c->arguments.n = n;
    c->pool = pool;
    c->run_node.run_fn = closure_run;
    c->wait_group = wg;
    c->run_node.next = pool->run_queue; /* prepend */
    pool->run_queue = &c->run_node;
    pthread_mutex_unlock(&pool->mutex);
    pthread_cond_signal(&pool->cond);
}

/* ------------------------------------------------------------------ */
/* The job                                                             */

struct slice {
    const char *ptr;
    size_t len;
};

/* std.ArrayListUnmanaged(usize) */
struct list {
    size_t *items;
    size_t len;
    size_t capacity;
};

/* ArrayListUnmanaged.growCapacity in Zig 0.14 (saturating add). */
static size_t grow_capacity(size_t current, size_t minimum)
{
    size_t new_cap = current;
    for (;;) {
        size_t add = new_cap / 2 + LIST_INIT_CAPACITY;
        new_cap = (new_cap > SIZE_MAX - add) ? SIZE_MAX : new_cap + add;
        if (new_cap >= minimum)
            return new_cap;
    }
}

static void list_append(struct list *l, size_t item)
{
    if (l->len + 1 > l->capacity) {
        size_t new_cap = grow_capacity(l->capacity, l->len + 1);
        if (new_cap > SIZE_MAX / sizeof(size_t))
            panic("OOM");
        size_t *p = realloc(l->items, new_cap * sizeof(size_t));
        if (!p)
            panic("OOM");
        l->items = p;
        l->capacity = new_cap;
    }
    l->items[l->len++] = item;
}

/* std.AutoArrayHashMapUnmanaged(usize, []const u8), the subset the seed
 * uses: the entries' field arrays (capacity keys, then capacity values)
 * share one MultiArrayList allocation of capacity * 24 bytes (Zig orders
 * the arrays by alignment; both are 8-aligned here); no index header (at
 * most one entry here). */
struct map {
    unsigned char *bytes; /* capacity * ENTRY_BYTES */
    size_t len;
    size_t capacity;
};

static size_t *map_keys(struct map *m)
{
    return (size_t *)m->bytes;
}

static struct slice *map_values(struct map *m)
{
    return (struct slice *)(m->bytes + m->capacity * sizeof(size_t));
}

/* Writes the decimal digits of v so that they end at buf[24]; returns
 * the number of digits (they start at buf + 24 - length). */
static size_t format_decimal(char buf[24], size_t v)
{
    size_t len = 0;
    do {
        buf[23 - len++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return len;
}

/* Sum and check a string that was printed from `expect`. */
static void consume_string(struct slice s, size_t expect,
                           unsigned long long *bytes,
                           unsigned long long *digitsum,
                           unsigned long long *errors)
{
    char want[24];
    size_t wlen = format_decimal(want, expect);
    *bytes += s.len;
    for (size_t k = 0; k < s.len; k++)
        *digitsum += (unsigned)(unsigned char)s.ptr[k] - '0';
    if (wlen != s.len || memcmp(want + 24 - wlen, s.ptr, s.len) != 0)
        (*errors)++;
}

/* std.fmt.allocPrint(gpa, "{d}", .{i}): count, allocate exactly that many
 * bytes (no terminator), print into them. */
static struct slice alloc_print(size_t i)
{
    char tmp[24];
    size_t len = format_decimal(tmp, i);
    char *p = malloc(len);
    if (!p)
        panic("OOM");
    memcpy(p, tmp + 24 - len, len);
    return (struct slice){ p, len };
}

/* strings.put(gpa, key, value).  Returns the replaced value's slot
 * content through *old (ptr NULL if the key was new) so the caller can
 * read it back; the map itself forgets it, like Zig's put. */
static void map_put(struct map *m, size_t key, struct slice value,
                    struct slice *old)
{
    old->ptr = NULL;
    old->len = 0;
    /* ensureTotalCapacity(len + 1): MultiArrayList growth from 0 -> 8. */
    if (m->len + 1 > m->capacity) {
        if (m->capacity != 0)
            panic("map growth beyond one entry is not modelled");
        size_t new_cap = MAP_INIT_CAPACITY; /* growCapacity(0, 1) */
        m->bytes = malloc(new_cap * ENTRY_BYTES);
        if (!m->bytes)
            panic("OOM");
        m->capacity = new_cap;
    }
    for (size_t e = 0; e < m->len; e++) {
        if (map_keys(m)[e] == key) {
            *old = map_values(m)[e];
            map_values(m)[e] = value;
            return;
        }
    }
    map_keys(m)[m->len] = key;
    map_values(m)[m->len] = value;
    m->len++;
}

static void run(size_t n)
{
    unsigned long long numsum = 0, bytes = 0, digitsum = 0, errors = 0;
    struct list numbers = { NULL, 0, 0 };
    for (size_t i = 0; i < n; i++)
        list_append(&numbers, i);

    struct map strings = { NULL, 0, 0 };
    for (size_t k = 0; k < numbers.len; k++) {
        size_t i = numbers.items[k];
        struct slice old;
        numsum += i;
        map_put(&strings, n, alloc_print(i), &old);
        if (old.ptr) /* the leaked previous value, printed from i - 1 */
            consume_string(old, i - 1, &bytes, &digitsum, &errors);
    }

    /* defer { for (strings.values()) |v| gpa.free(v); strings.deinit(gpa); } */
    for (size_t e = 0; e < strings.len; e++) {
        struct slice v = map_values(&strings)[e];
        if (map_keys(&strings)[e] != n)
            errors++;
        consume_string(v, n - 1, &bytes, &digitsum, &errors);
        free((void *)v.ptr);
    }
    free(strings.bytes);

    /* defer numbers.deinit(gpa); */
    if (numbers.len != n)
        errors++;
    for (size_t k = 0; k < numbers.len; k++)
        if (numbers.items[k] != k)
            errors++;
    free(numbers.items);

    atomic_fetch_add_explicit(&g_numbers, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_numsum, numsum, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_strings, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_digitsum, digitsum, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_errors, errors, memory_order_relaxed);
}

/* ------------------------------------------------------------------ */

/* std.Thread.getCpuCount() on Linux: CPU_COUNT of sched_getaffinity(0). */
static size_t cpu_count(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        panic("cpu count");
    int c = CPU_COUNT(&set);
    if (c <= 0)
        panic("cpu count");
    return (size_t)c;
}

static size_t parse_count(const char *s, const char *what, size_t min)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < min ||
        v > (unsigned long long)SIZE_MAX / 2) {
        fprintf(stderr, "seed: bad %s: %s\n", what, s);
        exit(2);
    }
    return (size_t)v;
}

static void usage(void)
{
    fprintf(stderr, "usage: seed [-v] [-j WORKERS] [-n JOBS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int verbose = 0;
    size_t n_workers = 0, n_jobs = DEFAULT_JOBS;

    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-v") == 0) {
            verbose = 1;
        } else if (strcmp(argv[a], "-j") == 0 && a + 1 < argc) {
            n_workers = parse_count(argv[++a], "worker count", 1);
        } else if (strcmp(argv[a], "-n") == 0 && a + 1 < argc) {
            n_jobs = parse_count(argv[++a], "job count", 0);
        } else {
            usage();
        }
    }
    if (n_workers == 0)
        n_workers = cpu_count();

    struct pool pool;
    pool_init(&pool, n_workers);
    struct wait_group wg = { 0, { 0 } };
    for (size_t i = 0; i < n_jobs; i++)
        pool_spawn_wg(&pool, &wg, i);
    wait_group_wait(&wg);  /* defer wg.wait(); */
    pool_deinit(&pool);    /* defer thread_pool.deinit(); */

    unsigned long long errors = atomic_load(&g_errors);
    if (verbose) {
        printf("seed jobs=%zu numbers=%llu numsum=%llu strings=%llu bytes=%llu "
               "digitsum=%llu errors=%llu\n",
               n_jobs, atomic_load(&g_numbers), atomic_load(&g_numsum),
               atomic_load(&g_strings), atomic_load(&g_bytes),
               atomic_load(&g_digitsum), errors);
    }
    return errors ? 1 : 0;
}
