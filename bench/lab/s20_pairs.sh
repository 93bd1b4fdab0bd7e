#!/usr/bin/env bash
# Session 20, device calls 3-5, 7 and 11 (H200): build (sm_90a); the tests of FILES matching -k FILTER, then LAB with
# S20_LAB=CASES (one of s20_pitch_lab.py's / s20_linear_lab.py's case lists); bench/lab/lab_call.sh does the work.
#   bash bench/lab/s20_pairs.sh LAB CASES FILTER [FILES...]
#   call 3: s20_pitch_lab.py mcb "mcb or (wgmma and default)" tests/test_matmul.py
#   call 4: s20_pitch_lab.py rule "mcb or (wgmma and default)" tests/test_matmul.py
#   call 5: s20_pitch_lab.py small "mcb or mca or mc1 or (wgmma and default)" tests/test_matmul.py
#   call 7: s20_linear_lab.py "" "mcb or default or pingpong" tests/test_linear_epilogue.py tests/test_matmul.py
#   call 11: s20_linear_lab.py fold "linear" tests/test_linear_epilogue.py tests/test_matmul.py
lab=$1
export S20_LAB=$2
shift 2
exec bash "$(dirname "$0")/lab_call.sh" "$lab" "$@"
