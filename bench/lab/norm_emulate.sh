#!/usr/bin/env bash
# Runs the CUDA norm launcher and kernels on the CPU (bench/lab/norm_emulator.cc explains how and what it
# cannot check) for the default dispatch and each JK_NORM_TIER candidate. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
CUDA_INC=${CUDA_INC:-$(ls -d ${CUDA_HOME:-/usr/local/cuda}/include /usr/local/cuda*/include 2>/dev/null | head -1)}
B=$(mktemp -d)
trap 'rm -rf "$B"' EXIT
mkdir -p "$B/norm" "$B/common"
# Every norm source and the common headers are copied to $B (first on the include path) with:
#   kernel<<<grid, block, smem, stream>>>(args);  ->  jk_emu::Launch("kernel", &kernel, grid, block, smem, stream, args);
#     (a named kernel with template arguments, nested ones too, or a kernel variable; multi-line)
#   cudaLaunchKernelEx(&cfg, kernel, args)        ->  jk_emu::LaunchEx("kernel", &cfg, kernel, args)
#     (the name counts launches per kernel: the emulator's EMU_EXPECT check)
#   cfg.gridDim / cfg.blockDim                    ->  cfg.*jk_emu::kGrid / kBlock (the built-in macros would capture them)
#   extern __shared__ [__align__(N)] T name[];    ->  T* name = (T*)jk_emu::dyn_smem;  (the per-launch buffer)
#   the packed row tier's PTX unpacking (norm_packed_block.cuh: shl/and, prmt) -> the same bit operations in C++
#   common/device.cuh's rcp.approx / named barriers -> host stand-ins (emulator: never reached by the norms)
rewrite() {
  perl -0pe '
    s/([\w:]+(<(?:[^;<>]|(?2))*>)?)\s*<<<(.*?)>>>\s*\((.*?)\);/jk_emu::Launch(\"$1\", &$1, $3, $4);/gs;
    s/cudaLaunchKernelEx\(&([\w.]+),\s*([\w:]+(<(?:[^;<>]|(?3))*>)?)/jk_emu::LaunchEx(\"$2\", &$1, $2/g;
    s/cfg\.gridDim/cfg.*jk_emu::kGrid/g; s/cfg\.blockDim/cfg.*jk_emu::kBlock/g;
    s/extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w:]+(?:\s+[\w:]+)*?)\s+(\w+)\[\];/$1* $2 = reinterpret_cast<$1*>(jk_emu::dyn_smem);/g;
    s/asm volatile\("shl\.b32 %0, %2, 16;\\n\\tand\.b32 %1, %2, 0xFFFF0000;" : "=r"\(lo\), "=r"\(hi\) : "r"\(w\)\);/lo = w << 16; hi = w & 0xFFFF0000u;  \/\/ emulator (norm_emulate.sh)/g;
    s/asm volatile\("prmt\.b32 %0, %2, 0, (0x\w+);\\n\\tprmt\.b32 %1, %2, 0, (0x\w+);" : "=r"\(lo\), "=r"\(hi\) : "r"\(w\)\);/lo = __byte_perm(w, 0, $1); hi = __byte_perm(w, 0, $2);  \/\/ emulator (norm_emulate.sh)/g;
    s/asm\("rcp\.approx\.ftz\.f32 %0, %1;" : "=f"\(r\) : "f"\(v\)\);/r = 1.f \/ v;  \/\/ emulator/g;
    s/asm volatile\("bar\.(?:sync|arrive) %0, %1;\\n" ::"r"\(id\), "r"\(count\) : "memory"\);/jk_emu::NamedBarrierUnsupported();/g;
  ' "$1"
}
for f in cuda/norm/*.cuh cuda/norm/*.h cuda/common/*.cuh cuda/common/*.h; do rewrite "$f" >"$B/${f#cuda/}"; done
# The launchers the emulator builds (the cluster, row-pairs and long-row launchers are not built: see norm_emulator.cc).
for u in norm_launch norm_short norm_window norm_packed_block; do rewrite "cuda/norm/$u.cu" >"$B/emu_$u.cc"; done
# The launches through a kernel variable (`auto* kernel = X<...>; kernel<<<...>>>`) are named for the kernel.
sed -i 's/jk_emu::Launch("kernel"/jk_emu::Launch("GroupPerRowPersistent"/' "$B/emu_norm_short.cc"
sed -i 's/jk_emu::Launch("onepack_kernel"/jk_emu::Launch("ShortRowsOnePack"/' "$B/emu_norm_short.cc"
sed -i 's/jk_emu::Launch("kernel"/jk_emu::Launch("BlockPerRowBulkSmem"/' "$B/emu_norm_launch.cc"
# Every launch must have been rewritten, and into as many jk_emu launches as the sources have.
fail=0
for f in "$B"/norm/*.cuh "$B"/emu_*.cc; do
  if grep -n '<<<' "$f"; then echo "norm_emulate.sh: a launch in $f not rewritten"; fail=1; fi
done
for u in norm_launch norm_short norm_window norm_packed_block; do
  want=$(perl -0ne 'my $n = () = /<<<|cudaLaunchKernelEx\(/g; print $n' "cuda/norm/$u.cu")
  got=$(grep -o 'jk_emu::Launch' "$B/emu_$u.cc" | wc -l)
  [ "$want" -ge 1 ] && [ "$got" = "$want" ] || { echo "norm_emulate.sh: $u.cu: $want launches, $got rewritten"; fail=1; }
done
grep -q 'jk_emu::dyn_smem' "$B/norm/norm_block.cuh" || { echo "norm_emulate.sh: the bulk tier's dynamic smem not rewritten"; fail=1; }
[ "$(grep -c 'emulator (norm_emulate.sh)' "$B/norm/norm_packed_block.cuh")" = 3 ] ||
  { echo "norm_emulate.sh: the packed row tier's PTX unpacking not rewritten"; fail=1; }
if grep -n '^\s*asm' "$B/norm/norm_packed_block.cuh" | grep -v 'asm volatile(""'; then echo "norm_emulate.sh: PTX left in norm_packed_block.cuh"; fail=1; fi
[ $fail = 0 ] || exit 1
g++ -std=c++20 -O1 -pthread -w -fsanitize=alignment,undefined -fno-sanitize-recover=all -I"$B" -Icuda -I"$CUDA_INC" \
  bench/lab/norm_emulator.cc -o "$B/emu"
status=0
start=$SECONDS
# EMU_TIERS (';'-separated, 'default' for the unset variable) narrows the list. JK_NORM_TIER strings as ForcedTier
# (cuda/norm/norm_launch.cu) parses them; the bulk tier ("bulk S B M", "proposed"'s long rows) needs sm_90 code, which
# the emulator does not run (RunsSm90Code() is false), so those would only repeat the default dispatch.
# Each forced tier must launch its kernel at least once (EMU_EXPECT); forced tiers run only rows up to the longest
# they take or that tell them apart (EMU_MAX_N columns; EMU_HALF_ONLY: bf16/f16 only), so that the whole run stays
# under ~10 minutes on 2 cores. Also parsed, but left out of the default list for time (their kernels run above):
# "legacy", "block 4 256 1", "tworeads 256", "short 4 0 0".
IFS=';' read -ra tiers <<<"${EMU_TIERS:-default;block-lean;block2 8 256;short 2 1 0;short 1 0 0 1;packed 2 1;packed 3 1;packed 5 1;packed 2 2;pblock 32;pwarp 16 128;onepack}"
runs=0
for tier in "${tiers[@]}"; do
  [ "$tier" = default ] && tier=""
  expect="" max_n="" half_only=""
  case $tier in
    "") expect=ShortRowsOnePack,ShortRowsPacked,GroupPerRowPersistent,GroupPerRowRegisters,BlockPerRowPacked,BlockPerRowRegisters,BlockPerRowRegistersTwoPerSm,BlockPerRowTwoReads,WindowRowsNorm ;;
    legacy) expect=GroupPerRowRegisters,BlockPerRowRegisters,BlockPerRowTwoReads ;;
    block-lean | "block "*) expect=BlockPerRowRegisters max_n=8200 ;;
    block2*) expect=BlockPerRowRegistersTwoPerSm max_n=8200 ;;
    tworeads*) expect=BlockPerRowTwoReads ;;
    short*) expect=GroupPerRowPersistent max_n=256 ;;
    packed*) expect=ShortRowsPacked max_n=1024 ;;
    pblock*) expect=BlockPerRowPacked half_only=1 max_n=8200 ;;
    pwarp*) expect=BlockPerRowPacked half_only=1 max_n=512 ;;
    onepack*) expect=ShortRowsOnePack max_n=256 ;;
  esac
  t0=$SECONDS
  runs=$((runs + 1))
  ( [ -n "$tier" ] && export JK_NORM_TIER="$tier"
    [ -n "$max_n" ] && export EMU_MAX_N="$max_n"
    [ -n "$half_only" ] && export EMU_HALF_ONLY=1
    EMU_EXPECT=$expect exec "$B/emu" "${EMU_SMS:-2}" ) || status=1
  echo "  ($((SECONDS - t0)) s)"
done
echo "norm_emulate.sh: $runs tier settings in $((SECONDS - start)) s (build excluded): $([ $status = 0 ] && echo 'all passed' || echo 'FAILURES (above)')"
exit $status
