#!/usr/bin/env bash
# cli_run_mpi.sh CLI [WORKDIR]: `streampipe run` under mpirun (a build with SP_WITH_MPI=ON) on
# the host backend. 1, 2 and 3 ranks (oversubscribed: CI has 2 cores) must write the same
# bytes as one plain process, also for a file of fewer records than ranks and an empty one;
# a rank that fails (STREAMPIPE_TEST_FAIL_RANK, a test-only switch of run_ranks.c) and an
# input that cannot be opened must make the run exit 1 and leave neither the output nor a
# temporary file. Exits 77 when mpirun is missing.
set -euo pipefail
cli="$1"
work="${2:-$(mktemp -d)}"
command -v mpirun >/dev/null 2>&1 || { echo "no mpirun"; exit 77; }
mkdir -p "$work"
rm -f "$work"/{in,two,empty}.bin "$work"/{one,mpi,bad}.out "$work/report.txt"
rm -f "$work"/.*.partial-* 2>/dev/null || true
mpi=(mpirun --allow-run-as-root --oversubscribe)
stages=sinmix:iters=3

# records RECORDS FILE: RECORDS float32 records of random bytes
records() { head -c $(($1 * 4)) /dev/urandom >"$2"; }

no_leftovers() {
    local f
    for f in "$work"/.*.partial-*; do
        if [ -e "$f" ]; then
            echo "a temporary output was left behind: $f" >&2
            return 1
        fi
    done
}

same_as_one_process() {
    local input="$1" n
    "$cli" run --backend host --input "$input" --output "$work/one.out" --stages "$stages" \
        >/dev/null
    for n in 1 2 3; do
        rm -f "$work/mpi.out"
        "${mpi[@]}" -n "$n" "$cli" run --backend host --input "$input" \
            --output "$work/mpi.out" --stages "$stages" --threads 2 >"$work/report.txt"
        cmp "$work/one.out" "$work/mpi.out"
        [ "$n" -eq 1 ] || grep -q "slowest rank" "$work/report.txt"
        echo "ok: $n rank(s), $(wc -c <"$input") bytes in, the same output"
    done
    no_leftovers
}

# expect_failure N ENV... : the run exits 1 and leaves nothing
expect_failure() {
    local n="$1" input="$2" rc=0
    shift 2
    rm -f "$work/bad.out"
    env "$@" "${mpi[@]}" -x STREAMPIPE_TEST_FAIL_RANK -n "$n" "$cli" run --backend host \
        --input "$input" --output "$work/bad.out" --stages "$stages" >/dev/null 2>&1 || rc=$?
    if [ "$rc" -ne 1 ]; then
        echo "expected exit 1, got $rc: $n ranks, input $input, $*" >&2
        return 1
    fi
    [ ! -e "$work/bad.out" ] || { echo "a failed run left its output" >&2; return 1; }
    no_leftovers
    echo "ok: $n ranks failing ($input $*) exit 1 and leave nothing"
}

records 100003 "$work/in.bin"
same_as_one_process "$work/in.bin"
# --json: one object from rank 0 alone, with every rank's share
"${mpi[@]}" -n 3 "$cli" run --backend host --input "$work/in.bin" --output "$work/mpi.out" \
    --stages "$stages" --json >"$work/report.txt"
[ "$(wc -l <"$work/report.txt")" -eq 1 ] && grep -q '"ranks":3' "$work/report.txt"
if command -v python3 >/dev/null 2>&1; then python3 -m json.tool "$work/report.txt" >/dev/null; fi
echo "ok: --json under 3 ranks"
records 2 "$work/two.bin" # fewer records than ranks: a rank with none
same_as_one_process "$work/two.bin"
: >"$work/empty.bin"
same_as_one_process "$work/empty.bin"

expect_failure 2 "$work/in.bin" STREAMPIPE_TEST_FAIL_RANK=1
expect_failure 3 "$work/in.bin" STREAMPIPE_TEST_FAIL_RANK=2
expect_failure 3 "$work/in.bin" STREAMPIPE_TEST_FAIL_RANK=0
expect_failure 2 "$work/no-such-input.bin" STREAMPIPE_TEST_FAIL_RANK=
echo "cli_run_mpi: all passed"
