# The PyTorch twin of examples/tiny_gpt.nn, trained on the same text with the
# same recipe: the model of torch_sequence.py (nanoGPT's, with biases), GPT-2's
# init (N(0, 0.02), the projections into the residual stream scaled by
# 1 / sqrt(2 layers)), AdamW (betas 0.9/0.99, weight decay 0.1 on matrices
# and embeddings only), a cosine schedule from the peak rate LR (2e-3) to
# LR / 10 after a warmup of min(iters / 10, 100) steps, gradient clipping
# at 1, train and validation loss each estimated over EVAL random batches
# five times during training.
#
#   torch_tiny_gpt.py TEXT THREADS [iters layers heads width context batch eval [LR [SEED]]]
# prints the same lines as the example (step, train loss, val loss, time).
import math
import sys
import time

import torch
import torch.nn.functional as F

from torch_sequence import Gpt


def cosine_lr(step, total, lr, warmup, min_lr):
    if step < warmup:
        return lr * (step + 1) / warmup
    if step >= total:
        return min_lr
    progress = (step - warmup) / (total - warmup)
    return min_lr + 0.5 * (lr - min_lr) * (1 + math.cos(math.pi * progress))


def main():
    path, threads = sys.argv[1], int(sys.argv[2])
    iters, layers, heads, width, context, batch, eval_batches = (
        [int(a) for a in sys.argv[3:10]] if len(sys.argv) > 3 else [2000, 4, 4, 128, 64, 12, 200])
    peak = float(sys.argv[10]) if len(sys.argv) > 10 else 2e-3
    torch.set_num_threads(threads)
    torch.manual_seed(int(sys.argv[11]) if len(sys.argv) > 11 else 1337)
    text = open(path, encoding="utf-8").read()
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    data = torch.tensor([index[c] for c in text], dtype=torch.long)
    n_train = len(text) * 9 // 10
    parts = {"train": data[:n_train], "val": data[n_train:]}

    def get_batch(part):
        d = parts[part]
        at = torch.randint(0, len(d) - context - 1, (batch, 1)) + torch.arange(context)
        return d[at], d[at + 1]

    model = Gpt(len(vocab), layers, heads, width, context)
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            std = 0.02 / math.sqrt(2 * layers) if name.endswith(("out.weight", "proj.weight")) else 0.02
            torch.nn.init.normal_(p, 0.0, std)
        elif name.endswith("bias") and "norm" not in name:
            torch.nn.init.zeros_(p)
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1}, {"params": vectors, "weight_decay": 0.0}],
                            lr=peak, betas=(0.9, 0.99))

    def loss_of(x, y):
        return F.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))

    @torch.no_grad()
    def estimate(part):
        return sum(loss_of(*get_batch(part)).item() for _ in range(eval_batches)) / eval_batches

    eval_every = max(iters // 5, 1)
    warmup = min(iters // 10, 100)
    start = time.perf_counter()
    for it in range(iters):
        for group in opt.param_groups:
            group["lr"] = cosine_lr(it, iters, peak, warmup, peak / 10)
        x, y = get_batch("train")
        opt.zero_grad(set_to_none=True)
        loss_of(x, y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (it + 1) % eval_every == 0 or it + 1 == iters:
            print("step", it + 1, "train loss", round(estimate("train"), 3), "val loss", round(estimate("val"), 3),
                  "time", round(time.perf_counter() - start), "s", flush=True)


if __name__ == "__main__":
    main()
