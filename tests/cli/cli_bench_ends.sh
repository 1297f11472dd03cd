#!/bin/sh
# cli_bench_ends.sh CLI [BACKEND]: `streampipe bench --in/--out device|host` (issue 25): each
# of host->device, device->host and device->device runs the comparison with every output
# element verified by bench itself (a device output is poisoned on the device and read back
# for the check), every report's pcie_bytes checked against its ends inside bench (a run
# whose report disagrees exits 1), and the JSON says the ends and the bytes. With lists of
# --iters, --chunk or --depth, or --devices, the device ends are a usage error (64). BACKEND: host (CI) or cuda (the GPU
# machine, where the rows are the ones to quote).
cli=$1
backend=${2:-host}
fail() { echo "FAIL: $*"; exit 1; }
records=2^20
[ "$backend" = cuda ] && records=2^26
for ends in "host device" "device host" "device device"; do
    set -- $ends
    json=$("$cli" bench --backend "$backend" --records "$records" --iters 0 --repeat 3 \
           --memory pinned --in "$1" --out "$2" --json) || fail "--in $1 --out $2 exited $?"
    [ -n "${SP_BENCH_ENDS_JSONL:-}" ] && printf '%s\n' "$json" | tr -d '\n' >>"$SP_BENCH_ENDS_JSONL" &&
        echo >>"$SP_BENCH_ENDS_JSONL"
    if command -v python3 >/dev/null 2>&1; then
        printf '%s' "$json" | python3 -c '
import json, sys
d, ins, outs = json.load(sys.stdin), sys.argv[1], sys.argv[2]
each = 4 * d["records"]
assert d["in"] == ins and d["out"] == outs, (d["in"], d["out"])
assert d["pcie_bytes"] == (ins == "host") * each + (outs == "host") * each, d["pcie_bytes"]
assert d["verification"]["elements_checked"] >= 4 * 3 * d["records"], d["verification"]
rows = {k: d[k] for k in ("serial", "pipelined", "ceiling")}
assert all("pcie_gbps" in r for r in rows.values()), rows
p, c = rows["pipelined"], rows["ceiling"]
print("--in %s --out %s: pipelined %.2f GB/s over PCIe, %.2f GB/s in+out; ceiling %.2f, "
      "%.3f of it" % (ins, outs, p["pcie_gbps"], p["gbps"], c["gbps"], d["fraction_of_ceiling"]))
' "$1" "$2" || fail "unexpected JSON for --in $1 --out $2: $json"
    fi
done
"$cli" bench --backend host --in device --depth 2,3 >/dev/null 2>&1
[ $? -eq 64 ] || fail "--in device with a --depth list should be a usage error"
"$cli" bench --backend host --out device --devices 0,1 >/dev/null 2>&1
[ $? -eq 64 ] || fail "--out device with --devices should be a usage error"
"$cli" bench --backend host --in gpu >/dev/null 2>&1
[ $? -eq 64 ] || fail "--in gpu should be a usage error"
echo "ok: bench with device ends on $backend"
