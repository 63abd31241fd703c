# shellcheck shell=bash
# The tally of a checking script's results (the install, repro and user
# checks and, through node-lib.sh, the VM suites): pass and fail count a
# result and say it, check NAME CMD... is a test that passes when CMD
# succeeds.  Source it from the script's own directory, or tests/vm's.
PASSED=0
FAILED=0

pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }

# check NAME CMD...: a test that passes when CMD succeeds
check() {
    local name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}
