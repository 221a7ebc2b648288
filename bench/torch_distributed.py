# PyTorch side of bench_distributed: the DDP (gloo) twin of its nn runs, with
# the same MLP and CNN models, per-rank batch 64 and one thread per rank.
# Usage: torch_distributed.py mlp|cnn NPROC [STEPS]. NPROC 1 trains the plain
# model in one process (no DDP, no process group).
# Prints "step_ms <median> samples_per_s <throughput> peak_mb <max over ranks>".
import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import resource
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as tnn
from torch.nn.parallel import DistributedDataParallel

BATCH = 64


def make_model(name):
    if name == "mlp":
        model = tnn.Sequential(tnn.Linear(784, 512), tnn.ReLU(), tnn.Linear(512, 256), tnn.ReLU(),
                               tnn.Linear(256, 10))
        return model, torch.randn(BATCH, 784), 5
    model = tnn.Sequential(
        tnn.Conv2d(1, 20, 5), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Conv2d(20, 50, 5), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Flatten(), tnn.Linear(800, 500), tnn.ReLU(), tnn.Linear(500, 10))
    return model, torch.randn(BATCH, 1, 28, 28), 3


def run(rank, nproc, name, steps, port):
    torch.set_num_threads(1)
    torch.manual_seed(rank)
    distributed = nproc > 1
    if distributed:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        dist.init_process_group("gloo", rank=rank, world_size=nproc)
    model, x, warmup = make_model(name)
    y = torch.randint(0, 10, (BATCH,))
    if distributed:
        model = DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-5)
    loss_fn = tnn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(warmup):
        step()
    if distributed:
        dist.barrier()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)

    peak_kib = torch.tensor([float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)])
    if distributed:
        dist.all_reduce(peak_kib, op=dist.ReduceOp.MAX)
    if rank == 0:
        median = statistics.median(times)
        print(f"step_ms {median * 1e3:.3f} samples_per_s {nproc * BATCH / median:.1f} "
              f"peak_mb {peak_kib.item() / 1024:.1f}", flush=True)
    if distributed:
        # gloo's teardown (destroy_process_group, or the exit after it) hangs
        # now and then on this machine: the figures are out, so leave at once.
        dist.barrier()
        sys.stdout.flush()
        os._exit(0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("mlp", "cnn"):
        sys.exit("usage: torch_distributed.py mlp|cnn NPROC [STEPS]")
    name, nproc = sys.argv[1], int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else (50 if name == "mlp" else 20)
    if nproc == 1:
        run(0, 1, name, steps, 0)
    else:
        mp.spawn(run, args=(nproc, name, steps, free_port()), nprocs=nproc)
