#!/bin/sh
# cli_mlp_program.sh CLI MLP_CLI HAVE_CJSON: `streampipe` links no part of the MLP library
# (nor cJSON, nor cuBLASLt), and hands `infer` and `run --stages mlp:...` to streampipe-mlp,
# git-style: the one beside it, else PATH's, with the arguments as given; a clear error naming
# the program and where it was looked for when there is none. Checked on copies of `streampipe`
# in scratch folders, with a stand-in streampipe-mlp that prints its arguments.
set -u
cli=$1
mlp_cli=$2
have_cjson=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
for tool in nm readelf; do
    command -v $tool >/dev/null 2>&1 || { echo "FAIL: $tool (binutils) is needed"; exit 1; }
done

# ---- what each program links: NEEDED entries (readelf, ldd) and symbols (nm) ----------------
MLP_SYMBOLS='sp_mlp_|cJSON_|safetensors|cublas'
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
needed "$cli" >"$dir/cli.needed"
[ -s "$dir/cli.needed" ] || fail "no NEEDED entries read from $cli"
if grep -E 'cjson|streampipe_mlp|cublas' "$dir/cli.needed"; then
    fail "$cli needs the MLP's libraries (above)"
fi
# and none through the libraries it needs (ldd: what the loader would map)
if command -v ldd >/dev/null 2>&1 && ldd "$cli" | grep -E 'cjson|streampipe_mlp|cublas'; then
    fail "$cli loads the MLP's libraries through another (above)"
fi
nm "$cli" >"$dir/cli.nm" 2>&1 || fail "nm $cli: $(head -1 "$dir/cli.nm")"
# a program without symbols (stripped) would pass the next check without proving anything
grep -q ' cli_main$' "$dir/cli.nm" || fail "nm $cli: no symbol cli_main (stripped?)"
if grep -E "$MLP_SYMBOLS" "$dir/cli.nm" | head -5 | grep .; then
    fail "$cli holds or calls the MLP library's code (above)"
fi
# the same checks find the MLP in the program that links it, so they can fail
nm "$mlp_cli" | grep -qE ' (T|t) sp_mlp_load_file$' ||
    fail "$mlp_cli: no sp_mlp_load_file found by nm, so the check above proves nothing"
if [ "$have_cjson" = ON ]; then
    needed "$mlp_cli" | grep -q cjson || fail "$mlp_cli does not need libcjson"
fi

# ---- the hand-over ------------------------------------------------------------------------
mkdir "$dir/alone" "$dir/beside" "$dir/path" "$dir/empty"
cp "$cli" "$dir/alone/streampipe" && cp "$cli" "$dir/beside/streampipe" || exit 1
cat >"$dir/beside/streampipe-mlp" <<'STAND_IN'
#!/bin/sh
echo "stand-in at $0"
for a in "$@"; do echo "[$a]"; done
STAND_IN
cp "$dir/beside/streampipe-mlp" "$dir/path/streampipe-mlp"
chmod +x "$dir/beside/streampipe-mlp" "$dir/path/streampipe-mlp"

# run WHERE PATH ARGS...: the copy of streampipe in WHERE, its stdout and stderr in out/err
run() {
    where=$1 path=$2
    shift 2
    PATH=$path "$dir/$where/streampipe" "$@" >"$dir/out" 2>"$dir/err"
    rc=$?
}
want_args() { # WHO EXPECTED...: the stand-in WHO ran, with exactly these arguments
    who=$1
    shift
    expected="stand-in at $who"
    for a in "$@"; do expected="$expected
[$a]"; done
    [ "$(cat "$dir/out")" = "$expected" ] ||
        fail "expected $who to run with: $*; got rc $rc: $(cat "$dir/out" "$dir/err")"
}
run beside "$dir/empty" infer --model 'a b.st' --input '' --repeat 2
want_args "$dir/beside/streampipe-mlp" infer --model 'a b.st' --input '' --repeat 2
run beside "$dir/empty" run --input in --output out --stages mlp:m.st:tf32 --json
want_args "$dir/beside/streampipe-mlp" run --input in --output out --stages mlp:m.st:tf32 --json
run alone "$dir/path" infer --help
want_args "$dir/path/streampipe-mlp" infer --help
# a run without an mlp stage stays here: the stand-in is not run
run beside "$dir/empty" run --input "$dir/none" --output "$dir/o" --stages sinmix
grep -q stand-in "$dir/out" && fail "a sinmix run was handed over: $(cat "$dir/out")"
[ "$rc" -ne 0 ] || fail "a run of a missing input exited 0"
# a bad stage list is refused here too, before any hand-over
run beside "$dir/empty" run --input in --output out --stages mlp:m,sinmix
[ "$rc" -eq 64 ] || fail "mlp followed by a stage: exit $rc, not 64 (usage)"
grep -q stand-in "$dir/out" && fail "a bad stage list was handed over"

# none anywhere: exit 1, naming the program, the place beside and PATH
for args in "infer --help" "run --input in --output out --stages mlp:m.st"; do
    # shellcheck disable=SC2086 # the words of args
    run alone "$dir/empty" $args
    [ "$rc" -eq 1 ] || fail "$args without streampipe-mlp: exit $rc, not 1"
    if ! grep -q "needs the program streampipe-mlp" "$dir/err" ||
        ! grep -qF "'$dir/alone/streampipe-mlp'" "$dir/err" || ! grep -q "PATH" "$dir/err"; then
        fail "$args without streampipe-mlp: the message does not say what and where: $(cat "$dir/err")"
    fi
done
# one beside that cannot be run is named, and PATH's is not run in its place
chmod -x "$dir/beside/streampipe-mlp"
run beside "$dir/path" infer --help
[ "$rc" -eq 1 ] || fail "a streampipe-mlp that cannot be run: exit $rc, not 1"
grep -q stand-in "$dir/out" && fail "PATH's stand-in ran in place of the one beside"
grep -qF "'$dir/beside/streampipe-mlp', which cannot be run" "$dir/err" ||
    fail "a streampipe-mlp that cannot be run is not named: $(cat "$dir/err")"

# the real one, beside the built streampipe: --help lists infer, and infer's help is infer's
"$cli" --help | grep -q '^  infer ' || fail "streampipe --help does not list infer"
"$cli" infer --help | grep -q '^usage: streampipe infer ' || fail "streampipe infer --help"
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok: streampipe links no MLP, and hands infer and mlp runs to streampipe-mlp"
