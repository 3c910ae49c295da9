#!/usr/bin/env bash
# t_layers: the core keeps its layers (the file map at the top of
# src/alloc.c).  From the objects in build/obj (who calls whom: nm) and the
# #include lines of src/ (who sees whom), every arrow between two files of
# the core must go down the table below: no circle, no call back up.  A new
# file must be placed in the table, or the test fails.
. "$(dirname "$0")/../lib.sh" || exit 2
need_cmd python3
[ -f build/obj/alloc.o ] || { echo "FAIL: build/obj is missing (make lib)"; exit 1; }
python3 - <<'PY'
import glob, os, re, subprocess, sys
# Rank of each file: arrows may only point to a lower rank.
rank = {'os': 0, 'os_proc': 0.5, 'lock': 1, 'options': 1, 'sizeclass': 1, 'reentry': 1, 'stack': 0.7, 'symbol': 0.7, 'pagemap': 2, 'guard': 2.5, 'region': 2, 'chunk': 3,
        'slab': 4, 'extent': 4, 'slot': 5, 'large': 5, 'tcache': 6, 'purge': 7, 'prof': 7.2, 'prof_out': 7.3, 'stats': 7.5,
        'init': 8, 'alloc': 9, 'override': 10}
mods = sorted(os.path.basename(c)[:-2] for c in glob.glob('src/*.c'))
fails = [f'src/{m}.c has no place in the layer table' for m in mods if m not in rank]
defs, undefs = {}, {}
for m in mods:
    out = subprocess.run(['nm', f'build/obj/{m}.o'], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDBRC': defs[p[2]] = m
        elif len(p) == 2 and p[0] == 'U': undefs.setdefault(m, set()).add(p[1])
edges = {(m, defs[u]) for m, us in undefs.items() for u in us if defs.get(u, m) != m}
for f in glob.glob('src/*.[ch]'):
    m = os.path.basename(f)[:-2]
    if m not in mods: continue  # base.h, config.h: below everything
    for inc in re.findall(r'#include "([a-z_]+)\.h"', open(f).read()):
        if inc != m and inc in mods: edges.add((m, inc))
up = sorted((a, b) for a, b in edges if a in rank and b in rank and rank[b] >= rank[a])
for a, b in up: fails.append(f'{a} -> {b} goes up or sideways (rank {rank[a]} -> {rank[b]})')
print(f'{len(mods)} files, {len(edges)} arrows between them, {len(up)} not going down')
for f in fails: print('FAIL:', f)
sys.exit(1 if fails else 0)
PY
[ $? -eq 0 ] || fail "the layers"
finish
