#!/bin/sh
# cli_run_compressed_out.sh STREAMPIPE SCRATCH: `streampipe run --output-format lz4|zstd` read
# back by the real lz4 -d and zstd -d, byte for byte the raw run's output; the LZ4 one (a frame
# per piece) also passes lz4 -t (content checksums) and is read back by streampipe itself as
# --input (auto, --input-format lz4), a wrong content checksum refused by both; over fresh random
# float32 records (part of them compress, part do not: stored LZ4 blocks), at several chunk
# sizes (one past 4 MiB, so a piece spans several LZ4 blocks), a record count that is no
# multiple of any, an empty input, three staging threads (pieces finish out of order); the
# report's 'compressed output' figures. Then stdin: `lz4 -dc F | streampipe run --input -` the file
# run's bytes, to a file and to a pipe; a part record at stdin's end exits 1 naming the byte
# and leaves no output; --resume with either refused (64); a full device says "no space".
# Skips (77) without the lz4 and zstd commands or in a build without liblz4/libzstd.
set -u
cli=$1
dir=$2
for tool in lz4 zstd python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "skipped: no $tool command (Debian: lz4 zstd)"; exit 77; }
done
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
seed=${SP_TEST_SEED:-$(date +%s)}
echo "seed $seed"
# 1.5M records (6 MiB): the first half integers 0..99 in runs (compress), the rest noise
python3 - "$seed" <<'PY'
import random, struct, sys
rng = random.Random(int(sys.argv[1]))
n, values = 1_500_003, []
while len(values) < n // 2:
    values.extend([float(rng.randrange(100))] * rng.randrange(1, 9))
values = values[: n // 2]
values.extend(rng.uniform(-1e3, 1e3) for _ in range(n - len(values)))
with open("in.f32", "wb") as f:
    f.write(struct.pack("<%df" % n, *values))
PY
run() { "$cli" run --backend host --stages sinmix:iters=1 --threads 3 "$@"; }
run --input in.f32 --output ref.out --chunk 65536 >/dev/null || { echo "FAIL: the raw run"; exit 1; }
# what a run over the output gives: what our own reading of a compressed output must give too
run --input ref.out --output ref2.out --chunk 65536 >/dev/null || { echo "FAIL: the raw run of ref.out"; exit 1; }
if ! run --input in.f32 --output probe.lz4 --output-format lz4 >probe.txt 2>&1; then
    if grep -q "no liblz4" probe.txt; then echo "skipped: built without liblz4/libzstd"; exit 77; fi
    bad "the first lz4 run: $(tail -n 2 probe.txt)"
fi
rm -f probe.lz4 probe.txt

# back FORMAT CHUNK: the run's file, decompressed by the real command, is the raw run's
back() {
    format=$1 chunk=$2 name="c$2.$1"
    if ! run --input in.f32 --output "$name" --output-format "$format" --chunk "$chunk" \
        >"$name.txt" 2>&1; then
        bad "$name: exit $?: $(tail -n 2 "$name.txt")"; return
    fi
    if [ "$format" = lz4 ]; then lz4 -q -d -c "$name" >"$name.back"; else zstd -q -d -c "$name" >"$name.back"; fi
    if [ $? -ne 0 ]; then bad "$name: $format -d refused it"
    elif ! cmp -s ref.out "$name.back"; then bad "$name: $format -d gives other bytes than the raw run"
    elif cmp -s ref.out "$name"; then bad "$name: the output was not compressed"
    elif ! grep -q "compressed output" "$name.txt" || ! grep -q "staging threads" "$name.txt"; then
        bad "$name: no 'compressed output' figures (or not where it ran) in the report"
    else
        echo "ok: $name ($(grep -m1 '  ratio' "$name.txt" | sed 's/^ *ratio *//'))"
    fi
    rm -f "$name.back"
    [ "$format" = lz4 ] && own_lz4 "$name" "$chunk"
}
# own_lz4 NAME CHUNK: the LZ4 output is a frame per piece, each with its content checksum:
# lz4 -t checks them; streampipe reads it back as --input (auto, and --input-format lz4 on the
# staging threads, where every frame's content checksum is checked), at the same chunk size,
# byte for byte what the run over the raw output gives
own_lz4() {
    name=$1 chunk=$2
    frames=$(sed -n '/compressed output/,$s/^  frames  *\([0-9]*\).*/\1/p' "$name.txt" | head -n 1)
    [ "${frames:-0}" -gt 1 ] || bad "$name: ${frames:-no} frames in the report, want one per piece"
    lz4 -q -t "$name" || bad "$name: lz4 -t refused it"
    for how in auto lz4; do
        if [ "$how" = auto ]; then set -- ; else set -- --input-format lz4 --decompress staging; fi
        if ! run --input "$name" --output "$name.own" --chunk "$chunk" "$@" >"$name.own.txt" 2>&1; then
            bad "$name as --input ($how): exit $?: $(tail -n 2 "$name.own.txt")"
        elif ! cmp -s ref2.out "$name.own"; then
            bad "$name as --input ($how): other bytes than the run over the raw output"
        elif [ "$how" = lz4 ] && ! grep -q "content checksums $frames checked" "$name.own.txt"; then
            bad "$name as --input ($how): not all $frames content checksums checked: $(grep 'content checksums' "$name.own.txt")"
        else
            echo "ok: $name read back as --input ($how, $frames frames)"
        fi
        rm -f "$name.own" "$name.own.txt"
    done
}
for chunk in 3001 65536 1200000; do
    back lz4 "$chunk"
    back zstd "$chunk"
done
# no records: a file each command reads as empty (not one of no bytes, which zstd calls cut)
: >empty.f32
for format in lz4 zstd; do
    if ! run --input empty.f32 --output "empty.$format" --output-format "$format" >/dev/null 2>&1 ||
        ! "$format" -q -d -c "empty.$format" >empty.back || [ -s empty.back ]; then
        bad "an empty input's $format output is not an empty $format file"
    fi
done
run --input empty.lz4 --output empty.own >/dev/null 2>&1 && [ -e empty.own ] && [ ! -s empty.own ] ||
    bad "an empty input's lz4 output is not read back by streampipe as empty"
# the stored blocks: the noise half does not shrink under LZ4
grep -q "stored  *[1-9]" c1200000.lz4.txt || bad "no LZ4 block was stored in c1200000.lz4"
# a content checksum that does not match (the last frame's, the file's last byte): lz4 -t and
# streampipe's own reading refuse it
python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[-1] ^= 1; open(sys.argv[2], "wb").write(d)' \
    c65536.lz4 sum.lz4
lz4 -q -t sum.lz4 2>/dev/null && bad "sum.lz4: lz4 -t passed a wrong content checksum"
run --input sum.lz4 --output sum.out --no-journal --decompress staging >sum.txt 2>&1 &&
    bad "sum.lz4: streampipe read a wrong content checksum"
grep -q "content checksum" sum.txt && [ ! -e sum.out ] || bad "sum.lz4: $(cat sum.txt)"
# the multi-frame Zstandard file is an input of ours too (several frames, read in parallel)
run --input c3001.zstd --output frames.out --chunk 65536 >/dev/null &&
    cmp -s ref2.out frames.out && echo "ok: c3001.zstd read back by streampipe run" ||
    bad "c3001.zstd: streampipe's own reading of it differs"
# the JSON report names the group and its figures once
run --input in.f32 --output j.zst --output-format zstd --json >j.json &&
    python3 -c 'import json,sys; d=json.load(open("j.json"));
g=d["output_compression"]; assert g["format"]=="zstd" and g["compressed_bytes"]>0 and g["uncompressed_bytes"]==1500003*4, g' ||
    bad "the JSON report lacks output_compression's figures"

# stdin through a real pipe, to a file and to a pipe
lz4 -q -f in.f32 in.lz4
lz4 -q -d -c in.lz4 | run --input - --output stdin.out --chunk 65536 >stdin.txt 2>&1 ||
    bad "stdin: exit $?: $(tail -n 2 stdin.txt)"
cmp -s ref.out stdin.out && grep -q "records  *1500003" stdin.txt && echo "ok: lz4 -dc | --input -" ||
    bad "stdin: the output (or its record count) differs from the file run's"
lz4 -q -d -c in.lz4 | run --input - --output - --output-format zstd --chunk 3001 2>pipe.txt |
    zstd -q -d -c >pipe.out
cmp -s ref.out pipe.out && echo "ok: lz4 -dc | --input - --output - --output-format zstd | zstd -dc" ||
    bad "stdin to stdout, zstd: differs ($(tail -n 2 pipe.txt))"
grep -q "run thread, in order" pipe.txt || bad "stdin to stdout: the report does not say it compressed in order"
# a part record at stdin's end: exit 1 naming the byte, no output, no temporary output
head -c 6000010 in.f32 | run --input - --output trunc.out --chunk 65536 >trunc.txt 2>&1
rc=$?
[ $rc -eq 1 ] || bad "a part record at stdin's end: exit $rc, not 1"
grep -q "ended at byte 6000010" trunc.txt || bad "a part record: the message names no byte: $(cat trunc.txt)"
ls -a | grep -q "trunc.out" && bad "a part record left an output: $(ls -a | grep trunc.out)"
# compressed bytes on stdin are refused by their magic number, not read as records
lz4 -q -c in.f32 | run --input - --output magic.out >magic.txt 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "begins with the LZ4 magic number" magic.txt && [ ! -e magic.out ] ||
    bad "an LZ4 stream on stdin: exit $rc: $(cat magic.txt)"
# --resume cannot be kept for either: refused before anything is written
run --input in.f32 --output res.lz4 --output-format lz4 --resume >res.txt 2>&1
rc=$?
[ $rc -eq 64 ] && grep -q -- "--resume needs --output-format raw" res.txt ||
    bad "--resume with --output-format lz4: exit $rc: $(cat res.txt)"
run --input - --output res.out --resume <in.f32 >res2.txt 2>&1
rc=$?
[ $rc -eq 64 ] && grep -q -- "--resume needs a file --input" res2.txt || bad "--resume with --input -: exit $rc"
ls -a | grep -q "res\." && ls -a | grep "res\.[lo]" && bad "a refused --resume left an output"
# a device that takes nothing: "no space", exit 1
if [ -w /dev/full ]; then
    run --input in.f32 --output /dev/full --output-format zstd >full.txt 2>&1
    rc=$?
    [ $rc -eq 1 ] && grep -qi "no space" full.txt || bad "/dev/full: exit $rc: $(cat full.txt)"
fi
[ $fail -eq 0 ] && echo "all passed"
exit $fail
