#!/bin/sh
# cli_json_identity.sh CLI MODELS_DIR HAVE_CJSON: every command's --json object starts with the
# same identifying keys, "tool":"streampipe", "version" (what --version prints) and
# "command" (the command's name), so that a script reading a saved result can tell what wrote
# it. Each command runs cheaply on the host backend; infer only where the build has cJSON
# (HAVE_CJSON is ON), since without it no model loads.
set -u
cli=$1
models=$2
have_cjson=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3 to read the JSON"; exit 77; }
version=$("$cli" --version | sed 's/^streampipe //')
failures=0

# check COMMAND ARGS...: `streampipe COMMAND --backend host --json ARGS` exits 0 and its JSON
# begins with tool, version and command, with no other identifying key.
check() {
    cmd=$1
    shift
    if ! "$cli" "$cmd" --backend host --json "$@" >"$dir/out.json" 2>"$dir/err"; then
        echo "FAIL: $cmd $* exited non-zero: $(head -c 300 "$dir/err")"
        failures=$((failures + 1))
        return
    fi
    if python3 - "$dir/out.json" "$cmd" "$version" <<'EOF'; then
import json, sys
path, cmd, version = sys.argv[1:]
with open(path) as f:
    d = json.load(f)
first = list(d)[:3]
want = {"tool": "streampipe", "version": version, "command": cmd}
assert first == ["tool", "version", "command"], "first keys: %s" % first
assert {k: d[k] for k in first} == want, "%s != %s" % ({k: d[k] for k in first}, want)
assert "library" not in d, "an old identifying key: library"
EOF
        echo "ok: $cmd"
    else
        echo "FAIL: $cmd $*: $(head -c 300 "$dir/out.json")"
        failures=$((failures + 1))
    fi
}

check probe --quick
check latency --requests 5 --bulk-records 2^14
check bench --workload tiny --repeat 1
head -c 65536 /dev/zero >"$dir/in.f32"
check run --input "$dir/in.f32" --output "$dir/out.f32" --stages sinmix:iters=1
if [ "$have_cjson" = ON ]; then
    check infer --model "$models/digits_mlp.safetensors" --input "$models/digits_test_images.u8" \
        --labels "$models/digits_test_labels.u8" --repeat 1
else
    echo "skipped: infer (built without cJSON: no model loads)"
fi
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok: every command's JSON identifies itself alike"
