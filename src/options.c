/*
 * options.c - the table of SMPALLOC_* environment options.
 *
 * Each option has a name, a kind, bounds and a place in smp_opt.  They are
 * read once, in the library constructor (after libc has set up the
 * environment, before main).  An unknown SMPALLOC_* name or a value that
 * does not parse or is out of bounds gives a one-line warning on stderr and
 * leaves the default: a typo must never take a program down.
 */
#include <stdlib.h>
#include <string.h>

#include "os.h"
#include "options.h"

extern char **environ;

smp_options_t smp_opt = {
    .verbose = false,
    .stats = false,
    .checked = false,
    .purge_delay_ms = SMP_PURGE_DELAY_MS,
    .purge_threshold = SMP_PURGE_THRESHOLD,
    .purge_peak = true,
    .slots = 0,
};

typedef enum { OPT_BOOL, OPT_UINT, OPT_SIZE, OPT_TOOL } opt_kind_t;

typedef struct {
  const char *name;  /* after the SMPALLOC_ prefix */
  opt_kind_t kind;
  uint64_t min, max;
  void *where;
} opt_t;

static const opt_t opt_table[] = {
    {"VERBOSE", OPT_BOOL, 0, 1, &smp_opt.verbose},
    {"STATS", OPT_BOOL, 0, 1, &smp_opt.stats},
    {"CHECKED", OPT_BOOL, 0, 1, &smp_opt.checked},
    {"PURGE_DELAY_MS", OPT_UINT, 0, 3600u * 1000u, &smp_opt.purge_delay_ms},
    {"PURGE_THRESHOLD", OPT_SIZE, 0, (uint64_t)1 << 46, &smp_opt.purge_threshold},
    {"SLOTS", OPT_UINT, 1, SMP_MAX_SLOTS, &smp_opt.slots},
    /* Read by the tools (the launcher), not by the library: known, ignored. */
    {"LIB", OPT_TOOL, 0, 0, NULL},
};

#define PREFIX "SMPALLOC_"

static void warn(const char *what, const char *entry) {
  /* One line, without stdio: "smpalloc: warning: WHAT: ENTRY (ignored)". */
  char buf[256];
  size_t n = 0;
  const char *parts[] = {"smpalloc: warning: ", what, ": ", entry, " (default kept)\n"};
  for (unsigned i = 0; i < 5; i++)
    for (const char *s = parts[i]; *s && n < sizeof buf - 2; s++) buf[n++] = *s;
  if (buf[n - 1] != '\n') buf[n++] = '\n';
  os_write_err(buf, n);
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
  if (o->kind == OPT_TOOL) return;
  if (o->kind == OPT_BOOL) {
    if (strcmp(value, "1") == 0 || strcmp(value, "yes") == 0 || strcmp(value, "true") == 0 ||
        strcmp(value, "on") == 0) v = 1;
    else if (strcmp(value, "0") == 0 || strcmp(value, "no") == 0 ||
             strcmp(value, "false") == 0 || strcmp(value, "off") == 0 || value[0] == '\0') v = 0;
    else return warn("not a boolean (0 or 1)", entry);
    *(bool *)o->where = v != 0;
    return;
  }
  if (!parse_number(value, o->kind == OPT_SIZE, &v)) return warn("not a number", entry);
  if (v < o->min || v > o->max) return warn("out of range", entry);
  if (o->kind == OPT_UINT) {
    if (o->where == &smp_opt.purge_delay_ms) smp_opt.purge_delay_ms = (uint32_t)v;
    else *(unsigned *)o->where = (unsigned)v;
  } else {
    *(size_t *)o->where = (size_t)v;
    if (o->where == &smp_opt.purge_threshold) smp_opt.purge_peak = false; /* a hard cap */
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
    for (size_t i = 0; i < sizeof opt_table / sizeof opt_table[0]; i++)
      if (strlen(opt_table[i].name) == len && memcmp(opt_table[i].name, name, len) == 0)
        o = &opt_table[i];
    if (o == NULL) warn("unknown option", entry);
    else set_option(o, entry, eq + 1);
  }
}
