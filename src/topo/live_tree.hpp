#pragma once
// A k-ary tree over the LIVE ranks of a communicator, as a pure function of
// (size, root, departed set, radix). The fence's routing tree and its
// derived release tree are both this shape (at different radices), so every
// rank derives the same tree from the same failure view with no
// communication.
//
// The members are the living ranks in the order (rank - root) mod size: the
// requested root first if it lives, otherwise the next living rank after it.
// A member's POSITION is its index in that list; position p's parent is
// position (p - 1) / k and its children are positions k*p + 1 .. k*p + k.
//
// Invariant (docs/fence.md, lesson 1): parent and children are both read from
// the position a rank actually occupies under this view, never one rule for
// parents (walking up past dead ancestors) and another for children
// (replacing a dead child in place). Two rules disagree under a failure and
// leave ranks in no tree at all; one rule cannot. So for every view the
// relation is one tree rooted at root() covering exactly the living ranks
// (tests/unit/topo/live_tree_test.cpp enumerates every failure subset).
//
// Two LiveTrees over the same view and radix are identical, so a release
// tree configured at the routing radix IS the routing tree.
//
// Cost: building is O(size); position, parent, children are O(log size + k).

#include <cstdint>
#include <set>
#include <vector>

namespace grove::topo {

class LiveTree {
 public:
  // Throws grove::Error(invalid_argument) on size < 1, root outside
  // [0, size), radix < 2, a departed rank outside [0, size), or no living rank.
  LiveTree(int size, int root, const std::set<int>& departed, int radix);

  int size() const { return size_; }  // the communicator's size, living or not
  int radix() const { return radix_; }
  int root() const { return members_.front(); }
  // The living ranks in tree order (root first).
  const std::vector<int>& members() const { return members_; }
  bool contains(int rank) const { return position(rank) >= 0; }

  // Index of `rank` in members(), or -1 if it is not a living member.
  int position(int rank) const;
  // The parent of `rank`: -1 for the root and for a rank that is not a member.
  int parent(int rank) const;
  // The children of `rank` (none for a non-member), in heap order.
  std::vector<int> children(int rank) const;
  // Every member of the subtree of `rank`, itself included (empty for a
  // non-member).
  std::vector<int> subtree(int rank) const;
  // Height in edges (0 for a single member).
  int depth() const;

 private:
  int size_;
  int root_request_;
  int radix_;
  std::vector<int> members_;
};

}  // namespace grove::topo
