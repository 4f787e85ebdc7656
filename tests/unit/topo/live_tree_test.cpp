// The k-ary tree over the living ranks (src/topo/live_tree.hpp): lesson 1 of
// docs/fence.md, brute-forced, and the equal-radices identity.

#include "topo/live_tree.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "grove/error.hpp"

namespace grove::topo {
namespace {

std::set<int> departed_of(int size, uint32_t mask) {
  std::set<int> out;
  for (int r = 0; r < size; ++r)
    if (mask & (1u << r)) out.insert(r);
  return out;
}

// The relation (parent, children) must be ONE tree rooted at the root that
// covers exactly the living ranks: parent and children agree both ways,
// every living rank reaches the root by parents without a cycle, and no
// departed rank appears anywhere. Returns an empty string or what broke.
std::string check_one_tree(const LiveTree& tree, int size, const std::set<int>& departed) {
  const int root = tree.root();
  if (departed.count(root)) return "root departed";
  int living = 0;
  for (int r = 0; r < size; ++r) {
    const bool alive = departed.count(r) == 0;
    if (alive) ++living;
    if (tree.contains(r) != alive) return "membership of " + std::to_string(r);
    if (!alive) {
      if (tree.parent(r) != -1 || !tree.children(r).empty()) return "departed rank in the tree";
      continue;
    }
    for (int c : tree.children(r)) {
      if (departed.count(c)) return "departed child";
      if (tree.parent(c) != r) return "child " + std::to_string(c) + " names another parent";
    }
    const int p = tree.parent(r);
    if (r == root) {
      if (p != -1) return "root has a parent";
      continue;
    }
    if (p < 0 || departed.count(p)) return "living rank without a living parent";
    const auto siblings = tree.children(p);
    if (std::find(siblings.begin(), siblings.end(), r) == siblings.end())
      return "parent " + std::to_string(p) + " does not list child " + std::to_string(r);
    // Reaches the root in at most `size` steps (no cycle).
    int at = r, steps = 0;
    while (at != root && steps <= size) {
      at = tree.parent(at);
      ++steps;
    }
    if (at != root) return "rank " + std::to_string(r) + " does not reach the root";
  }
  if (static_cast<int>(tree.subtree(root).size()) != living) return "root's subtree size";
  if (static_cast<int>(tree.members().size()) != living) return "member count";
  return "";
}

// Lesson 1: every failure subset, radices 2..4 and 8, N up to 12.
TEST(LiveTree, EveryFailureSubsetGivesOneTreeOverTheLivingRanks) {
  int checked = 0;
  for (int radix : {2, 3, 4, 8}) {
    for (int size = 1; size <= 12; ++size) {
      for (uint32_t mask = 0; mask < (1u << size); ++mask) {
        if (mask == (1u << size) - 1) continue;  // nobody left
        const std::set<int> departed = departed_of(size, mask);
        for (int root : {0, size - 1}) {
          const LiveTree tree(size, root, departed, radix);
          const std::string broken = check_one_tree(tree, size, departed);
          ASSERT_EQ(broken, "") << "size " << size << " radix " << radix << " root " << root
                                << " departed mask " << mask;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 4 * 2 * ((1 << 13) - 2 - 12));
}

// The counterexample of docs/fence.md, lesson 1: 8 ranks, radix 2, rank 1 departed. A walk-up
// parent rule says 3's parent is 0 while replacement-in-place children put
// 4 in slot 1; here both come from the position, so they agree.
TEST(LiveTree, SeedCounterexampleAgrees) {
  const LiveTree tree(8, 0, {1}, 2);
  EXPECT_EQ(tree.members(), (std::vector<int>{0, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(tree.children(0), (std::vector<int>{2, 3}));
  EXPECT_EQ(tree.parent(3), 0);
  EXPECT_EQ(tree.children(2), (std::vector<int>{4, 5}));
  EXPECT_EQ(tree.children(3), (std::vector<int>{6, 7}));
  EXPECT_EQ(tree.parent(4), 2);
}

// Equal radices: the release tree IS the routing tree, for every rank and
// every failure pattern.
TEST(LiveTree, EqualRadicesGiveIdenticalTrees) {
  for (int radix : {2, 3, 4, 8}) {
    for (int size = 1; size <= 10; ++size) {
      for (uint32_t mask = 0; mask + 1 < (1u << size); ++mask) {
        const std::set<int> departed = departed_of(size, mask);
        const LiveTree routing(size, 0, departed, radix);
        const LiveTree release(size, 0, departed, radix);
        for (int r = 0; r < size; ++r) {
          ASSERT_EQ(routing.parent(r), release.parent(r));
          ASSERT_EQ(routing.children(r), release.children(r));
        }
      }
    }
  }
}

TEST(LiveTree, RootIsTheFirstLivingRankFromTheRequestedRoot) {
  EXPECT_EQ(LiveTree(6, 0, {0, 1}, 2).root(), 2);
  EXPECT_EQ(LiveTree(6, 4, {4, 5}, 2).root(), 0);
  EXPECT_EQ(LiveTree(6, 4, {}, 2).members(), (std::vector<int>{4, 5, 0, 1, 2, 3}));
}

TEST(LiveTree, SubtreeAndDepth) {
  const LiveTree tree(10, 0, {}, 3);  // 0 -> 1 2 3; 1 -> 4 5 6; 2 -> 7 8 9
  EXPECT_EQ(tree.subtree(1), (std::vector<int>{1, 4, 5, 6}));
  EXPECT_EQ(tree.subtree(0).size(), 10u);
  EXPECT_EQ(tree.depth(), 2);
  EXPECT_EQ(LiveTree(1, 0, {}, 2).depth(), 0);
  EXPECT_EQ(LiveTree(64, 0, {}, 64).depth(), 1);
  EXPECT_EQ(LiveTree(65, 0, {}, 64).depth(), 1);
  EXPECT_EQ(LiveTree(66, 0, {}, 64).depth(), 2);
}

TEST(LiveTree, BadInputIsNamed) {
  EXPECT_THROW(LiveTree(0, 0, {}, 2), Error);
  EXPECT_THROW(LiveTree(4, 4, {}, 2), Error);
  EXPECT_THROW(LiveTree(4, 0, {}, 1), Error);
  EXPECT_THROW(LiveTree(4, 0, {7}, 2), Error);
  EXPECT_THROW(LiveTree(2, 0, {0, 1}, 2), Error);
  try {
    LiveTree(4, 0, {9}, 2);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("departed rank 9"), std::string::npos);
  }
}

}  // namespace
}  // namespace grove::topo
