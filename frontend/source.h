// Source files and spans: every AST node, IR node and diagnostic points into
// a SourceFile through a Span of byte offsets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace nn::frontend {

struct Span {
  uint32_t file = 0;   // index in SourceManager; 0 means "no source"
  uint32_t begin = 0;  // byte offsets, end exclusive
  uint32_t end = 0;
  bool valid() const { return file != 0; }
  static Span cover(const Span& a, const Span& b) {
    return {a.file, std::min(a.begin, b.begin), std::max(a.end, b.end)};
  }
};

struct LineCol {
  uint32_t line = 1;  // 1-based
  uint32_t col = 1;   // 1-based, in bytes
};

class SourceFile {
 public:
  SourceFile(std::string path, std::string text);
  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  LineCol line_col(uint32_t offset) const;
  std::string line_text(uint32_t line) const;  // without the newline
  uint32_t line_count() const { return uint32_t(line_starts_.size()); }

 private:
  std::string path_, text_;
  std::vector<uint32_t> line_starts_;
};

// Reads a source file whole into `text`. False, with `why` saying so, when
// it cannot be opened, is a directory, or passes kMaxSourceBytes (which
// also ends a device that never ends, such as /dev/zero). Pipes are read.
constexpr size_t kMaxSourceBytes = size_t(64) << 20;
bool read_source_file(const std::string& path, std::string& text, std::string& why);

// Holds every source text seen by one interpreter (files, -e code, REPL
// lines). A text given back with release() (an eval's) lives on only while
// a closure made from it holds it (share()); ids are never reused.
class SourceManager {
 public:
  SourceManager();
  uint32_t add(std::string path, std::string text);
  uint32_t add(std::shared_ptr<const SourceFile> file);  // a file shared with other managers
  // The file of an id; an empty "<released>" file once nothing holds it.
  const SourceFile& file(uint32_t id) const;
  // Shared ownership of a file's text (closures keep their code's source).
  std::shared_ptr<const SourceFile> share(uint32_t id) const;
  // This manager no longer keeps the file; it stays while shared.
  void release(uint32_t id);
  // Files kept (by this manager or by sharers): for tests of eval's memory.
  size_t size() const { return files_.size(); }
  // "path:line:col" for a span.
  std::string location(const Span& s) const;

 private:
  struct Entry {
    std::shared_ptr<const SourceFile> kept;  // null once released
    std::weak_ptr<const SourceFile> shared;
  };
  std::unordered_map<uint32_t, Entry> files_;
  uint32_t next_id_ = 1;
  size_t released_ = 0, prune_at_ = 64;  // entries kept only by sharers
};

}  // namespace nn::frontend
