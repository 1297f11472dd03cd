# Sourced by the cli_bench_*.sh tests (POSIX sh): expect64 PATTERN ARGS... runs
# `$cli bench --backend host --records 64k --repeat 1 ARGS...` and calls the script's
# fail() unless it exits 64 with PATTERN (a grep pattern) in what it printed.
expect64() {
    pattern=$1
    shift
    out=$(timeout 10 "$cli" bench --backend host --records 64k --repeat 1 "$@" 2>&1 >/dev/null)
    rc=$?
    [ "$rc" -eq 64 ] && printf '%s' "$out" | grep -q -- "$pattern" ||
        fail "$* -> exit $rc (want 64), output lacks '$pattern': $out"
}
