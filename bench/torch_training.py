# PyTorch side of bench_training: the same MLP and CNN training steps as the
# nn side (batch 64, SGD momentum 0.9, weight decay 1e-5, 2 threads), timed
# per step. Prints "mlp_ms <median>" and "cnn_ms <median>".
import statistics
import sys
import time

import torch
import torch.nn as tnn

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
torch.manual_seed(0)


def time_steps(model, x, y, warmup, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-5)
    loss_fn = tnn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


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
