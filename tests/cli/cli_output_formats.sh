#!/bin/sh
# cli_output_formats.sh CLI SOURCE_DIR HAVE_CJSON: the two ways to save the digits MLP's labels
# write different formats, and --help and the README say exactly which: `run --stages mlp:`
# writes the head's records, one little-endian int32 per image; `infer --save-predictions`
# writes one byte per image, as the --labels file holds them. Where the build has cJSON
# (HAVE_CJSON is ON) both run on the committed images, on the host backend, and the files
# are checked: their sizes, and the same labels in each.
set -u
cli=$1
src=$2
have_cjson=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# help COMMAND OPTION: that option's lines in `COMMAND --help`, up to the next option.
help() {
    "$cli" "$1" --help | awk -v opt="  --$2 " '
        index($0, opt) == 1 { on = 1; print; next }
        on && /^  --/ { exit }
        on { print }'
}
help run stages | grep -q 'one little-endian int32 label per image' ||
    fail "run --help: --stages does not say mlp writes an int32 per image: $(help run stages)"
help infer save-predictions | grep -q 'one byte per image' ||
    fail "infer --help: --save-predictions does not say one byte per image"
help infer labels | grep -q 'one byte per image' ||
    fail "infer --help: --labels does not say one byte per image"
tr '\n' ' ' <"$src/README.md" | grep -q 'one little-endian int32 label .*per image' ||
    fail "README: run's mlp output format is not stated"
tr '\n' ' ' <"$src/README.md" | grep -q 'save-predictions.\{0,80\} one byte per image' ||
    fail "README: infer --save-predictions' format is not stated"

if [ "$have_cjson" = ON ]; then
    models=$src/models
    images=$models/digits_test_images.u8
    n=$(($(wc -c <"$images") / 64))
    "$cli" run --backend host --input "$images" --output "$dir/run.i32" \
        --stages "mlp:$models/digits_mlp.safetensors" >/dev/null 2>&1 || fail "run mlp exited $?"
    "$cli" infer --backend host --model "$models/digits_mlp.safetensors" --input "$images" \
        --repeat 1 --save-predictions "$dir/infer.u8" >/dev/null 2>&1 || fail "infer exited $?"
    [ "$(wc -c <"$dir/run.i32")" -eq $((4 * n)) ] || fail "run wrote not 4 bytes x $n images"
    [ "$(wc -c <"$dir/infer.u8")" -eq "$n" ] || fail "infer wrote not 1 byte x $n images"
    od -An -v -w4 -tu4 --endian=little "$dir/run.i32" | tr -d ' ' >"$dir/run.txt"
    od -An -v -w1 -tu1 "$dir/infer.u8" | tr -d ' ' >"$dir/infer.txt"
    cmp -s "$dir/run.txt" "$dir/infer.txt" || fail "run's int32 labels differ from infer's bytes"
else
    echo "skipped: running them (built without cJSON: no model loads)"
fi
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok: run writes int32 labels, infer one byte each, and the help and README say so"
