#!/usr/bin/env bash
# t_real_gcc: gcc under LD_PRELOAD=build/libsmpalloc.so (driver, cc1, as,
# collect2, ld all preloaded) compiles C files; the object files must be
# byte for byte those compiled without the preload, and the program built
# under the preload must print what the reference program prints.  Also
# checks the preload took effect (a -wrapper reads the driver's maps).
# gcc itself is what this test runs, so it calls gcc by name, never $CC.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$LIB"
need_cmd gcc

cat >"$tmp/prog.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *l, *r; long key; char name[24]; };

static struct node *insert(struct node *t, long key)
{
  if (!t) {
    t = calloc(1, sizeof *t);
    if (!t) exit(1);
    t->key = key;
    snprintf(t->name, sizeof t->name, "n%ld", key);
    return t;
  }
  if (key < t->key) t->l = insert(t->l, key);
  else if (key > t->key) t->r = insert(t->r, key);
  return t;
}

static unsigned long walk(const struct node *t, unsigned long h)
{
  if (!t) return h;
  h = walk(t->l, h);
  for (const char *c = t->name; *c; c++) h = h * 131 + (unsigned char)*c;
  return walk(t->r, h);
}

static void drop(struct node *t)
{
  if (!t) return;
  drop(t->l);
  drop(t->r);
  free(t);
}

int main(void)
{
  struct node *t = NULL;
  unsigned long x = 88172645463325252UL;
  for (int i = 0; i < 50000; i++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    t = insert(t, (long)(x % 1000000));
  }
  char *s = NULL;
  size_t len = 0;
  for (int i = 0; i < 2000; i++) {
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%d,", i * i);
    s = realloc(s, len + (size_t)n + 1);
    if (!s) return 1;
    memcpy(s + len, buf, (size_t)n + 1);
    len += (size_t)n;
  }
  printf("tree hash %lu, string %zu bytes, tail %s\n", walk(t, 7), len, s + len - 12);
  free(s);
  drop(t);
  return 0;
}
CEOF

# Compile the same sources from the same directory both ways.
srcs=(prog.c)
cp tests/api/api.c tests/api/stress.c tests/api/check.h tests/api/names.h include/smpalloc.h "$tmp/" && srcs+=(api.c stress.c)
compile() { # suffix, env...
  local sfx=$1; shift
  local s ok=0
  for s in "${srcs[@]}"; do
    (cd "$tmp" && env "$@" gcc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -I. -c "$s" -o "${s%.c}.$sfx.o") || ok=1
  done
  (cd "$tmp" && env "$@" gcc -O2 "prog.$sfx.o" -o "prog.$sfx") || ok=1
  return $ok
}
compile ref LD_PRELOAD= || fail "reference compile failed"
compile pre LD_PRELOAD="$LIB" || fail "compile under the preload failed"
for s in "${srcs[@]}"; do
  if cmp -s "$tmp/${s%.c}.ref.o" "$tmp/${s%.c}.pre.o"; then
    echo "ok: ${s%.c}.o identical ($(stat -c %s "$tmp/${s%.c}.ref.o") bytes)"
  else
    fail "${s%.c}.o differs under the preload"
  fi
done
r=$("$tmp/prog.ref" 2>&1); rrc=$?
p=$("$tmp/prog.pre" 2>&1); prc=$?
echo "reference program: $r (exit $rrc)"
echo "preload-built program: $p (exit $prc)"
[ $rrc -eq 0 ] && [ -n "$r" ] || fail "reference program failed"
[ $prc -eq 0 ] && [ "$r" = "$p" ] || fail "program built under the preload prints something else"
# The same program run under the preload, too.
q=$(env LD_PRELOAD="$LIB" "$tmp/prog.pre" 2>&1)
[ "$q" = "$r" ] || fail "program run under the preload prints '$q'"
# -wrapper runs "sh -c SCRIPT cc1 args": $PPID there is the gcc driver.
w=$(cd "$tmp" && env LD_PRELOAD="$LIB" gcc -c prog.c -o w.o \
      -wrapper /bin/sh,-c,'grep -c libsmpalloc /proc/$PPID/maps >&2; exec "$0" "$@"' 2>&1 | head -n 1)
echo "libsmpalloc mappings in the gcc driver: $w"
[ "${w:-0}" -gt 0 ] 2>/dev/null || fail "the preload did not take effect in gcc"
finish
