-- queries.sql - the suite's SQLite workload (bench/suite/run.sh runs
-- `sqlite3 -bail :memory: .read queries.sql`): an in-memory database,
-- whose every page sits in a block of the allocator under test, gets
-- 200,000 rows and two indexes, then grouping, sorting and a self-join.
-- The last statements check the answers: a wrong one breaks a CHECK
-- constraint named "queries: verify failed", and -bail makes sqlite3 exit
-- 1 with that name in its message; right ones print "ok".
PRAGMA journal_mode = OFF;
CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER, c REAL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 200000)
INSERT INTO t SELECT i, printf('%08x-%d', (i * 2654435761) % 4294967296, i), i % 1000, i * 0.5 FROM s;
CREATE INDEX ta ON t(a);
CREATE INDEX tb ON t(b);
CREATE TEMP TABLE answer AS SELECT
  (SELECT count(*) FROM t) AS rows,
  (SELECT sum(b) FROM t) AS bsum,
  (SELECT count(*) FROM (SELECT b, count(*) AS k, avg(c) FROM t GROUP BY b HAVING k = 200)) AS groups,
  (SELECT count(*) FROM (SELECT a FROM t ORDER BY a LIMIT 100000)) AS sorted,
  (SELECT count(*) FROM t x JOIN t y ON x.b = y.b AND y.id = x.id + 1000) AS joined;
CREATE TEMP TABLE verdict(v TEXT CONSTRAINT "queries: verify failed" CHECK (v = 'ok'));
INSERT INTO verdict SELECT CASE WHEN rows = 200000 AND bsum = 99900000 AND groups = 1000
                                 AND sorted = 100000 AND joined = 199000 THEN 'ok' ELSE 'wrong' END FROM answer;
SELECT v FROM verdict;
