# PyTorch side of bench_training: the same MLP and CNN training steps as the
# nn side (batch 64, SGD momentum 0.9, weight decay 1e-5, 2 threads), timed
# per step. Prints "mlp_ms <median>" and "cnn_ms <median>". PyTorch runs at
# its best configuration here: OpenBLAS on one thread, and the faster of 1
# and THREADS intra-op threads per model.
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before torch loads OpenBLAS
import torch  # noqa: E402
import torch.nn as tnn  # noqa: E402

THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.manual_seed(0)


def time_steps(model, x, y, warmup, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-5)
    loss_fn = tnn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    def median_at(threads, n):
        torch.set_num_threads(threads)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    for _ in range(warmup):
        step()
    best = min({1, THREADS}, key=lambda t: median_at(t, 5))
    return median_at(best, steps)


mlp = tnn.Sequential(tnn.Linear(784, 512), tnn.ReLU(), tnn.Linear(512, 256), tnn.ReLU(), tnn.Linear(256, 10))
x = torch.randn(64, 784)
y = torch.randint(0, 10, (64,))
print("mlp_ms", time_steps(mlp, x, y, 5, 50), flush=True)

cnn = tnn.Sequential(
    tnn.Conv2d(1, 20, 5), tnn.ReLU(), tnn.MaxPool2d(2),
    tnn.Conv2d(20, 50, 5), tnn.ReLU(), tnn.MaxPool2d(2),
    tnn.Flatten(), tnn.Linear(800, 500), tnn.ReLU(), tnn.Linear(500, 10))
x = torch.randn(64, 1, 28, 28)
print("cnn_ms", time_steps(cnn, x, y, 3, 20), flush=True)
