// Source files: line tables and locations.
#include "frontend/source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace nn::frontend {

SourceFile::SourceFile(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

LineCol SourceFile::line_col(uint32_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  uint32_t line = uint32_t(it - line_starts_.begin());
  return {line, offset - line_starts_[line - 1] + 1};
}

std::string SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return "";
  uint32_t b = line_starts_[line - 1];
  uint32_t e = line < line_starts_.size() ? line_starts_[line] : uint32_t(text_.size());
  while (e > b && (text_[e - 1] == '\n' || text_[e - 1] == '\r')) --e;
  return text_.substr(b, e - b);
}

SourceManager::SourceManager() = default;

uint32_t SourceManager::add(std::string path, std::string text) {
  return add(std::make_shared<const SourceFile>(std::move(path), std::move(text)));
}

uint32_t SourceManager::add(std::shared_ptr<const SourceFile> file) {
  uint32_t id = next_id_++;
  files_[id] = Entry{file, file};
  return id;
}

const SourceFile& SourceManager::file(uint32_t id) const {
  static const SourceFile none("", ""), released("<released>", "");
  if (id == 0) return none;
  auto it = files_.find(id);
  if (it == files_.end()) return released;
  if (it->second.kept) return *it->second.kept;
  // Released but shared: a live closure holds it while its diagnostic is made.
  auto p = it->second.shared.lock();
  return p ? *p : released;
}

std::shared_ptr<const SourceFile> SourceManager::share(uint32_t id) const {
  auto it = files_.find(id);
  if (it == files_.end()) return nullptr;
  return it->second.kept ? it->second.kept : it->second.shared.lock();
}

void SourceManager::release(uint32_t id) {
  auto it = files_.find(id);
  if (it == files_.end() || !it->second.kept) return;
  it->second.kept.reset();
  if (it->second.shared.expired()) {
    files_.erase(it);
    return;
  }
  // Forget the files whose last sharer has gone since the last sweep.
  if (++released_ >= prune_at_) {
    std::erase_if(files_, [](const auto& e) { return !e.second.kept && e.second.shared.expired(); });
    released_ = 0;
    for (auto& [_, e] : files_) released_ += !e.kept;
    prune_at_ = std::max<size_t>(64, released_ * 2);
  }
}

std::string SourceManager::location(const Span& s) const {
  if (!s.valid()) return "<unknown>";
  const SourceFile& f = file(s.file);
  LineCol lc = f.line_col(s.begin);
  return f.path() + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col);
}

bool read_source_file(const std::string& path, std::string& text, std::string& why) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    why = "it is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "no such file, or no permission to read it";
    return false;
  }
  text.clear();
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    if (text.size() + size_t(in.gcount()) > kMaxSourceBytes) {
      why = "it is larger than " + std::to_string(kMaxSourceBytes >> 20) + " MiB";
      return false;
    }
    text.append(chunk, size_t(in.gcount()));
  }
  if (in.bad()) {
    why = "reading it failed";
    return false;
  }
  return true;
}

}  // namespace nn::frontend
