#!/usr/bin/env bash
# What the build and tests need, installed when missing (Debian/Ubuntu), so that the README's
# two commands work on a fresh machine. The one list of the project's system packages:
#
#   tools/setup.sh [--ci] [--packages-only] [PYTHON_VENV_DIR]
#
# Without --ci: what `make bench` and `make test` need. With --ci, also what .ci/run's other
# steps need (clang + libFuzzer, Open MPI, libabigail); --packages-only stops after the
# packages. Installs with apt-get as root or with
# sudo; where neither works it stops with the exact line to run. Then looks for a Python with
# nanobind, numpy, pytest and prometheus-client (for the Python package's tests: PY_PACKAGES
# below): the first python3 on PATH, or a
# venv made in PYTHON_VENV_DIR with pip; prints the interpreter to use as the last line. When
# none can be had (no pip index, say) it says why and prints nothing: the C build and
# `make bench` go on, and `make test`'s python_tests fails naming what to install.
set -euo pipefail

CI=0 PACKAGES_ONLY=0
while [[ ${1:-} == --* ]]; do
    case $1 in
    --ci) CI=1 ;;
    --packages-only) PACKAGES_ONLY=1 ;;
    *) echo "setup: unknown option $1" >&2; exit 64 ;;
    esac
    shift
done
VENV=${1:-}

# package: why
BUILD_PACKAGES=(
    cmake gcc g++ make pkg-config libc6-dev # the C library, CLI and tests; g++ for nvcc and
                                            # the Python binding
    binutils      # addr2line: the chunk_path test names the core's functions by file
    libcjson-dev  # reads safetensors models (the MLP, `streampipe infer`) and its tests
    libxml2-dev   # the tests parse the trace and SVG exports
    liblz4-dev libzstd-dev # the file source decompresses LZ4 and Zstandard inputs on the
                           # staging threads (src/io; LZ4_decompress_safe, ZSTD_decompressDCtx)
    lz4 zstd      # the commands the compressed-input tests make their files with (pzstd too)
    libmicrohttpd-dev # the CLI's --metrics endpoint (Prometheus text over HTTP); without it
                      # --metrics is refused saying so
    curl          # the --metrics test scrapes the endpoint during a run
    python3 python3-dev python3-venv # the Python package (headers for the extension)
)
CI_PACKAGES=(
    clang libclang-rt-14-dev              # the model loader's libFuzzer target
    libopenmpi-dev openmpi-bin openssh-client # `streampipe run` under mpirun (rsh agent)
    abigail-tools                         # abidw/abidiff: the ABI check
    nodejs                                # runs Perfetto's trace processor (the UI's
                                          # WebAssembly build) for cli_flight_perfetto_host
)

have() { dpkg -s "$1" >/dev/null 2>&1; }

install_missing() {
    local want=("${BUILD_PACKAGES[@]}") missing=() p
    ((CI)) && want+=("${CI_PACKAGES[@]}")
    if ! command -v dpkg >/dev/null 2>&1; then
        echo "setup: not a Debian system; install the equivalents of: ${want[*]}" >&2
        return 0
    fi
    for p in "${want[@]}"; do have "$p" || missing+=("$p"); done
    ((${#missing[@]} == 0)) && { echo "setup: every package present" >&2; return 0; }
    local line="apt-get install -y --no-install-recommends ${missing[*]}"
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if sudo -n true 2>/dev/null; then sudo=(sudo); else
            echo "setup: missing packages; run: sudo apt-get update && sudo $line" >&2
            return 1
        fi
    fi
    echo "setup: installing ${missing[*]}" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive $line >&2
}

# The Python packages the Python package's build and tests need (pip names): nanobind (the
# binding), numpy (its arrays, the tests' references), pytest (the tests), prometheus-client
# (streampipe.metrics.serve's endpoint, which test_metrics.py scrapes and parses).
PY_PACKAGES=(nanobind numpy pytest prometheus-client)

# The interpreter for the Python tests: one that imports all of PY_PACKAGES.
python_for_tests() {
    local py=${PYTHON:-python3} check='import nanobind, numpy, pytest, prometheus_client'
    if "$py" -c "$check" >/dev/null 2>&1; then command -v "$py"; return 0; fi
    if [[ -z $VENV ]]; then
        echo "setup: $py lacks one of ${PY_PACKAGES[*]}; run: $py -m pip install ${PY_PACKAGES[*]}" >&2
        return 0
    fi
    if [[ ! -x $VENV/bin/python ]] || ! "$VENV/bin/python" -c "$check" >/dev/null 2>&1; then
        echo "setup: a venv for the Python tests in $VENV (pip install ${PY_PACKAGES[*]})" >&2
        python3 -m venv "$VENV" >&2
        "$VENV/bin/python" -m pip install -q "${PY_PACKAGES[@]}" >&2 || {
            echo "setup: pip failed; run: $VENV/bin/python -m pip install ${PY_PACKAGES[*]}" >&2
            return 0
        }
    fi
    echo "$VENV/bin/python"
}

install_missing
((PACKAGES_ONLY)) || python_for_tests
