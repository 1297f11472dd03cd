#!/bin/sh
# cli_live.sh STREAMPIPE SCRATCH: `--live` on a pseudo-terminal (script(1)) draws the panel
# (progress, rates, bottleneck, memory) and the run ends cleanly with its report; with
# stderr not a terminal it writes nothing but what a run without --live writes (no escape
# sequence, the same report lines). Without --live the panel shows on a terminal once the
# run has gone on 2 s (LIVE_AUTO_AFTER_S): a run fed slowly from stdin lasts longer than
# that on any machine; a short run shows none, and neither does one with --no-live, nor one
# off a terminal. bench --live on a pty too. Skips (77) without script(1).
set -u
cli=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
esc=$(printf '\033')
head -c $((4 << 20)) /dev/urandom >"$dir/in.f32"
run="$cli run --backend host --stages sinmix:iters=60 --chunk 64k --input $dir/in.f32"
# half the input, 3 s of nothing, the rest: a run of more than 3 s that costs little CPU
slow_run="{ head -c $((2 << 20)) $dir/in.f32; sleep 3; tail -c $((2 << 20)) $dir/in.f32; } |
    $cli run --backend host --stages sinmix:iters=1 --chunk 64k --input -"
on_pty() { # on_pty LOG COMMAND: the command on a pseudo-terminal, everything it wrote in LOG
    script -qefc "sh -c '$2'" "$1" >/dev/null 2>&1 </dev/null
}

# not a terminal: silence but for the report
$run --output "$dir/a" --live >"$dir/live.out" 2>"$dir/live.err" || fail "run --live failed"
$run --output "$dir/b" >"$dir/plain.out" 2>"$dir/plain.err" || fail "run failed"
if grep -q "$esc" "$dir/live.err" "$dir/live.out"; then fail "escapes off a terminal"; fi
[ "$(wc -l <"$dir/live.out")" -eq "$(wc -l <"$dir/plain.out")" ] || fail "the report differs"
[ ! -s "$dir/live.err" ] || fail "stderr not empty: $(cat "$dir/live.err")"
[ ! -s "$dir/plain.err" ] || fail "stderr not empty: $(cat "$dir/plain.err")"
cmp -s "$dir/a" "$dir/b" || fail "the outputs differ"
echo "ok: off a terminal, --live adds nothing"

command -v script >/dev/null 2>&1 || { echo "skipped: no script(1) for a pty"; exit 77; }
script -qefc "$run --output $dir/c --live" "$dir/pty.log" >/dev/null 2>&1 </dev/null ||
    fail "run --live on a pty failed: $(tail -5 "$dir/pty.log")"
for word in "records" "GB/s:" "bottleneck:" "held:" "rate in"; do
    grep -q "$word" "$dir/pty.log" || fail "no '$word' on the pty: $(tail -c 600 "$dir/pty.log")"
done
cmp -s "$dir/a" "$dir/c" || fail "the pty run's output differs"
echo "ok: on a pty the panel shows and the run ends with its report"

# the default, three slow runs at once (they sleep, so together they take one's time): on a
# pty the panel after 2 s, on a pty with --no-live none, off a terminal nothing
$cli run --backend host --stages sinmix:iters=1 --input "$dir/in.f32" --output "$dir/a1" \
    >/dev/null 2>&1 || fail "the reference run failed"
on_pty "$dir/auto.log" "$slow_run --output $dir/auto" & auto=$!
on_pty "$dir/nolive.log" "$slow_run --output $dir/nolive --no-live" & nolive=$!
sh -c "$slow_run --output $dir/off" >"$dir/off.out" 2>"$dir/off.err" & off=$!
wait $auto || fail "the slow run on a pty failed: $(tail -5 "$dir/auto.log")"
wait $nolive || fail "the slow run with --no-live failed: $(tail -5 "$dir/nolive.log")"
wait $off || fail "the slow run off a terminal failed: $(cat "$dir/off.err")"
for word in "GB/s:" "bottleneck:" "held:" "${esc}[4A"; do
    grep -qF "$word" "$dir/auto.log" ||
        fail "no panel ('$word') on a pty after 2 s: $(tail -c 600 "$dir/auto.log")"
done
# its first drawing is 2 s or more into the run (the panel's progress line says how long)
first=$(grep -o "GB/s in, [0-9.]* s" "$dir/auto.log" | head -1 | sed 's/.*, \([0-9.]*\) s/\1/')
if [ -z "$first" ] || ! awk -v t="$first" 'BEGIN { exit !(t >= 2.0) }'; then
    fail "the panel showed at '$first' s, before 2 s"
fi
# the panel erased, then the report (no line left over from the progress line)
grep -qF "${esc}[Jstreampipe run (library" "$dir/auto.log" ||
    fail "the panel was not erased before the report: $(tail -c 600 "$dir/auto.log")"
if grep -qF "bottleneck:" "$dir/nolive.log"; then fail "a panel with --no-live"; fi
grep -qF "MiB from stdin" "$dir/nolive.log" || fail "no progress line with --no-live"
grep -qF "rate in" "$dir/nolive.log" || fail "no report with --no-live"
if grep -qF "$esc" "$dir/off.err" "$dir/off.out"; then fail "escapes off a terminal"; fi
[ ! -s "$dir/off.err" ] || fail "stderr not empty off a terminal: $(cat "$dir/off.err")"
for out in auto nolive off; do
    cmp -s "$dir/a1" "$dir/$out" || fail "the $out run's output differs"
done
echo "ok: without --live the panel shows on a pty after 2 s; not with --no-live, nor off one"

# a short run on a pty without --live: no panel, the progress line and the report as ever
script -qefc "$cli run --backend host --stages sinmix:iters=1 --input $dir/in.f32 \
    --output $dir/short" "$dir/short.log" >/dev/null 2>&1 </dev/null ||
    fail "a short run on a pty failed: $(tail -5 "$dir/short.log")"
if grep -qF "${esc}[" "$dir/short.log"; then fail "a panel for a short run"; fi
grep -qF "rate in" "$dir/short.log" || fail "no report for a short run"
cmp -s "$dir/a1" "$dir/short" || fail "the short run's output differs"
echo "ok: a short run on a pty shows no panel"

# bench on a pty with --live: the panel over its runs, erased before the result; and (under
# TSan, in CI) no read of a pipeline bench has destroyed: each run is unwatched once counted
script -qefc "$cli bench --backend host --records 2^22 --repeat 1 --live" "$dir/bench.log" \
    >/dev/null 2>&1 </dev/null || fail "bench --live on a pty failed: $(tail -5 "$dir/bench.log")"
# any of its runs' labels. The panel draws at a 0.2 s tick only while a run goes, and bench
# verifies between runs: at 2^20 records its runs took 0.05-0.15 s each, so a tick could fall
# in every gap (seen failing on a 2-core machine); at 2^22 they fill most of its 1.5 s
grep -qE "(serial|pipelined|traced|ceiling) run 1:" "$dir/bench.log" ||
    fail "no panel over bench's runs"
grep -qF "${esc}[J" "$dir/bench.log" || fail "bench's panel was not erased"
grep -qF "speedup" "$dir/bench.log" || fail "no bench result: $(tail -c 600 "$dir/bench.log")"
echo "ok: bench --live on a pty"
