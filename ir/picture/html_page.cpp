// Writing the interactive page of a graph (see html_page.h). Views are laid
// out breadth first from the overview: each box a view draws gets a view of
// its own, so every node is laid out once, in the view of the innermost
// call drawn open around it. The page's data is one JSON document (the
// format is described at the top of page.js).
#include "ir/picture/html_page.h"

#include <cstdio>
#include <string_view>
#include <unordered_set>

#include "backend/dtype.h"
#include "ir/picture/dot_printer.h"
#include "ir/picture/dot_render.h"
#include "ir/picture/palette.h"

namespace nn::ir {
namespace {

// Appends s as a JSON string. A '<' before '/' or '!' is written \u003c, so
// that the document can sit in a <script> element (no "</script>", no "<!--").
void put_json(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '<' && i + 1 < s.size() && (s[i + 1] == '/' || s[i + 1] == '!')) out += "\\u003c";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  out += '"';
}

std::string html_escaped(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

size_t bytes_of(const backend::TensorType& t) { return size_t(t.shape.numel()) * backend::dtype_size(t.dtype); }

// One item of the page's table: its fields in order, as JSON.
class Item {
 public:
  Item& text(const char* key, std::string_view value) {
    open(key);
    put_json(json_, value);
    return *this;
  }
  Item& number(const char* key, size_t value) {
    open(key);
    json_ += std::to_string(value);
    return *this;
  }
  std::string done() { return json_ + "}"; }

 private:
  void open(const char* key) {
    json_ += json_.size() > 1 ? ",\"" : "\"";
    json_ += key;
    json_ += "\":";
  }
  std::string json_ = "{";
};

class PageWriter {
 public:
  explicit PageWriter(const Drawing& d) : d_(d), g_(d.graph()), t_(d.groups()) {}

  std::string run() {
    std::string views;
    std::vector<uint32_t> queue{0}, parent{kNone};
    for (size_t i = 0; i < queue.size(); ++i) {
      const uint32_t k = queue[i];
      const View v = d_.view(k);
      const std::string id = "g" + std::to_string(k);
      for (NodeId n : v.ops) add_op(n, id);
      for (ValueId x : v.values) add_value(x, id);
      for (uint32_t b : v.boxes) {
        add_box(b, id);
        queue.push_back(b);
        parent.push_back(k);
      }
      std::string svg = render_dot_as(print_dot(d_, v, true), "svg", "the view `" + t_[k].name + "` of the page");
      svg.erase(0, std::min(svg.find("<svg"), svg.size()));  // the XML prolog and doctype
      views += views.empty() ? "[" : ",";
      views += "{\"id\":";
      put_json(views, id);
      views += ",\"name\":";
      put_json(views, t_[k].name);
      views += ",\"parent\":";
      if (parent[i] == kNone) views += "null";
      else put_json(views, "g" + std::to_string(parent[i]));
      views += ",\"svg\":";
      put_json(views, svg);
      views += "}";
    }
    std::string data = "{\"title\":";
    put_json(data, g_.name);
    data += ",\"views\":" + views + "],\"items\":{" + items_ + "}}";

    std::string page = kPageHtml;
    fill(page, "<!--nn:title-->", html_escaped(g_.name.empty() ? "graph" : g_.name));
    fill(page, "/*nn:style*/", kPageCss);
    fill(page, "/*nn:script*/", kPageJs);
    fill(page, "<!--nn:data-->", data);  // last: the data may hold the other markers' text
    return page;
  }

 private:
  static void fill(std::string& page, std::string_view marker, std::string_view text) {
    const size_t at = page.find(marker);
    if (at != std::string::npos) page.replace(at, marker.size(), text);
  }

  void add(const std::string& key, Item& item) {
    if (!items_.empty()) items_ += ',';
    put_json(items_, key);
    items_ += ':' + item.done();
  }

  void add_op(NodeId n, const std::string& view) {
    const Node& node = g_.nodes[n];
    std::string types, block;
    size_t bytes = 0;
    for (ValueId x : node.outputs) {
      if (x >= g_.values.size()) continue;
      types += (types.empty() ? "" : ", ") + g_.values[x].type.str();
      bytes += bytes_of(g_.values[x].type);
      const std::string m = d_.memory_text(x);
      if (!m.empty()) block += (block.empty() ? "" : "; ") + m;
    }
    Item item;
    item.text("kind", "op").text("label", node.name()).text("types", types).number("bytes", bytes);
    item.text("block", block).text("where", g_.where(node.loc)).text("phase", phase_name(node.phase));
    item.text("fill", palette::phase_fill(node.phase));
    if (d_.memory_on())
      item.text("memfill", palette::block_fill(node.outputs.empty() ? kNone : d_.block_of(node.outputs[0])));
    item.text("view", view);
    add("n" + std::to_string(n), item);
  }

  void add_value(ValueId x, const std::string& view) {
    if (!values_.insert(x).second) return;  // drawn in several views: described once
    const Value& val = g_.values[x];
    const std::string& name = d_.name_of(x);
    Item item;
    item.text("kind", "value").text("label", std::string(role_name(val.role)) + (name.empty() ? "" : " ") + name);
    item.text("types", val.type.str()).number("bytes", bytes_of(val.type)).text("block", d_.memory_text(x));
    item.text("where", "").text("phase", "").text("fill", palette::kValue);
    if (d_.memory_on()) item.text("memfill", palette::block_fill(d_.block_of(x)));
    item.text("view", view);
    add("v" + std::to_string(x), item);
  }

  void add_box(uint32_t k, const std::string& view) {
    const Group& grp = t_[k];
    const std::string id = "g" + std::to_string(k);
    Item item;
    item.text("kind", grp.steps ? "series" : "group").text("label", grp.name).text("types", "").number("bytes", 0);
    item.text("block", "").text("where", g_.where(grp.call)).text("phase", phase_name(grp.phase));
    item.text("fill", palette::phase_fill(grp.phase));
    item.text("view", view).text("open", id).number("count", grp.steps).number("nodes", grp.size);
    add(id, item);
  }

  const Drawing& d_;
  const Graph& g_;
  const GroupTree& t_;
  std::string items_;
  std::unordered_set<ValueId> values_;
};

}  // namespace

std::string html_page(const Drawing& d) { return PageWriter(d).run(); }

}  // namespace nn::ir
