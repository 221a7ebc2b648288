#!/usr/bin/env bash
# --profile=FILE.json on several ranks: rank k writes FILE.rank<k>.json (a
# Chrome trace with its ops and its buckets' track), and none writes
# FILE.json itself, which the ranks would overwrite in turn.
# Usage: profile_trace.sh path/to/nn
set -u
nn=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo 'let x = ones([4]) * (world().rank + 1)
print(all_reduce(x))' > "$dir/s.nn"
out=$("$nn" --nproc 2 --profile="$dir/trace.json" "$dir/s.nn" 2>&1) || { echo "$out"; exit 1; }
for k in 0 1; do
  f="$dir/trace.rank$k.json"
  [[ -s $f ]] || { echo "no $f:"; echo "$out"; exit 1; }
  grep -q '"name": *"all_reduce"' "$f" || { echo "$f holds no all_reduce:"; head -c 400 "$f"; exit 1; }
  grep -q "profile: wrote $f" <<< "$out" || { echo "rank $k does not say it wrote $f:"; echo "$out"; exit 1; }
done
[[ ! -e $dir/trace.json ]] || { echo "trace.json was written too"; exit 1; }
grep -qF 'f32[4] [3.0, 3.0, 3.0, 3.0]' <<< "$out" || { echo "wrong sum:"; echo "$out"; exit 1; }
echo ok
