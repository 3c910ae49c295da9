/*
 * os.c - memory from the kernel: mappings, reservations, advice, the page
 * size.  With os_proc.c (the clock, CPUs, futexes, threads, messages) the
 * only files of smpalloc that talk to the kernel.  The contract of every
 * function is in os.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os.h"
#include "track.h"

#ifdef SMP_FAULT_INJECTION
/* Test builds only (-DSMP_FAULT_INJECTION): after smp_fault_countdown more
 * successful maps, every map fails as if the kernel were out of memory,
 * until the countdown is set again (negative: never fail). */
SMP_API _Atomic long smp_fault_countdown = -1;
static bool os_fault(void) {
  long n = atomic_load_explicit(&smp_fault_countdown, memory_order_relaxed);
  if (n < 0) return false;
  if (n == 0) return true;
  atomic_store_explicit(&smp_fault_countdown, n - 1, memory_order_relaxed);
  return false;
}
#else
static inline bool os_fault(void) { return false; }
#endif

static _Atomic size_t os_mapped, os_returned, os_guarded, os_returns;

static void count(_Atomic size_t *c, size_t bytes) {
  atomic_fetch_add_explicit(c, bytes, memory_order_relaxed);
}

void os_counters(size_t *mapped, size_t *returned, size_t *calls, size_t *guarded) {
  *calls = atomic_load_explicit(&os_returns, memory_order_relaxed);
  *guarded = atomic_load_explicit(&os_guarded, memory_order_relaxed);
  *mapped = atomic_load_explicit(&os_mapped, memory_order_relaxed);
  *returned = atomic_load_explicit(&os_returned, memory_order_relaxed);
}

static size_t os_page;

size_t os_page_size(void) {
  if (os_page == 0) {
    unsigned long p = getauxval(AT_PAGESZ);
    os_page = p ? (size_t)p : SMP_MIN_PAGE;
  }
  return os_page;
}

/* Map size bytes anywhere, committed (no MAP_NORESERVE: the kernel's
 * overcommit accounting decides, as for glibc's heap); NULL on failure. */
static void *os_mmap(void *hint, size_t size, int prot) {
  if (os_fault()) return NULL;
  void *p = mmap(hint, size, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Where the next aligned mapping is likely to land: the kernel hands out
 * addresses top-down, so just below the last one (concealed: track.h). */
static _Atomic uintptr_t os_hint;

void *os_map(size_t size, size_t align, bool apart) {
  int saved = errno;
  size_t page = os_page_size();
  if (align < page) align = page;
  /* First try: ask at the hint (or anywhere) and keep the result if it
   * happens to be aligned, which is the common case once all of our
   * mappings are multiples of the alignment. */
  uintptr_t hint = track_reveal(atomic_load_explicit(&os_hint, memory_order_relaxed)), gap = apart ? align : 0;
  void *hp = (hint > size + gap && ((hint - size - gap) & (align - 1)) == 0) ? (void *)(hint - size - gap) : NULL;
  void *p = os_mmap(hp, size, PROT_READ | PROT_WRITE);
  if (p != NULL && ((uintptr_t)p & (align - 1)) != 0) {
    munmap(p, size);
    /* Over-map by align and trim both ends. */
    size_t over = size + align - page;
    if (over < size) { errno = saved; return NULL; }
    char *raw = os_mmap(NULL, over, PROT_READ | PROT_WRITE);
    if (raw == NULL) { errno = saved; return NULL; }
    uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
    size_t head = start - (uintptr_t)raw, tail = over - head - size;
    if (head) munmap(raw, head);
    if (tail) munmap((char *)start + size, tail);
    p = (void *)start;
  }
  if (p != NULL) {
    atomic_store_explicit(&os_hint, track_conceal((uintptr_t)p), memory_order_relaxed);
    count(&os_mapped, size);
  }
  errno = saved;
  return p;
}

void *os_map_guarded(size_t size) {
  int saved = errno;
  size_t page = os_page_size();
  /* Reserve the whole range inaccessible (not accounted), then open the
   * middle: mprotect to writable commits it under the accounting. */
  char *raw = os_mmap(NULL, size + 2 * page, PROT_NONE);
  if (raw != NULL && mprotect(raw + page, size, PROT_READ | PROT_WRITE) != 0) {
    munmap(raw, size + 2 * page);
    raw = NULL;
  }
  errno = saved;
  if (raw == NULL) return NULL;
  count(&os_mapped, size);
  count(&os_guarded, size);
  return raw + page;
}

size_t os_read_file(const char *path, char *buf, size_t len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t got = 0;
  for (ssize_t n; got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0;) got += (size_t)n;
  close(fd);
  buf[got] = 0;
  return got;
}

/* No limit on resource (RLIMIT_AS, `ulimit -v`: the address space;
 * RLIMIT_DATA, `ulimit -d`: writable private mappings, reserved or not) is
 * set: a reservation would eat into one.  (errno may change.) */
static bool os_unlimited(int resource) {
  struct rlimit lim; /* prlimit64's struct on a 64-bit system */
  _Static_assert(sizeof lim == 16, "struct rlimit is two 64-bit words");
  return syscall(SYS_prlimit64, 0, resource, NULL, &lim) == 0 && lim.rlim_cur == RLIM_INFINITY;
}

void *os_reserve_readonly(size_t size) {
  int saved = errno;
  if (!os_unlimited(RLIMIT_AS)) {
    errno = saved;
    return NULL;
  }
  size_t page = os_page_size();
  /* Read-only private memory is not accounted (no commit charge): only the
   * parts os_commit makes writable are. */
  char *raw = os_mmap(NULL, size + 2 * page, PROT_NONE);
  if (raw != NULL && mprotect(raw + page, size, PROT_READ) != 0) {
    munmap(raw, size + 2 * page);
    raw = NULL;
  }
  if (raw != NULL) os_smallpages_unless_asked(raw + page, size); /* its committed parts merge */
  errno = saved;
  return raw != NULL ? raw + page : NULL;
}

/* Whether reservations are made: -1 not known yet, 0 no, 1 yes. */
static _Atomic int os_reserving = -1;

static bool os_reserve_ok(void) {
  int ok = atomic_load_explicit(&os_reserving, memory_order_relaxed);
  if (ok >= 0) return ok;
  int saved = errno;
  char buf[16];
  ok = os_unlimited(RLIMIT_AS) && os_unlimited(RLIMIT_DATA) &&
       os_read_file("/proc/sys/vm/overcommit_memory", buf, sizeof buf) != 0 && buf[0] != '2';
  errno = saved;
  atomic_store_explicit(&os_reserving, ok, memory_order_relaxed);
  return ok;
}

void *os_reserve(size_t size, size_t align) {
  if (!os_reserve_ok() || os_fault()) return NULL;
  int saved = errno;
  size_t over = size + align;
  void *p = NULL;
  const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  /* First as it is: the kernel aligns a big mapping to its huge page size
   * (Linux 6.7 on), and then no trimming takes the address space's lock
   * twice more.  Else over by align, the slack trimmed (left mapped, it
   * would be locked and faulted in by mlockall: chunk_unreserve gives back
   * only what a reservation has left). */
  char *raw = mmap(NULL, size, prot, flags, -1, 0);
  if (raw != MAP_FAILED && ((uintptr_t)raw & (align - 1)) == 0) p = raw;
  else if (raw != MAP_FAILED) munmap(raw, size);
  if (p == NULL && raw != MAP_FAILED && over > size) {
    raw = mmap(NULL, over, prot, flags, -1, 0);
    if (raw != MAP_FAILED) {
      uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
      size_t head = start - (uintptr_t)raw, tail = over - head - size;
      if (head) munmap(raw, head);
      if (tail) munmap((char *)start + size, tail);
      p = (void *)start;
    }
  }
  errno = saved;
  return p;
}

void os_unreserve(void *p, size_t size) {
  int saved = errno;
  munmap(p, size);
  errno = saved;
}

int os_mlockall(int flags) { return syscall(SYS_mlockall, flags) == 0 ? 0 : -1; }

bool os_use(size_t size) {
  if (os_fault()) return false;
  count(&os_mapped, size);
  return true;
}

bool os_commit(void *p, size_t size) {
  if (os_fault()) return false;
  int saved = errno;
  bool ok = mprotect(p, size, PROT_READ | PROT_WRITE) == 0;
  errno = saved;
  if (ok) {
    count(&os_mapped, size);
    count(&os_guarded, size);
  }
  return ok;
}

void os_unmap_guarded(void *p, size_t size) {
  int saved = errno;
  size_t page = os_page_size();
  munmap((char *)p - page, size + 2 * page);
  atomic_fetch_sub_explicit(&os_mapped, size, memory_order_relaxed);
  atomic_fetch_sub_explicit(&os_guarded, size, memory_order_relaxed);
  errno = saved;
}

void os_unmap(void *p, size_t size) {
  int saved = errno;
  munmap(p, size);
  count(&os_returned, size);
  count(&os_returns, 1);
  atomic_fetch_sub_explicit(&os_mapped, size, memory_order_relaxed);
  errno = saved;
}

bool os_resize(void *p, size_t old_size, size_t new_size) {
  if (new_size > old_size && os_fault()) return false;
  int saved = errno;
  bool ok = mremap(p, old_size, new_size, 0) != MAP_FAILED;
  if (ok && new_size > old_size) count(&os_mapped, new_size - old_size);
  if (ok && new_size < old_size) {
    count(&os_returned, old_size - new_size);
    count(&os_returns, 1);
    atomic_fetch_sub_explicit(&os_mapped, old_size - new_size, memory_order_relaxed);
  }
  errno = saved;
  return ok;
}

bool os_move(void *p, size_t old_size, size_t new_size, void *dest) {
  int saved = errno;
  /* The kernel replaces the mapping at dest atomically; pages are moved,
   * not copied. */
  bool ok = mremap(p, old_size, new_size, MREMAP_MAYMOVE | MREMAP_FIXED, dest) != MAP_FAILED;
  /* dest (new_size, counted when mapped) replaced: old_size bytes are gone. */
  if (ok) atomic_fetch_sub_explicit(&os_mapped, old_size, memory_order_relaxed);
  errno = saved;
  return ok;
}

/* The kernel's transparent huge page size, 0 when they are off ("never")
 * or unknown; read from sysfs once. */
static _Atomic size_t os_huge = 1; /* 1: not read yet */

/* The kernel's mode is "always": every anonymous mapping is given huge
 * pages unless advised otherwise (read by os_huge_size, with os_huge). */
static _Atomic bool os_huge_all;

size_t os_huge_size(void) {
  size_t h = atomic_load_explicit(&os_huge, memory_order_relaxed);
  if (h != 1) return h;
  int saved = errno;
  char buf[128];
  h = 0;
  if (os_read_file("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof buf) &&
      strstr(buf, "[never]") == NULL) {
    bool all = strstr(buf, "[always]") != NULL;
    if (os_read_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", buf, sizeof buf)) {
      h = (size_t)strtoul(buf, NULL, 10);
      if (h < os_page_size() || (h & (h - 1)) != 0) h = 0;
    }
    atomic_store_explicit(&os_huge_all, all, memory_order_relaxed);
  }
  errno = saved;
  atomic_store_explicit(&os_huge, h, memory_order_relaxed);
  return h;
}

bool os_huge_always(void) {
  (void)os_huge_size();
  return atomic_load_explicit(&os_huge_all, memory_order_relaxed);
}

void os_huge_always_set(bool all) {
  (void)os_huge_size();
  atomic_store_explicit(&os_huge_all, all, memory_order_relaxed);
}

void os_smallpages_unless_asked(void *p, size_t size) {
  if (os_huge_always()) os_smallpages(p, size);
}

bool os_hugepage(void *p, size_t size) {
  int saved = errno;
  bool ok = madvise(p, size, MADV_HUGEPAGE) == 0;
  errno = saved;
  return ok;
}

void os_smallpages(void *p, size_t size) {
  int saved = errno;
  (void)madvise(p, size, MADV_NOHUGEPAGE);
  errno = saved;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void os_populate(void *p, size_t size) {
  int saved = errno;
  /* One kernel entry instead of a page fault per page; it never overwrites
   * a page already present.  Kernels before 5.14 refuse: the pages then
   * fault in as they are written. */
  madvise(p, size, MADV_POPULATE_WRITE);
  errno = saved;
}

size_t os_resident(void *p, size_t size) {
  int saved = errno;
  unsigned char vec[64];
  size_t page = os_page_size(), pages = size / page, n = 0;
  if (pages > sizeof vec) pages = sizeof vec;
  /* The system call, not libc's wrapper: no page of libc a program may
   * never use is touched for it (docs/design.md, "Start-up"). */
  if (pages == 0 || syscall(SYS_mincore, p, pages * page, vec) != 0) {
    errno = saved;
    return SIZE_MAX;
  }
  for (size_t i = 0; i < pages; i++) n += vec[i] & 1;
  errno = saved;
  return n;
}

void os_decommit(void *p, size_t size) {
  int saved = errno;
  /* MADV_DONTNEED, not MADV_FREE: the pages leave RSS now (users read RSS),
   * and read back as zero, which calloc relies on. */
  madvise(p, size, MADV_DONTNEED);
  count(&os_returned, size);
  count(&os_returns, 1);
  errno = saved;
}

bool os_protect(void *p, size_t size, bool access) {
  int saved = errno;
  bool ok = mprotect(p, size, access ? PROT_READ | PROT_WRITE : PROT_NONE) == 0;
  errno = saved;
  return ok;
}

void os_nohugepage(void *p, size_t size) {
  int saved = errno;
  madvise(p, size, MADV_NOHUGEPAGE);
  errno = saved;
}

void *os_map_file(const char *path, size_t *size) {
  int saved = errno;
  void *p = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    off_t end = lseek(fd, 0, SEEK_END);
    if (end > 0) {
      p = mmap(NULL, (size_t)end, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) p = NULL;
      else *size = (size_t)end;
    }
    close(fd);
  }
  errno = saved;
  return p;
}

void os_unmap_file(void *p, size_t size) {
  int saved = errno;
  munmap(p, size);
  errno = saved;
}
