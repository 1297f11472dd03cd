#!/usr/bin/env bash
# cli_run_mpi.sh CLI [WORKDIR]: `streampipe run` under mpirun (a build with SP_WITH_MPI=ON) on
# the host backend. 1, 2 and 3 ranks (oversubscribed: CI has 2 cores) must write the same
# bytes as one plain process, also for a file of fewer records than ranks and an empty one;
# a rank that fails (STREAMPIPE_TEST_FAIL_RANK, a test-only switch of run_ranks.c) and an
# input that cannot be opened must make the run exit 1 and, without journals (--no-journal),
# leave neither the output nor a temporary file. An output that is not a regular file (a FIFO, stdout) is refused (the ranks
# write at their offsets) and an empty stage list is a usage error (64) on every rank.
# SIGTERM to rank 0 mid-run leaves no temporary output; a rank killed by SIGKILL and SIGTERM
# to mpirun leave none once the next run of the output has cleaned up, nor does rank 0
# killed by SIGKILL, whose leftover the next run must report. Exits 77 when mpirun is
# missing.
set -euo pipefail
cli="$1"
work="${2:-$(mktemp -d)}"
command -v mpirun >/dev/null 2>&1 || { echo "no mpirun"; exit 77; }
mkdir -p "$work"
rm -f "$work"/{in,two,empty,slow}.bin "$work"/{one,mpi,bad,slow}.out "$work/report.txt"
rm -f "$work"/fifo "$work"/pid.*
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

# expect_failure N ENV... : the run without journals exits 1 and leaves nothing (a journaled
# one keeps its partial output for --resume: cli_run_mpi_resume.sh)
expect_failure() {
    local n="$1" input="$2" rc=0
    shift 2
    rm -f "$work/bad.out"
    env "$@" "${mpi[@]}" -x STREAMPIPE_TEST_FAIL_RANK -n "$n" "$cli" run --backend host \
        --input "$input" --output "$work/bad.out" --stages "$stages" --no-journal \
        >/dev/null 2>&1 || rc=$?
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

# expect_exit RC ARGS...: 2 ranks of `streampipe run ARGS` exit RC (mpirun gives the first
# failing rank's) and leave no temporary output
expect_exit() {
    local want="$1" rc=0
    shift
    "${mpi[@]}" -n 2 "$cli" run --backend host "$@" >/dev/null 2>"$work/report.txt" || rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "expected exit $want, got $rc: $*: $(head -c 600 "$work/report.txt")" >&2
        return 1
    fi
    no_leftovers
}
mkfifo "$work/fifo"
expect_exit 1 --input "$work/in.bin" --output "$work/fifo" --stages "$stages"
grep -q "is a FIFO: under mpirun" "$work/report.txt"
[ -p "$work/fifo" ]
expect_exit 1 --input "$work/in.bin" --output - --stages "$stages"
echo "ok: a FIFO or stdout as the output is refused under mpirun and left as it was"
expect_exit 64 --input "$work/in.bin" --output "$work/bad.out" --stages ,
grep -q "empty entry" "$work/report.txt"
[ ! -e "$work/bad.out" ]
echo "ok: --stages , is a usage error on every rank"

# Interrupted runs without journals (--no-journal; cli_run_mpi_resume.sh interrupts journaled
# ones): 2 ranks of a slow run (sinmix:iters=100000 over 64k records, about a minute), each
# rank's pid in pid.RANK. start_slow returns once the temporary output exists.
records 65536 "$work/slow.bin"
slow_pid=
start_slow() {
    rm -f "$work"/pid.*
    "${mpi[@]}" -n 2 sh -c 'echo $$ >"$0/pid.$OMPI_COMM_WORLD_RANK"; exec "$@"' "$work"         "$cli" run --backend host --input "$work/slow.bin" --output "$work/slow.out"         --stages sinmix:iters=100000 --chunk 1024 --no-journal </dev/null >/dev/null 2>&1 &
    slow_pid=$!
    local i
    for i in $(seq 100); do
        if [ -e "$work/pid.0" ] && [ -e "$work/pid.1" ] &&
            ls "$work"/.slow.out.partial-* >/dev/null 2>&1; then
            sleep 0.3 # into the run
            return 0
        fi
        sleep 0.1
    done
    echo "the slow run made no temporary output within 10 s" >&2
    return 1
}
# end_slow: mpirun has ended within 30 s, and not with 0
end_slow() {
    local i rc=0
    for i in $(seq 300); do
        kill -0 "$slow_pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$slow_pid" 2>/dev/null; then
        echo "mpirun still running 30 s after the kill" >&2
        kill -KILL "$slow_pid" "$(cat "$work/pid.0")" "$(cat "$work/pid.1")" 2>/dev/null || true
        return 1
    fi
    wait "$slow_pid" || rc=$?
    [ "$rc" -ne 0 ] || { echo "an interrupted run exited 0" >&2; return 1; }
    [ ! -e "$work/slow.out" ] || { echo "an interrupted run left its output" >&2; return 1; }
}
# next_run_cleans: a quick run of the same output removes any temporary output left, and
# says so when there was one
next_run_cleans() {
    "${mpi[@]}" -n 2 "$cli" run --backend host --input "$work/two.bin" \
        --output "$work/slow.out" --stages "$stages" >/dev/null 2>"$work/report.txt"
    no_leftovers
    if [ "${1:-}" = left ]; then grep -q "left by a run that was killed" "$work/report.txt"; fi
    rm -f "$work/slow.out"
}
# SIGTERM to rank 0, which owns the temporary output: its handler removes it
start_slow
kill -TERM "$(cat "$work/pid.0")"
end_slow
no_leftovers
echo "ok: SIGTERM to rank 0 mid-run: no output and no temporary output left"
# A rank killed, or mpirun interrupted: mpirun sends every rank SIGTERM, which rank 0's
# handler acts on, but also SIGKILL as soon as one of them has died (Open MPI 4: within
# milliseconds), which on a loaded machine may come first; the next run removes what is left.
start_slow
kill -KILL "$(cat "$work/pid.1")"
end_slow
next_run_cleans
echo "ok: rank 1 killed mid-run: no output, and no temporary output after the next run"
start_slow
kill -TERM "$slow_pid"
end_slow
next_run_cleans
echo "ok: SIGTERM to mpirun mid-run: no output, and no temporary output after the next run"
start_slow
kill -KILL "$(cat "$work/pid.0")"
end_slow
ls "$work"/.slow.out.partial-* >/dev/null 2>&1 ||
    { echo "rank 0 killed by SIGKILL left no temporary output (did it run?)" >&2; exit 1; }
next_run_cleans left
echo "ok: rank 0 killed by SIGKILL: its temporary output is removed by the next run"
echo "cli_run_mpi: all passed"
