#!/usr/bin/env bash
# Session 37, call 5 (H200): call 4 found a fresh machine (no installed build; its sanitizer run 40 passed): build, then
# test-other and the large transpose tests (s37_call4.sh without the sanitizer; the large tests get the time left).
#   bash bench/lab/s37_call5.sh
REPO=$(cd "$(dirname "$0")/../.." && pwd)
JK_CALL_BUILD=build JK_SKIP_SANITIZER=1 bash "$REPO/bench/lab/s37_call4.sh"
