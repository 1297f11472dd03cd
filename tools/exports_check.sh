#!/usr/bin/env bash
# The exports check: each shared library exports exactly the public functions its headers
# declare, nothing internal, and nothing declared is missing.
#
#   tools/exports_check.sh BUILD_DIR          the three libraries in BUILD_DIR
#   tools/exports_check.sh LIB.so [LIB.so...] those libraries (ctest passes the targets' files)
#
# The libraries are built with hidden visibility and export what include/ marks SP_API
# (include/streampipe_export.h). Which library a header's functions belong to:
# streampipe_mlp.h -> libstreampipe_mlp.so, streampipe_fault.h -> libstreampipe_fault.so,
# every other header in include/ -> libstreampipe.so. The declared functions come from the
# compiler (-aux-info over include/*.h), the exported ones from `nm -D --defined-only`.
# No public function is declared only in CUDA builds (the headers have no #if around a
# declaration; sp_cuda_error_status is in every build), so the lists must agree in every build.
#
# The one allowance is INTERNAL below: the wrap hook's functions that libstreampipe.so exports
# for libstreampipe_fault.so, under sp_internal_ names (src/backend/backend.h says why). A new
# entry there is a new internal function crossing a library boundary: prefer a public function,
# or code compiled into both libraries (src/backend/live_list.h).
#
# Exit status: 0 the exports are the public API; 1 they differ (the differences are listed);
# 2 a tool or usage error.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIBRARIES="streampipe streampipe_mlp streampipe_fault"
# shellcheck disable=SC2034 # read as INTERNAL_$lib
INTERNAL_streampipe="sp_internal_backend_fail sp_internal_context_backend_impl
    sp_internal_context_create_wrapped sp_internal_context_fail"

fail() {
    echo "exports_check: $*" >&2
    exit 2
}

# library_of HEADER: the library whose functions HEADER declares.
library_of() {
    case "$(basename "$1")" in
    streampipe_mlp.h) echo streampipe_mlp ;;
    streampipe_fault.h) echo streampipe_fault ;;
    *) echo streampipe ;;
    esac
}

# declared LIB: the functions the headers of LIB declare, one a line, sorted.
declared() {
    local lib="$1" header
    for header in "$ROOT"/include/*.h; do
        [ "$(library_of "$header")" = "$lib" ] || continue
        # lines like "/* ROOT/include/streampipe.h:64:NC */ extern const char *sp_version (void);":
        # the name is the word before the first parenthesis; only this header's own lines
        awk -v at="/* $header:" 'index($0, at) == 1 && / \*\/ extern /' "$WORK/public.aux" |
            sed -E 's|^/\*[^*]*\*/ ||; s/^([^(]*[ *])?([A-Za-z_][A-Za-z0-9_]*) \(.*/\2/'
    done | sort -u
}

# exported FILE: the symbols FILE defines in its dynamic symbol table, sorted.
exported() {
    nm -D --defined-only "$1" | awk 'NF == 3 { print $3 }' | sort -u
}

main() {
    [ "$#" -ge 1 ] || fail "usage: $0 BUILD_DIR | LIB.so..."
    local files=() lib
    if [ "$#" -eq 1 ] && [ -d "$1" ]; then
        for lib in $LIBRARIES; do files+=("$1/lib$lib.so"); done
    else
        files=("$@")
    fi
    command -v nm >/dev/null || fail "nm is missing (binutils)"
    command -v cc >/dev/null || fail "cc is missing"

    WORK="$(mktemp -d)"
    trap 'rm -rf "$WORK"' EXIT
    local header
    for header in "$ROOT"/include/*.h; do
        echo "#include \"$header\""
    done >"$WORK/public.c"
    cc -std=c11 -fsyntax-only -aux-info "$WORK/public.aux" -I"$ROOT/include" "$WORK/public.c" ||
        fail "the public headers do not compile"

    local file bad=0 want got n_want
    for file in "${files[@]}"; do
        [ -f "$file" ] || fail "$file: no such library"
        lib="$(basename "$file")"
        lib="${lib#lib}"
        lib="${lib%%.so*}"
        case " $LIBRARIES " in *" $lib "*) ;; *) fail "$file: not one of lib{${LIBRARIES// /,}}.so" ;; esac
        want="$WORK/$lib.want"
        got="$WORK/$lib.got"
        declared "$lib" >"$want"
        local internal_var="INTERNAL_$lib"
        # shellcheck disable=SC2086 # a list of words
        [ -z "${!internal_var:-}" ] || printf '%s\n' ${!internal_var} >>"$want"
        sort -u -o "$want" "$want"
        exported "$file" >"$got"
        n_want="$(wc -l <"$want")"
        # an empty list on either side would pass for agreement: it means a broken tool
        [ "$n_want" -gt 0 ] || fail "found no functions declared for $lib in $ROOT/include"
        [ -s "$got" ] || fail "$file exports nothing (nm -D found no defined symbols)"
        local extra missing
        mapfile -t extra < <(comm -13 "$want" "$got")
        mapfile -t missing < <(comm -23 "$want" "$got")
        if [ "${#extra[@]}" -gt 0 ] || [ "${#missing[@]}" -gt 0 ]; then
            bad=1
            echo "$file:"
            if [ "${#extra[@]}" -gt 0 ]; then
                echo "  exported, but declared in no public header (leave it hidden, or declare it in include/ with SP_API):"
                printf '    %s\n' "${extra[@]}"
            fi
            if [ "${#missing[@]}" -gt 0 ]; then
                echo "  declared in include/, but not exported (SP_API missing, or not built in):"
                printf '    %s\n' "${missing[@]}"
            fi
        else
            local n_internal=0
            [ -z "${!internal_var:-}" ] || n_internal="$(wc -w <<<"${!internal_var}")"
            local also=""
            [ "$n_internal" -eq 0 ] || also=" (and the $n_internal internal ones of INTERNAL_$lib)"
            echo "$(basename "$file"): exports the $((n_want - n_internal)) functions its headers declare$also, nothing else"
        fi
    done
    if [ "$bad" -ne 0 ]; then
        echo "exports_check: the exports differ from the public headers (above)" >&2
        return 1
    fi
}

main "$@"
