#!/usr/bin/env bash
# `streampipe run --resume` against crashes, on HOST (issue 29). Usage:
#   cli_run_resume.sh PATH_TO_STREAMPIPE WORK_DIR
# Over a file of fresh random floats (8 MiB, sinmix:iters=50, under a second a run):
#   - kill -9 at random moments (SP_CRASH_KILLS, default 100), in chains of up to five, each
#     kill followed by --resume, the last resume let finish;
#   - the simulated power cut (STREAMPIPE_TEST_POWER_CUT_AT) after a random number of bytes,
#     in fresh and in resumed runs, each followed by --resume;
#   - SIGINT at random moments: status 130 and one line with the command to resume, which is
#     then run as printed.
# After every interruption the output is not in place (or still the old one); every final
# output is byte-identical (cmp) to an uninterrupted run's; nothing else is left behind.
# STREAMPIPE_TEST_JOURNAL_MS makes journal records frequent, so that the resumes take some.
set -u
cli=$1
work=$2
kills=${SP_CRASH_KILLS:-100}
command -v python3 >/dev/null || { echo "skipped: no python3 to make the input"; exit 77; }
env --default-signal=INT true 2>/dev/null ||
    { echo "skipped: this env has no --default-signal (coreutils 8.31)"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export STREAMPIPE_TEST_JOURNAL_MS=20
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

python3 - <<'EOF' || exit 2
import os, random, struct
rng = random.Random(int.from_bytes(os.urandom(8), "little"))
n = 2 * 1024 * 1024
with open("in.f32", "wb") as f:
    f.write(struct.pack("<%df" % n, *(rng.uniform(-4, 4) for _ in range(n))))
EOF
args=(run --backend host --input in.f32 --output out.f32 --stages sinmix:iters=50 --chunk 16k)
"$cli" "${args[@]}" --output ref.f32 >/dev/null 2>&1 || { echo "the reference run failed"; exit 1; }

random_pause() { sleep "$(printf '0.%03d' $((RANDOM % 600)))"; }

# --no-journal: the same output, no journal at any time; with --resume, a usage error.
"$cli" "${args[@]}" --output nj.f32 --no-journal >/dev/null 2>&1 || fail "--no-journal run failed"
cmp -s nj.f32 ref.f32 || fail "--no-journal: the output differs from the reference"
ls -a | grep -q 'nj.f32.journal' && fail "--no-journal left a journal"
"$cli" "${args[@]}" --output nj.f32 --no-journal --resume >/dev/null 2>&1
[ $? -eq 64 ] || fail "--no-journal --resume is not a usage error (64)"
rm -f nj.f32

# A background job of a script ignores SIGINT (POSIX): the runs get the default back.
start() { exec env --default-signal=INT "$cli" "${args[@]}" "$@"; }

# The output is not in place: absent, or the old one the chain began with.
not_in_place() {
    if [ -s old.f32 ]; then
        cmp -s out.f32 old.f32 || fail "$1: the output was replaced before the run finished"
    elif [ -e out.f32 ]; then
        fail "$1: the output was put in place before the run finished"
    fi
}

# The run was killed after its commit (the rename and the journal's removal), while it was
# exiting: a slow exit, as ASan's leak check at exit, leaves that window open. Its output is
# then whole, which cmp shows; an output renamed early, before its records were all written,
# would differ from the reference.
committed() {
    [ -e out.f32 ] && ! [ -e .out.f32.journal ] && cmp -s out.f32 ref.f32
}

# Runs "$cli ${args[@]} $@" in the background, kills it with SIGKILL after a random pause:
# 0 when it was killed, 1 when it finished first (its output then checked).
killed_run() {
    start "$@" >/dev/null 2>err.txt &
    local pid=$!
    random_pause
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    local rc=$?
    grep -q 'resuming: ' err.txt && resumed=$((resumed + 1))
    if [ "$rc" -eq 137 ] && ! committed; then
        not_in_place "kill -9"
        return 0
    fi
    [ "$rc" -eq 0 ] || [ "$rc" -eq 137 ] || fail "a run exited $rc (not killed): $(cat err.txt)"
    cmp -s out.f32 ref.f32 || fail "a run that finished before its kill differs"
    cp out.f32 old.f32 # the old output from now on
    return 1
}

finish_and_compare() {
    local err
    err=$("$cli" "${args[@]}" --resume 2>&1 >/dev/null) || fail "the last resume failed: $err"
    case $err in *"resuming: "*) resumed=$((resumed + 1)) ;; esac
    cmp -s out.f32 ref.f32 || fail "$1: the resumed output differs from the uninterrupted one"
}

start_chain() { # half the chains over an old output, which must stay until the end
    rm -f out.f32 old.f32
    if [ $((RANDOM % 2)) -eq 0 ]; then
        printf 'OLD' >old.f32
        cp old.f32 out.f32
    fi
}

resumed=0
done_kills=0
chains=0
while [ "$done_kills" -lt "$kills" ]; do
    start_chain
    chains=$((chains + 1))
    extra=()
    for _ in 1 2 3 4 5; do
        killed_run "${extra[@]}" || break # it finished
        done_kills=$((done_kills + 1))
        extra=(--resume)
    done
    finish_and_compare "kill -9 chain $chains"
done
echo "kill -9: $done_kills kills in $chains chains, $resumed resumes took records from a journal"

cuts=0
for round in $(seq 1 15); do
    start_chain
    resume=()
    [ $((round % 3)) -eq 0 ] && killed_run && resume=(--resume)
    at=$(( (RANDOM * 32768 + RANDOM) % (8 * 1024 * 1024) ))
    err=$(STREAMPIPE_TEST_POWER_CUT_AT=$at start "${resume[@]}" 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" -ne 0 ]; then
        cuts=$((cuts + 1))
        case $err in *"power was cut"*) ;; *) fail "power cut at $at: exit $rc: $err" ;; esac
        not_in_place "power cut at $at"
    fi
    finish_and_compare "power cut at $at"
done
echo "power cut: $cuts cuts at random bytes, each resumed"

stops=0
early=0
for round in $(seq 1 8); do
    start_chain
    start >/dev/null 2>err.txt &
    pid=$!
    random_pause
    kill -INT "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        cmp -s out.f32 ref.f32 || fail "a run that finished before its SIGINT differs"
        continue
    fi
    stops=$((stops + 1))
    [ "$rc" -eq 130 ] || fail "SIGINT: exit $rc, want 130"
    not_in_place "SIGINT"
    line=$(grep 'to resume: streampipe run' err.txt)
    if [ -z "$line" ] && ! [ -e .out.f32.journal ] && ! [ -s err.txt ]; then
        # the signal came before the run had installed its handler (a slow start, as under
        # ASan): it died of the default action, before any output or journal existed
        early=$((early + 1))
        "$cli" "${args[@]}" >/dev/null 2>&1 || fail "SIGINT: the run after an early stop failed"
        cmp -s out.f32 ref.f32 || fail "SIGINT: the run after an early stop differs"
        continue
    fi
    [ "$(printf '%s\n' "$line" | grep -c .)" -eq 1 ] || fail "SIGINT: no single resume line"
    case $line in *" --resume") ;; *) fail "SIGINT: the resume line lacks --resume: $line" ;; esac
    eval "\"\$cli\" ${line#*to resume: streampipe}" >/dev/null 2>&1 ||
        fail "SIGINT: the printed command failed: $line"
    cmp -s out.f32 ref.f32 || fail "SIGINT: the resumed output differs"
done
echo "SIGINT: $stops stops with exit 130 ($early before the handler was installed), each resumed by the command printed"

rm -f err.txt old.f32
left=$(ls -A | grep -v -x -e in.f32 -e ref.f32 -e out.f32)
[ -z "$left" ] || fail "left behind: $left"
[ "$resumed" -gt 0 ] || fail "no resume took any records from its journal"
[ "$failures" -eq 0 ] && echo "all resumed outputs are byte-identical" && cd / &&
    rm -rf "$work"
[ "$failures" -eq 0 ]
