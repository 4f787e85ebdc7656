#include "topo/tree.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::topo {

namespace {

int radix_of(const Tree& tree) {
  return tree.shape == Shape::binomial ? 2 : tree.radix;
}

void check_rank(const Tree& tree, int rank) {
  if (rank < 0 || rank >= tree.size) {
    throw Error(Errc::invalid_argument, fmt::format("{} tree: rank {} is outside [0, {})",
                                                    describe(tree), rank, tree.size));
  }
}

// The place value k^j of v's lowest non-zero base-k digit; for the root
// (v == 0), the smallest power of k that is >= size, so that every position
// below it holds children.
int64_t lowest_place(int64_t v, int64_t k, int64_t size) {
  int64_t place = 1;
  if (v == 0) {
    while (place < size)
      place *= k;
    return place;
  }
  while ((v / place) % k == 0)
    place *= k;
  return place;
}

}  // namespace

Tree make_tree(Shape shape, int size, int root, int radix) {
  Tree tree{shape, size, root, shape == Shape::binomial ? 2 : radix};
  if (size < 1) {
    throw Error(Errc::invalid_argument,
                fmt::format("{} tree: size {} is below 1", shape_name(shape), size));
  }
  if (root < 0 || root >= size) {
    throw Error(Errc::invalid_argument,
                fmt::format("{} tree: root {} is outside [0, {})", shape_name(shape), root, size));
  }
  if ((shape == Shape::kary || shape == Shape::knomial) && radix < 2) {
    throw Error(Errc::invalid_argument,
                fmt::format("{} tree: radix {} is below 2", shape_name(shape), radix));
  }
  return tree;
}

std::string_view shape_name(Shape shape) {
  switch (shape) {
    case Shape::flat:
      return "flat";
    case Shape::chain:
      return "chain";
    case Shape::kary:
      return "kary";
    case Shape::binomial:
      return "binomial";
    case Shape::knomial:
      return "knomial";
  }
  return "?";
}

std::string describe(const Tree& tree) {
  if (tree.shape == Shape::kary || tree.shape == Shape::knomial)
    return fmt::format("{}:{}", shape_name(tree.shape), tree.radix);
  return std::string(shape_name(tree.shape));
}

int to_virtual(const Tree& tree, int rank) {
  return static_cast<int>((static_cast<int64_t>(rank) - tree.root + tree.size) % tree.size);
}

int to_real(const Tree& tree, int vrank) {
  return static_cast<int>((static_cast<int64_t>(vrank) + tree.root) % tree.size);
}

int parent(const Tree& tree, int rank) {
  check_rank(tree, rank);
  const int64_t v = to_virtual(tree, rank);
  if (v == 0) return -1;
  int64_t p = 0;
  switch (tree.shape) {
    case Shape::flat:
      p = 0;
      break;
    case Shape::chain:
      p = v - 1;
      break;
    case Shape::kary:
      p = (v - 1) / tree.radix;
      break;
    case Shape::binomial:
    case Shape::knomial: {
      const int64_t k = radix_of(tree);
      const int64_t place = lowest_place(v, k, tree.size);
      p = v - ((v / place) % k) * place;
      break;
    }
  }
  return to_real(tree, static_cast<int>(p));
}

void children(const Tree& tree, int rank, std::vector<int>& out) {
  check_rank(tree, rank);
  out.clear();
  const int64_t v = to_virtual(tree, rank);
  const int64_t n = tree.size;
  switch (tree.shape) {
    case Shape::flat:
      if (v == 0) {
        out.reserve(static_cast<size_t>(n - 1));
        for (int64_t c = 1; c < n; ++c)
          out.push_back(to_real(tree, static_cast<int>(c)));
      }
      break;
    case Shape::chain:
      if (v + 1 < n) out.push_back(to_real(tree, static_cast<int>(v + 1)));
      break;
    case Shape::kary:
      for (int64_t c = v * tree.radix + 1; c <= v * tree.radix + tree.radix && c < n; ++c)
        out.push_back(to_real(tree, static_cast<int>(c)));
      break;
    case Shape::binomial:
    case Shape::knomial: {
      // Highest position first: those children head the largest subtrees.
      const int64_t k = radix_of(tree);
      for (int64_t place = lowest_place(v, k, n) / k; place >= 1; place /= k) {
        for (int64_t d = 1; d < k && v + d * place < n; ++d)
          out.push_back(to_real(tree, static_cast<int>(v + d * place)));
      }
      break;
    }
  }
}

std::vector<int> children(const Tree& tree, int rank) {
  std::vector<int> out;
  children(tree, rank, out);
  return out;
}

int subtree_size(const Tree& tree, int rank) {
  check_rank(tree, rank);
  const int64_t v = to_virtual(tree, rank);
  const int64_t n = tree.size;
  switch (tree.shape) {
    case Shape::flat:
      return v == 0 ? tree.size : 1;
    case Shape::chain:
      return static_cast<int>(n - v);
    case Shape::kary: {
      // Level by level: the descendants of v at distance l are the
      // contiguous heap range starting at `first`, `width` wide.
      int64_t total = 0;
      for (int64_t first = v, width = 1; first < n; first = first * tree.radix + 1) {
        total += std::min(width, n - first);
        width *= tree.radix;
      }
      return static_cast<int>(total);
    }
    case Shape::binomial:
    case Shape::knomial:
      return static_cast<int>(std::min(lowest_place(v, radix_of(tree), n), n - v));
  }
  return 0;
}

int depth(const Tree& tree) {
  const int64_t n = tree.size;
  switch (tree.shape) {
    case Shape::flat:
      return n > 1 ? 1 : 0;
    case Shape::chain:
      return static_cast<int>(n - 1);
    case Shape::kary: {
      // Smallest d with 1 + k + ... + k^d >= n.
      int d = 0;
      for (int64_t covered = 1, level = 1; covered < n; ++d) {
        level *= tree.radix;
        covered += level;
      }
      return d;
    }
    case Shape::binomial:
    case Shape::knomial: {
      int m = 0;
      for (int64_t place = 1; place < n; place *= radix_of(tree))
        ++m;
      return m;
    }
  }
  return 0;
}

}  // namespace grove::topo
