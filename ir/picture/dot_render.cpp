// Rendering dot text in process with Graphviz (libgvc, libcgraph; opened on
// first use, ir/picture/graphviz_library.h), and counting a dot text's
// nodes and edges for tests.
//
// Plugins: the layout engines and renderers of Graphviz are plugins. Debian's
// graphviz ships them as shared objects listed in
// /usr/lib/<triplet>/graphviz/config6a (written by `dot -c` when the package
// is installed), and gvContext() reads that file and loads them on demand;
// png and pdf come from the cairo plugin (libgvplugin_pango), svg from core.
// So gvContext() is enough here (checked: svg, png and pdf all render);
// gvContextPlugins with lt_preloaded_symbols is only for plugins linked in
// statically, which Debian does not ship. When the file is missing, layout
// fails and the error says how to register them.
//
// Rendering goes to memory (gvRenderData) and this file writes the bytes:
// Graphviz 2.42's gvRenderFilename reports a file it cannot open on stderr
// and still returns 0, so its failure could not be turned into an Error.
#include "ir/picture/dot_render.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backend/error.h"
#include "ir/picture/graphviz_library.h"

namespace nn::ir {
namespace {

using backend::Error;

// Graphviz keeps global state (the parser, the error hook), so one picture
// is made at a time.
std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

// Messages Graphviz reports while the lock is held; they go into the Error
// instead of onto stderr.
std::string& captured() {
  static std::string text;
  return text;
}

int capture(char* msg) {
  captured() += msg;
  return 0;
}

// Holds the lock and routes Graphviz's messages into captured() for its life.
class GraphvizSession {
 public:
  GraphvizSession() : lock_(graphviz_mutex()) {
    captured().clear();
    previous_ = agseterrf(capture);
  }
  ~GraphvizSession() { agseterrf(previous_); }
  GraphvizSession(const GraphvizSession&) = delete;
  GraphvizSession& operator=(const GraphvizSession&) = delete;

  // What Graphviz reported, on one line and without its "Error: " prefixes
  // (the Error says that already), in parentheses; empty when it said nothing.
  static std::string messages() {
    std::string m;
    const std::string& text = captured();
    for (size_t i = 0; i < text.size();) {
      if (text.compare(i, 7, "Error: ") == 0) i += 7;
      else m += text[i++];
    }
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    std::replace(m.begin(), m.end(), '\n', ' ');
    return m.empty() ? std::string() : " (" + m + ")";
  }

 private:
  std::lock_guard<std::mutex> lock_;
  agusererrf previous_ = nullptr;
};

// The one Graphviz context of the process, made on first use (with the lock
// held) and never freed. Graphviz 2.42's pango plugin remembers the last font
// name in a static pointer into the context's font table
// (gvtextlayout_pango.c), so after gvFreeContext the next context's layout
// reads freed memory (AddressSanitizer shows it); one lasting context keeps
// that pointer valid, and saves loading the plugins on every picture.
GVC_t* context() {
  static GVC_t* gvc = nullptr;
  if (!gvc) gvc = gvContext();
  if (!gvc) throw Error("dot: cannot start Graphviz" + GraphvizSession::messages());
  return gvc;
}

struct GraphCloser {
  void operator()(Agraph_t* g) const { agclose(g); }
};
using GraphPtr = std::unique_ptr<Agraph_t, GraphCloser>;

GraphPtr parse(const std::string& dot_text, const std::string& what) {
  GraphPtr g(agmemread(dot_text.c_str()));
  if (!g) throw Error("dot: cannot read " + what + ": it is not valid dot text" + GraphvizSession::messages());
  return g;
}

// Lays out g with the dot engine; false when it gave up. With clusters and
// without newrank its ranking can fail ("trouble in init_rank") and still
// return 0, and freeing that half-made layout frees memory twice (an
// abort): such a graph is left unfreed on purpose, a small leak on a path
// that newrank=true keeps rare.
bool lay_out(GVC_t* gvc, GraphPtr& g) {
  const size_t before = captured().size();
  const int rc = gvLayout(gvc, g.get(), "dot");
  if (rc == 0 && captured().find("trouble", before) == std::string::npos) return true;
  if (rc == 0) (void)g.release();
  return false;
}

// The title of `dot` with `note` added to it.
std::string titled(std::string dot, const std::string& note) {
  const std::string title = "graph [label=\"";
  if (size_t at = dot.find(title); at != std::string::npos) {
    const size_t end = dot.find('"', at + title.size());
    if (end != std::string::npos) dot.insert(end, note);
  }
  return dot;
}

}  // namespace

std::string clusters_within(const std::string& dot, int depth) {
  std::string out;
  out.reserve(dot.size());
  std::vector<bool> opens_cluster;  // one per open brace
  bool cluster_next = false;        // the next brace opens a cluster
  const std::string cluster = "subgraph cluster";
  for (size_t i = 0; i < dot.size(); ++i) {
    const char c = dot[i];
    if (c == '"') {  // a quoted string, its braces not the graph's
      const size_t start = i;
      for (++i; i < dot.size() && dot[i] != '"'; ++i)
        if (dot[i] == '\\') ++i;
      out.append(dot, start, i - start + 1);
      continue;
    }
    if (dot.compare(i, cluster.size(), cluster) == 0) {
      const int level = int(std::count(opens_cluster.begin(), opens_cluster.end(), true)) + 1;
      cluster_next = level <= depth;
      out += cluster_next ? cluster : "subgraph group";
      i += cluster.size() - 1;
      continue;
    }
    if (c == '{') opens_cluster.push_back(std::exchange(cluster_next, false));
    if (c == '}' && !opens_cluster.empty()) opens_cluster.pop_back();
    out += c;
  }
  return out;
}

std::string extension_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

void write_file(const std::string& path, const std::string& bytes) {
  const char* data = bytes.data();
  const size_t size = bytes.size();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error("dot: cannot write `" + path + "`: " + std::strerror(errno));
  const bool wrote = std::fwrite(data, 1, size, f) == size;
  int err = wrote ? 0 : errno;
  const bool closed = std::fclose(f) == 0;  // a full disk may show only here
  if (!closed && !err) err = errno;
  if (!wrote || !closed) throw Error("dot: cannot write `" + path + "`: " + std::strerror(err));
}

std::string render_dot_as(const std::string& dot_text, const std::string& format, const std::string& what) {
  GraphvizSession session;
  GVC_t* gvc = context();
  GraphPtr g = parse(dot_text, what);
  // Graphviz failing on the clusters: the outermost boxes only, then none.
  const std::pair<int, const char*> fallbacks[] = {
      {1, " (drawn with its outer boxes only: Graphviz could not lay out the inner ones)"},
      {0, " (drawn without its boxes: Graphviz could not lay them out)"}};
  bool laid_out = lay_out(gvc, g);
  std::string tried = dot_text;
  for (const auto& [depth, note] : fallbacks) {
    if (laid_out) break;
    std::string fewer = clusters_within(dot_text, depth);
    if (fewer == tried) continue;  // no inner boxes to drop
    tried = fewer;
    g = parse(titled(std::move(fewer), note), what);
    laid_out = lay_out(gvc, g);
  }
  if (!laid_out)
    throw Error("dot: cannot lay out " + what + GraphvizSession::messages() +
                "; if Graphviz lists no `dot` layout, its plugins are not registered (run `dot -c` as root)");
  // The layout is freed before the graph closes, whatever happens below.
  struct LayoutFreer {
    GVC_t* gvc;
    Agraph_t* g;
    ~LayoutFreer() { gvFreeLayout(gvc, g); }
  } freer{gvc, g.get()};

  char* data = nullptr;
  unsigned int size = 0;
  if (gvRenderData(gvc, g.get(), format.c_str(), &data, &size) != 0 || !data) {
    gvFreeRenderData(data);
    throw Error("dot: cannot render " + what + " as " + format + GraphvizSession::messages() +
                "; png and pdf need Graphviz's cairo plugin (libgvplugin_pango, package libgvc6)");
  }
  std::unique_ptr<char, void (*)(char*)> bytes(data, gvFreeRenderData);
  return std::string(bytes.get(), size);
}

void render_dot(const std::string& dot_text, const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext == "dot") return write_file(path, dot_text);
  if (ext != "svg" && ext != "png" && ext != "pdf")
    throw Error("dot: cannot write `" + path + "`: the picture's extension must be .dot, .svg, .png or .pdf");
  write_file(path, render_dot_as(dot_text, ext, "the picture of `" + path + "`"));
}

DotCounts parse_dot_counts(const std::string& dot_text) {
  GraphvizSession session;
  GraphPtr g = parse(dot_text, "the dot text");
  // Nodes and edges of subgraphs belong to the root graph too, so the root's
  // counts hold them all.
  return DotCounts{size_t(agnnodes(g.get())), size_t(agnedges(g.get()))};
}

}  // namespace nn::ir
