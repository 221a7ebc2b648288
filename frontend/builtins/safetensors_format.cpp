// Reading and writing safetensors files with nlohmann_json for the header
// (used header-only: nn_frontend does not link the CMake target).
#include "frontend/builtins/safetensors_format.h"

#include <algorithm>
#include <bit>
#include <nlohmann/json.hpp>
#include <set>

#include "frontend/builtins/file_io.h"

namespace nn::frontend::safetensors {
namespace {
using backend::DType;
using fileio::FileError;
using Json = nlohmann::ordered_json;  // keeps the file's (and our) order of tensors

static_assert(std::endian::native == std::endian::little, "the safetensors code assumes a little-endian host");

// The reference implementation refuses headers over 100 MB; so do we, before
// reading one.
constexpr uint64_t kMaxHeader = 100'000'000;

const char* dtype_code(DType t) {
  switch (t) {
    case DType::f32:
      return "F32";
    case DType::f64:
      return "F64";
    case DType::i32:
      return "I32";
    case DType::i64:
      return "I64";
    case DType::boolean:
      return "BOOL";
    case DType::f16:
      return "F16";
    case DType::bf16:
      return "BF16";
    default:
      return nullptr;
  }
}

bool parse_code(const std::string& s, DType& out) {
  for (DType t : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean, DType::f16, DType::bf16})
    if (s == dtype_code(t)) {
      out = t;
      return true;
    }
  return false;
}

// A JSON value as a non-negative integer, or false.
bool as_u64(const Json& j, uint64_t& out) {
  if (j.is_number_unsigned()) {
    out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    out = uint64_t(j.get<int64_t>());
    return true;
  }
  return false;
}

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

struct Planned {
  std::string name;
  DType dtype;
  std::vector<uint64_t> dims;
  uint64_t begin, end;
};

}  // namespace

Contents read(const std::string& path) {
  fileio::InputFile f(path);
  unsigned char len_bytes[8];
  f.read(len_bytes, 8, "the header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | len_bytes[i];
  if (header_len > kMaxHeader)
    throw FileError(path, "header too long (" + std::to_string(header_len) + " bytes; nn reads up to " +
                              std::to_string(kMaxHeader) + ")");
  std::string text(size_t(header_len), '\0');
  f.read(text.data(), header_len, "the header");
  Json header = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) throw FileError(path, "bad header: not valid JSON");
  if (!header.is_object()) throw FileError(path, "bad header: not a JSON object");

  Contents c;
  std::vector<Planned> plan;
  const uint64_t data_size = f.remaining(), data_start = f.position();
  for (auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw FileError(path, "bad header: __metadata__ is not an object");
      for (auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw FileError(path, "bad header: __metadata__ value `" + k + "` is not a string");
        c.metadata.emplace_back(k, v.get<std::string>());
      }
      continue;
    }
    const std::string where = "tensor `" + name + "`";
    if (!entry.is_object()) throw FileError(path, "bad header: " + where + " is not an object");
    Planned p{name, DType::f32, {}, 0, 0};
    auto dt = entry.find("dtype");
    if (dt == entry.end() || !dt->is_string()) throw FileError(path, "bad header: " + where + " has no dtype");
    if (!parse_code(dt->get<std::string>(), p.dtype))
      throw FileError(path, where + ": unsupported dtype " + dt->get<std::string>() +
                                " (nn reads F32 F64 I32 I64 BOOL F16 BF16)");
    auto sh = entry.find("shape");
    if (sh == entry.end() || !sh->is_array()) throw FileError(path, "bad header: " + where + " has no shape");
    for (auto& d : *sh) {
      uint64_t v;
      if (!as_u64(d, v)) throw FileError(path, "bad header: " + where + " has a shape that is not a list of sizes");
      p.dims.push_back(v);
    }
    auto off = entry.find("data_offsets");
    if (off == entry.end() || !off->is_array() || off->size() != 2 || !as_u64((*off)[0], p.begin) ||
        !as_u64((*off)[1], p.end) || p.begin > p.end)
      throw FileError(path, "bad header: " + where + " has no valid data_offsets [begin, end]");
    const uint64_t bytes = fileio::data_bytes(path, p.dims, backend::dtype_size(p.dtype));
    if (bytes != p.end - p.begin)
      throw FileError(path, where + ": shape/data size mismatch: the shape " + shape_text(p.dims) + " of " +
                                dt->get<std::string>() + " needs " + std::to_string(bytes) +
                                " bytes, its data_offsets span " + std::to_string(p.end - p.begin));
    if (p.end > data_size)
      throw FileError(path, "truncated: " + where + " ends at byte " + std::to_string(p.end) +
                                " of the data, the file has " + std::to_string(data_size) + " bytes of data");
    plan.push_back(std::move(p));
  }
  // As the format's reference reader: the tensors' data, in order of their
  // offsets, tile the data with no overlap and no gap.
  std::vector<const Planned*> by_offset;
  for (const Planned& p : plan) by_offset.push_back(&p);
  std::stable_sort(by_offset.begin(), by_offset.end(), [](const Planned* a, const Planned* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t data_end = 0;
  const Planned* before = nullptr;
  for (const Planned* p : by_offset) {
    auto span = [](const Planned* q) {
      return "tensor `" + q->name + "` (data_offsets [" + std::to_string(q->begin) + ", " + std::to_string(q->end) +
             "])";
    };
    if (p->begin < data_end)
      throw FileError(path, "bad header: " + span(p) + " overlaps " + span(before));
    if (p->begin > data_end)
      throw FileError(path, "bad header: " + std::to_string(p->begin - data_end) + " bytes of the data before " +
                                span(p) + " belong to no tensor");
    data_end = p->end;
    before = p;
  }
  if (data_end != data_size)
    throw FileError(path, "data size mismatch: the header's tensors end at byte " + std::to_string(data_end) +
                              " of the data, the file has " + std::to_string(data_size) + " bytes of data");
  // Everything is checked against the file before any tensor is allocated.
  for (Planned& p : plan) {
    backend::Tensor t = fileio::new_tensor(p.dims, p.dtype);
    if (p.end > p.begin) {
      f.seek(data_start + p.begin);
      f.read(t.raw_data(), p.end - p.begin, "tensor `" + p.name + "`");
      if (p.dtype == DType::boolean) {
        auto* b = static_cast<unsigned char*>(t.raw_data());
        for (uint64_t i = 0; i < p.end - p.begin; ++i) b[i] = b[i] != 0;
      }
    }
    c.tensors.emplace_back(std::move(p.name), std::move(t));
  }
  return c;
}

void write(const Contents& c, const std::string& path) {
  Json header = Json::object();
  if (!c.metadata.empty()) {
    Json meta = Json::object();
    for (auto& [k, v] : c.metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  // The data is laid out widest dtype first (stable, as the reference
  // implementation does) so that every tensor starts aligned to its element
  // size; the header keeps the given order.
  std::vector<size_t> layout(c.tensors.size());
  for (size_t i = 0; i < layout.size(); ++i) layout[i] = i;
  std::stable_sort(layout.begin(), layout.end(), [&](size_t a, size_t b) {
    return backend::dtype_size(c.tensors[a].second.dtype()) > backend::dtype_size(c.tensors[b].second.dtype());
  });
  std::vector<uint64_t> begin(c.tensors.size());
  uint64_t offset = 0;
  for (size_t i : layout) {
    begin[i] = offset;
    offset += c.tensors[i].second.nbytes();
  }
  std::vector<backend::Tensor> data(c.tensors.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    auto& [name, t] = c.tensors[i];
    const char* code = dtype_code(t.dtype());
    if (!code)
      throw backend::Error("save: tensor `" + name + "` is " + std::string(backend::dtype_name(t.dtype())) +
                           "; nn writes F32 F64 I32 I64 BOOL F16 BF16");
    if (name == "__metadata__" || !seen.insert(name).second)
      throw backend::Error("save: two tensors would be named `" + name + "`");
    Json shape = Json::array();
    for (int64_t d : t.shape()) shape.push_back(d);
    header[name] =
        Json{{"dtype", code}, {"shape", shape}, {"data_offsets", Json::array({begin[i], begin[i] + t.nbytes()})}};
    data[i] = fileio::on_cpu(t);
  }
  std::string text = header.dump(-1, ' ', false, Json::error_handler_t::replace);  // never throws on bad UTF-8
  // Spaces pad the header so the data starts 8-byte aligned (as the format
  // recommends; readers may then map tensors in place).
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = (uint64_t(text.size()) >> (8 * i)) & 0xFF;

  fileio::AtomicFile out(path);
  out.write(len_bytes, 8);
  out.write(text.data(), text.size());
  for (size_t i : layout)
    if (data[i].nbytes()) out.write(data[i].raw_data(), data[i].nbytes());
  out.commit();
}

}  // namespace nn::frontend::safetensors
