#!/usr/bin/env python3
"""Start-up of the nn program: wall time and max resident memory of
`nn -e 'print(1)'` and `nn --version`, against /bin/true: the wall time the
median of --runs runs, the memory from one run under GNU time. Several nn binaries (builds of two commits, say) are run in
turn within each round, so that they are compared in the same run.
Goal (issue 20): `nn -e 'print(1)'` <= 20 ms and <= 30 MB.

Usage: bench/bench_startup.py [--runs N] [NN ...]   (default: build/nn)
"""
import os
import subprocess
import statistics
import sys
import time


def wall_ms(cmd):
    """Wall ms of one run of cmd, its output discarded."""
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def max_rss_mb(cmd):
    """Max resident MB of one run of cmd, by GNU time: a child's max RSS
    counts the pages of the process it was forked from, and GNU time is
    small where this Python process is not. None without /usr/bin/time."""
    if not os.path.exists("/usr/bin/time"):
        return None
    r = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, check=True)
    return int(r.stderr.strip().splitlines()[-1]) / 1024


def main():
    args = sys.argv[1:]
    runs = 21
    if len(args) >= 2 and args[0] == "--runs":
        runs, args = int(args[1]), args[2:]
    binaries = args or ["build/nn"]
    commands = [["/bin/true"]]
    for nn in binaries:
        commands += [[nn, "-e", "print(1)"], [nn, "--version"]]
    walls = {i: [] for i in range(len(commands))}
    for _ in range(runs):
        for i, cmd in enumerate(commands):
            walls[i].append(wall_ms(cmd))
    rss = {i: max_rss_mb(cmd) for i, cmd in enumerate(commands)}
    print(f"bench_startup: median of {runs} runs, the commands alternating")
    print(f"{'command':60s} {'wall ms':>8s} {'max RSS MB':>11s}")
    for i, cmd in enumerate(commands):
        mb = "-" if rss[i] is None else f"{rss[i]:.1f}"
        print(f"{' '.join(cmd):60s} {statistics.median(walls[i]):8.1f} {mb:>11s}")
    for k, nn in enumerate(binaries):
        i = 1 + 2 * k
        wall, mb = statistics.median(walls[i]), rss[i]
        met = "MET" if wall <= 20 and mb is not None and mb <= 30 else "NOT MET"
        shown = "?" if mb is None else f"{mb:.1f}"
        print(f"goal for {nn}: print(1) in {wall:.1f} ms (<= 20) and {shown} MB (<= 30): {met}")


if __name__ == "__main__":
    main()
