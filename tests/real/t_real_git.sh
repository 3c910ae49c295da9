#!/usr/bin/env bash
# t_real_git: git under LD_PRELOAD=build/libsmpalloc.so builds a small
# repository in a temp dir (init, several add+commit rounds with renames and
# deletions, log, diff, gc, repack, fsck) with fixed names and dates, so the
# commit and tree hashes are deterministic; the outputs (git log --format=%T
# tree hashes, commit hashes, fsck) must equal a run without the preload.
# Also checks the preload took effect in the git process.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$LIB"
need_cmd git

export GIT_AUTHOR_NAME="Test Author" GIT_AUTHOR_EMAIL=author@example.com
export GIT_COMMITTER_NAME="Test Committer" GIT_COMMITTER_EMAIL=committer@example.com
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=$tmp
export LC_ALL=C TZ=UTC
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

session() { # dir: prints what is compared
  local d=$1 i f
  mkdir -p "$d" && cd "$d" || return 1
  git init -q -b main . || return 1
  git config gc.auto 0
  for i in 1 2 3 4 5 6; do
    export GIT_AUTHOR_DATE="2024-01-0${i}T12:00:00Z" GIT_COMMITTER_DATE="2024-01-0${i}T12:30:00Z"
    mkdir -p dir0 dir1 dir2 "dir$((i % 3))/sub$i" dir0/sub$i
    awk -v i=$i 'BEGIN {
      for (f = 1; f <= i * 15; f++) {
        out = "dir" (f % 3) "/file" f ".txt"
        for (k = f; k <= f * i + 40; k++) print "line " i " " f " " k > out
        close(out)
      }
      for (k = 1; k <= i * 2000; k++) print k > ("big" i ".txt")
    }' || return 1
    if [ $i -ge 3 ]; then git rm -q "big$((i - 2)).txt" || return 1; fi
    if [ $i -ge 4 ]; then git mv "dir0/file$((i * 3)).txt" "dir0/sub$i/moved$i.txt" || return 1; fi
    git add -A || return 1
    git commit -q -m "commit $i" -m "body of commit $i" || return 1
    git tag "v$i" || return 1
  done
  echo "-- trees"; git log --format=%T
  echo "-- commits"; git log --format='%H %s'
  echo "-- diff"; git diff --stat v2 v6 | tail -n 3
  git diff v1 v6 | git hash-object --stdin
  echo "-- ls-tree"; git ls-tree -r HEAD | git hash-object --stdin
  git gc -q || echo "gc failed"
  git repack -q -a -d -f || echo "repack failed"
  echo "-- fsck"; git fsck --full --strict 2>&1; echo "fsck exit $?"
  echo "-- count"; git rev-list --all --objects | wc -l
  git log -p --all | git hash-object --stdin
  git grep -c "line 6 7" v6 | head -n 3
  git blame -s "dir1/file1.txt" | git hash-object --stdin
}

ref=$(session "$tmp/ref" 2>&1); rrc=$?
got=$(export LD_PRELOAD="$LIB"; session "$tmp/pre" 2>&1); grc=$?
echo "== reference (exit $rrc):"; printf '%s\n' "$ref"
if [ $rrc -ne 0 ] || ! grep -qx 'fsck exit 0' <<<"$ref"; then
  fail "the reference run failed"
elif [ $grc -ne 0 ] || [ "$ref" != "$got" ]; then
  fail "output differs under the preload (exit $grc)"
  diff <(printf '%s\n' "$ref") <(printf '%s\n' "$got") | head -n 20
fi
# A shell alias runs as git's child: $PPID is the git process.
n=$(cd "$tmp/pre" && env LD_PRELOAD="$LIB" git -c 'alias.maps=!grep -c libsmpalloc /proc/$PPID/maps' maps 2>&1)
echo "libsmpalloc mappings in git: $n"
[ "${n:-0}" -gt 0 ] 2>/dev/null || fail "the preload did not take effect in git"
finish
