// Text for character models (SPEC §13): load_text(path) reads a file into a
// string; chars(s) lists its distinct characters, sorted; encode(s, vocab)
// gives an i64 tensor of each character's place in vocab, and decode(ids,
// vocab) the string back. A character is a UTF-8 code point (one byte for
// ASCII text such as tiny Shakespeare); a string's bytes that are not UTF-8
// are characters of one byte each.
#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/builtins/file_io.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"
#include "frontend/utf8_text.h"

namespace nn::frontend::builtins {
namespace {

template <class F>
void each_char(const std::string& s, F&& f) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_char_length(s, i);
    f(std::string_view(s).substr(i, n), i);
    i += n;
  }
}

// A character as a diagnostic shows it: "a", "\n".
std::string shown(std::string_view c) {
  if (c == "\n") return "\"\\n\"";
  if (c == "\t") return "\"\\t\"";
  std::string out = "\"";
  out.append(c);
  return out += '"';
}

// vocab: a list of strings, one character each, no two alike.
std::vector<std::string> vocab_of(Args& a, size_t i) {
  if (!a[i].is_list()) a.fail(i, "expected a vocabulary: a list of characters (from chars(text)), got " + a_type_name(a[i]));
  std::vector<std::string> out;
  std::unordered_map<std::string, size_t> seen;
  for (const Value& v : a[i].as_list()->items) {
    if (!v.is_str()) a.fail(i, "a vocabulary holds strings of one character, not " + a_type_name(v));
    const std::string& c = v.as_str();
    // Checked, not assumed: "ab" decoded as two characters, and a repeated
    // one gave encode the last of its places.
    if (c.empty() || utf8_char_length(c, 0) != c.size())
      a.fail(i, "a vocabulary holds strings of one character, not " + shown(c) + " (entry " +
                    std::to_string(out.size()) + ")");
    if (auto [at, fresh] = seen.emplace(c, out.size()); !fresh)
      a.fail(i, "the vocabulary holds " + shown(c) + " twice (entries " + std::to_string(at->second) + " and " +
                    std::to_string(out.size()) + ")");
    out.push_back(c);
  }
  return out;
}

}  // namespace

void install_text(Interpreter& vm) {
  def(vm, "load_text", "path", [](Args& a) {
    const std::string& path = a.str(0);
    const std::string denied = fileio::access_denied(a.vm().options().allow_files, path, false);
    if (!denied.empty()) a.fail(0, denied);
    // A regular file only, as every loader: /dev/zero would never end.
    fileio::InputFile f(path);
    return Value(f.read_rest());
  });
  def(vm, "chars", "s", [](Args& a) {
    std::vector<std::string> seen;
    std::unordered_map<std::string_view, bool> have;
    const std::string& s = a.str(0);
    each_char(s, [&](std::string_view c, size_t) {
      if (have.emplace(c, true).second) seen.emplace_back(c);
    });
    std::sort(seen.begin(), seen.end());  // byte order is code point order in UTF-8
    std::vector<Value> items;
    for (std::string& c : seen) items.emplace_back(std::move(c));
    return Value(make_list(std::move(items)));
  });
  def(vm, "encode", "s, vocab", [](Args& a) {
    const std::vector<std::string> vocab = vocab_of(a, 1);
    std::unordered_map<std::string_view, int64_t> id;
    for (size_t k = 0; k < vocab.size(); ++k) id.emplace(vocab[k], int64_t(k));
    const std::string& s = a.str(0);
    std::vector<int64_t> ids;
    ids.reserve(s.size());
    each_char(s, [&](std::string_view c, size_t at) {
      auto it = id.find(c);
      if (it == id.end())
        a.fail(1, "encode: the character " + shown(c) + " (at byte " + std::to_string(at) +
                      " of the text) is not in the vocabulary");
      ids.push_back(it->second);
    });
    return Value(on_default_device(backend::from_ints(ids, backend::Shape{int64_t(ids.size())}, backend::DType::i64)));
  });
  def(vm, "decode", "ids, vocab", [](Args& a) {
    const std::vector<std::string> vocab = vocab_of(a, 1);
    backend::Tensor ids = a.tensor(0);
    if (!backend::is_integral(ids.dtype()) || ids.ndim() > 1)
      a.fail(0, "decode needs a 0-d or 1-d integer tensor of ids, got " + ids.type().str());
    ids = backend::astype(backend::to_device(ids, backend::cpu_device()), backend::DType::i64);
    std::string out;
    for (int64_t i = 0; i < ids.numel(); ++i) {
      const int64_t k = ids.data<int64_t>()[i];
      if (k < 0 || k >= int64_t(vocab.size()))
        a.fail(0, "decode: id " + std::to_string(k) + " (at " + std::to_string(i) + ") is not in a vocabulary of " +
                      std::to_string(vocab.size()) + " characters");
      out += vocab[size_t(k)];
    }
    return Value(std::move(out));
  });
}

}  // namespace nn::frontend::builtins
