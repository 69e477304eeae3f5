# tests/tap.sh: the TAP helpers of the shell test scripts (sourced, not run).
# A script sets $out (the file each check's output goes to) and prints its
# own plan; the helpers number the checks and count the failures, so the
# script ends with [ "$failed" -eq 0 ].
# shellcheck shell=bash
n=0
failed=0
# ok DESC / not_ok DESC: one result line (a failure shows the tail of $out)
ok() {
  n=$((n + 1))
  echo "ok $n - $1"
}
not_ok() {
  n=$((n + 1))
  failed=$((failed + 1))
  echo "not ok $n - $1"
  sed 's/^/# /' "$out" | tail -n 40
}
# check DESC CMD...: runs CMD (output in $out), ok if it exits 0
check() {
  local desc=$1
  shift
  if "$@" >"$out" 2>&1; then ok "$desc"; else not_ok "$desc"; fi
}
# check_rc DESC RC CMD...: ok if CMD exits with RC
check_rc() {
  local desc=$1 want=$2 rc
  shift 2
  "$@" >"$out" 2>&1
  rc=$?
  if [ "$rc" -eq "$want" ]; then ok "$desc"; else echo "# exit $rc, wanted $want" >>"$out"; not_ok "$desc"; fi
}
