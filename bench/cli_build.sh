# shellcheck shell=bash
# The bench scripts that build and run a tree's CLI on the lent GPU machine source this, or
# run it as `bash bench/cli_build.sh SRC BUILD [TARGET...]` (sp_cli_build_targets, which
# `timeout` can run where it cannot run a function).
#
# sp_cli_build_targets SRC BUILD [TARGET...]: builds, in the configured BUILD of source tree SRC,
# the CLI and the TARGETs: `streampipe` and, where SRC has it, `streampipe-mlp`, which
# `streampipe infer` and `streampipe run --stages mlp:` run (an older tree, as ab_check.sh
# builds, has `streampipe` alone). Non-zero when the build failed.
sp_cli_build_targets() {
    local src=$1 build=$2
    shift 2
    local targets=(streampipe_cli "$@")
    [[ -d $src/tools/streampipe-mlp ]] && targets+=(streampipe_mlp_cli)
    cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
}

# sp_cli_build_if_absent BUILD LOG (sampled_check.sh, live_check.sh): this tree's CLI with CUDA
# for sm_90 into BUILD unless BUILD/streampipe exists, logging to LOG; non-zero when the
# configure or the build failed.
sp_cli_build_if_absent() {
    local build=$1 log=$2
    [[ -x $build/streampipe ]] && return 0
    cmake -S . -B "$build" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$log" 2>&1 &&
        sp_cli_build_targets . "$build" >>"$log" 2>&1
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    sp_cli_build_targets "$@"
fi
