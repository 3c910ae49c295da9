#!/usr/bin/env bash
# t_suite_sqlite: the sqlite3 shell on a generated workload under
# LD_PRELOAD=build/libsmpalloc.so: two tables of 200,000 rows each (500,000
# with TRUST_LONG=1), indexes, joins, GROUP BY, window functions, recursive
# CTEs, string building (group_concat, printf, replace), UPDATE, DELETE,
# VACUUM, integrity_check; once on a file database and once in memory with
# a big page cache (every page a malloc).  The output must be identical to
# the output without the preload.  The file database also runs in checked
# mode (SMPALLOC_CHECKED=1); with TRUST_LONG=1 both do.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$LIB"
need_cmd sqlite3 "apt-get install sqlite3"
N=200000; [ "${TRUST_LONG:-0}" = 1 ] && N=500000

cat >"$tmp/work.sql" <<SQL
PRAGMA journal_mode = DELETE;
CREATE TABLE item(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, price REAL, tags TEXT);
CREATE TABLE sale(id INTEGER PRIMARY KEY, item INTEGER, qty INTEGER, note TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $N)
INSERT INTO item SELECT x, (x * 7919) % 997, printf('item-%07d-%s', x, substr('abcdefghijklmnopqrstuvwxyz', 1 + x % 26, 1 + x % 17)),
  ((x * 104729) % 100000) / 100.0, replace(printf('%.*c', x % 13, 't'), 't', 'tag,') FROM c;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $N)
INSERT INTO sale SELECT x, 1 + (x * 31337) % $N, 1 + x % 9, CASE WHEN x % 5 = 0 THEN NULL ELSE printf('%02X', (x * 37) % 256) || printf('n%d', x % 1000) END FROM c;
SELECT count(*), sum(grp), sum(length(name)), printf('%.2f', sum(price)), sum(length(tags)) FROM item;
CREATE INDEX item_grp ON item(grp, price);
CREATE INDEX item_name ON item(name);
CREATE INDEX sale_item ON sale(item);
SELECT grp, count(*), printf('%.2f', avg(price)), max(name) FROM item GROUP BY grp ORDER BY count(*) DESC, grp LIMIT 15;
SELECT i.grp % 10, count(*), sum(s.qty), printf('%.2f', sum(s.qty * i.price)) FROM sale s JOIN item i ON i.id = s.item GROUP BY 1 ORDER BY 1;
SELECT name, price, rank() OVER (PARTITION BY grp ORDER BY price DESC, id) AS r FROM item WHERE grp IN (3, 500, 996) ORDER BY grp, r LIMIT 20;
SELECT grp, group_concat(id, ',') FROM (SELECT grp, id FROM item WHERE id % 1000 = 7 ORDER BY id) GROUP BY grp ORDER BY grp LIMIT 10;
SELECT length(group_concat(name, '|')) FROM item WHERE grp < 50;
UPDATE item SET name = upper(name) || '-' || grp, tags = tags || tags WHERE id % 3 = 0;
DELETE FROM item WHERE id % 7 = 0;
DELETE FROM sale WHERE item NOT IN (SELECT id FROM item);
SELECT count(*), sum(length(name)), sum(length(tags)), max(name) FROM item;
SELECT count(*), sum(qty) FROM sale;
SELECT a.grp, count(*) FROM item a JOIN item b ON b.id = a.id + 1 AND b.grp = a.grp % 997 WHERE a.price < 50 GROUP BY a.grp ORDER BY 2 DESC, 1 LIMIT 10;
WITH t AS (SELECT grp, sum(price) OVER (PARTITION BY grp ORDER BY id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS s FROM item WHERE grp < 20)
SELECT grp, printf('%.2f', max(s)), count(*) FROM t GROUP BY grp ORDER BY grp;
SELECT count(DISTINCT note), min(note), max(note) FROM sale;
CREATE TABLE summary AS SELECT grp, count(*) AS n, group_concat(substr(name, 1, 12), ';') AS names FROM item GROUP BY grp;
SELECT sum(n), sum(length(names)) FROM summary;
DROP TABLE summary;
VACUUM;
PRAGMA integrity_check;
SELECT count(*), sum(grp), printf('%.2f', sum(price)) FROM item;
SQL

# run_sqlite DB PRELOAD [ENV...]
run_sqlite() {
  local db=$1 pre=$2; shift 2
  rm -f "$tmp/db"
  local envs=("$@")
  [ -n "$pre" ] && envs+=(LD_PRELOAD="$pre")
  if [ "$db" = memory ]; then
    (cd "$tmp" && { echo "PRAGMA cache_size = -400000;"; cat work.sql; } | env "${envs[@]}" sqlite3 -batch :memory: 2>&1)
  else
    (cd "$tmp" && env "${envs[@]}" sqlite3 -batch db <work.sql 2>&1)
  fi
}
compare() { # label ref got rc
  if [ "$4" -ne 0 ] || [ "$2" != "$3" ]; then
    fail "$1: output differs under the preload (exit $4)"
    diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | head -n 20
  else
    echo "ok   $1: identical ($(printf '%s\n' "$3" | grep -c '') lines)"
  fi
}
for db in file memory; do
  ref=$(run_sqlite $db ""); rrc=$?
  echo "== $db database, reference (exit $rrc):"; printf '%s\n' "$ref" | cut -c1-160 | head -n 60
  if [ $rrc -ne 0 ] || [ "$(printf '%s\n' "$ref" | grep -c '')" -lt 60 ] || ! grep -qx ok <<<"$ref"; then
    fail "the reference run failed"; continue
  fi
  got=$(run_sqlite $db "$LIB"); grc=$?
  compare "$db database, preload" "$ref" "$got" $grc
  if [ $db = file ] || [ "${TRUST_LONG:-0}" = 1 ]; then
    got=$(run_sqlite $db "$LIB" SMPALLOC_CHECKED=1); grc=$?
    compare "$db database, preload, checked mode" "$ref" "$got" $grc
  fi
done
finish
