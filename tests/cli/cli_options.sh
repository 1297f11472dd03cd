#!/bin/sh
# cli_options.sh CLI: the option tables (tools/streampipe/options.c) on every command, without
# running a job: each bad value, unknown option, missing value, stray argument or missing
# required option exits 64 with a message naming the option; --help and -h exit 0 and list
# every option; counts take suffixes and 2^N. Each call gets 10 s: a value that should have
# been refused starts a job, which fails as exit 124 rather than hanging the test.
cli=$1
failures=0
expect() { # expect RC PATTERN ARGS...: exit status RC and PATTERN on stderr (or stdout for 0)
    want=$1 pattern=$2
    shift 2
    out=$(timeout 10 "$cli" "$@" 2>&1 >/dev/null)
    rc=$?
    [ "$rc" -eq 0 ] && out=$(timeout 10 "$cli" "$@" 2>/dev/null)
    if [ "$rc" -ne "$want" ] || ! printf '%s' "$out" | grep -q -- "$pattern"; then
        echo "FAIL: $* -> exit $rc (want $want), output lacks '$pattern': $out" | head -c 400
        echo
        failures=$((failures + 1))
    fi
}
for cmd in bench infer latency probe run; do
    expect 0 "usage: streampipe $cmd" "$cmd" --help
    expect 0 "--backend auto|host|cuda" "$cmd" -h
    expect 64 "$cmd: unknown option '--nosuch'" "$cmd" --nosuch
    expect 64 "$cmd: option '--device' needs a value" "$cmd" --device
    expect 64 "$cmd: unexpected argument 'stray'" "$cmd" stray
    expect 64 "--device: '-1' is not a count in \[0, 2147483647\]" "$cmd" --device -1
    expect 64 "--backend: 'gpu' is not auto, host or cuda" "$cmd" --backend gpu
    expect 64 "unknown option '--json=1'" "$cmd" --json=1
done
expect 64 "--records: '1x' is not a count in \[1, 1099511627776\]" bench --records 1x
expect 64 "--records: '0' is not a count" bench --records 0
# sinmix iterations have one bound, bench's --iters (each item of a list) as run's sinmix:iters
expect 64 "--iters: '99999999' is not a count in \[0, 1000000\]" bench --iters 99999999
expect 64 "--iters: '1000001' is not a count in \[0, 1000000\]" bench --iters 10,1000001
expect 64 "iters is not a count up to 1000000" run --input a --output b \
    --stages sinmix:iters=1000001
expect 64 "--graph: 'sometimes' is not off, on or auto" bench --graph sometimes
expect 64 "--memory: 'x' is not pageable or pinned" bench --memory x
expect 64 "--workload: unknown workload 'x'" bench --workload x
expect 64 "--repeat: '2^7' is not a count in \[1, 100\]" bench --repeat 2^7
expect 64 "bench: unknown option '--sweep'" bench --sweep depth
expect 64 "--depth: '2,,3' has an empty item" bench --depth 2,,3
expect 64 "--trace and --svg name the same file" bench --trace f --svg f
expect 64 "--devices: 'x' in '0,x' is not a device number" bench --devices 0,x
expect 64 "infer: --model and --input are required" infer --model m
expect 64 "--precision: 'fp16' is not fp32 or tf32" infer --precision fp16
expect 64 "--request-copy: 'dma' is not engine or kernel" latency --request-copy dma
expect 64 "--request-bytes: 6 is not a whole number of floats" latency --request-bytes 6
expect 64 "run: --input, --output and --stages are required" run --input a
expect 64 "--max-pinned: '4095' is not a count in \[4096" run --max-pinned 4095
expect 0 "--iters N,..." bench --help
expect 0 "  depth: 2,3,4,5,6,8" bench --help
expect 0 "--save-predictions FILE" infer --help
expect 0 "--request-copy engine|kernel" latency --help
expect 0 "--quick" probe --help
expect 0 "--max-pinned BYTES" run --help
expect 0 "--max-device BYTES" run --help
# chunk and depth: a count, or auto (0, the library's choice); one declaration (options.h)
expect 0 "--chunk N|auto,..." bench --help
expect 0 "--chunk N|auto" run --help
expect 0 "--chunk N|auto" infer --help
for cmd in bench infer run; do
    expect 0 "--depth K|auto" "$cmd" --help
done
expect 64 "--chunk: 'often' is not a count in \[0, " bench --chunk often
expect 64 "--depth: 'autox' is not a count in \[0, 64\]" run --depth autox
expect 64 "run: --input, --output and --stages are required" run --chunk auto --depth auto
expect 0 "--max-pinned BYTES" bench --help
expect 0 "--max-device BYTES" bench --help
# Every option's help says its default, and a count's its range ("[1, 2^40]", made from the
# table), as the README promises; files and the required LIST have no default to give. An
# option's help runs from its "  --name VALUE" line to the next option. The counts found
# are counted too, so that a help the reader cannot parse fails instead of passing empty.
annotations() { # annotations COMMAND MIN_COUNTS
    "$cli" "$1" --help | awk -v cmd="$1" -v min="$2" '
        function check() {
            if (name == "" || value == "" || value ~ /^FILE/ || value == "LIST") return
            numeric = value ~ /^[A-Z]+(,\.\.\.)?$/ && value !~ /^NAME/ || value ~ /^[0-9|]+$/
            counts += numeric
            if (numeric && text !~ /\[[0-9^]+, [0-9^]+\]/)
                { print "FAIL: " cmd " --" name ": no range in: " text; bad++ }
            if (text !~ /default/)
                { print "FAIL: " cmd " --" name ": no default in: " text; bad++ }
        }
        /^  --/ { check(); left = substr($0, 3); sub(/  .*/, "", left); split(left, w, " ")
                  name = substr(w[1], 3); value = w[2]; text = $0; next }
        /^                             / { text = text " " $0; next }
        { check(); name = "" }
        END { check()
              if (counts < min) { print "FAIL: " cmd ": " counts " counts, want " min; bad++ }
              exit bad > 0 }'
}
for spec in bench:10 infer:4 latency:8 probe:1 run:5; do
    annotations "${spec%%:*}" "${spec#*:}" || failures=$((failures + 1))
done
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok: option tables"
