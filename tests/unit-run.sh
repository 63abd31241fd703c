#!/bin/sh
# unit-run.sh LOGDIR PROGRAM... [--tsan DRIVER]: run each Criterion program,
# its output (the daemon's log lines the tests provoke among it) kept in
# LOGDIR/NAME.log and shown only if the program failed; a line per program
# with its counts and each skipped test with its reason; then the TSan
# driver, counted as one test; and last one line for the whole run:
# "N passed, N failed, N skipped".  Exit 1 if anything failed.
#
# A program that exits non-zero with no failed test (a LeakSanitizer report
# comes as a worker exits, after Criterion has counted its test as passed)
# counts one failure.
set -u
dir=$1
shift
mkdir -p "$dir"
passed=0 failed=0 skipped=0

# count NAME RC: add NAME's TAP counts to the totals, and say them
count() {
    tap=$dir/$1.tap log=$dir/$1.log
    p=$(grep -c '^ok ' "$tap" 2>/dev/null)
    s=$(grep -c '^ok .* # SKIP' "$tap" 2>/dev/null)
    f=$(grep -c '^not ok ' "$tap" 2>/dev/null)
    p=$((${p:-0} - ${s:-0}))
    s=${s:-0} f=${f:-0}
    if [ "$2" -ne 0 ] || grep -q 'ERROR: LeakSanitizer' "$log"; then
        cat "$log"
        grep -q 'ERROR: LeakSanitizer' "$log" && echo "$1: memory leaked (above)"
        [ "$f" -gt 0 ] || f=1
    fi
    echo "$1: $p passed, $f failed, $s skipped"
    sed -n 's/^ok - \([^ ]*\) *# SKIP \(.*\)/  skipped \1: \2/p' "$tap"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

while [ $# -gt 0 ]; do
    if [ "$1" = --tsan ]; then
        name=$(basename "$2")
        # any report fails the run
        TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$2" >"$dir/$name.log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then echo "ok - $name" >"$dir/$name.tap"; else echo "not ok - $name" >"$dir/$name.tap"; fi
        count "$name" $rc
        shift 2
        continue
    fi
    name=$(basename "$1")
    "$1" --jobs 2 --verbose --tap="$dir/$name.tap" >"$dir/$name.log" 2>&1
    count "$name" $?
    shift
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
