#!/bin/sh
# cli_run_compressed.sh STREAMPIPE SCRATCH: `streampipe run` over LZ4 and Zstandard files made
# by the real lz4, zstd and pzstd commands (block sizes -B4..-B7, block checksums -BX, with
# and without --content-size and --no-frame-crc, concatenated frames; zstd levels, single and
# several frames, pzstd, a pipe's frame without a size), every output byte compared with the
# run over the raw file: fresh random integer-valued float32 records, which compress. Then bad
# files: truncated, a block corrupted with its checksum present and absent, a frame that
# expands past its declared size, a decompressed size that is not whole records, an unknown
# magic, linked blocks, a short block before a frame's last (named as that, with and without a
# content size): each exits 1 naming the offset, and leaves no output. Skips (77) when
# lz4, zstd or pzstd is missing, or the build has no decompressors.
set -u
cli=$1
dir=$2
for tool in lz4 zstd pzstd python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "skipped: no $tool command (Debian: lz4 zstd)"; exit 77; }
done
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
seed=${SP_TEST_SEED:-$(date +%s)}
echo "seed $seed"
# 1.5M records (6 MiB): integers 0..999 as float32, repeated in runs, so that it compresses
python3 - "$seed" <<'PY'
import random, struct, sys
rng = random.Random(int(sys.argv[1]))
values, n = [], 1_500_003
while len(values) < n:
    values.extend([float(rng.randrange(1000))] * rng.randrange(1, 6))
with open("in.f32", "wb") as f:
    f.write(struct.pack("<%df" % n, *values[:n]))
PY
run() { "$cli" run --backend host --stages sinmix:iters=1 --chunk 3001 --threads 3 "$@"; }
run --input in.f32 --output ref.out >/dev/null || { echo "FAIL: the raw run"; exit 1; }
if ! lz4 -q -f in.f32 probe.lz4 || ! run --input probe.lz4 --output probe.out >probe.txt 2>&1; then
    if grep -q "no liblz4" probe.txt; then echo "skipped: built without liblz4/libzstd"; exit 77; fi
fi
rm -f probe.lz4 probe.out probe.txt

same() { # same NAME [run options]: NAME's run writes what the raw run wrote
    name=$1; shift
    if ! run --input "$name" --output "$name.out" "$@" >"$name.txt" 2>&1; then
        bad "$name: exit $?: $(tail -n 2 "$name.txt")"
    elif ! cmp -s ref.out "$name.out"; then
        bad "$name: the output differs from the raw run's"
    elif ! grep -q "compressed input" "$name.txt"; then
        bad "$name: no 'compressed input' figures in the report"
    else
        echo "ok: $name ($(grep -m1 '  how' "$name.txt" | sed 's/^ *how *//'))"
    fi
    rm -f "$name.out"
}
for opts in "-B4" "-B5 --content-size" "-B6 --no-frame-crc" "-B7 -BX" "-B4 -BX --no-frame-crc" \
            "-B5 -9"; do
    name="b$(echo "$opts" | tr -d ' -').lz4"
    lz4 -q -f $opts in.f32 "$name" && same "$name"
done
head -c 2000000 in.f32 >part1 && tail -c +2000001 in.f32 >part2
lz4 -q -f -B4 part1 p1.lz4 && lz4 -q -f -B5 --content-size part2 p2.lz4 && cat p1.lz4 p2.lz4 >cat.lz4
same cat.lz4
for level in 1 3 19; do zstd -q -f -"$level" in.f32 -o "l$level.zst" && same "l$level.zst"; done
zstd -q -f --no-check in.f32 -o nocheck.zst && same nocheck.zst
zstd -q -f -3 part1 -o z1.zst && zstd -q -f -5 part2 -o z2.zst && cat z1.zst z2.zst >cat.zst
same cat.zst
for level in 1 6; do pzstd -q -f -p 3 -"$level" in.f32 -o "p$level.zst" && same "p$level.zst"; done
zstd -q -c <in.f32 >pipe.zst && same pipe.zst
same bB4.lz4 --input-format lz4
grep -q "content checksums 1 checked" bB4.lz4.txt || bad "bB4.lz4: its content checksum was not checked"

# ---- bad inputs: exit 1, the offset named, no output left ----------------------------------
# (--no-journal: a journaled run that fails keeps its partial output and journal for --resume,
# which the case after these checks)
refused() { # refused FILE WORDS... [-- run options]: exit 1, a message with WORDS, no output
    name=$1; shift
    words=$1; shift
    run --input "$name" --output out.bad --no-journal "$@" >/dev/null 2>err.txt
    rc=$?
    if [ "$rc" -ne 1 ]; then bad "$name: exit $rc, want 1: $(cat err.txt)"
    elif ! grep -qi "$words" err.txt; then bad "$name: no '$words' in: $(cat err.txt)"
    elif ! grep -q "offset" err.txt; then bad "$name: no offset named: $(cat err.txt)"
    elif ls -A | grep -q "out.bad"; then bad "$name: left an output behind: $(ls -A | grep out.bad)"
    else echo "ok: $name refused: $(head -n 1 err.txt)"
    fi
}
patch_byte() { # patch_byte FILE OFFSET COUNT BYTE: COUNT bytes from OFFSET xor'ed with BYTE
    python3 -c "import sys
p, at, n, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = bytearray(open(p, 'rb').read())
d[at:at + n] = bytes(x ^ b for x in d[at:at + n]); open(p, 'wb').write(d)" "$@"
}
size=$(wc -c <bB4.lz4)
head -c $((size / 2)) bB4.lz4 >trunc.lz4 && refused trunc.lz4 "truncated"
head -c $(( $(wc -c <l3.zst) - 100 )) l3.zst >trunc.zst && refused trunc.zst "truncated"
head -c $(( $(wc -c <p1.zst) / 2 )) p1.zst >trunc_p.zst && refused trunc_p.zst "truncated"
cp bB7BX.lz4 sum.lz4 && patch_byte sum.lz4 5000 64 255 && refused sum.lz4 "block checksum"
cp bB4.lz4 content.lz4 && patch_byte content.lz4 300000 1 90 && refused content.lz4 "checksum\|decode"
cp bB6noframecrc.lz4 none.lz4
patch_byte none.lz4 5000 64 255 && refused none.lz4 "does not decode\|corrupt"
cp p1.zst sumz.zst && patch_byte sumz.zst 20000 64 255 && refused sumz.zst "corrupt\|decode"
# a frame whose declared content size is 4 KiB short of what its blocks hold
cp z1.zst short.zst && python3 - <<'PY'
d = bytearray(open("short.zst", "rb").read())
fhd = d[4]; single = (fhd >> 5) & 1; flag = fhd >> 6
at = 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3]
n = [1 if single else 0, 2, 4, 8][flag]
size = int.from_bytes(d[at:at + n], "little") - (256 if n == 2 else 0) - 4096
d[at:at + n] = (size + (256 if n == 2 else 0)).to_bytes(n, "little")
open("short.zst", "wb").write(d)
PY
cat short.zst z2.zst >expands.zst && refused expands.zst "decode\|past"
refused short.zst "decode\|past"
head -c 4000002 in.f32 >odd.raw && lz4 -q -f odd.raw odd.lz4 && refused odd.lz4 "whole number"
refused in.f32 "unknown magic" --input-format lz4
refused in.f32 "unknown magic" --input-format zstd
lz4 -q -f -BD in.f32 linked.lz4 && refused linked.lz4 "linked"
# A block before a frame's last that is shorter than the frame's block size (two lz4 frames'
# blocks in one frame: lz4 -d reads it, this reader needs every block but the last full):
# refused naming that block, without a content size (found when it is decoded, on the staging
# threads or in the ring) and with one (found at open).
cat >short.py <<'PY'
# mk.py A.lz4 B.lz4 OUT SIZED: A's and B's blocks in one frame (A's last, short, no longer the
# frame's last); SIZED=1: the frame declares the content size, its header checksum recomputed.
import sys
M = 0xFFFFFFFF
P1, P2, P3, P4, P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
def rotl(x, r): return ((x << r) | (x >> (32 - r))) & M
def xxh32(d, seed=0):
    n, i = len(d), 0
    if n >= 16:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed, (seed - P1) & M]
        while i + 16 <= n:
            for k in range(4):
                v[k] = (rotl((v[k] + int.from_bytes(d[i:i + 4], "little") * P2) & M, 13) * P1) & M
                i += 4
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 4 <= n:
        h = (rotl((h + int.from_bytes(d[i:i + 4], "little") * P3) & M, 17) * P4) & M
        i += 4
    while i < n:
        h = (rotl((h + d[i] * P5) & M, 11) * P1) & M
        i += 1
    h ^= h >> 15; h = (h * P2) & M; h ^= h >> 13; h = (h * P3) & M; h ^= h >> 16
    return h
def blocks(path):  # the frame's FLG, BD and its blocks (lz4 -B4 --no-frame-crc: 7-byte header)
    d = open(path, "rb").read()
    flg, bd = d[4], d[5]
    assert flg & 0x0C == 0, "made with a content size or checksum"
    assert d[6] == (xxh32(d[4:6]) >> 8) & 0xFF, "xxh32 disagrees with lz4's header checksum"
    at, out = 7, b""
    while True:
        w = int.from_bytes(d[at:at + 4], "little")
        if w == 0:
            return flg, bd, out
        n = 4 + (w & 0x7FFFFFFF) + (4 if flg & 0x10 else 0)
        out += d[at:at + n]
        at += n
a, b, out, sized, size = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", int(sys.argv[5])
flg, bd, ba = blocks(a)
_, _, bb = blocks(b)
desc = bytes([flg | (0x08 if sized else 0), bd]) + (size.to_bytes(8, "little") if sized else b"")
open(out, "wb").write(b"\x04\x22\x4d\x18" + desc + bytes([(xxh32(desc) >> 8) & 0xFF]) + ba + bb + b"\0\0\0\0")
PY
head -c 100000 in.f32 >shortA && tail -c +100001 in.f32 >shortB
lz4 -q -f -B4 -BX --no-frame-crc shortA shortA.lz4 && lz4 -q -f -B4 -BX --no-frame-crc shortB shortB.lz4
for sized in 0 1; do
    python3 short.py shortA.lz4 shortB.lz4 "short$sized.lz4" $sized "$(wc -c <in.f32)"
    lz4 -q -d -c "short$sized.lz4" | cmp -s - in.f32 || bad "short$sized.lz4: lz4 -d does not read it (the test's file is wrong)"
done
words="block 2 of [0-9]* .*shorter than the frame's block size of 65536 and is not the frame's last"
refused short0.lz4 "$words" --decompress staging
refused short0.lz4 "$words" --chunk 524288 --decompress ring
refused short1.lz4 "$words"
# With its journal (the default), a run that fails mid-way keeps the partial output and the
# journal for --resume, says so, and never puts the output in place.
run --input sum.lz4 --output out.kept >/dev/null 2>err.txt
rc=$?
if [ "$rc" -ne 1 ]; then bad "sum.lz4, journaled: exit $rc, want 1"
elif [ -e out.kept ]; then bad "sum.lz4, journaled: the output was put in place"
elif ! [ -e .out.kept.journal ]; then bad "sum.lz4, journaled: no journal kept"
elif ! grep -q "kept for --resume" err.txt; then bad "sum.lz4, journaled: no word of what is kept"
else echo "ok: sum.lz4, journaled: partial output and journal kept for --resume, and said"
fi
rm -f .out.kept.journal .out.kept.partial-*
# Decompression in the ring (--decompress ring): chunks of whole blocks, the h2d carrying them
# compressed; the same bytes as the raw run, the report saying so; a corrupt block refused.
ring() { # ring NAME: NAME through the ring writes what the raw run wrote, all chunks there
    name=$1
    if ! run --input "$name" --output "$name.out" --chunk 524288 --decompress ring \
        >"$name.txt" 2>&1; then
        bad "$name in the ring: exit $?: $(tail -n 2 "$name.txt")"
    elif ! cmp -s ref.out "$name.out"; then
        bad "$name in the ring: the output differs from the raw run's"
    elif ! grep -q "how  *decompressed in the ring" "$name.txt" ||
        ! grep -q "staging chunks  *0 " "$name.txt" || ! grep -q "effective input rate" "$name.txt"; then
        bad "$name in the ring: the report does not say every chunk went through the ring"
    else
        echo "ok: $name in the ring ($(grep -m1 'ring chunks' "$name.txt" | sed 's/^ *//'))"
    fi
    rm -f "$name.out"
}
head -c 6291456 in.f32 >ring.f32 # 1.5M records of 4 bytes: whole 64 KiB..1 MiB blocks
run --input ring.f32 --output ref.out >/dev/null || bad "the raw run of ring.f32"
for opts in "-B4" "-B5 -BX" "-B6 --content-size -1" "-B4 -9"; do
    name="ring$(echo "$opts" | tr -d ' -').lz4"
    lz4 -q -f $opts ring.f32 "$name" && ring "$name"
done
pzstd -q -f -p 2 -1 ring.f32 -o ringp.zst && ring ringp.zst
cp ringB5BX.lz4 ringsum.lz4 2>/dev/null || lz4 -q -f -B5 -BX ring.f32 ringsum.lz4
patch_byte ringsum.lz4 100000 1 90 &&
    refused ringsum.lz4 "checksum" --chunk 524288 --decompress ring
[ "$fail" -eq 0 ] && echo "all compressed inputs agree with the raw run; every bad one refused"
exit "$fail"
