/*
 * stats.c - counters and reports: smp_stats_get, smp_stats_print, and the
 * start-up and at-exit messages of the SMPALLOC_VERBOSE and SMPALLOC_STATS
 * options.  Both name the program and its pid: one command often starts
 * many processes.
 *
 * Hot paths count nothing: per-class figures are read from the slab
 * descriptors when asked (with every slot locked, so the snapshot of each
 * slab is consistent); only system-call paths bump the global counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunk.h"
#include "large.h"
#include "options.h"
#include "os.h"
#include "pagemap.h"
#include "purge.h"
#include "prof.h"
#include "reentry.h"
#include "sizeclass.h"
#include "slot.h"
#include "smpalloc.h"
#include "stats.h"
#include "tcache.h"

_Static_assert(SMP_STATS_NCLASS == SMP_NCLASS, "public class count matches");

static void stats_add_slab(const slab_t *sl, void *arg) {
  smp_stats_t *st = arg;
  unsigned s = chunk_state(sl);
  if (s != SLAB_CUR && s != SLAB_PARTIAL && s != SLAB_FULL) return;
  st->slabs++;
  st->classes[sl->cls].slabs++;
  st->classes[sl->cls].in_use += sl->used;
  st->bytes_in_use += (size_t)sl->used * class_table[sl->cls].size;
}

SMP_API int smp_stats_get(smp_stats_t *st) {
  if (st == NULL) return -1;
  memset(st, 0, sizeof *st);
  /* From a signal handler that interrupted a slow path: its locks may be
   * this thread's (reentry.h).  Nothing is counted. */
  if (tcache_reentered()) return -1;
  for (unsigned c = 0; c < SMP_NCLASS; c++) st->classes[c].size = class_table[c].size;
  tcache_enter();
  slot_lock_all();
  chunk_walk(stats_add_slab, st);
  slot_unlock_all();
  size_t dirty, clean, returned;
  chunk_pool_counts(&dirty, &clean);
  st->slabs_free = dirty + clean;
  large_counters(&st->large_blocks, &st->large_bytes);
  st->bytes_in_use += st->large_bytes + prof_pool_bytes(); /* sampled blocks too */
  os_counters(&st->bytes_mapped, &returned, &st->return_calls, &st->bytes_metadata);
  st->bytes_resident = st->bytes_mapped - clean * SMP_SLAB_SIZE;
  st->bytes_returned = returned;
  st->slots = slot_count();
  slot_counters(&st->lock_contended, &st->lock_waits);
  tcache_leave();
  return 0;
}

/* Append to a fixed buffer (vsnprintf allocates nothing for these
 * formats); a full buffer truncates quietly. */
typedef struct {
  char buf[8192];
  size_t len;
} outbuf_t;

__attribute__((format(printf, 2, 3))) static void out(outbuf_t *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(o->buf + o->len, sizeof o->buf - o->len, fmt, ap);
  va_end(ap);
  if (w > 0) o->len += (size_t)w < sizeof o->buf - o->len ? (size_t)w : sizeof o->buf - o->len - 1;
}
#define OUT(...) out(&o, __VA_ARGS__)

/* The program as the reports name it: the last part of argv[0]
 * (program_invocation_short_name, which libc sets before any constructor
 * runs), at most 63 bytes, control characters shown as '?'. */
static void program_name(char name[64]) {
  const char *n = program_invocation_short_name;
  size_t k = 0;
  for (; n != NULL && n[k] != '\0' && k < 63; k++)
    name[k] = (unsigned char)n[k] < 0x20 || n[k] == 0x7f ? '?' : n[k];
  if (k == 0) name[k++] = '?';
  name[k] = '\0';
}

SMP_API void smp_stats_print(int fd) {
  smp_stats_t st;
  if (smp_stats_get(&st) != 0) return;
  outbuf_t o;
  o.len = 0;
  char name[64];
  program_name(name);
  OUT("smpalloc statistics: %s (pid %ld)\n", name, (long)getpid());
  OUT("  in use       %12zu bytes\n", st.bytes_in_use);
  OUT("  mapped       %12zu bytes (%zu of them metadata)\n", st.bytes_mapped, st.bytes_metadata);
  OUT("  resident     %12zu bytes (at most)\n", st.bytes_resident);
  OUT("  returned     %12zu bytes (to the kernel, in total, in %zu calls)\n", st.bytes_returned,
      st.return_calls);
  OUT("  slabs        %12zu in use, %zu empty\n", st.slabs, st.slabs_free);
  OUT("  large blocks %12zu (%zu bytes)\n", st.large_blocks, st.large_bytes);
  OUT("  slots        %12zu (%zu busy try-locks, %zu waits)\n", st.slots, st.lock_contended,
      st.lock_waits);
  bool bg;
  size_t wakeups, bg_bytes;
  purge_bg_counts(&bg, &wakeups, &bg_bytes);
  if (bg) OUT("  background   %12zu bytes returned, %zu wake-ups\n", bg_bytes, wakeups);
  size_t aside, put_off, refused;
  reentry_counts(&aside, &put_off, &refused);
  if (aside + put_off + refused != 0) /* calls that re-entered a slow path (reentry.h) */
    OUT("  re-entered   %12zu blocks mapped aside, %zu frees put off, %zu refused\n", aside, put_off, refused);
  OUT("  class      size    in use     slabs\n");
  for (unsigned c = 0; c < SMP_NCLASS; c++)
    if (st.classes[c].slabs)
      OUT("  %5u %9zu %9zu %9zu\n", c, st.classes[c].size, st.classes[c].in_use,
          st.classes[c].slabs);
  ssize_t w = 0;
  for (size_t off = 0; off < o.len; off += (size_t)w)
    if ((w = write(fd, o.buf + off, o.len - off)) <= 0) break;
}

static int stats_fd = 2;
static char stats_dir[1024]; /* SMPALLOC_STATS_DIR, or empty */

/* At exit: the report goes to a new file STATS_DIR/stats.PID.N when
 * SMPALLOC_STATS_DIR names a directory (the launcher's --stats merges what
 * every process of a command wrote there), else, or when no file can be
 * created, to standard error. */
static void stats_at_exit(void) {
  int fd = -1;
  if (stats_dir[0] != '\0') {
    char path[sizeof stats_dir + 48];
    for (unsigned k = 0; fd < 0 && k < 100; k++) {
      snprintf(path, sizeof path, "%s/stats.%ld.%u", stats_dir, (long)getpid(), k);
      fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST) break;
    }
  }
  smp_stats_print(fd >= 0 ? fd : stats_fd);
  if (fd >= 0) close(fd);
}

void stats_init(void) {
  if (options.verbose) {
    char name[64];
    program_name(name);
    outbuf_t o;
    o.len = 0;
    OUT("smpalloc: %s (pid %ld): %d.%d.%d, %u slots, purge delay %u ms, threshold %zu bytes, "
        "page map %s, huge pages %u, checked %s\n",
        name, (long)getpid(), SMPALLOC_VERSION_MAJOR, SMPALLOC_VERSION_MINOR,
        SMPALLOC_VERSION_PATCH, slot_count(),
        options.purge_delay_ms, options.purge_threshold, pagemap_init() ? "flat" : "two-level",
        options.hugepages, options.checked ? "on" : "off");
    os_write_err(o.buf, o.len);
  }
  if (options.stats) {
    const char *dir = getenv("SMPALLOC_STATS_DIR");
    if (dir != NULL && dir[0] != '\0' && strlen(dir) < sizeof stats_dir)
      memcpy(stats_dir, dir, strlen(dir) + 1);
    stats_fd = os_dup_stderr();
    atexit(stats_at_exit);
  }
}
