#!/bin/sh
# CMake options for building llama-cpp-python on this machine (the Makefile's install).
#
# Not -march=native: on a CPU with AMX, a native build runs AMX tile instructions that a
# virtual machine or sandbox may refuse, and every local-tier answer then ends the
# process with SIGILL (ggml_backend_amx_mul_mat, seen at stop 32).  Instead the x86
# extensions that llama.cpp's kernels use are switched on one by one from what the CPU
# reports: AVX2/FMA/F16C/BMI2 (ggml's defaults without GGML_NATIVE), and AVX-512 with its
# VBMI/VNNI/BF16 parts and AVX-VNNI where /proc/cpuinfo lists them (on this project's
# 2-core machine AVX-512 read prompts at 70 tok/s with one thread, AVX2 at 50).
# AMX stays off.  Other architectures get ggml's portable defaults.
set -eu
args="-DGGML_NATIVE=OFF"
flags=""
if [ "$(uname -m)" = "x86_64" ] && [ -r /proc/cpuinfo ]; then
    flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
fi
has() { case "$flags" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if has avx512f && has avx512cd && has avx512vl && has avx512dq && has avx512bw; then
    args="$args -DGGML_AVX512=ON"
    if has avx512vbmi; then args="$args -DGGML_AVX512_VBMI=ON"; fi
    if has avx512_vnni; then args="$args -DGGML_AVX512_VNNI=ON"; fi
    if has avx512_bf16; then args="$args -DGGML_AVX512_BF16=ON"; fi
fi
if has avx_vnni; then args="$args -DGGML_AVX_VNNI=ON"; fi
echo "$args"
