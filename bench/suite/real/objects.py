# objects.py - the suite's Python workload (bench/suite/run.sh runs it with
# PYTHONMALLOC=malloc, so every object goes through the allocator under
# test): build a dict of 60,000 entries of lists, strings, ints, tuples
# and small dicts, serialise it to JSON and parse it back, sort and walk it,
# split and count words, make and drop instances of a small class, with
# the cyclic garbage collector on as Python runs by default.  Silent on
# success; a wrong result prints "objects: verify failed: ..." and exits 3.
# Usage: python3 objects.py [N]
import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 60000


class Point:
    def __init__(self, x, y):
        self.x, self.y, self.tag = x, y, "p%d" % x

    def norm1(self):
        return abs(self.x) + abs(self.y)


def fail(what, got, want):
    print("objects: verify failed: %s is %r, want %r" % (what, got, want))
    sys.exit(3)


d = {}
for i in range(n):
    d["k%d" % i] = [i, str(i) * 3, {"v": i, "t": (i, i + 1)}]
e = json.loads(json.dumps(d))
if len(e) != n:
    fail("entries after the JSON round trip", len(e), n)
keys = sorted(e, key=lambda k: -e[k][0])
top = sum(e[k][0] for k in keys[: n // 2])
if top != sum(range(n // 2, n)):
    fail("sum of the larger half", top, sum(range(n // 2, n)))
words = " ".join(e[k][1] for k in keys).split()
if len(words) != n:
    fail("words", len(words), n)
count = {}
for w in words:
    count[w[:3]] = count.get(w[:3], 0) + 1
if sum(count.values()) != n:
    fail("counted words", sum(count.values()), n)
pts = [Point(i, -i) for i in range(n)]
far = sorted(pts, key=Point.norm1)[-10:]
if [p.x for p in far] != list(range(n - 10, n)):
    fail("the ten farthest points", [p.x for p in far], list(range(n - 10, n)))
del pts, far, d, e
