# PyTorch side of bench_gpu: training steps on the GPU of the same models as
# bench/models/digits_cnn.nn and bench/models/resnet50.nn, eagerly.
#   cnn       digits CNN on 1x8x8 (conv 16@3x3 - relu - max-pool 2 - conv 32@3x3 -
#             relu - max-pool 2 - fc 64 - relu - fc 10), Adam lr 0.005
#   resnet50  ResNet-50 (bottleneck blocks 3-4-6-3, stride on the 3x3 conv) on
#             3x224x224, 1000 classes, SGD lr 0.1 momentum 0.9
# Random data of the models' shapes (the timing does not depend on the values).
#
#   torch_gpu.py MODEL BATCH STEPS WARMUP MATH
# prints one line "median_ms peak_bytes": the median time of STEPS steps after
# WARMUP untimed ones (each step ends with torch.cuda.synchronize()), and the
# most memory a step took beyond what was allocated before it
# (torch.cuda.max_memory_allocated). MATH = f32 computes f32 convolutions and
# matrix products in full f32 (as nn does); deterministic does too and takes
# only deterministic cuDNN algorithms (cudnn.deterministic, as nn's conv2d by
# default); tf32 lets them use TF32 Tensor Cores (PyTorch's default for
# convolutions); bf16 runs the step under torch.autocast(bfloat16) with the
# model and input channels_last (and TF32 for what stays f32); compile does
# that with the model wrapped in torch.compile (Inductor; its compilation
# falls in the warm-up steps). cuDNN times its algorithms
# (cudnn.benchmark), as nn's conv2d does.
import statistics
import sys
import time

import torch
import torch.nn as tnn


class Bottleneck(tnn.Module):
    def __init__(self, n_in, width, stride=1):
        super().__init__()
        n_out = 4 * width
        self.conv1 = tnn.Conv2d(n_in, width, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(width)
        self.conv2 = tnn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = tnn.BatchNorm2d(width)
        self.conv3 = tnn.Conv2d(width, n_out, 1, bias=False)
        self.bn3 = tnn.BatchNorm2d(n_out)
        self.down = None
        if stride != 1 or n_in != n_out:
            self.down = tnn.Sequential(tnn.Conv2d(n_in, n_out, 1, stride=stride, bias=False), tnn.BatchNorm2d(n_out))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = torch.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return torch.relu(out + (x if self.down is None else self.down(x)))


def resnet50():
    layers = [tnn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), tnn.BatchNorm2d(64), tnn.ReLU(),
              tnn.MaxPool2d(3, stride=2, padding=1)]
    n_in = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        layers.append(Bottleneck(n_in, width, stride))
        layers += [Bottleneck(4 * width, width) for _ in range(blocks - 1)]
        n_in = 4 * width
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(2048, 1000)]
    return tnn.Sequential(*layers)


def build(name, batch):
    dev = torch.device("cuda")
    if name == "cnn":
        m = tnn.Sequential(
            tnn.Conv2d(1, 16, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
            tnn.Conv2d(16, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
            tnn.Flatten(), tnn.Linear(128, 64), tnn.ReLU(), tnn.Linear(64, 10)).to(dev)
        opt = torch.optim.Adam(m.parameters(), lr=0.005)
        return m, opt, torch.rand(batch, 1, 8, 8, device=dev), torch.randint(0, 10, (batch,), device=dev)
    if name == "resnet50":
        m = resnet50().to(dev)
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        return m, opt, torch.randn(batch, 3, 224, 224, device=dev), torch.randint(0, 1000, (batch,), device=dev)
    raise ValueError("unknown model " + name)


def main():
    name, batch, steps, warmup, math = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    if math not in ("f32", "deterministic", "tf32", "bf16", "compile"):
        raise ValueError("MATH is f32, deterministic, tf32, bf16 or compile, not " + math)
    tf32 = math in ("tf32", "bf16", "compile")
    mixed = math in ("bf16", "compile")
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.deterministic = math == "deterministic"
    torch.backends.cudnn.benchmark = True  # times the algorithms, as nn's conv2d does
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.manual_seed(0)
    model, opt, x, y = build(name, batch)
    loss_fn = tnn.CrossEntropyLoss()
    if mixed:
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    forward = torch.compile(model) if math == "compile" else model

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mixed):
            loss = loss_fn(forward(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()

    for _ in range(warmup):
        step()
    peak = 0
    times = []
    for _ in range(steps):
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
        peak = max(peak, torch.cuda.max_memory_allocated() - before)
    print(f"{statistics.median(times):.4f} {peak}")


if __name__ == "__main__":
    main()
