# shellcheck shell=bash
# Sourced by the bench scripts that run this tree's CLI on the lent GPU machine
# (sampled_check.sh, live_check.sh): sp_cli_build_if_absent BUILD LOG builds the CLI with
# CUDA for sm_90 into BUILD unless BUILD/streampipe exists, logging to LOG; non-zero when the
# configure or the build failed.
sp_cli_build_if_absent() {
    local build=$1 log=$2
    [[ -x $build/streampipe ]] && return 0
    cmake -S . -B "$build" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$log" 2>&1 &&
        cmake --build "$build" -j16 --target streampipe_cli >>"$log" 2>&1
}
