#!/bin/sh
# cli_metrics_load.sh STREAMPIPE SCRATCH: `streampipe run --metrics` under abuse (HOST), the
# rest of issue 27's bad input (cli_metrics.sh has the refused addresses and the port in
# use). While one run goes:
# - 4 clients connect and never send a request, and one sends requests and never reads the
#   answers; they stay connected until after the run has ended (with the scrapers, 13 of the
#   endpoint's 16 connections: metrics_http.c, MAX_CONNECTIONS; more are refused until an
#   idle one times out after 5 s, which is the bound that keeps a flood from costing more);
# - meanwhile scrapes as fast as 8 client threads can make them (about 1000 a second asked
#   for), each answer checked to be the exposition text, at least 5 seconds' worth;
# and the run must succeed, exit promptly (the endpoint closes with those clients still
# connected), write the same output as a run without --metrics, and the scrapes must have
# been answered throughout (no stall of more than a second). The makespan beside the plain
# run's is printed, not judged: two host cores shared with the clients say little.
# Skips (77) without python3, or in a build without libmicrohttpd.
set -u
cli=$1 dir=$2
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
head -c $((24 << 20)) /dev/urandom >"$dir/in.f32"
start=$(date +%s.%N)
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/plain.f32" \
    --stages sinmix:iters=60 --chunk 64k --no-journal >/dev/null 2>"$dir/plain.err" ||
    fail "the plain run failed: $(cat "$dir/plain.err")"
plain_s=$(python3 -c "import time,sys; print(time.time() - float(sys.argv[1]))" "$start")
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/out.f32" \
    --stages sinmix:iters=60 --chunk 64k --no-journal --metrics 127.0.0.1:0 \
    >"$dir/run.out" 2>"$dir/run.err" &
pid=$!
url=
for _ in $(seq 100); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$dir/run.err" | head -n 1)
    [ -n "$url" ] && break
    if grep -q 'without libmicrohttpd' "$dir/run.err"; then
        wait $pid; echo "skipped: built without libmicrohttpd"; exit 77
    fi
    sleep 0.05
done
[ -n "$url" ] || { kill $pid; cat "$dir/run.err"; fail "no metrics address on stderr"; }
python3 - "$url" "$pid" "$plain_s" <<'PY' || { kill $pid 2>/dev/null; fail "the endpoint under load"; }
import os, socket, sys, threading, time, urllib.parse, urllib.request
url, pid, plain_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
u = urllib.parse.urlparse(url)
idle = [socket.create_connection((u.hostname, u.port)) for _ in range(4)]  # never send
mute = socket.create_connection((u.hostname, u.port))  # asks, never reads
mute.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 50)
t0 = time.time()

ok, bad, gaps, last = [0], [], [0.0], [time.time()]
lock = threading.Lock()
stop = threading.Event()

def scrape():
    while not stop.is_set():
        try:
            body = urllib.request.urlopen(url, timeout=5).read().decode()
            good = "streampipe_records_total" in body and "# TYPE" in body
        except Exception as e:  # the run ending closes the endpoint: stop then
            if stop.is_set():
                return
            good, body = False, repr(e)
        now = time.time()
        with lock:
            if good:
                ok[0] += 1
                gaps[0] = max(gaps[0], now - last[0])
                last[0] = now
            elif not stop.is_set():
                bad.append((now, body[:200]))
        time.sleep(0.008)  # 8 threads, each about 125 a second asked for

threads = [threading.Thread(target=scrape) for _ in range(8)]
for t in threads:
    t.start()
# until the run ends (its endpoint goes with it) or 5 s have passed, then stop scraping
proc = f"/proc/{pid}/stat"
def running():
    try:
        return open(proc).read().split(") ")[1][0] not in "ZX"
    except (FileNotFoundError, IndexError):
        return False
while running() and time.time() - t0 < 120:
    time.sleep(0.05)
stop.set()
for t in threads:
    t.join()
took = time.time() - t0
# every scrape answered while the run goes; refused ones only once its endpoint has closed,
# which is just before it exits (the last second before the process was seen gone), and
# reset ones then too: a scrape the endpoint had accepted when it closed (seen in CI under
# ASan, where the run's end is slower)
ended = t0 + took
closing = ("refused", "reset", "RemoteDisconnected")
errors = [b for t, b in bad if not (any(w in b for w in closing) and t > ended - 1.0)]
print(f"{ok[0]} scrapes answered in {took:.1f} s ({ok[0] / took:.0f}/s), longest gap "
      f"{gaps[0]:.3f} s, {len(errors)} bad answers; run with --metrics {took:.1f} s against "
      f"{plain_s:.1f} s without")
assert not errors, errors[:3]
assert ok[0] >= 100, "fewer than 100 scrapes answered"
assert gaps[0] < 1.0, "the endpoint stalled for a second or more"
for s in idle + [mute]:
    s.close()
PY
# the run ended with those clients still connected: it must not hang closing the endpoint
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && { kill $pid; fail "the run did not exit within 10 s of its end"; }
wait $pid || { cat "$dir/run.err"; fail "the run under scrapes failed"; }
cmp -s "$dir/plain.f32" "$dir/out.f32" || fail "the output under scrapes differs"
echo "ok: the run under load succeeded with the same output"
