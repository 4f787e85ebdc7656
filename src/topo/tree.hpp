#pragma once
// Tree shapes over the ranks of a communicator, as pure functions of
// (shape, size, root, radix). Every rank derives the same tree from the same
// inputs, with no communication.
//
// All shapes are defined over virtual ranks v = (rank - root) mod size, so
// the root is virtual rank 0; functions take and return real ranks.
//
//   flat      the root is the parent of every other rank
//   chain     v's parent is v - 1
//   kary      heap layout: v's children are k*v + 1 .. k*v + k
//   knomial   v's parent clears v's lowest non-zero base-k digit; v's
//             children are v + d*k^i for every position i below that digit
//             and d = 1..k-1; binomial is knomial with k = 2
//
// Subtrees are contiguous virtual-rank ranges [v, v + subtree_size) in
// chain and knomial trees (used by scatter-style algorithms); kary subtrees
// are not contiguous.
//
// Cost: parent, subtree_size and depth are O(log size); children is
// O(number of children + log size), so a 100,000-rank tree costs each rank
// only its own part.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace grove::topo {

enum class Shape : uint8_t { flat, chain, kary, binomial, knomial };

struct Tree {
  Shape shape = Shape::binomial;
  int size = 1;
  int root = 0;
  int radix = 2;  // kary and knomial (>= 2); 2 for binomial; unused by flat and chain
};

// Validates (size >= 1, root in range, radix >= 2 where used) and throws
// grove::Error(invalid_argument) naming the bad value.
Tree make_tree(Shape shape, int size, int root, int radix = 2);

std::string_view shape_name(Shape shape);
// "flat", "chain", "kary:3", "binomial", "knomial:4"
std::string describe(const Tree& tree);

int to_virtual(const Tree& tree, int rank);
int to_real(const Tree& tree, int vrank);

// The parent of `rank`, or -1 for the root.
int parent(const Tree& tree, int rank);

// The children of `rank` in the order a sender should serve them: the child
// that heads the deepest subtree first. kary: heap order (subtree sizes never
// grow along the list). knomial: highest digit position first, as in the
// round model of depth() (at the top position a subtree cut short by `size`
// can be smaller than the next one; it is still no shallower in rounds).
std::vector<int> children(const Tree& tree, int rank);
// Same, into `out` (cleared first), for callers that reuse a vector.
void children(const Tree& tree, int rank, std::vector<int>& out);

// Number of ranks in the subtree rooted at `rank` (including itself).
int subtree_size(const Tree& tree, int rank);

// The number of rounds until the last rank has the root's data when every
// rank forwards as soon as it has received:
//   flat: 1 (0 for size 1); chain: size - 1; kary: the height,
//   ceil(log_k((k-1)*size + 1)) - 1; knomial: ceil(log_k(size)) rounds, one
//   per base-k digit position (a rank serves its children of position i in
//   the round after those of position i + 1).
int depth(const Tree& tree);

}  // namespace grove::topo
