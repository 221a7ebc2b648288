#!/usr/bin/env bash
# A rank killed by a signal ends the others within seconds (SPEC §14): two
# ranks spin in all-reduces; rank 1 gets SIGKILL; the run must end, with a
# failing exit code, within 10 s, and `nn --nproc` says that a rank was
# killed (no rank can). Usage: killed_rank.sh path/to/nn
set -u
nn=$1
script=$(mktemp --suffix=.nn)
errors=$(mktemp)
trap 'rm -f "$script" "$errors"' EXIT
echo 'let x = ones([4])
for i in 0..1000000000 { x = all_reduce(x) / 2 }' > "$script"
"$nn" --nproc 2 "$script" >/dev/null 2>"$errors" &
launcher=$!
# Rank 1: the process whose environment says so, once it is running.
victim=""
for _ in $(seq 100); do
  for pid in $(pgrep -f "$script"); do
    if tr '\0' '\n' < /proc/$pid/environ 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then victim=$pid; fi
  done
  [[ -n $victim ]] && break
  sleep 0.1
done
if [[ -z $victim ]]; then echo "rank 1 never started"; kill $launcher; exit 1; fi
sleep 0.5
start=$SECONDS
kill -KILL "$victim"
for _ in $(seq 100); do
  kill -0 $launcher 2>/dev/null || break
  sleep 0.1
done
if kill -0 $launcher 2>/dev/null; then
  echo "the run still goes on 10 s after rank 1 was killed"
  pkill -KILL -f "$script"
  exit 1
fi
wait $launcher
rc=$?
if [[ $rc -ne 137 ]]; then echo "exit code $rc after a rank was killed, not 137 (128 + SIGKILL)"; exit 1; fi
expected="error: a rank was ended by signal 9 (Killed); the run ended with it (exit code 137)"
if [[ "$(cat "$errors")" != "$expected" ]]; then
  echo "expected stderr: $expected"
  echo "got: $(cat "$errors")"
  exit 1
fi
echo "ended in $((SECONDS - start)) s with exit code $rc"
