#!/usr/bin/env bash
# Session 40, call 6 (CPU machine): PTX variants of bench/lab/s40_onepack_lab.cu into .dev/s40_op_*.ptx: as is, without
# the ragged-CTA path (_notail), with scale / bias used as given (_nosel: the header's null selects removed by sed),
# and both (_bare).
set -euo pipefail
cd "$(dirname "$0")/../.."
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/norm" && cp -r cuda/common "$T/" && cp cuda/norm/*.cuh cuda/norm/*.h "$T/norm/"
sed -i 's/p.scale == nullptr ? OnesRow<T>() : p.scale;/p.scale;/; s/p.bias == nullptr ? reinterpret_cast<const T\*>(kZeros.w) : p.bias;/p.bias;/' \
  "$T/norm/norm_short_onepack.cuh"
[ "$(grep -c 'const T\* const scale = p.scale;' "$T/norm/norm_short_onepack.cuh")" = 2 ] || { echo "sed missed"; exit 1; }
f="nvcc -ptx -arch=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr bench/lab/s40_onepack_lab.cu"
$f -Icuda -DS40_SUFFIX=_full -o .dev/s40_op_full.ptx
$f -Icuda -DS40_SUFFIX=_notail -DS40_NOTAIL -o .dev/s40_op_notail.ptx
$f -I"$T" -DS40_SUFFIX=_nosel -o .dev/s40_op_nosel.ptx
$f -I"$T" -DS40_SUFFIX=_bare -DS40_NOTAIL -o .dev/s40_op_bare.ptx
ls -la .dev/s40_op_*.ptx
# Call 7: the ragged CTA in a never-inlined function (_noinl), or the last CTA moved back over its predecessor's rows
# (_shift).
$f -Icuda -DS40_SUFFIX=_noinl -DS40_NOINLINE -o .dev/s40_op_noinl.ptx
$f -Icuda -DS40_SUFFIX=_shift -DS40_SHIFT -o .dev/s40_op_shift.ptx
