// The groups a picture of a graph draws: the nn function calls that made its
// nodes (Graph::scopes), nested as they were called, and series: runs of
// consecutive calls of one function whose traced bodies have the same
// structure (the steps of an LSTM, a stack of blocks, the per-param updates
// of an optimizer), which draw as one box `_lstm_step ×16` holding the calls
// as steps `_lstm_step #1` ... (TensorBoard's series).
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace nn::ir {

struct Group {
  std::string name;        // the function; a series "f ×16"; a step of a series "f #3"
  uint32_t parent = kNone; // kNone for the root, the graph itself (group 0)
  uint32_t depth = 0;      // the root 0; a series is a level of its own
  uint32_t steps = 0;      // a series: the calls it holds; otherwise 0
  Loc call;                // where the function was called (a series: its first call)
  std::vector<uint32_t> children;  // in call order; groups without nodes left out
  std::vector<NodeId> nodes;       // made in this call itself, in graph order
  uint32_t size = 0;               // nodes in it and in the calls below it
  Phase phase = Phase::forward;    // of its first node
};

class GroupTree {
 public:
  // Groups of g's scopes (a bad parent index or a cycle hangs a scope on
  // the root) and the series among them, judged on `traced` (g as traced,
  // with the same scopes) when given; linear in nodes times nesting.
  explicit GroupTree(const Graph& g, const Graph* traced = nullptr);

  size_t size() const { return groups_.size(); }
  const Group& operator[](uint32_t k) const { return groups_[k]; }
  // The innermost group holding node n.
  uint32_t group_of(NodeId n) const { return group_of_[n]; }
  // The group at `depth` on k's path from the root (k itself when it is that deep).
  uint32_t ancestor_at(uint32_t k, uint32_t depth) const;
  bool contains(uint32_t outer, uint32_t k) const {
    return groups_[k].depth >= groups_[outer].depth && ancestor_at(k, groups_[outer].depth) == outer;
  }

 private:
  void find_series(const Graph& shapes);
  std::vector<Group> groups_;
  std::vector<uint32_t> group_of_;
};

}  // namespace nn::ir
