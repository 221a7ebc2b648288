# PyTorch side of bench_graph: eager training steps of the same three models
# as bench/models/*.nn, with the same thread count.
#   mlp      digits MLP 64-128-10, batch 64, SGD lr 0.1 momentum 0.9
#   cnn      digits CNN: conv 16@3x3 - relu - max-pool 2 - conv 32@3x3 - relu -
#            max-pool 2 - fc 64 - relu - fc 10 on 1x8x8, batch 64, Adam lr 0.005
#   resnet8  ResNet-8 on 3x32x32, batch 32, 10 classes (bench/models/resnet8.nn),
#            SGD lr 0.05 momentum 0.9
# and bench_passes' two (bench/models/mlp784.nn, lenet.nn), batch 64, SGD lr
# 0.01 momentum 0.9 weight decay 1e-5:
#   mlp784   MLP 784-512-256-10 on 784 inputs
#   lenet    conv 20@5x5 - relu - max-pool 2 - conv 50@5x5 - relu - max-pool 2 -
#            fc 500 - relu - fc 10 on 1x28x28
# The digits are replaced by uniform [0, 1) data of the same shapes (the
# timing does not depend on the values).
#
# PyTorch runs at its best configuration here: OpenBLAS on one thread (its
# own threads oversubscribe the cores PyTorch's intra-op threads use) and,
# per model, the faster of 1 and THREADS intra-op threads, timed after the
# warm-up.
#
#   torch_graph.py THREADS [STEPS [RESNET_STEPS [WARMUP]]]
#       times each model and prints "mlp_ms <median>", "cnn_ms <median>",
#       "resnet8_ms <median>".
#   torch_graph.py --serve THREADS WARMUP
#       what bench_graph uses, to interleave PyTorch's steps with nn's so that
#       both see the same load on the machine: prints "ready", then answers
#       each line "MODEL N" on stdin by running N steps of MODEL (built and
#       warmed up on first use) and printing their times in ms on one line;
#       "quit" or end of input stops it.
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before torch loads OpenBLAS
import torch  # noqa: E402
import torch.nn as tnn


class BasicBlock(tnn.Module):
    def __init__(self, n_in, n_out, stride=1):
        super().__init__()
        self.conv1 = tnn.Conv2d(n_in, n_out, 3, stride=stride, padding=1, bias=False)
        self.bn1 = tnn.BatchNorm2d(n_out)
        self.conv2 = tnn.Conv2d(n_out, n_out, 3, padding=1, bias=False)
        self.bn2 = tnn.BatchNorm2d(n_out)
        self.down = None
        if stride != 1 or n_in != n_out:
            self.down = tnn.Sequential(tnn.Conv2d(n_in, n_out, 1, stride=stride, bias=False), tnn.BatchNorm2d(n_out))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + (x if self.down is None else self.down(x)))


class GlobalAvgPool(tnn.Module):
    def forward(self, x):
        return x.mean(dim=(2, 3))


def build(name):
    """(model, optimizer, x, y) of one benchmark model."""
    if name == "mlp":
        m = tnn.Sequential(tnn.Linear(64, 128), tnn.ReLU(), tnn.Linear(128, 10))
        return m, torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9), torch.rand(64, 64), torch.randint(0, 10, (64,))
    if name == "cnn":
        m = tnn.Sequential(
            tnn.Conv2d(1, 16, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
            tnn.Conv2d(16, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
            tnn.Flatten(), tnn.Linear(128, 64), tnn.ReLU(), tnn.Linear(64, 10))
        return m, torch.optim.Adam(m.parameters(), lr=0.005), torch.rand(64, 1, 8, 8), torch.randint(0, 10, (64,))
    if name == "resnet8":
        m = tnn.Sequential(
            tnn.Conv2d(3, 16, 3, padding=1, bias=False), tnn.BatchNorm2d(16), tnn.ReLU(),
            BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2),
            GlobalAvgPool(), tnn.Linear(64, 10))
        return m, torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9), torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))
    if name == "mlp784":
        m = tnn.Sequential(tnn.Linear(784, 512), tnn.ReLU(), tnn.Linear(512, 256), tnn.ReLU(), tnn.Linear(256, 10))
        return m, sgd_wd(m), torch.randn(64, 784), torch.randint(0, 10, (64,))
    if name == "lenet":
        m = tnn.Sequential(
            tnn.Conv2d(1, 20, 5), tnn.ReLU(), tnn.MaxPool2d(2),
            tnn.Conv2d(20, 50, 5), tnn.ReLU(), tnn.MaxPool2d(2),
            tnn.Flatten(), tnn.Linear(800, 500), tnn.ReLU(), tnn.Linear(500, 10))
        return m, sgd_wd(m), torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
    raise ValueError("unknown model " + name)


def sgd_wd(m):
    return torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-5)


def make_step(name, warmup, threads):
    """A step of model `name` that runs at the faster of 1 and `threads`
    intra-op threads."""
    model, opt, x, y = build(name)
    loss_fn = tnn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(warmup):
        step()

    def median_at(t):
        torch.set_num_threads(t)
        return statistics.median(time_steps(step, 5))

    best = min({1, threads}, key=median_at)

    def step_at_best():
        if torch.get_num_threads() != best:  # setting it, even to its value, restarts the pool
            torch.set_num_threads(best)
        step()

    return step_at_best


def time_steps(step, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def serve(threads, warmup):
    steps = {}
    print("ready", flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts or parts[0] == "quit":
            break
        name, n = parts[0], int(parts[1])
        if name not in steps:
            steps[name] = make_step(name, warmup, threads)
        print(" ".join("%.6f" % t for t in time_steps(steps[name], n)), flush=True)


def main():
    torch.manual_seed(0)
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]) if len(sys.argv) > 2 else 2, int(sys.argv[3]) if len(sys.argv) > 3 else 3)
        return
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    resnet_steps = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    for name, n in (("mlp", steps), ("cnn", steps), ("resnet8", resnet_steps)):
        print(name + "_ms", statistics.median(time_steps(make_step(name, warmup, threads), n)), flush=True)


main()
