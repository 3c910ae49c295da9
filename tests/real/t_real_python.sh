#!/usr/bin/env bash
# t_real_python: python3 under LD_PRELOAD=build/libsmpalloc.so runs a
# threaded script (threads build dicts, strings and lists; a hash of the
# results is printed) and must print what it prints without the preload,
# both with pymalloc and with PYTHONMALLOC=malloc (every object through
# malloc).  Also checks that the preload took effect (ctypes finds
# smp_usable_size in the process, /proc/self/maps names the library).
. "$(dirname "$0")/../lib.sh" || exit 2
need "$LIB"
need_cmd python3
# The interpreter itself, not a wrapper script (pyenv shims and the like).
PY=$(python3 -c 'import sys; print(sys.executable)') || { echo "FAIL: python3 does not run"; exit 1; }

cat >"$tmp/work.py" <<'PYEOF'
import hashlib, sys, threading

NTHREADS = 8
results = [None] * NTHREADS

def work(i):
    d = {}
    for k in range(6000):
        key = "k%d-%d" % (i, k)
        d[key] = [key * (k % 9), k * k, str(k) * (k % 5), {"n": k, "s": key[::-1]}]
    parts = []
    for key in sorted(d)[::3]:
        v = d[key]
        parts.append("%s:%d:%d:%s" % (key, len(v[0]), v[1] % 1000, v[3]["s"]))
    big = ",".join(parts)
    lst = [big[j:j + 100] for j in range(0, len(big), 37)]
    lst.sort()
    while len(d) > 100:
        d.popitem()
    results[i] = hashlib.sha256(("|".join(lst) + repr(sorted(d.items())[:5])).encode()).hexdigest()

for rnd in range(2):
    threads = [threading.Thread(target=work, args=(i,)) for i in range(NTHREADS)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(rnd, hashlib.sha256("".join(results).encode()).hexdigest())
PYEOF

cat >"$tmp/probe.py" <<'PYEOF'
import ctypes
lib = ctypes.CDLL(None)
f = lib.smp_usable_size            # AttributeError if smpalloc is not loaded
f.restype = ctypes.c_size_t
f.argtypes = [ctypes.c_void_p]
libc_malloc = lib.malloc
libc_malloc.restype = ctypes.c_void_p
libc_malloc.argtypes = [ctypes.c_size_t]
p = libc_malloc(1000)
assert f(p) >= 1000, f(p)          # malloc's block is smpalloc's
maps = open("/proc/self/maps").read()
assert "libsmpalloc" in maps
print("preloaded: yes")
PYEOF

out=$(env LD_PRELOAD="$LIB" "$PY" "$tmp/probe.py" 2>&1)
echo "probe: $out"
[ "$out" = "preloaded: yes" ] || fail "the preload did not take effect"

for mode in pymalloc malloc; do
  if [ $mode = malloc ]; then pm=malloc; else pm=pymalloc; fi
  ref=$(PYTHONMALLOC=$pm "$PY" "$tmp/work.py" 2>&1); rrc=$?
  got=$(env PYTHONMALLOC=$pm LD_PRELOAD="$LIB" "$PY" "$tmp/work.py" 2>&1); grc=$?
  echo "== PYTHONMALLOC=$pm: reference (exit $rrc):"; printf '%s\n' "$ref"
  echo "== PYTHONMALLOC=$pm: preloaded (exit $grc):"; printf '%s\n' "$got"
  if [ $rrc -ne 0 ]; then fail "the reference run failed"
  elif [ $grc -ne 0 ] || [ "$ref" != "$got" ]; then fail "output differs under the preload"; fi
done
finish
