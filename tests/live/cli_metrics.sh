#!/bin/sh
# cli_metrics.sh STREAMPIPE SCRATCH: `streampipe run --metrics` scraped by curl while a run of
# a few seconds goes (HOST): every line of every scrape is valid Prometheus text format
# (HELP and TYPE before each family's samples, names and labels well formed, values
# numbers), the required families are there and counters never go down between scrapes;
# the GPU engines' busy time (sampled timing) and the hidden-transfer gauge are served.
# Bad input: a non-loopback address without
# --metrics-any (64), a port in use (1, said), --metrics-any alone (64). Skips (77) without
# curl or python3, or in a build without libmicrohttpd.
set -u
cli=$1 dir=$2
command -v curl >/dev/null 2>&1 || { echo "skipped: no curl"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# 16 MiB of float32 through sinmix: a few seconds on two host cores
head -c $((16 << 20)) /dev/urandom >"$dir/in.f32"
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/out.f32" \
    --stages sinmix:iters=60 --chunk 64k --metrics 127.0.0.1:0 >"$dir/run.out" 2>"$dir/run.err" &
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
n=0
while kill -0 $pid 2>/dev/null; do
    curl -sf "$url" >"$dir/scrape.$n" 2>/dev/null && n=$((n + 1))
    sleep 0.1
done
wait $pid || { cat "$dir/run.err"; fail "the run failed"; }
[ "$n" -ge 3 ] || fail "only $n scrapes during the run (too short a run?)"
records=$(($(wc -c <"$dir/in.f32") / 4))
python3 - "$dir" "$n" "$records" <<'PY' || fail "bad exposition text"
import re, sys
d, n, records = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
sample = re.compile(rf'^({name})(\{{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\}})? (\S+)$')
need = ["streampipe_records_total", "streampipe_bytes_total", "streampipe_busy_seconds_total",
        "streampipe_in_flight_chunks", "streampipe_wait_seconds_total", "streampipe_errors_total",
        "streampipe_pinned_bytes"]
last = {}
for k in range(n):
    help_, type_, values = set(), {}, {}
    for line in open(f"{d}/scrape.{k}"):
        line = line.rstrip("\n")
        if line.startswith("# HELP "):
            help_.add(line.split(" ")[2]); continue
        if line.startswith("# TYPE "):
            _, _, fam, kind = line.split(" ")
            assert kind in ("counter", "gauge"), line
            type_[fam] = kind; continue
        m = sample.match(line)
        assert m, f"scrape {k}: not a sample line: {line!r}"
        fam = m.group(1)
        assert fam in help_ and fam in type_, f"scrape {k}: {fam} without HELP/TYPE first"
        values[line.rsplit(" ", 1)[0]] = (type_[fam], float(m.group(7)))
    for fam in need:
        assert fam in type_, f"scrape {k}: no {fam}"
    for key, (kind, v) in values.items():
        if kind == "counter" and key in last:
            assert v >= last[key][1], f"scrape {k}: counter {key} went down"
    for key, (kind, v) in values.items():
        if key == "streampipe_hidden_transfer_ratio":
            assert kind == "gauge" and 0.0 <= v <= 1.0, f"scrape {k}: {key} {v}"
            hidden_seen = True
    last = values
# the run has a report, so its GPU engines are timed (sampled): their busy time is served,
# and the hidden-transfer gauge once a window is timed
for engine in ("h2d", "sinmix", "d2h"):
    key = f'streampipe_busy_seconds_total{{engine="{engine}"}}'
    assert key in last and last[key][1] > 0, f"last scrape: no {key} above 0"
assert "hidden_seen" in globals(), "no scrape had streampipe_hidden_transfer_ratio"
print(f"{n} scrapes parsed")
PY
echo "ok: $n scrapes during the run, every line parsed"

# bad input: each refused with its own words, no run
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/o2" --stages sinmix:iters=1 \
    --metrics 8.8.8.8:9100 2>"$dir/bad.err"
[ $? -eq 64 ] && grep -q 'not a loopback address' "$dir/bad.err" || fail "a non-loopback address was not refused"
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/o2" --stages sinmix:iters=1 \
    --metrics-any 2>"$dir/bad.err"
[ $? -eq 64 ] || fail "--metrics-any alone was not a usage error"
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/o2" --stages sinmix:iters=1 \
    --metrics 127.0.0.1:99999 2>"$dir/bad.err"
[ $? -eq 64 ] || fail "port 99999 was not a usage error"
python3 -c 'import socket,time,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); print(s.getsockname()[1], flush=True); time.sleep(20)' >"$dir/port" &
holder=$!
for _ in $(seq 50); do [ -s "$dir/port" ] && break; sleep 0.05; done
"$cli" run --backend host --input "$dir/in.f32" --output "$dir/o2" --stages sinmix:iters=1 \
    --metrics "127.0.0.1:$(cat "$dir/port")" 2>"$dir/bad.err"
rc=$?
kill $holder 2>/dev/null
[ $rc -eq 1 ] && grep -q 'cannot listen' "$dir/bad.err" || fail "a port in use: exit $rc, $(cat "$dir/bad.err")"
[ ! -e "$dir/o2" ] || fail "a refused run left an output"
echo "ok: bad addresses refused"
