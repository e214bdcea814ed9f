# The skip rule of the shell tests, sourced with the test's name:
#   . tests/harness/skip.sh vm-slow-host
# then `skip WHY...` prints "NAME: skipped: WHY" and exits 77, which ctest
# counts as skipped (SKIP_RETURN_CODE); under CI=true it exits 1, so a
# test that cannot run in CI fails there instead of vanishing.
skip_test_name="${1:?tests/harness/skip.sh needs the name of the test}"

skip() {
  echo "$skip_test_name: skipped: $*"
  [ "${CI:-}" = true ] && exit 1
  exit 77
}
