#!/usr/bin/env bash
# Progress bars under --nproc (SPEC §14: rank 0 only). The ranks' stderr
# reaches the terminal through mpiexec, never as a terminal of their own,
# so `nn --nproc` tells them whether its own is one: run under a pseudo
# terminal (script), rank 0 draws the bar and rank 1 does not; without one,
# neither draws. Usage: progress_bar.sh path/to/nn
set -u
nn=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo 'let s = 0
for i in progress(0..5) { s = s + i }
print(s)' > "$dir/p.nn"
tty_out=$(script -qec "$nn --nproc 2 $dir/p.nn" /dev/null) || { echo "$tty_out"; exit 1; }
bars=$(grep -o '5/5 \[#*\] 100%' <<< "$tty_out" | wc -l)
[[ $bars -eq 1 ]] || { echo "expected one finished bar on a terminal, found $bars:"; cat -A <<< "$tty_out"; exit 1; }
grep -q '\[1\] 10' <<< "$tty_out" || { echo "rank 1's line is missing:"; cat -A <<< "$tty_out"; exit 1; }
plain=$("$nn" --nproc 2 "$dir/p.nn" 2>&1) || { echo "$plain"; exit 1; }
! grep -q '5/5' <<< "$plain" || { echo "a bar without a terminal:"; cat -A <<< "$plain"; exit 1; }
echo ok
