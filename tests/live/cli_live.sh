#!/bin/sh
# cli_live.sh STREAMPIPE SCRATCH: `--live` on a pseudo-terminal (script(1)) draws the panel
# (progress, rates, bottleneck, memory) and the run ends cleanly with its report; with
# stderr not a terminal it writes nothing but what a run without --live writes (no escape
# sequence, the same report lines). Skips (77) without script(1).
set -u
cli=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
head -c $((8 << 20)) /dev/urandom >"$dir/in.f32"
run="$cli run --backend host --input $dir/in.f32 --stages sinmix:iters=60 --chunk 64k"

# not a terminal: silence but for the report
$run --output "$dir/a" --live >"$dir/live.out" 2>"$dir/live.err" || fail "run --live failed"
$run --output "$dir/b" >"$dir/plain.out" 2>"$dir/plain.err" || fail "run failed"
if grep -q "$(printf '\033')" "$dir/live.err" "$dir/live.out"; then fail "escapes off a terminal"; fi
[ "$(wc -l <"$dir/live.out")" -eq "$(wc -l <"$dir/plain.out")" ] || fail "the report differs"
[ ! -s "$dir/live.err" ] || fail "stderr not empty: $(cat "$dir/live.err")"
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
