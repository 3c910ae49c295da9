#!/usr/bin/env bash
# t_real_sqlite: sqlite3 under LD_PRELOAD=build/libsmpalloc.so inserts
# 100,000 rows (generated with a recursive CTE) into a file database,
# indexes, updates, deletes, vacuums and queries them; the output must equal
# the output without the preload.  Also checks the preload took effect in
# the sqlite3 process (.shell reads its /proc/PID/maps).
. "$(dirname "$0")/../lib.sh" || exit 2
need "$LIB"
need_cmd sqlite3

cat >"$tmp/work.sql" <<'SQL'
PRAGMA journal_mode = DELETE;
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL);
WITH RECURSIVE cnt(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM cnt WHERE x < 100000)
INSERT INTO t SELECT x, (x * 7919) % 1000, printf('row-%06d-%.*c', x, x % 61, 'z'), x / 7.0 FROM cnt;
SELECT count(*), sum(a), sum(length(b)), printf('%.3f', sum(c)) FROM t;
SELECT a % 10, count(*), sum(length(b)), printf('%.2f', avg(c)) FROM t GROUP BY 1 ORDER BY 1;
CREATE INDEX t_b ON t(b);
CREATE INDEX t_a ON t(a, id);
SELECT b FROM t ORDER BY b DESC LIMIT 5;
SELECT id, a FROM t WHERE a BETWEEN 500 AND 502 ORDER BY a, id LIMIT 10;
UPDATE t SET b = b || '-' || upper(b) WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), sum(length(b)), max(b) FROM t;
SELECT t1.a, count(*) FROM t AS t1 JOIN t AS t2 ON t1.id = t2.id + 1 WHERE t1.a < 5 GROUP BY t1.a ORDER BY 1;
SELECT group_concat(id, ',') FROM (SELECT id FROM t WHERE b LIKE '%-ROW-0999%' ORDER BY id);
VACUUM;
PRAGMA integrity_check;
SELECT count(*), sum(a) FROM t;
SQL

run_sqlite() { # dir, preload
  rm -f "$1/db"
  if [ -n "$2" ]; then
    (cd "$1" && env LD_PRELOAD="$2" sqlite3 -batch db <work.sql 2>&1)
  else
    (cd "$1" && sqlite3 -batch db <work.sql 2>&1)
  fi
}
ref=$(run_sqlite "$tmp" ""); rrc=$?
got=$(run_sqlite "$tmp" "$LIB"); grc=$?
echo "== reference (exit $rrc):"; printf '%s\n' "$ref" | cut -c1-200
if [ $rrc -ne 0 ] || [ "$(printf '%s\n' "$ref" | grep -c '')" -lt 20 ]; then
  fail "the reference run failed"
elif [ $grc -ne 0 ] || [ "$ref" != "$got" ]; then
  fail "output differs under the preload (exit $grc)"
  diff <(printf '%s\n' "$ref") <(printf '%s\n' "$got") | head -n 20
fi
n=$(cd "$tmp" && printf '.shell grep -c libsmpalloc /proc/$PPID/maps\n' | env LD_PRELOAD="$LIB" sqlite3 -batch 2>&1)
echo "libsmpalloc mappings in sqlite3: $n"
[ "${n:-0}" -gt 0 ] 2>/dev/null || fail "the preload did not take effect in sqlite3"
finish
