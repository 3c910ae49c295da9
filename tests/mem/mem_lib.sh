# shellcheck shell=bash
# mem_lib.sh: the setup the tests/mem/t_mem_*.sh scripts share; each sources it
# and calls mem_setup with the name of its program (not a test by itself:
# tests/run.sh runs only t_*.sh).
#
#   . "$(dirname "$0")/mem_lib.sh" || exit 2
#   mem_setup mem_fork
#
# mem_setup NAME: goes to the repository root ($SMP_ROOT, else the script's
# grandparent folder; exit 2 if it cannot), unsets every SMPALLOC_* variable and
# LD_PRELOAD, sets LIB to build/libsmpalloc.so and BIN to build/tests/NAME,
# built by tests/mem/mem.mk from tests/mem/NAME.c (exit 1 if either is
# missing).
mem_setup() {
  cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
  local v
  for v in $(compgen -v SMPALLOC_); do unset "$v"; done
  unset LD_PRELOAD
  LIB=$(pwd -P)/build/libsmpalloc.so
  [ -f "$LIB" ] || { echo "FAIL: $LIB is missing (make lib)"; exit 1; }
  BIN=build/tests/$1
  [ -x "$BIN" ] || { echo "FAIL: $BIN is missing (make test-bins)"; exit 1; }
}
