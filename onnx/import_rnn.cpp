// Import entries of the recurrent layers (import_table.h): RNN, GRU and
// LSTM, unrolled over the sequence as nn ops (one matmul per step for the
// recurrence, the inputs' projection done for all steps at once).
#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

enum class Cell { rnn, gru, lstm };

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

Tensor activate(const NodeContext& n, const Activation& a, const Tensor& x) {
  if (a.name == "Sigmoid") return sigmoid(x);
  if (a.name == "Tanh") return tanh(x);
  if (a.name == "Relu") return relu(x);
  if (a.name == "LeakyRelu") return leaky_relu(x, a.alpha);
  if (a.name == "Softsign") return div(x, add(abs(x), like(1, x)));
  if (a.name == "Softplus") return softplus(x);
  if (a.name == "HardSigmoid")
    return minimum(maximum(add(mul(x, like(a.alpha, x)), like(a.beta, x)), like(0, x)), like(1, x));
  if (a.name == "Affine") return add(mul(x, like(a.alpha, x)), like(a.beta, x));
  if (a.name == "ScaledTanh") return mul(tanh(mul(x, like(a.beta, x))), like(a.alpha, x));
  n.fail("activation " + a.name + " is not supported");
}

// Columns [k*H, (k+1)*H) of the last axis: gate k.
Tensor gate(const Tensor& t, int64_t k, int64_t H) {
  std::vector<IndexItem> items(size_t(t.ndim()));
  items.back().start = k * H, items.back().stop = (k + 1) * H;
  return index(t, items);
}

Tensor step(const Tensor& t, int64_t i) { return index(t, {at(i)}); }

template <Cell C>
Outs recurrent(const NodeContext& n) {
  constexpr int64_t G = C == Cell::rnn ? 1 : C == Cell::gru ? 3 : 4;
  const bool batch_first = n.attr_int("layout", 0) != 0;
  Tensor X = n.input(0);
  if (X.ndim() != 3) n.fail("X must be 3-d");
  if (batch_first) X = permute(X, {1, 0, 2});
  const Tensor &W = n.input(1), &R = n.input(2);
  const std::string direction = n.attr_str("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    n.fail("attribute direction=" + direction + " is not supported");
  const int64_t S = X.shape()[0], B = X.shape()[1], H = R.shape()[int(R.ndim() - 1)];
  if (W.ndim() != 3 || R.ndim() != 3 || W.shape()[0] != dirs || W.shape()[1] != G * H || R.shape()[1] != G * H ||
      W.shape()[2] != X.shape()[2])
    n.fail("W and R do not match the input, hidden_size and direction");
  if (n.has_attr("hidden_size") && n.attr_int("hidden_size", 0) != H) n.fail("hidden_size differs from R's");
  const double clip = n.attr_float("clip", 0);
  // Activations: one list for all directions, each direction's in turn.
  const std::vector<std::string> fallback = C == Cell::rnn   ? std::vector<std::string>{"Tanh"}
                                            : C == Cell::gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<Activation> acts;
  if (const auto* a = n.attr("activations")) {
    const auto alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
    for (int i = 0; i < a->strings_size(); ++i)
      acts.push_back({a->strings(i), size_t(i) < alphas.size() ? alphas[size_t(i)] : 0.01,
                      size_t(i) < betas.size() ? betas[size_t(i)] : 0});
  }
  const size_t per_dir = fallback.size();
  if (acts.empty())
    for (int64_t d = 0; d < dirs; ++d)
      for (const auto& f : fallback) acts.push_back({f});
  if (acts.size() != per_dir * size_t(dirs)) n.fail("activations must list " + std::to_string(per_dir * dirs));
  std::vector<int64_t> lens;
  if (n.has_input(4)) {
    lens = n.ints(4);
    if (int64_t(lens.size()) != B) n.fail("sequence_lens must have one entry per batch entry");
    for (int64_t l : lens)
      if (l < 0 || l > S) n.fail("a sequence length is out of range");
  }
  bool ragged = false;
  for (int64_t l : lens) ragged = ragged || l != S;
  if (ragged && direction != "forward") n.fail("sequence_lens shorter than the input need direction=forward");
  // Initial states [D, B, H] (the layout's [B, D, H] when batch first); zeros when absent.
  Tensor h0_all = n.has_input(5) ? n.input(5) : Tensor();
  Tensor c0_all = C == Cell::lstm && n.has_input(6) ? n.input(6) : Tensor();
  if (batch_first) {
    if (h0_all.defined()) h0_all = permute(h0_all, {1, 0, 2});
    if (c0_all.defined()) c0_all = permute(c0_all, {1, 0, 2});
  }
  const bool lbr = n.attr_int("linear_before_reset", 0) != 0;
  const bool input_forget = n.attr_int("input_forget", 0) != 0;
  // A step's mask: batch entries still inside their sequence keep the new state.
  auto alive = [&](int64_t t) {
    std::vector<double> m(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) m[size_t(b)] = t < lens[size_t(b)];
    return from_doubles(m, Shape{B, 1}, DType::boolean);
  };
  std::vector<Tensor> ys(static_cast<size_t>(dirs)), hs(static_cast<size_t>(dirs)), cs(static_cast<size_t>(dirs));
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const Tensor Wd = step(W, d), Rt = transpose(step(R, d));
    Tensor xw = matmul(X, transpose(Wd));  // [S, B, G*H]
    Tensor rb;
    if (n.has_input(3)) {
      const Tensor bd = step(n.input(3), d);
      xw = add(xw, gate(bd, 0, G * H));
      rb = gate(bd, 1, G * H);
    }
    Tensor h = h0_all.defined() ? step(h0_all, d) : zeros(Shape{B, H}, X.dtype());
    Tensor c = c0_all.defined() ? step(c0_all, d) : zeros(Shape{B, H}, X.dtype());
    Tensor P;
    if (C == Cell::lstm && n.has_input(7)) P = step(n.input(7), d);
    const Activation *f = &acts[size_t(d) * per_dir], *g = f + (per_dir > 1 ? 1 : 0), *hh = f + (per_dir > 2 ? 2 : 0);
    auto clipped = [&](const Tensor& t) { return clip > 0 ? minimum(maximum(t, like(-clip, t)), like(clip, t)) : t; };
    std::vector<Tensor> outs(static_cast<size_t>(S));
    for (int64_t k = 0; k < S; ++k) {
      const int64_t t = reverse ? S - 1 - k : k;
      const Tensor x = step(xw, t);
      Tensor hr = matmul(h, Rt);
      if (rb.defined()) hr = add(hr, rb);
      Tensor h_new, c_new;
      if (C == Cell::rnn) {
        h_new = activate(n, *f, clipped(add(x, hr)));
      } else if (C == Cell::gru) {
        const Tensor z = activate(n, *f, clipped(add(gate(x, 0, H), gate(hr, 0, H))));
        const Tensor r = activate(n, *f, clipped(add(gate(x, 1, H), gate(hr, 1, H))));
        Tensor cand;
        if (lbr) {
          cand = add(gate(x, 2, H), mul(r, gate(hr, 2, H)));
        } else {
          Tensor rh = matmul(mul(r, h), gate(Rt, 2, H));
          if (rb.defined()) rh = add(rh, gate(rb, 2, H));
          cand = add(gate(x, 2, H), rh);
        }
        const Tensor hc = activate(n, *g, clipped(cand));
        h_new = add(mul(sub(like(1, z), z), hc), mul(z, h));
      } else {
        Tensor pre_i = add(gate(x, 0, H), gate(hr, 0, H)), pre_f = add(gate(x, 2, H), gate(hr, 2, H));
        if (P.defined()) pre_i = add(pre_i, mul(gate(P, 0, H), c)), pre_f = add(pre_f, mul(gate(P, 2, H), c));
        const Tensor i = activate(n, *f, clipped(pre_i));
        const Tensor fg = input_forget ? sub(like(1, i), i) : activate(n, *f, clipped(pre_f));
        const Tensor cc = activate(n, *g, clipped(add(gate(x, 3, H), gate(hr, 3, H))));
        c_new = add(mul(fg, c), mul(i, cc));
        Tensor pre_o = add(gate(x, 1, H), gate(hr, 1, H));
        if (P.defined()) pre_o = add(pre_o, mul(gate(P, 1, H), c_new));
        const Tensor o = activate(n, *f, clipped(pre_o));
        h_new = mul(o, activate(n, *hh, c_new));
      }
      if (ragged) {
        const Tensor live = alive(t);
        h = where(live, h_new, h);
        if (c_new.defined()) c = where(live, c_new, c);
        outs[size_t(t)] = where(live, h_new, like(0, h_new));
      } else {
        h = h_new;
        if (c_new.defined()) c = c_new;
        outs[size_t(t)] = h_new;
      }
    }
    ys[size_t(d)] = stack(outs, 0);  // [S, B, H]
    hs[size_t(d)] = h, cs[size_t(d)] = c;
  }
  Tensor Y = stack(ys, 1), Yh = stack(hs, 0), Yc = stack(cs, 0);  // [S, D, B, H], [D, B, H]
  if (batch_first) Y = permute(Y, {2, 0, 1, 3}), Yh = permute(Yh, {1, 0, 2}), Yc = permute(Yc, {1, 0, 2});
  if (C == Cell::lstm) return {Y, Yh, Yc};
  return {Y, Yh};
}

const ImportEntry entries[] = {
    {"RNN", recurrent<Cell::rnn>},
    {"GRU", recurrent<Cell::gru>},
    {"LSTM", recurrent<Cell::lstm>},
};

}  // namespace

std::span<const ImportEntry> rnn_imports() { return entries; }

}  // namespace nn::onnx_io
