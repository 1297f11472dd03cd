#!/bin/sh
# cli_bench_devices.sh CLI: `streampipe bench --devices` on HOST (three host backends as one
# sp_group run, every output element verified by bench itself): the JSON has one row per
# device whose records add up to the run's, and the merged report covers every record; the
# text names each device and says why the merged report has no engine table (the units flow
# through the rings untimed, which its notes say; not graph mode, which is off); a bad list is
# a usage error (64).
cli=$1
fail() { echo "FAIL: $*"; exit 1; }
json=$("$cli" bench --backend host --devices 0,1,2 --records 2^20 --chunk 16k --repeat 2 \
       --seed 7 --json) || fail "bench --devices exited $?"
if command -v python3 >/dev/null 2>&1; then
    printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d["group"]["per_device"]
assert d["group"]["devices"] == 3 and len(rows) == 3, rows
assert sum(r["records"] for r in rows) == d["records"] == d["report"]["records"], rows
assert all(r["units"] >= 0 for r in rows) and len(d["group"]["seconds"]) == 2
assert d["verification"]["elements_checked"] >= 3 * d["records"], d["verification"]
' || fail "unexpected JSON: $json"
fi
text=$("$cli" bench --backend host --devices 0,1 --records 64k --repeat 1 2>/dev/null) ||
    fail "text run exited $?"
printf '%s\n' "$text" | grep -q '^devices  *2 in one sp_group run' || fail "no devices line: $text"
untimed=$(printf '%s\n' "$text" | grep 'per engine')
printf '%s' "$untimed" | grep -q 'not measured (batches fed through one ring, untimed' ||
    fail "per engine line gives no or a wrong reason: $untimed"
printf '%s\n' "$text" | grep -q '^  notes .*no per-operation timings' || fail "notes: $text"
"$cli" bench --backend host --devices 0,x >/dev/null 2>&1
[ $? -eq 64 ] || fail "--devices 0,x should be a usage error"
echo "ok: bench --devices on host"
