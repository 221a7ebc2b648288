// einsum(spec, xs) for one to three operands (SPEC §13), as a composite of
// differentiable ops: letters only one operand has and the output lacks
// are summed first; two operands become one batched matmul, their letters
// grouped as batch (both and the output), left and right (one and the
// output) and contracted (both, not the output); a third operand joins the
// pair's result the same way. Its gradient is the ops'.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backend/ops.h"

namespace nn::backend {
namespace {

[[noreturn]] void fail(const std::string& spec, const std::string& why) {
  throw Error("einsum(\"" + spec + "\"): " + why);
}

// A tensor whose axes are named by letters.
struct Named {
  Tensor t;
  std::string letters;
};

// x's axes reordered to `order` (a permutation of its letters).
Tensor arranged(const Named& x, const std::string& order) {
  if (order == x.letters) return x.t;
  std::vector<int64_t> dims;
  for (char c : order) dims.push_back(int64_t(x.letters.find(c)));
  return permute(x.t, dims);
}

// x with the axes whose letters `keep` lacks summed away.
Named sum_out(const Named& x, const std::string& keep) {
  std::vector<int64_t> axes;
  std::string left;
  for (size_t i = 0; i < x.letters.size(); ++i) {
    if (keep.find(x.letters[i]) == std::string::npos) axes.push_back(int64_t(i));
    else left += x.letters[i];
  }
  if (axes.empty()) return x;
  return {sum(x.t, axes), left};
}

// The letters of a and b that `needed` (the output and any later operand)
// keeps, as the product of a and b: batch letters, then a's, then b's.
Named contract(const Named& a0, const Named& b0, const std::string& needed, const std::map<char, int64_t>& size) {
  auto wanted = [&](char c, const std::string& other) {
    return needed.find(c) != std::string::npos || other.find(c) != std::string::npos;
  };
  std::string keep_a, keep_b;
  for (char c : a0.letters) if (wanted(c, b0.letters)) keep_a += c;
  for (char c : b0.letters) if (wanted(c, a0.letters)) keep_b += c;
  const Named a = sum_out(a0, keep_a), b = sum_out(b0, keep_b);
  std::string batch, left, right, inner;
  for (char c : a.letters) {
    const bool in_b = b.letters.find(c) != std::string::npos, out = needed.find(c) != std::string::npos;
    (in_b ? (out ? batch : inner) : left) += c;
  }
  for (char c : b.letters)
    if (a.letters.find(c) == std::string::npos) right += c;
  auto extent = [&](const std::string& ls) {
    int64_t n = 1;
    for (char c : ls) n *= size.at(c);
    return n;
  };
  const int64_t nb = extent(batch), nl = extent(left), nk = extent(inner), nr = extent(right);
  const Tensor am = reshape(arranged(a, batch + left + inner), {nb, nl, nk});
  const Tensor bm = reshape(arranged(b, batch + inner + right), {nb, nk, nr});
  std::vector<int64_t> shape;
  for (char c : batch + left + right) shape.push_back(size.at(c));
  return {reshape(matmul(am, bm), shape), batch + left + right};
}

// The diagonal over the two axes a letter names in x (`ii`): those axes
// times an identity, summed over the second; the letter is kept once, last.
Named diagonal(const Named& x, size_t d, size_t again, const std::string& spec) {
  const int64_t n = x.t.shape()[int(d)];
  if (x.t.shape()[int(again)] != n)
    fail(spec, std::string("`") + x.letters[d] + "` names two axes of different sizes (" + std::to_string(n) +
                   " and " + std::to_string(x.t.shape()[int(again)]) + ")");
  std::vector<int64_t> perm;
  std::string letters;
  for (size_t k = 0; k < x.letters.size(); ++k)
    if (k != d && k != again) perm.push_back(int64_t(k)), letters += x.letters[k];
  perm.push_back(int64_t(d)), perm.push_back(int64_t(again));
  const Tensor eye_n = astype(eye(n), x.t.dtype());
  return {sum(mul(permute(x.t, perm), eye_n), std::vector<int64_t>{-1}), letters + x.letters[d]};
}

}  // namespace

Tensor einsum(const std::string& spec, const std::vector<Tensor>& xs) {
  std::string text;
  for (char c : spec)
    if (c != ' ') text += c;
  const size_t arrow = text.find("->");
  if (arrow != std::string::npos && text.find("->", arrow + 2) != std::string::npos)
    fail(spec, "has two `->`; one separates the operands from the output");
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> subs;
  for (size_t at = 0;;) {
    const size_t comma = lhs.find(',', at);
    subs.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (xs.empty() || xs.size() > 3) fail(spec, "takes one to three operands, got " + std::to_string(xs.size()));
  if (subs.size() != xs.size())
    fail(spec, "names " + std::to_string(subs.size()) + " operands but is given " + std::to_string(xs.size()));
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isalpha(c) || (c && std::strchr(",->.", c))) continue;
    // A character past ASCII is shown whole (its UTF-8 bytes), not its first byte.
    const size_t bytes = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    fail(spec, "`" + text.substr(i, bytes) + "` is not a letter (einsum's axes are named a-z and A-Z)");
  }
  // `...` stands for the axes the letters leave, right-aligned as NumPy
  // lines them up: letters the spec does not use, the same for every operand.
  std::string spare;
  for (char c = 'A'; c <= 'z'; ++c)
    if (std::isalpha(static_cast<unsigned char>(c)) && text.find(c) == std::string::npos) spare += c;
  std::vector<int64_t> extra(xs.size(), -1);  // the axes each `...` stands for
  int64_t widest = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (subs[i].find("...") == std::string::npos) continue;
    extra[i] = xs[i].ndim() - int64_t(subs[i].size() - 3);
    if (extra[i] < 0 || extra[i] > int64_t(spare.size()))
      fail(spec, "operand " + std::to_string(i + 1) + " (" + xs[i].type().str() + ") has too few axes for `" +
                     subs[i] + "`");
    widest = std::max(widest, extra[i]);
  }
  const std::string ellipsis = spare.substr(0, size_t(widest));
  for (size_t i = 0; i < xs.size(); ++i)
    if (extra[i] >= 0) subs[i].replace(subs[i].find("..."), 3, ellipsis.substr(size_t(widest - extra[i])));
  std::map<char, int64_t> size, count;
  std::vector<Named> ops;
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string& s = subs[i];
    if (s.find('.') != std::string::npos) fail(spec, "`.` outside `...`");
    if (int64_t(s.size()) != xs[i].ndim())
      fail(spec, "operand " + std::to_string(i + 1) + " (" + xs[i].type().str() + ") has " +
                     std::to_string(xs[i].ndim()) + " axes, its subscripts `" + s + "` name " + std::to_string(s.size()));
    Named x{xs[i], s};
    for (size_t d = 0; d < x.letters.size(); ++d)
      if (const size_t again = x.letters.find(x.letters[d], d + 1); again != std::string::npos) {
        x = diagonal(x, d, again, spec);
        d = size_t(-1);  // look again from the start
      }
    for (size_t d = 0; d < x.letters.size(); ++d) {
      const char c = x.letters[d];
      const int64_t n = x.t.shape()[int(d)];
      const size_t in_dots = ellipsis.find(c);
      auto it = size.find(c);
      if (it == size.end() || it->second == n) {
        size[c] = n;
      } else if (in_dots != std::string::npos && (it->second == 1 || n == 1)) {
        it->second = std::max(it->second, n);  // `...` broadcasts, as NumPy's
      } else if (in_dots != std::string::npos) {
        fail(spec, "the axes `...` stands for do not broadcast: one is " + std::to_string(it->second) +
                       " in one operand and " + std::to_string(n) + " in operand " + std::to_string(i + 1));
      } else {
        fail(spec, std::string("`") + c + "` is " + std::to_string(it->second) + " in one operand and " +
                       std::to_string(n) + " in operand " + std::to_string(i + 1));
      }
    }
    for (char c : s) ++count[c];  // as written: `ii` alone is a trace
    ops.push_back(std::move(x));
  }
  // Axes of `...` of size 1 where another operand's are longer.
  for (Named& x : ops) {
    Shape full;
    for (char c : x.letters) full.push_back(size.at(c));
    if (full != x.t.shape()) x.t = broadcast_to(x.t, full);
  }
  std::string out;
  if (arrow == std::string::npos) {  // NumPy's implicit output: `...`, then the letters seen once, sorted
    out = ellipsis;
    for (auto [c, n] : count)
      if (n == 1 && ellipsis.find(c) == std::string::npos) out += c;
  } else {
    out = text.substr(arrow + 2);
    if (const size_t dots = out.find("..."); dots != std::string::npos) out.replace(dots, 3, ellipsis);
    for (size_t d = 0; d < out.size(); ++d) {
      if (!size.count(out[d])) fail(spec, std::string("the output's `") + out[d] + "` names no operand's axis");
      if (out.find(out[d]) != d) fail(spec, std::string("the output names `") + out[d] + "` twice");
    }
  }
  Named acc = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    std::string needed = out;
    for (size_t j = i + 1; j < ops.size(); ++j) needed += ops[j].letters;
    acc = contract(acc, ops[i], needed, size);
  }
  return arranged(sum_out(acc, out), out);
}

}  // namespace nn::backend
