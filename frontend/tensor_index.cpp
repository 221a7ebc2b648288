// Reading a tensor by index (SPEC §4): ints and slices go to backend::index;
// `none` inserts an axis of size 1; integer tensors follow NumPy's advanced
// indexing: they broadcast together, and each position of their common shape
// B picks one element along their axes. B takes the place of those axes when
// they are adjacent, else it comes first. Everything is made of ops that
// differentiate (index, reshape, permute, take), so it needs no rule of its own.
#include <algorithm>

#include "backend/error.h"
#include "backend/ops.h"
#include "backend/untraced.h"
#include "frontend/index_items.h"
#include "ir/tracer.h"

namespace nn::frontend {
namespace {
using backend::Tensor;

// ids for axes of the given sizes, broadcast together, as one index into
// those axes flattened (row-major). An id outside its axis must not land on
// another element: eager ids are checked here, traced ones are sent out of
// range so that take refuses them when the graph runs.
Tensor flat_ids(std::vector<Tensor> ids, const std::vector<int64_t>& sizes) {
  backend::Shape common = ids[0].shape();
  for (const Tensor& t : ids)
    if (!backend::broadcast_shapes(common, t.shape(), common))
      throw backend::Error("index tensors " + ids[0].type().str() + " and " + t.type().str() + " do not broadcast together");
  int64_t total = 1;
  for (int64_t s : sizes) total *= s;
  Tensor flat, bad;
  for (size_t j = 0; j < ids.size(); ++j) {
    Tensor t = backend::astype(ids[j], backend::DType::i64);
    // Checked now when its value is known for good: not inside a trace,
    // where a captured tensor may change before a later run.
    if (!t.is_traced() && !ir::Tracer::active() && t.numel() > 0) {
      backend::Untraced eager;  // a value known while a graph is traced too (an int beside ids)
      const int64_t lo = backend::min(t).item_int(), hi = backend::max(t).item_int();
      if (lo < 0 || hi >= sizes[j])
        throw backend::Error("index tensor " + std::to_string(j) + " holds " + std::to_string(lo < 0 ? lo : hi) +
                             ", out of range for an axis of size " + std::to_string(sizes[j]));
    } else {
      Tensor out = backend::logical_or(backend::lt(t, backend::scalar_int(0)), backend::ge(t, backend::scalar_int(sizes[j])));
      bad = bad.defined() ? backend::logical_or(bad, out) : out;
    }
    int64_t stride = 1;
    for (size_t k = j + 1; k < sizes.size(); ++k) stride *= sizes[k];
    Tensor term = backend::mul(t, backend::scalar_int(stride));
    flat = flat.defined() ? backend::add(flat, term) : term;
  }
  flat = backend::broadcast_to(flat, common);
  if (bad.defined()) flat = backend::where(bad, backend::scalar_int(total), flat);
  return flat;
}
}  // namespace

Tensor index_tensor(const Tensor& x, const std::vector<IndexArg>& args) {
  const auto consumed = std::count_if(args.begin(), args.end(), [](const IndexArg& a) { return a.kind != IndexArg::new_axis; });
  if (consumed > x.ndim())
    throw backend::Error("too many indices for " + x.type().str() + ": " + std::to_string(consumed) + " given, " +
                         std::to_string(x.ndim()) + (x.ndim() == 1 ? " dimension" : " dimensions"));
  // Ints and slices first, with the whole of each axis an index tensor
  // reads; then the new axes, at their place in the result.
  std::vector<backend::IndexItem> basic;
  std::vector<int> new_axes, ids_axes;
  std::vector<Tensor> ids;
  // Beside index tensors an int is one too (a 0-d one), as in NumPy: it
  // counts in whether they are adjacent.
  const bool advanced =
      std::any_of(args.begin(), args.end(), [](const IndexArg& a) { return a.kind == IndexArg::tensor; });
  int out_axis = 0;
  for (const IndexArg& a : args) {
    if (advanced && a.kind == IndexArg::basic && a.item.kind == backend::IndexItem::index) {
      const int64_t axis = int64_t(basic.size());
      ids_axes.push_back(out_axis++);
      ids.push_back(backend::scalar_int(a.item.i < 0 ? a.item.i + x.shape()[axis] : a.item.i));
      basic.push_back(backend::IndexItem{});
      continue;
    }
    if (a.kind == IndexArg::new_axis) {
      new_axes.push_back(out_axis++);
      continue;
    }
    if (a.kind == IndexArg::tensor) {
      ids_axes.push_back(out_axis++);
      // A 0-d index tensor stands for an int (a graph's, or a captured
      // one's inside a trace): a negative one counts from the end, as -1.
      const int64_t n = x.shape()[int64_t(basic.size())];
      ids.push_back(a.ids.ndim() == 0 ? backend::where(backend::lt(a.ids, backend::scalar_int(0)),
                                                       backend::add(a.ids, backend::scalar_int(n)), a.ids)
                                      : a.ids);
      basic.push_back(backend::IndexItem{});  // a slice of the whole axis
      continue;
    }
    if (a.item.kind == backend::IndexItem::slice) ++out_axis;
    basic.push_back(a.item);
  }
  // x[ids] and x[ids, :] read x itself: no copy for take to read from; nor
  // x[none], a view as unsqueeze is. x[:] is a new tensor, as every other
  // index (docs/language.md).
  const bool whole = std::all_of(basic.begin(), basic.end(), [](const backend::IndexItem& i) {
    return i.kind == backend::IndexItem::slice && !i.start && !i.stop && !i.step;
  });
  Tensor y = whole && (!ids.empty() || !new_axes.empty()) ? x : backend::index(x, basic);
  for (int p : new_axes) y = backend::unsqueeze(y, p);
  if (ids.empty()) return y;

  // The index tensors' axes first, flattened into one, then one take.
  const int n = y.ndim(), k = int(ids.size());
  std::vector<int64_t> order(ids_axes.begin(), ids_axes.end()), sizes;
  for (int d = 0; d < n; ++d)
    if (std::find(ids_axes.begin(), ids_axes.end(), d) == ids_axes.end()) order.push_back(d);
  for (int a : ids_axes) sizes.push_back(y.shape()[a]);
  Tensor moved = backend::permute(y, order);
  // The flattened index axes' size written out: -1 is ambiguous beside a
  // 0 (zeros([2, 0])[ids]).
  int64_t indexed = 1;
  for (int64_t s : sizes) indexed *= s;
  std::vector<int64_t> flat_shape{indexed};
  for (int d = k; d < n; ++d) flat_shape.push_back(moved.shape()[d]);
  Tensor picked = backend::take_index(backend::reshape(moved, flat_shape), k == 1 ? ids[0] : flat_ids(ids, sizes),
                                      y.type().str(), k == 1 ? ids_axes[0] : -1);
  // take gives [B..., rest]; a 0-d B (ints alone) adds no axis.
  // Adjacent index tensors: their broadcast axes go where their axes were.
  const bool adjacent = ids_axes.back() - ids_axes.front() == k - 1;
  const int b = picked.ndim() - (n - k), at = ids_axes.front();
  if (!adjacent || at == 0) return picked;
  std::vector<int64_t> back;
  for (int d = b; d < b + at; ++d) back.push_back(d);
  for (int d = 0; d < b; ++d) back.push_back(d);
  for (int d = b + at; d < picked.ndim(); ++d) back.push_back(d);
  return backend::permute(picked, back);
}

}  // namespace nn::frontend
