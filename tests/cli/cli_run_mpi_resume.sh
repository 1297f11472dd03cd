#!/usr/bin/env bash
# cli_run_mpi_resume.sh CLI [WORKDIR]: `streampipe run --resume` of MPI jobs (issue 29), on
# the host backend under mpirun (a build with SP_WITH_MPI=ON). Over a file of fresh random
# floats (sinmix, a second or two a job on CI's two cores):
#   - kill -9 of every rank and mpirun at random moments (SP_MPI_KILLS, default 12), in
#     chains of one or two kills, each killed job of 1-3 ranks resumed with --resume by a job
#     of the same rank count in half the chains and of another in the rest; every final
#     output byte-identical (cmp) to one plain process's, never in place before its job
#     finished, nothing left behind (no journal, no temporary output);
#   - a rank that fails (STREAMPIPE_TEST_FAIL_RANK) keeps the partial output and the ranks'
#     journals; --resume with another rank count finishes it;
#   - the killed job's journals refused for another input (same size, other bytes: exit 64
#     or 1, "written for other work"), the files kept; a run without --resume then starts
#     again and removes them.
# STREAMPIPE_TEST_JOURNAL_MS makes journal records frequent, so that the resumes take some.
# Exits 77 when mpirun is missing.
set -u
cli=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # the work dir becomes the cwd
work=${2:-$(mktemp -d)}
kills=${SP_MPI_KILLS:-12}
command -v mpirun >/dev/null 2>&1 || { echo "skipped: no mpirun"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export STREAMPIPE_TEST_JOURNAL_MS=20
mpi=(mpirun --allow-run-as-root --oversubscribe -x STREAMPIPE_TEST_JOURNAL_MS
     -x STREAMPIPE_TEST_FAIL_RANK)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

head -c $((1536 * 1024 * 4)) /dev/urandom >in.f32
args=(run --backend host --input in.f32 --stages sinmix:iters=40 --chunk 8k --threads 1)
"$cli" "${args[@]}" --output ref.f32 >/dev/null 2>&1 || { echo "the reference run failed"; exit 1; }

leftovers() { ls -A | grep -e '^\.out\.f32\.'; }

# The output is absent, or whole: a job killed after its commit has it in place (with its
# journals still there when the kill fell between the rename and their removal: the next
# job's commit removes them, which resume_job checks); one renamed early would differ from
# the reference.
not_early() {
    [ -e out.f32 ] || return 0
    if ! cmp -s out.f32 ref.f32; then
        fail "$1: the output was put in place before the job finished"
    fi
}

# killed_job RANKS [--resume]: a job killed with SIGKILL (every rank and mpirun) after a
# random pause; 0 when it was killed, 1 when it finished first.
killed_job() {
    local n=$1
    shift
    rm -f pid.*
    "${mpi[@]}" -n "$n" sh -c 'echo $$ >"pid.$OMPI_COMM_WORLD_RANK"; exec "$@"' sh \
        "$cli" "${args[@]}" --output out.f32 "$@" </dev/null >/dev/null 2>err.txt &
    local job=$! pause
    pause=$(printf '0.%03d' $((RANDOM % 1000)))
    sleep "$pause"
    kill -9 $(cat pid.* 2>/dev/null) "$job" 2>/dev/null
    wait "$job" 2>/dev/null
    local rc=$?
    grep -q 'resuming: ' err.txt && resumed=$((resumed + 1))
    if [ "$rc" -eq 0 ]; then
        cmp -s out.f32 ref.f32 || fail "a job that finished before its kill differs"
        return 1
    fi
    sleep 0.2 # ranks that mpirun's death reaches late (they die of it, or of the kill)
    not_early "kill -9 of $n ranks after $pause s"
    return 0
}

# resume_job RANKS WHAT: --resume must finish with the reference's bytes and leave nothing.
resume_job() {
    local err
    err=$("${mpi[@]}" -n "$1" "$cli" "${args[@]}" --output out.f32 --resume 2>&1 >/dev/null) ||
        fail "$2: the resume with $1 ranks failed: $err"
    case $err in *"resuming: "*) resumed=$((resumed + 1)) ;; esac
    cmp -s out.f32 ref.f32 || fail "$2: the resumed output (with $1 ranks) differs"
    [ -z "$(leftovers)" ] || fail "$2: left behind: $(leftovers | tr '\n' ' ')"
}

resumed=0 done_kills=0 chains=0 other_count=0
while [ "$done_kills" -lt "$kills" ]; do
    rm -f out.f32
    chains=$((chains + 1))
    n=$((1 + RANDOM % 3))
    extra=()
    for _ in 1 2; do
        killed_job "$n" "${extra[@]}" || break
        done_kills=$((done_kills + 1))
        extra=(--resume)
    done
    m=$n # the same rank count in odd chains, another in even ones
    if [ $((chains % 2)) -eq 0 ]; then
        m=$((1 + (n + RANDOM % 2) % 3))
        other_count=$((other_count + 1))
    fi
    resume_job "$m" "chain $chains ($n ranks killed)"
done
echo "kill -9: $done_kills kills of MPI jobs in $chains chains ($other_count resumed with" \
    "another rank count), $resumed resumes took records from the ranks' journals"
[ "$resumed" -gt 0 ] || fail "no resume took any records from a journal"

# A failing rank: exit 1, the partial output and the journals kept, a resume finishes it.
rm -f out.f32
STREAMPIPE_TEST_FAIL_RANK=1 "${mpi[@]}" -n 2 "$cli" "${args[@]}" --output out.f32 \
    >/dev/null 2>err.txt
rc=$?
[ "$rc" -eq 1 ] || fail "a failing rank: exit $rc, want 1"
[ ! -e out.f32 ] || fail "a failing rank: the output is in place"
leftovers | grep -q 'partial-' || fail "a failing rank: no partial output kept"
[ "$(leftovers | grep -c '\.journal\.')" -eq 2 ] || fail "a failing rank: not 2 journals kept"
grep -q "kept for --resume" err.txt || fail "a failing rank: nothing says the files are kept"
resume_job 3 "a failing rank's job"
echo "ok: a failing rank keeps the partial output and the journals; 3 ranks resumed it"

# The journals of another input (same size and name, other bytes) are refused; nothing lost.
# The job is killed once a journal holds a record (a file longer than its header). A job of a
# few tenths of a second can finish between that sight and the kill on a fast idle machine
# (seen about every other run): then it is tried again, up to 5 times.
cp in.f32 in.keep
journal_then_kill() {
    rm -f out.f32 pid.*
    "${mpi[@]}" -n 2 sh -c 'echo $$ >"pid.$OMPI_COMM_WORLD_RANK"; exec "$@"' sh \
        "$cli" "${args[@]}" --output out.f32 </dev/null >/dev/null 2>err.txt &
    local job=$!
    for _ in $(seq 1000); do
        find . -maxdepth 1 -name '.out.f32.journal.*' -size +300c | grep -q . && break
        sleep 0.01
    done
    kill -9 $(cat pid.* 2>/dev/null) "$job" 2>/dev/null
    wait "$job" 2>/dev/null
    sleep 0.2
    [ ! -e out.f32 ] && leftovers | grep -q '\.journal\.'
}
for try in 1 2 3 4 5; do
    journal_then_kill && break
    echo "the job meant for the refusal finished before its kill (try $try)"
done
if [ -e out.f32 ] || ! leftovers | grep -q '\.journal\.'; then
    fail "the job meant for the refusal finished, or left no journal (too fast a machine?)"
else
    head -c $((1536 * 1024 * 4)) /dev/urandom >in.f32
    before=$(leftovers | sort)
    "${mpi[@]}" -n 2 "$cli" "${args[@]}" --output out.f32 --resume >/dev/null 2>err.txt
    rc=$?
    [ "$rc" -eq 64 ] || [ "$rc" -eq 1 ] || fail "another input: exit $rc, want 64 (or 1)"
    grep -q "written for other work" err.txt || fail "another input: no reason given: $(cat err.txt)"
    [ ! -e out.f32 ] || fail "another input: an output was put in place"
    [ "$(leftovers | sort)" = "$before" ] || fail "another input: the killed job's files changed"
    echo "ok: the journals of another input are refused, the files kept"
fi
mv in.keep in.f32
"${mpi[@]}" -n 3 "$cli" "${args[@]}" --output out.f32 >/dev/null 2>&1 || fail "the fresh run failed"
cmp -s out.f32 ref.f32 || fail "the fresh run after a refusal differs"
[ -z "$(leftovers)" ] || fail "a fresh run left: $(leftovers | tr '\n' ' ')"

rm -f err.txt pid.*
if [ "$failures" -eq 0 ]; then
    echo "cli_run_mpi_resume: all passed"
    cd / && rm -rf "$work"
fi
[ "$failures" -eq 0 ]
