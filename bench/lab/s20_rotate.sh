#!/bin/bash
# Session 20, device calls 14-15: bench/lab/s20_rotate_lab.cu (standalone, built on the CPU machine, carried as
# build/s20_rotate_lab).
set -u
CASES="8,4096,4096;8,2048,2048;8,14336,4096" build/s20_rotate_lab 2>&1 | tee $OUT/s20_rotate.txt
