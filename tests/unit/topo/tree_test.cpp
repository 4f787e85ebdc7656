#include "topo/tree.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "grove/error.hpp"

namespace grove::topo {
namespace {

// Independent integer forms of the depth formulas.
int ceil_log(int64_t k, int64_t x) {  // smallest m with k^m >= x
  int m = 0;
  for (int64_t p = 1; p < x; p *= k)
    ++m;
  return m;
}

// The place value of x's highest non-zero base-k digit.
int largest_place(int k, int x) {
  int place = 1;
  while (x / place >= k)
    place *= k;
  return place;
}

int expected_depth(const Tree& t) {
  switch (t.shape) {
    case Shape::flat:
      return t.size > 1 ? 1 : 0;
    case Shape::chain:
      return t.size - 1;
    case Shape::kary:
      return ceil_log(t.radix, int64_t{t.radix - 1} * t.size + 1) - 1;
    case Shape::binomial:
      return ceil_log(2, t.size);
    case Shape::knomial:
      return ceil_log(t.radix, t.size);
  }
  return -1;
}

// Checks one tree exhaustively: parent/children agree, every non-root rank
// has exactly one parent, all ranks are reached from the root without
// cycles, subtree sizes add up, children are served largest subtree first,
// and depth matches both its formula and the tree's own structure.
void check_tree(const Tree& t) {
  SCOPED_TRACE(describe(t) + " size " + std::to_string(t.size) + " root " + std::to_string(t.root));
  const int n = t.size;
  std::vector<int> parent_count(n, 0);
  std::vector<int> receive_round(n, -1);
  EXPECT_EQ(parent(t, t.root), -1);
  for (int r = 0; r < n; ++r) {
    const std::vector<int> kids = children(t, r);
    int sum = 1;
    for (size_t i = 0; i < kids.size(); ++i) {
      const int c = kids[i];
      ASSERT_GE(c, 0);
      ASSERT_LT(c, n);
      EXPECT_NE(c, t.root);
      EXPECT_EQ(parent(t, c), r);
      parent_count[c]++;
      sum += subtree_size(t, c);
      if (i > 0 && (t.shape == Shape::knomial || t.shape == Shape::binomial)) {
        // Digit positions never rise along the list.
        const int v = to_virtual(t, r);
        EXPECT_GE(to_virtual(t, kids[i - 1]) - v, largest_place(t.radix, to_virtual(t, c) - v));
      } else if (i > 0) {
        EXPECT_GE(subtree_size(t, kids[i - 1]), subtree_size(t, c));
      }
    }
    EXPECT_EQ(subtree_size(t, r), sum);
    if (r != t.root) {
      const int p = parent(t, r);
      ASSERT_GE(p, 0);
      ASSERT_LT(p, n);
    }
  }
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(parent_count[r], r == t.root ? 0 : 1) << "rank " << r;
  EXPECT_EQ(subtree_size(t, t.root), n);

  // Reachability and rounds, breadth first from the root: all of a parent's
  // children receive one round after it. For flat, chain and kary that is
  // the depth; knomial depth counts rounds per digit position (tested
  // below), which is never less than the height.
  std::vector<int> queue{t.root};
  receive_round[t.root] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const int r = queue[head];
    for (int c : children(t, r)) {
      ASSERT_EQ(receive_round[c], -1) << "rank " << c << " reached twice (cycle)";
      receive_round[c] = receive_round[r] + 1;
      queue.push_back(c);
    }
  }
  ASSERT_EQ(static_cast<int>(queue.size()), n) << "tree does not cover all ranks";
  int height = 0;
  for (int r = 0; r < n; ++r)
    height = std::max(height, receive_round[r]);
  EXPECT_EQ(depth(t), expected_depth(t));
  if (t.shape == Shape::knomial || t.shape == Shape::binomial) {
    EXPECT_LE(height, depth(t));
  } else {
    EXPECT_EQ(height, depth(t));
  }
}

TEST(Tree, AllShapesSizesRadicesAndRoots) {
  for (int n = 1; n <= 200; ++n) {
    std::set<int> roots{0, n - 1, n / 2, (n * 7 + 3) % n};
    for (int root : roots) {
      check_tree(make_tree(Shape::flat, n, root));
      check_tree(make_tree(Shape::chain, n, root));
      check_tree(make_tree(Shape::binomial, n, root));
      for (int k : {2, 3, 4, 5, 6, 7, 8, 64}) {
        check_tree(make_tree(Shape::kary, n, root, k));
        check_tree(make_tree(Shape::knomial, n, root, k));
      }
    }
  }
}

// The knomial round count: a rank whose lowest non-zero base-k digit is at
// position j receives in round ceil(log_k n) - j; the maximum is the depth.
TEST(Tree, KnomialRoundsMatchDepth) {
  for (int n = 2; n <= 200; ++n) {
    for (int k : {2, 3, 4, 8, 64}) {
      const Tree t = make_tree(Shape::knomial, n, n / 3, k);
      const int m = ceil_log(k, n);
      int last = 0;
      for (int v = 1; v < n; ++v) {
        int j = 0;
        for (int x = v; x % k == 0; x /= k)
          ++j;
        last = std::max(last, m - j);
      }
      EXPECT_EQ(last, depth(t)) << "n " << n << " k " << k;
    }
  }
}

TEST(Tree, BinomialIsTheClassicTree) {
  const Tree t = make_tree(Shape::binomial, 16, 0);
  EXPECT_EQ(children(t, 0), (std::vector<int>{8, 4, 2, 1}));
  EXPECT_EQ(children(t, 4), (std::vector<int>{6, 5}));
  EXPECT_EQ(parent(t, 13), 12);
  EXPECT_EQ(parent(t, 12), 8);
  const Tree r = make_tree(Shape::binomial, 5, 3);  // virtual 0..4 = real 3,4,0,1,2
  EXPECT_EQ(children(r, 3), (std::vector<int>{2, 0, 4}));
  EXPECT_EQ(parent(r, 1), 0);
  const Tree k = make_tree(Shape::knomial, 10, 0, 3);
  EXPECT_EQ(children(k, 0), (std::vector<int>{9, 3, 6, 1, 2}));
  EXPECT_EQ(subtree_size(k, 3), 3);
  EXPECT_EQ(subtree_size(k, 9), 1);
}

TEST(Tree, HugeBinomialIsCheapPerRank) {
  const Tree t = make_tree(Shape::binomial, 100000, 12345);
  EXPECT_EQ(depth(t), 17);
  EXPECT_EQ(children(t, 12345).size(), 17u);
  EXPECT_EQ(subtree_size(t, 12345), 100000);
  int total = 0;
  for (int r = 0; r < 100000; ++r)
    total += static_cast<int>(children(t, r).size());
  EXPECT_EQ(total, 99999);
}

TEST(Tree, BadInputIsAnError) {
  EXPECT_THROW(make_tree(Shape::binomial, 0, 0), Error);
  EXPECT_THROW(make_tree(Shape::binomial, 4, 4), Error);
  EXPECT_THROW(make_tree(Shape::kary, 4, 0, 1), Error);
  try {
    make_tree(Shape::knomial, 4, 0, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("radix 1"), std::string::npos);
  }
  const Tree t = make_tree(Shape::chain, 4, 0);
  EXPECT_THROW(parent(t, 4), Error);
  EXPECT_THROW(children(t, -1), Error);
}

}  // namespace
}  // namespace grove::topo
