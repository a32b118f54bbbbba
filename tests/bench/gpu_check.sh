#!/usr/bin/env bash
# Everything issue 37 asks of a GPU machine, in one call that fits a short device lease:
#   bash tests/bench/gpu_check.sh OUTDIR [SECONDS]
# builds the library for the GPU present (SCons -j of the cores, --cuda-arch=native), then, each
# step bounded so the whole stays inside SECONDS (default 480) and each writing its log under
# OUTDIR, most telling first: the architectures in the library (cuobjdump), the CUDA tests
# (test_cuda_ops, test_cuda_kernel_paths, test_cuda_memory), the benchmark beside torch
# (tests/bench/bench_cuda.py), Nsight Compute over the reduction and softmax kernels, compute-sanitizer's memcheck over the CUDA tests, the CUDA cases
# of test_autograd_layers and the C++ unit tests. Wheels in .whl/ (SCons, OpenBLAS: the machine cannot reach PyPI)
# are installed first into a private folder. Prints one summary line per step.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:?usage: gpu_check.sh OUTDIR [SECONDS]}"
budget="${2:-480}"
mkdir -p "$out"
start=$(date +%s)
export PYTHONUNBUFFERED=1

left() { echo $(( budget - ($(date +%s) - start) )); }
# step NAME SECONDS COMMAND...: runs COMMAND with at most SECONDS (and what is left), logs to OUTDIR/NAME.log.
step() {
  local name="$1" limit="$2"; shift 2
  local remaining; remaining=$(left)
  if (( remaining < 20 )); then echo "$name: not run (time is up)"; return; fi
  (( limit > remaining )) && limit=$remaining
  local t0; t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  local summary; summary=$(grep -E '[0-9]+ (passed|failed)' "$out/$name.log" | tail -1)
  [ -n "$summary" ] || summary=$(grep -E 'error|skipped' "$out/$name.log" | tail -1)
  echo "$name: exit $rc in $(( $(date +%s) - t0 )) s; $summary"
}

if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/opgen-site .whl/*.whl && export PYTHONPATH=/tmp/opgen-site${PYTHONPATH:+:$PYTHONPATH}
fi
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
echo "gpu: $(cat "$out/gpu.txt")"

step build 240 python3 -m SCons -Q -j"$(nproc)"
grep -E '^\[opgen\] (CUDA|cuBLAS|BLAS)' "$out/build.log" | head -3
step cuobjdump 20 bash -c "cuobjdump --list-elf build/lib/libopdispatch.so | sort | uniq -c | sort -rn | head; cuobjdump --list-ptx build/lib/libopdispatch.so | wc -l"
head -3 "$out/cuobjdump.log"
step cuda_tests 150 python3 -m pytest -q -p no:cacheprovider tests/runtime/test_cuda_ops.py \
  tests/runtime/test_cuda_kernel_paths.py tests/runtime/test_cuda_memory.py -rs
grep -E "^(FAILED|ERROR)" "$out/cuda_tests.log" | head -20
step bench 170 python3 tests/bench/bench_cuda.py --budget 150 --json "$out/bench-cuda.json"
cat "$out/bench.log"
# Nsight Compute over one call of each reduction and softmax row: time, DRAM throughput, grid,
# registers and occupancy per kernel, for the rows the benchmark finds slow.
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
step ncu 60 "$ncu" --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
  -k "regex:reduce|fold|softmax" python3 -c "
import sys; sys.path.insert(0, 'build/python')
import numpy as np, opdispatch as od
a = od.tensor(np.random.default_rng(0).standard_normal((4096, 4096)).astype(np.float32), device='cuda')
a.sum(); a.sum([1]); a.sum([0]); a.amax([1]); a.argmax(1)
y = od.log_softmax(a, 1); od._log_softmax_backward_data(a, y, 1, od.float32); od.cuda.synchronize()"
# Every tensor its own cudaMalloc of exactly its bytes, so memcheck sees each tensor's bounds.
OPDISPATCH_CUDA_NO_CACHING=1 step memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest -x -q -p no:cacheprovider \
  tests/runtime/test_cuda_ops.py tests/runtime/test_cuda_kernel_paths.py -k "not 2_to_the_31"
grep -E "ERROR SUMMARY|Invalid|FAILED" "$out/memcheck.log" | head -10
step autograd_cuda 60 python3 -m pytest -q -p no:cacheprovider tests/runtime/test_autograd_layers.py -k "cuda or CUDA"
step cpp_tests 60 ./build/bin/opdispatch_tests
# The short logs in one file: a device call brings back at most 8 files.
for small in gpu cuobjdump ncu autograd_cuda cpp_tests; do
  for f in "$out/$small".*; do [ -f "$f" ] && { echo "== $f"; cat "$f"; rm -f "$f"; }; done
done > "$out/misc.log"
echo "total: $(( $(date +%s) - start )) s"
