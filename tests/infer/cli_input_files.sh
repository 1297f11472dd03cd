#!/bin/sh
# cli_input_files.sh STREAMPIPE MODELS_DIR: `streampipe infer` refuses, at once, with exit 1 and
# a reason, a --model, --input or --labels that is a FIFO (a plain open waited for a writer for
# ever), a device (/dev/zero was read until memory ran out) or a file over the size cap (a
# sparse file, so nothing is written). Each run gets 10 s; a hang fails as exit 124. The
# committed files still run (exit 0).
set -u
cli=$1
models=$2
model=$models/digits_mlp.safetensors
images=$models/digits_test_images.u8
labels=$models/digits_test_labels.u8
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/fifo" || exit 1
truncate -s 300M "$dir/big" || exit 1
failed=0

# expect CODE REASON ARGS...: `infer --backend host ARGS` exits CODE within 10 s, its stderr
# holding REASON.
expect() {
    want=$1 reason=$2
    shift 2
    timeout 10 "$cli" infer --backend host "$@" >/dev/null 2>"$dir/stderr"
    rc=$?
    if [ "$rc" -eq "$want" ] && grep -q -- "$reason" "$dir/stderr"; then
        echo "ok (exit $rc): infer $*"
    else
        echo "FAILED (exit $rc, expected $want and \"$reason\"): infer $*"
        cat "$dir/stderr"
        failed=1
    fi
}

expect 1 "is not a regular file (it is a FIFO)" --model "$dir/fifo" --input "$images"
expect 1 "is not a regular file (it is a FIFO)" --model "$model" --input "$dir/fifo"
expect 1 "is not a regular file (it is a FIFO)" --model "$model" --input "$images" \
    --labels "$dir/fifo"
expect 1 "is not a regular file (it is a character device)" --model "$model" --input /dev/zero
expect 1 "is not a regular file (it is a directory)" --model "$model" --input "$dir"
expect 1 "has 314572800 bytes; over 268435456 are refused" --model "$model" --input "$dir/big"
expect 1 "has 314572800 bytes; over 4194304 are refused" --model "$model" --input "$images" \
    --labels "$dir/big"
expect 1 "the model file '$dir/big' has 314572800 bytes; over 268435456 are refused" \
    --model "$dir/big" --input "$images"
expect 0 "" --model "$model" --input "$images" --labels "$labels" --repeat 1
exit "$failed"
