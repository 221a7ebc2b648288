#!/usr/bin/env bash
# The collectives and data_parallel of CUDA tensors on two ranks (SPEC §14):
# the rank scripts of tests/ranks/ with every tensor on the GPU, in graph
# mode and eagerly, through NCCL where the ranks have a GPU each and
# through host memory where they share one (NCCL refuses that), and with
# NN_NCCL=0. Skipped (exit 77) where nn finds no GPU.
# Usage: two_ranks.sh path/to/nn path/to/tests/ranks
set -u
nn=$1
ranks=$2
if ! "$nn" --device cuda -e 'print(1)' >/dev/null 2>&1; then
  echo "skipped: no GPU"
  exit 77
fi
failed=0
for nccl in 1 0; do
  for mode in "" --eager; do
    for name in collectives data_parallel; do
      out=$(NN_NCCL=$nccl "$nn" --nproc 2 --device cuda $mode "$ranks/$name.nn" 2>&1)
      if [ "$out" != "$(cat "$ranks/$name.out")" ]; then
        echo "FAILED: NN_NCCL=$nccl $name $mode"
        echo "$out"
        failed=1
      fi
    done
  done
done
exit $failed
