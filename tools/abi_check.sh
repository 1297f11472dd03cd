#!/usr/bin/env bash
# The ABI check: libstreampipe.so (and the optional libraries beside it, libstreampipe_mlp.so and
# libstreampipe_fault.so, whose sonames follow the same version) may change their ABI only with
# their soname.
#
# The rule. A program built against one release must either run correctly with a later
# libstreampipe.so of the same soname, or not load it at all. So, with the soname unchanged,
# the public ABI may only grow (new functions); any other change (a public struct's size or
# layout, a function's parameters or return type, a function removed) needs a new soname.
# Before 1.0 the soname is libstreampipe.so.MAJOR.MINOR, so such a change raises
# SP_VERSION_MINOR in include/streampipe_version.h, the one place the version is declared.
#
# What it does:
#   1. builds the shared library with -g (Debug, CPU only, no cJSON: the public ABI is the
#      same in every build, and the dump must not depend on what the machine has)
#   2. checks that the header's version, sp_version(), the soname, pkg-config's and the CMake
#      package's versions agree
#   3. dumps the public ABI with abidw (libabigail): the functions declared in include/ and
#      the types they reach, nothing internal (the libraries export the public API only, but
#      libstreampipe.so also the wrap hook's few sp_internal_* functions, which carry no ABI
#      promise: src/backend/backend.h; tools/exports_check.sh checks what is exported)
#   4. compares it with abidiff against the committed baseline, abi/libstreampipe-X.Y.abi
#      (abi/libstreampipe_mlp-X.Y.abi, abi/libstreampipe_fault-X.Y.abi for the others),
#      which records the soname it was made for: the same soname must have the same ABI,
#      new functions aside; a new soname needs a new baseline (--update), committed with it
#
# usage: tools/abi_check.sh [--update] [BUILD_DIR]   check (or record the baseline)
#        tools/abi_check.sh --self-test [BUILD_DIR]  the check must catch a field added to
#                                                    sp_report, on a scratch copy
#        tools/abi_check.sh --version                the header's MAJOR.MINOR.PATCH
# BUILD_DIR defaults to build-abi/ in the tree. Needs cmake, cc and abigail-tools (abidw,
# abidiff; Debian: apt-get install abigail-tools).
#
# Exit status: 0 the ABI is as the soname promises; 1 the versions disagree; 2 a tool or
# usage error; 3 the ABI changed but the soname did not; 4 the soname changed and there is
# no baseline for it yet.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXIT_VERSIONS=1
EXIT_TOOLS=2
EXIT_ABI_CHANGED=3
EXIT_NEW_SONAME=4
LIBRARIES="streampipe streampipe_mlp streampipe_fault" # each lib<name>.so has a baseline

fail() {
    local code="$1"
    shift
    echo "abi_check: $*" >&2
    exit "$code"
}

# header_version ROOT: MAJOR.MINOR.PATCH from the public header that defines them.
header_version() {
    local part value version=""
    for part in MAJOR MINOR PATCH; do
        value="$(sed -n "s/^#define SP_VERSION_$part \([0-9][0-9]*\)\$/\1/p" \
            "$1"/include/*.h | head -n 1)"
        [ -n "$value" ] || fail "$EXIT_TOOLS" "no '#define SP_VERSION_$part N' in $1/include"
        version="${version:+$version.}$value"
    done
    echo "$version"
}

# The soname the version promises: before 1.0 every minor version is a new ABI.
expected_soname() {
    local major="${1%%.*}" minor
    minor="${1#*.}"
    minor="${minor%%.*}"
    if [ "$major" -eq 0 ]; then echo "libstreampipe.so.$major.$minor"; else echo "libstreampipe.so.$major"; fi
}

need_tools() {
    local tool
    for tool in cmake cc abidw abidiff readelf; do
        command -v "$tool" >/dev/null 2>&1 ||
            fail "$EXIT_TOOLS" "$tool is missing (abidw, abidiff: apt-get install abigail-tools)"
    done
}

build_library() {
    local root="$1" build="$2"
    # the dump names each source file: as paths in the tree, not on this machine
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DSP_WITH_CUDA=OFF \
        -DSP_WITH_CJSON=OFF -DBUILD_TESTING=OFF \
        -DCMAKE_C_FLAGS="-fdebug-prefix-map=$root=. -fdebug-prefix-map=$build=build" \
        >"$build/configure.log" ||
        { cat "$build/configure.log" >&2; fail "$EXIT_TOOLS" "configuring $build failed"; }
    cmake --build "$build" --target $LIBRARIES --parallel "${JOBS:-2}" >"$build/build.log" ||
        { cat "$build/build.log" >&2; fail "$EXIT_TOOLS" "building the library failed"; }
}

soname_of() { readelf -d "$1" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p'; }

# What a program linked to the built library gets from sp_version().
linked_version() {
    local root="$1" build="$2"
    printf '#include <stdio.h>\n#include <streampipe.h>\nint main(void) { puts(sp_version()); return 0; }\n' \
        >"$build/print_version.c"
    cc -I"$root/include" "$build/print_version.c" -L"$build" -lstreampipe \
        -o "$build/print_version"
    LD_LIBRARY_PATH="$build" "$build/print_version"
}

check_versions() {
    local root="$1" build="$2" version="$3" soname linked pc package
    soname="$(soname_of "$build/libstreampipe.so")"
    linked="$(linked_version "$root" "$build")"
    pc="$(sed -n 's/^Version: //p' "$build/streampipe.pc")"
    package="$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/streampipeConfigVersion.cmake")"
    echo "header $version, sp_version() $linked, soname $soname, pkg-config $pc, CMake package $package"
    local wrong=()
    [ "$linked" = "$version" ] || wrong+=("sp_version() says $linked")
    [ "$soname" = "$(expected_soname "$version")" ] ||
        wrong+=("the soname is $soname, not $(expected_soname "$version")")
    [ "$pc" = "$version" ] || wrong+=("pkg-config says $pc")
    [ "$package" = "$version" ] || wrong+=("the CMake package says $package")
    if [ "${#wrong[@]}" -gt 0 ]; then
        fail "$EXIT_VERSIONS" "the header says $version but $(printf '%s; ' "${wrong[@]}")the version must be declared once (include/streampipe_version.h) and everything else derived from it"
    fi
}

# The names of the functions the public headers declare, from the compiler itself.
public_functions() {
    local root="$1" build="$2" header
    : >"$build/public_headers.c"
    for header in "$root"/include/*.h; do
        echo "#include \"$(basename "$header")\"" >>"$build/public_headers.c"
    done
    cc -std=c11 -fsyntax-only -aux-info "$build/public_headers.aux" -I"$root/include" \
        "$build/public_headers.c"
    # lines like "/* ROOT/include/streampipe.h:28:NC */ extern const char *sp_version (void);":
    # the name is the word before the first parenthesis
    grep -F "/* $root/include/" "$build/public_headers.aux" | grep ' \*/ extern ' |
        sed -E 's|^/\*[^*]*\*/ ||; s/^([^(]*[ *])?([A-Za-z_][A-Za-z0-9_]*) \(.*/\2/' | sort -u
}

# abidw with everything but the public functions (and the types they reach) dropped.
dump_abi() {
    local root="$1" build="$2" out="$3" lib="$4" names
    names="$(public_functions "$root" "$build" | paste -sd '|')"
    [ -n "$names" ] || fail "$EXIT_TOOLS" "found no public functions in $root/include"
    printf '[suppress_function]\n  symbol_name_not_regexp = ^(%s)$\n  drop = yes\n' "$names" \
        >"$build/internal.suppr"
    printf '[suppress_variable]\n  symbol_name_not_regexp = ^(%s)$\n  drop = yes\n' "$names" \
        >>"$build/internal.suppr"
    abidw --suppressions "$build/internal.suppr" --headers-dir "$root/include" \
        --drop-private-types --no-show-locs --no-corpus-path --out-file "$out" \
        "$build/lib$lib.so"
}

baseline_soname() { sed -n "s/^<abi-corpus .*soname='\([^']*\)'.*/\1/p" "$1" | head -n 1; }

# abidiff OLD NEW [options]: its exit status, whose bits say what changed (4: the ABI
# changed, 8: incompatibly; 1, 2: errors).
abidiff_status() {
    local rc=0
    abidiff "$@" >"$DIFF_OUT" 2>&1 || rc=$?
    if [ $((rc & 3)) -ne 0 ]; then
        cat "$DIFF_OUT" >&2
        fail "$EXIT_TOOLS" "abidiff failed (exit $rc)"
    fi
    echo "$rc"
}

write_baseline() {
    local root="$1" dump="$2" soname="$3" lib="$4"
    rm -f "$root"/abi/lib"$lib"-*.abi # one baseline: the current soname's
    mkdir -p "$root/abi"
    cp "$dump" "$root/abi/lib$lib-${soname#lib"$lib".so.}.abi"
    echo "recorded the baseline of $soname: abi/lib$lib-${soname#lib"$lib".so.}.abi (commit it)"
}

# compare ROOT DUMP SONAME UPDATE LIB: the rule, against lib LIB's baseline in ROOT/abi.
compare() {
    local root="$1" dump="$2" soname="$3" update="$4" lib="$5" baselines
    baselines=("$root"/abi/lib"$lib"-*.abi)
    if [ ! -e "${baselines[0]}" ]; then
        [ "$update" -eq 1 ] || fail "$EXIT_NEW_SONAME" "no baseline in abi/: record one with --update"
        write_baseline "$root" "$dump" "$soname" "$lib"
        return 0
    fi
    [ "${#baselines[@]}" -eq 1 ] || fail "$EXIT_TOOLS" "more than one baseline in abi/: keep the current one"
    local baseline="${baselines[0]}" old_soname
    old_soname="$(baseline_soname "$baseline")"
    if [ "$old_soname" != "$soname" ]; then
        if [ "$update" -eq 1 ]; then
            write_baseline "$root" "$dump" "$soname" "$lib"
            return 0
        fi
        fail "$EXIT_NEW_SONAME" "the soname is now $soname, the baseline is of $old_soname: a new soname is a new ABI, whose baseline must be recorded (tools/abi_check.sh --update) and committed with the version change"
    fi
    DIFF_OUT="$(mktemp)"
    local changes
    changes="$(abidiff_status --no-added-syms "$baseline" "$dump")"
    if [ "$changes" -ne 0 ]; then
        cat "$DIFF_OUT"
        rm -f "$DIFF_OUT"
        fail "$EXIT_ABI_CHANGED" "the ABI of $soname changed (above) but the soname did not: a program built with the old header would misbehave; raise SP_VERSION_MINOR in include/streampipe_version.h, then record the new baseline with --update"
    fi
    local everything
    everything="$(abidiff_status "$baseline" "$dump")"
    if [ "$everything" -ne 0 ] && [ "$update" -eq 1 ]; then
        write_baseline "$root" "$dump" "$soname" "$lib"
    elif [ "$everything" -ne 0 ]; then
        cat "$DIFF_OUT"
        echo "abi_check: new functions only (compatible); record them with --update"
    fi
    rm -f "$DIFF_OUT"
    echo "abi_check: the ABI of $soname is compatible with $(basename "$baseline")"
}

check_tree() {
    local root="$1" build="$2" update="$3" version
    need_tools
    version="$(header_version "$root")"
    mkdir -p "$build"
    build_library "$root" "$build"
    check_versions "$root" "$build" "$version"
    local lib
    for lib in $LIBRARIES; do
        dump_abi "$root" "$build" "$build/lib$lib.abi" "$lib"
        compare "$root" "$build/lib$lib.abi" "$(soname_of "$build/lib$lib.so")" "$update" "$lib"
    done
}

# A copy of the sources with a field added to sp_report must fail the check as an ABI change.
self_test() {
    local build="$1" scratch="$1/tree" rc=0
    rm -rf "$scratch"
    mkdir -p "$scratch"
    tar -C "$ROOT" -cf - CMakeLists.txt cmake include src tools examples bench abi |
        tar -C "$scratch" -xf -
    sed -i 's/^} sp_report;$/    double abi_check_added; \/* tools\/abi_check.sh --self-test *\/\n} sp_report;/' \
        "$scratch/include/streampipe.h"
    grep -q abi_check_added "$scratch/include/streampipe.h" ||
        fail "$EXIT_TOOLS" "self-test: found no '} sp_report;' line to add a field before"
    # its own process, so that errexit holds in it (it does not in a subshell tested by ||)
    bash "$scratch/tools/abi_check.sh" "$build/build" || rc=$?
    [ "$rc" -eq "$EXIT_ABI_CHANGED" ] ||
        fail "$EXIT_TOOLS" "self-test: a field added to sp_report gave exit $rc, not $EXIT_ABI_CHANGED (ABI changed)"
    echo "abi_check: self-test passed: a field added to sp_report is caught"
}

main() {
    local mode=check
    case "${1:-}" in
    --update) mode=update; shift ;;
    --self-test) mode=self-test; shift ;;
    --version) header_version "$ROOT"; return 0 ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; return 0 ;;
    -*) fail "$EXIT_TOOLS" "unknown option '$1' (see --help)" ;;
    esac
    local build="${1:-$ROOT/build-abi}"
    mkdir -p "$build"
    build="$(cd "$build" && pwd)"
    case "$mode" in
    check) check_tree "$ROOT" "$build" 0 ;;
    update) check_tree "$ROOT" "$build" 1 ;;
    self-test) self_test "$build" ;;
    esac
}

main "$@"
