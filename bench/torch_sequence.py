# PyTorch side of bench_sequence: training steps of the same models as
# bench/models/gpt.nn and bench/models/lstm.nn, on the CPU, eagerly.
#   gpt   pre-norm transformer blocks (LayerNorm, causal self-attention with
#         one qkv projection, GELU MLP 4x), learned positions, the output
#         tied to the token embedding; AdamW (lr 1e-3, betas 0.9/0.99,
#         weight decay 0.1), gradient clipping at 1
#   lstm  embedding, LSTM (batch_first), linear read-out; Adam lr 3e-3,
#         gradient clipping at 1
# Random ids of the models' shapes; vocabulary 65.
#
#   torch_sequence.py MODEL THREADS STEPS WARMUP [sizes as the .nn's args]
# prints "median_ms" of STEPS steps after WARMUP untimed ones.
import math
import statistics
import sys
import time

import torch
import torch.nn as tnn
import torch.nn.functional as F


class Block(tnn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = tnn.LayerNorm(d), tnn.LayerNorm(d)
        self.qkv, self.out = tnn.Linear(d, 3 * d), tnn.Linear(d, d)
        self.fc, self.proj = tnn.Linear(d, 4 * d), tnn.Linear(4 * d, d)

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.proj(F.gelu(self.fc(self.norm2(x))))


class Gpt(tnn.Module):
    def __init__(self, vocab, layers, heads, d, context):
        super().__init__()
        self.tokens, self.positions = tnn.Embedding(vocab, d), tnn.Embedding(context, d)
        self.blocks = tnn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm = tnn.LayerNorm(d)

    def forward(self, ids):
        h = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        for b in self.blocks:
            h = b(h)
        return self.norm(h) @ self.tokens.weight.t()


class CharLstm(tnn.Module):
    def __init__(self, vocab, layers, hidden):
        super().__init__()
        self.embed = tnn.Embedding(vocab, hidden)
        self.lstm = tnn.LSTM(hidden, hidden, num_layers=layers, batch_first=True)
        self.head = tnn.Linear(hidden, vocab)

    def forward(self, ids):
        return self.head(self.lstm(self.embed(ids))[0])


def main():
    name, threads, steps, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    sizes = [int(a) for a in sys.argv[5:]]
    torch.set_num_threads(threads)
    torch.manual_seed(1337)
    vocab = 65
    if name == "gpt":
        layers, heads, d, context, batch = sizes or [4, 4, 128, 64, 12]
        model = Gpt(vocab, layers, heads, d, context)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    elif name == "lstm":
        layers, hidden, context, batch = sizes or [1, 128, 32, 16]
        model = CharLstm(vocab, layers, hidden)
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    else:
        raise ValueError("unknown model " + name)
    x = torch.randint(0, vocab, (batch, context))
    y = torch.randint(0, vocab, (batch, context))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"{statistics.median(times):.4f}")


if __name__ == "__main__":
    main()
