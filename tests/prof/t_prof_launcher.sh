#!/usr/bin/env bash
# t_prof_launcher: `smpalloc --profile` on prof_sites: the top sites at the
# heap's peak by function and file:line (addr2line), site_a first at about
# 60 %, the leak report naming planted_leak, a flame graph that names
# site_a, and the profiles in SMPALLOC_PROF_DIR (sampled every 16 KiB on
# average: the planted leak, 400 KB, goes unsampled with probability
# e^-24; at 64 KiB, e^-6, it did once in a clean-clone run).  And on a
# stripped program (prof_stripped): a static function's site is named
# program+offset, not after the exported function before it (addr2line's
# guess), and the exported one by its name.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
BIN=build/tests/prof_sites
need "$BIN" "$LIB"
need_cmd addr2line binutils
out=$(SMPALLOC_PROF_SAMPLE=16k SMPALLOC_PROF_DIR="$tmp/prof" tools/smpalloc --profile "$BIN" sites 2>&1 >/dev/null) || fail "exit status $?"
echo "$out" | grep -v '^    #'
row=$(grep -A1 ' share  site' <<<"$out" | tail -1)
if [[ $row =~ ^\ +[0-9]+\ +[0-9]+\ +([0-9.]+)%\ +site_a\ \(.*prof_sites\.c:[0-9]+\)$ ]] &&
   awk -v s="${BASH_REMATCH[1]}" 'BEGIN { exit !(s > 50 && s < 70) }'; then
  ok "top site: site_a with its file:line, ${BASH_REMATCH[1]} %"
else
  fail "top site row: $row"
fi
grep -q '^    #0 planted_leak+' <<<"$out" && ok "leak report names planted_leak" || fail "no planted_leak"
set -- "$tmp"/prof/heap.*.svg
[ -f "$1" ] && grep -q '<svg' "$1" && grep -q '>site_a' "$1" && ok "flame graph $(basename "$1")" || fail "no flame graph naming site_a"
[ -f "${1%.svg}.heap" ] && [ -f "${1%.svg}.peak.heap" ] && ok "exit and peak profiles kept" || fail "profiles missing"

need build/tests/prof_stripped
need_cmd strip binutils
strip -o "$tmp/prof_stripped" build/tests/prof_stripped || fail "strip failed"
out=$(SMPALLOC_PROF_SAMPLE=16k SMPALLOC_PROF_DIR="$tmp/prof2" tools/smpalloc --profile "$tmp/prof_stripped" 2>&1 >/dev/null) ||
  fail "prof_stripped: exit status $?"
rows=$(grep -A2 ' share  site' <<<"$out" | tail -2)
echo "$rows"
if [[ $(head -1 <<<"$rows") =~ ^\ +[0-9]+\ +[0-9]+\ +(8[0-9]|9[0-9])\.[0-9]%\ +prof_stripped\+0x[0-9a-f]+$ ]]; then
  ok "stripped: the static function's site is prof_stripped+offset"
else
  fail "stripped: the top row does not name prof_stripped+offset"
fi
[[ $(tail -1 <<<"$rows") =~ %\ +exported_site$ ]] && ok "stripped: the exported function named" ||
  fail "stripped: exported_site not named on the second row"
finish
