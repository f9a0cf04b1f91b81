# Helpers sourced by the CLI shell tests. Expects EDGEFUSE (the binary) in the environment.
# Each check prints what it ran and why it failed, then exits 1.

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "$WORK_DIR"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# run_ok CMD...: CMD must exit 0; its stdout is left in $WORK_DIR/out, stderr in $WORK_DIR/err.
run_ok() {
  if ! "$@" >"$WORK_DIR/out" 2>"$WORK_DIR/err"; then
    cat "$WORK_DIR/err" >&2
    fail "expected success: $*"
  fi
}

# run_fails PATTERN CMD...: CMD must exit non-zero with one "edgefuse: error:" line on stderr
# containing PATTERN (a fixed string).
run_fails() {
  local pattern="$1"
  shift
  if "$@" >"$WORK_DIR/out" 2>"$WORK_DIR/err"; then fail "expected failure: $*"; fi
  grep -q "^edgefuse: error: " "$WORK_DIR/err" || fail "no 'edgefuse: error:' line from: $* (stderr: $(cat "$WORK_DIR/err"))"
  [[ "$(wc -l <"$WORK_DIR/err")" -eq 1 ]] || fail "error is not one line: $(cat "$WORK_DIR/err")"
  grep -qF -- "$pattern" "$WORK_DIR/err" || fail "stderr of '$*' lacks '$pattern': $(cat "$WORK_DIR/err")"
}

# expect_output PATTERN: the last command's stdout contains PATTERN (a fixed string).
expect_output() {
  grep -qF -- "$1" "$WORK_DIR/out" || fail "stdout lacks '$1': $(head -c 2000 "$WORK_DIR/out")"
}

# require_file PATH: skip the test (exit 77) when PATH is absent, unless EDGEFUSE_REQUIRE_ASSETS=1.
require_file() {
  if [[ ! -e "$1" ]]; then
    if [[ "${EDGEFUSE_REQUIRE_ASSETS:-0}" == "1" ]]; then fail "required asset missing: $1"; fi
    echo "SKIPPED: $1 not found (set EDGEFUSE_ASSETS_DIR)"
    exit 77
  fi
}
