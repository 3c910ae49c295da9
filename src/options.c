/*
 * options.c - the table of SMPALLOC_* environment options.
 *
 * Each option has a name, a kind, bounds and a place in options.  They are
 * read once, in the library constructor (after libc has set up the
 * environment, before main).  An unknown SMPALLOC_* name (with the known
 * name nearest to it, if one is near) or a value that does not parse or is
 * out of bounds (with what is accepted: 0 or 1, or the range) gives a
 * one-line warning on stderr, whatever SMPALLOC_VERBOSE says, and leaves
 * the default: a typo must never take a program down.
 */
#include <stdlib.h>
#include <string.h>

#include "os.h"
#include "options.h"

extern char **environ;

options_t options = {
    .verbose = false,
    .stats = false,
    .checked = false,
    .hugepages = SMP_HUGEPAGES,
    .purge_delay_ms = SMP_PURGE_DELAY_MS,
    .background = true,
    .purge_threshold = SMP_PURGE_THRESHOLD,
    .slots = 0,
    .prof_sample = SMP_PROF_SAMPLE,
    .guard_sample = SMP_GUARD_SAMPLE,
};

typedef enum { OPT_BOOL, OPT_UINT, OPT_SIZE, OPT_STRING, OPT_ELSEWHERE } opt_kind_t;

typedef struct {
  const char *name;  /* after the SMPALLOC_ prefix */
  opt_kind_t kind;
  uint64_t min, max;
  void *where;
} opt_t;

static const opt_t opt_table[] = {
    {"VERBOSE", OPT_BOOL, 0, 1, &options.verbose},
    {"STATS", OPT_BOOL, 0, 1, &options.stats},
    {"CHECKED", OPT_BOOL, 0, 1, &options.checked},
    {"HUGEPAGES", OPT_UINT, 0, 2, &options.hugepages},
    {"PURGE_DELAY_MS", OPT_UINT, 0, 3600u * 1000u, &options.purge_delay_ms},
    {"BACKGROUND", OPT_BOOL, 0, 1, &options.background},
    {"PURGE_THRESHOLD", OPT_SIZE, 0, (uint64_t)1 << 46, &options.purge_threshold},
    {"SLOTS", OPT_UINT, 1, SMP_MAX_SLOTS, &options.slots},
    {"SLOT_SPREAD", OPT_BOOL, 0, 1, &options.slot_spread},
    {"PROF_SAMPLE", OPT_SIZE, 0, (uint64_t)1 << 40, &options.prof_sample},
    {"PROF_LEAKS", OPT_BOOL, 0, 1, &options.prof_leaks},
    {"PROF_DUMP", OPT_STRING, 1, 1000, &options.prof_dump},
    {"PROF_PEAK", OPT_BOOL, 0, 1, &options.prof_peak},
    {"PROF_SIGNAL", OPT_UINT, 0, 64, &options.prof_signal},
    {"GUARD_SAMPLE", OPT_UINT, 0, 1u << 30, &options.guard_sample},
    /* Known, but read elsewhere: by the launcher (LIB, PROF_DIR) and by
     * stats_init (STATS_DIR, where SMPALLOC_STATS writes its report). */
    {"LIB", OPT_ELSEWHERE, 0, 0, NULL},
    {"STATS_DIR", OPT_ELSEWHERE, 0, 0, NULL},
    {"PROF_DIR", OPT_ELSEWHERE, 0, 0, NULL}, /* the launcher's --profile */
};
#define NOPT (sizeof opt_table / sizeof opt_table[0])

#define PREFIX "SMPALLOC_"

/* A warning line under construction (no stdio, no allocation: this runs in
 * the constructor of a malloc). */
typedef struct {
  char buf[320];
  size_t n;
} line_t;

static void put(line_t *l, const char *s) {
  for (; *s && l->n < sizeof l->buf - 2; s++) l->buf[l->n++] = *s;
}

static void put_u64(line_t *l, uint64_t v) {
  char digits[24];
  size_t k = 0;
  do digits[k++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (k > 0 && l->n < sizeof l->buf - 2) l->buf[l->n++] = digits[--k];
}

/* A size the way SMPALLOC_PURGE_THRESHOLD accepts it: the largest suffix
 * that divides it exactly (1 << 46 is "65536g"). */
static void put_size(line_t *l, uint64_t v) {
  static const char suffix[] = {'g', 'm', 'k'};
  for (unsigned i = 0; i < 3 && v != 0; i++) {
    unsigned shift = 30 - 10 * i;
    if ((v & (((uint64_t)1 << shift) - 1)) == 0) {
      put_u64(l, v >> shift);
      char s[2] = {suffix[i], 0};
      put(l, s);
      return;
    }
  }
  put_u64(l, v);
}

static void emit(line_t *l) {
  l->buf[l->n++] = '\n';
  os_write_err(l->buf, l->n);
}

/* "smpalloc: warning: SMPALLOC_SLOTS=500: out of range, want 1..128 (default
 * kept)": the entry, what is wrong, what is accepted. */
static void warn_value(const opt_t *o, const char *entry, const char *what) {
  line_t l = {.n = 0};
  put(&l, "smpalloc: warning: ");
  put(&l, entry);
  put(&l, ": ");
  put(&l, what);
  if (o->kind == OPT_BOOL) {
    put(&l, ", want 0 or 1");
  } else if (o->kind == OPT_STRING) {
    put(&l, ", want a path of at most ");
    put_u64(&l, o->max);
    put(&l, " bytes");
  } else if (o->kind == OPT_SIZE) {
    put(&l, ", want ");
    put_size(&l, o->min);
    put(&l, " to ");
    put_size(&l, o->max);
    put(&l, " bytes, suffix k, m or g allowed");
  } else {
    put(&l, ", want ");
    put_u64(&l, o->min);
    put(&l, " to ");
    put_u64(&l, o->max);
  }
  put(&l, " (default kept)");
  emit(&l);
}

static char upper(char c) { return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c; }

/* Edit distance (insertions, deletions, substitutions; case ignored) of
 * a[0..na) and b, both at most 32 characters. */
static unsigned distance(const char *a, size_t na, const char *b) {
  unsigned row[33];
  size_t nb = strlen(b);
  for (size_t j = 0; j <= nb; j++) row[j] = (unsigned)j;
  for (size_t i = 1; i <= na; i++) {
    unsigned diag = row[0];
    row[0] = (unsigned)i;
    for (size_t j = 1; j <= nb; j++) {
      unsigned up = row[j];
      unsigned best = diag + (upper(a[i - 1]) != upper(b[j - 1]));
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[nb];
}

/* Does one name hold the other (case ignored), the shorter of at least
 * 4 characters?  ("THRESHOLD" for PURGE_THRESHOLD, "PURGE_DELAY" for
 * PURGE_DELAY_MS.) */
static bool contains(const char *a, size_t na, const char *b) {
  size_t nb = strlen(b);
  const char *big = a, *small = b;
  size_t nbig = na, nsmall = nb;
  if (na < nb) big = b, small = a, nbig = nb, nsmall = na;
  if (nsmall < 4) return false;
  for (size_t i = 0; i + nsmall <= nbig; i++) {
    size_t k = 0;
    while (k < nsmall && upper(big[i + k]) == upper(small[k])) k++;
    if (k == nsmall) return true;
  }
  return false;
}

/* The known name nearest to name[0..len), or NULL when none is near. */
static const char *near_name(const char *name, size_t len) {
  const char *best = NULL;
  unsigned best_d = 3; /* at most 2 edits */
  for (size_t i = 0; i < NOPT; i++) {
    const char *known = opt_table[i].name;
    unsigned d = len <= 32 ? distance(name, len, known) : 99;
    if (d >= best_d && contains(name, len, known)) d = 2;
    if (d < best_d) best_d = d, best = known;
  }
  return best;
}

static void warn_unknown(const char *entry, const char *name, size_t len) {
  line_t l = {.n = 0};
  put(&l, "smpalloc: warning: unknown option ");
  put(&l, entry);
  put(&l, " (ignored");
  const char *near = near_name(name, len);
  if (near) {
    put(&l, "; did you mean " PREFIX);
    put(&l, near);
    put(&l, "?");
  }
  put(&l, ")");
  emit(&l);
}

/* Parse an unsigned decimal with an optional k/m/g suffix (sizes only). */
static bool parse_number(const char *s, bool suffixes, uint64_t *out) {
  uint64_t v = 0;
  if (*s < '0' || *s > '9') return false;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  unsigned shift = 0;
  if (suffixes && *s) {
    switch (*s | 0x20) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: return false;
    }
    s++;
    if ((*s | 0x20) == 'b') s++;
  }
  if (*s != '\0' || (shift && v > (UINT64_MAX >> shift))) return false;
  *out = v << shift;
  return true;
}

static void set_option(const opt_t *o, const char *entry, const char *value) {
  uint64_t v;
  if (o->kind == OPT_ELSEWHERE) return;
  if (o->kind == OPT_STRING) { /* a path: kept where the environment has it */
    size_t len = strlen(value);
    if (len < o->min || len > o->max) return warn_value(o, entry, "empty or too long");
    *(const char **)o->where = value;
    return;
  }
  if (o->kind == OPT_BOOL) {
    /* Exactly "0" or "1": a word such as "yes", "off" or an empty value
     * is refused with a warning, never read silently one way. */
    if ((value[0] != '0' && value[0] != '1') || value[1] != '\0')
      return warn_value(o, entry, "not a boolean");
    *(bool *)o->where = value[0] == '1';
    return;
  }
  if (!parse_number(value, o->kind == OPT_SIZE, &v))
    return warn_value(o, entry, o->kind == OPT_SIZE ? "not a size" : "not a number");
  if (v < o->min || v > o->max) return warn_value(o, entry, "out of range");
  if (o->kind == OPT_UINT) {
    if (o->where == &options.purge_delay_ms) options.purge_delay_ms = (uint32_t)v;
    else *(unsigned *)o->where = (unsigned)v;
  } else {
    *(size_t *)o->where = (size_t)v;
  }
}

void options_init(void) {
  if (environ == NULL) return;
  for (char **e = environ; *e != NULL; e++) {
    const char *entry = *e;
    if (strncmp(entry, PREFIX, sizeof PREFIX - 1) != 0) continue;
    const char *name = entry + sizeof PREFIX - 1, *eq = strchr(name, '=');
    if (eq == NULL) continue;
    size_t len = (size_t)(eq - name);
    const opt_t *o = NULL;
    for (size_t i = 0; i < NOPT; i++)
      if (strlen(opt_table[i].name) == len && memcmp(opt_table[i].name, name, len) == 0)
        o = &opt_table[i];
    if (o == NULL) warn_unknown(entry, name, len);
    else set_option(o, entry, eq + 1);
  }
}
