# Sourced by bench/gpu_check.sh and bench/compress_check.sh: nvCOMP for decompression in the
# ring (issue 26). NVIDIA's wheel (nvidia-libnvcomp-cu13) is carried in .wheels/, never
# vendored: installed here with `pip install --no-deps` into /tmp/sp-nvcomp, and its library
# exported as SP_NVCOMP_LIBRARY, which the CLI and the tests hand to sp_nvcomp_load (the
# library itself reads no environment). SP_REQUIRE_NVCOMP=1 then makes the CUDA tests fail,
# not fall back, when it does not load. Without a wheel nothing is set.
sp_nvcomp_env() {
    local target=/tmp/sp-nvcomp wheel lib
    [[ -n ${SP_NVCOMP_LIBRARY:-} && -f ${SP_NVCOMP_LIBRARY} ]] && return 0
    wheel=$(ls .wheels/nvidia_libnvcomp_cu13-*.whl 2>/dev/null | head -1)
    [[ -n $wheel ]] || return 0
    if [[ ! -d $target/nvidia/libnvcomp ]]; then
        python3 -m pip install --quiet --no-deps --target "$target" "$wheel" ||
            python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
                "$wheel" "$target" || return 0
    fi
    lib=$(ls "$target"/nvidia/libnvcomp/lib64/libnvcomp.so.* 2>/dev/null | grep -v _cpu | head -1)
    [[ -n $lib ]] || return 0
    export SP_NVCOMP_LIBRARY=$lib SP_REQUIRE_NVCOMP=1
}
sp_nvcomp_env
