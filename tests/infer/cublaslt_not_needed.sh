#!/bin/sh
# cublaslt_not_needed.sh HAVE_CUDA FILE...: no FILE (the CLI, streampipe-mlp,
# libstreampipe_mlp.so, the Python module) has libcublasLt as a NEEDED entry: the MLP opens
# cuBLASLt with dlopen when its CUDA stages are made (src/mlp/mlp_cublaslt.c), so a program
# starts without it whatever the command or backend. Skips (77) in a build without CUDA,
# where nothing uses cuBLASLt.
set -u
have_cuda=$1
shift
case "$have_cuda" in
ON | on | TRUE | true | 1) ;;
*)
    echo "skipped: built without CUDA, so nothing uses cuBLASLt"
    exit 77
    ;;
esac
command -v readelf >/dev/null 2>&1 || {
    echo "FAIL: readelf (binutils) is needed to read the NEEDED entries"
    exit 1
}
failures=0
for file in "$@"; do
    [ -n "$file" ] || continue # the Python module's place, in a build without it
    needed=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p') || needed=
    if [ -z "$needed" ]; then # every one of them needs libc at least: the read failed
        echo "FAIL: no NEEDED entries read from $file"
        failures=$((failures + 1))
    elif echo "$needed" | grep -q '^libcublas'; then
        echo "FAIL: $file needs $(echo "$needed" | grep '^libcublas' | tr '\n' ' ')at load time"
        failures=$((failures + 1))
    else
        echo "ok: $file needs $(echo "$needed" | tr '\n' ' ')"
    fi
done
[ "$failures" -eq 0 ]
