#!/bin/sh
# cli_run_devices.sh CLI [WORKDIR]: `streampipe run --output` onto character devices, made
# with mknod in a scratch folder (so /dev is never touched): a null-like node (1,3) is
# written in place, stays a character device and the run exits 0; a full-like node (1,7)
# makes the run exit 1 saying "no space" and stays a device. Neither leaves a temporary
# output behind. Both used to be renamed over (the node became a regular file, exit 0).
# Exits 77 (skipped) when not root or mknod is refused (a container without CAP_MKNOD).
cli=$1
work=${2:-$(mktemp -d)}
mkdir -p "$work" || exit 1
clean() { rm -f "$work/null" "$work/full" "$work/in.f32" "$work/err" "$work"/.*.partial-*; }
clean
[ "$(id -u)" -eq 0 ] || { echo "skipped: mknod needs root"; exit 77; }
mknod "$work/null" c 1 3 2>/dev/null && mknod "$work/full" c 1 7 2>/dev/null ||
    { echo "skipped: mknod was refused here"; exit 77; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
head -c 400000 /dev/urandom >"$work/in.f32"

# no_leftovers: the folder holds only what the test made
no_leftovers() {
    extra=$(ls -A "$work" | grep -v -x -e in.f32 -e null -e full -e err)
    [ -z "$extra" ] || fail "left behind: $extra"
}

for json in "" --json; do
    "$cli" run --backend host --input "$work/in.f32" --output "$work/null" --stages sinmix \
        $json >/dev/null 2>"$work/err"
    rc=$?
    [ "$rc" -eq 0 ] || fail "--output null-like $json: exit $rc: $(cat "$work/err")"
    [ -c "$work/null" ] || fail "--output null-like $json: no longer a character device"
    no_leftovers
done
echo "ok: a null-like device is written in place and stays a device"

"$cli" run --backend host --input "$work/in.f32" --output "$work/full" --stages sinmix \
    >/dev/null 2>"$work/err"
rc=$?
[ "$rc" -eq 1 ] || fail "--output full-like: exit $rc, want 1"
grep -q "no space" "$work/err" || fail "--output full-like: no 'no space' in: $(cat "$work/err")"
[ -c "$work/full" ] || fail "--output full-like: no longer a character device"
no_leftovers
echo "ok: a full-like device fails the run with 'no space' and stays a device"

clean
[ "$failures" -eq 0 ] || exit 1
echo "cli_run_devices: all passed"
