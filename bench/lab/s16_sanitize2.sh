set -uo pipefail
REPO=$(pwd)
export OUT=${OUT:-$REPO/gpu_out} JK_CUDA_ARCHS=90a-real
JK_SANITIZE_PARTS=matmuls JK_SANITIZE_TOOLS="racecheck" JK_SANITIZE_TIMEOUT=200 timeout -k 5 400 bash "$REPO/bench/gpu_check.sh" sanitize
