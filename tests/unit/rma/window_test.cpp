// Windows in one process (MemoryWorld), through a mapping and through
// put/get/atomics: exact bytes of every operation on every datatype, the
// element-wise atomics (sub-word elements included), and the named errors.

#include <gtest/gtest.h>

#include <cstring>

#include "rma/window_core.hpp"
#include "rma/word_ops.hpp"
#include "sched/reduce.hpp"
#include "support/memory_world.hpp"
#include "support/world_group.hpp"

namespace grove::rma {
namespace {

using grove::testing::WorldGroups;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(errc_name(e.code())) + ": " + e.what();
  }
  return "no error";
}

constexpr Datatype kTypes[] = {
    Datatype::int8,   Datatype::int16,  Datatype::int32,  Datatype::int64,   Datatype::uint8,
    Datatype::uint16, Datatype::uint32, Datatype::uint64, Datatype::float32, Datatype::float64};
constexpr ReduceOp kOps[] = {ReduceOp::sum,  ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                             ReduceOp::band, ReduceOp::bor,  ReduceOp::bxor};

// Element i's bytes for value v (small integers: exact in every type).
std::vector<std::byte> element(Datatype type, int v) {
  std::vector<std::byte> out(datatype_size(type));
  auto put = [&](auto x) { std::memcpy(out.data(), &x, sizeof(x)); };
  switch (type) {
    case Datatype::int8:
      put(static_cast<int8_t>(v));
      break;
    case Datatype::int16:
      put(static_cast<int16_t>(v));
      break;
    case Datatype::int32:
      put(static_cast<int32_t>(v));
      break;
    case Datatype::int64:
      put(static_cast<int64_t>(v));
      break;
    case Datatype::uint8:
      put(static_cast<uint8_t>(v));
      break;
    case Datatype::uint16:
      put(static_cast<uint16_t>(v));
      break;
    case Datatype::uint32:
      put(static_cast<uint32_t>(v));
      break;
    case Datatype::uint64:
      put(static_cast<uint64_t>(v));
      break;
    case Datatype::float32:
      put(static_cast<float>(v));
      break;
    case Datatype::float64:
      put(static_cast<double>(v));
      break;
  }
  return out;
}

std::vector<std::byte> elements(Datatype type, const std::vector<int>& values) {
  std::vector<std::byte> out;
  for (int v : values) {
    auto e = element(type, v);
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

struct WindowRig {
  MemoryWorld world;
  WorldGroups groups;
  std::vector<std::unique_ptr<WindowCore>> windows;
  WindowRig(int n, bool mapped, Datatype type, size_t count)
      : world(n, MemoryWorld::Options{0, MemoryWorld::SendMode::eager, true, mapped}),
        groups(world) {
    windows = groups.construct_all<WindowCore>(
        [&](int r) { return std::make_unique<WindowCore>(groups.group(r), type, count); });
  }
  std::vector<std::byte> memory(int rank) {
    WindowCore& w = *windows[static_cast<size_t>(rank)];
    return {w.local(), w.local() + w.count() * datatype_size(w.type())};
  }
};

class WindowPaths : public ::testing::TestWithParam<bool> {};

// Every type: put, get, accumulate with every valid op, fetch_and_op and
// compare_and_swap on elements at odd positions (sub-word elements share
// their word with neighbours, which must stay untouched).
TEST_P(WindowPaths, EveryOperationOnEveryType) {
  for (Datatype type : kTypes) {
    SCOPED_TRACE(std::string(datatype_name(type)));
    const size_t es = datatype_size(type);
    WindowRig rig(2, GetParam(), type, 9);
    WindowCore& w = *rig.windows[0];
    const std::vector<int> start{1, 2, 3, 4, 5, 6, 7, 8, 9};
    w.put(1, 0, elements(type, start).data(), 9);
    w.flush(1);
    EXPECT_EQ(rig.memory(1), elements(type, start));
    std::vector<std::byte> got(3 * es);
    w.get(1, 5, got.data(), 3);
    EXPECT_EQ(got, elements(type, {6, 7, 8}));

    std::vector<int> expected = start;
    for (ReduceOp op : kOps) {
      if (!reduce_op_valid(op, type)) {
        EXPECT_NE(error_of([&] {
                    w.accumulate(1, 0, elements(type, {1}).data(), 1, op);
                  }).find("is not defined on"),
                  std::string::npos);
        continue;
      }
      // Elements 3 and 4 combine with 3 and 2.
      w.accumulate(1, 3, elements(type, {3, 2}).data(), 2, op);
      w.flush(1);
      for (size_t i : {size_t{3}, size_t{4}}) {
        std::vector<std::byte> a = element(type, expected[i]);
        sched::reduce_bytes(op, type, a.data(), element(type, i == 3 ? 3 : 2).data(), es);
        int back = 0;
        // Values stay small integers: read them back through the type.
        std::vector<std::byte> check(es);
        std::memcpy(check.data(), a.data(), es);
        for (int v = -300; v <= 300; ++v) {
          if (element(type, v) == check) {
            back = v;
            break;
          }
        }
        expected[i] = back;
      }
      EXPECT_EQ(rig.memory(1), elements(type, expected)) << reduce_op_name(op);
    }
    // fetch_and_op: old value back, new value stored.
    std::vector<std::byte> old(es);
    w.fetch_and_op(1, 7, element(type, 5).data(), old.data(), ReduceOp::sum);
    EXPECT_EQ(old, element(type, expected[7]));
    expected[7] += 5;
    w.fetch_and_op(1, 7, element(type, 3).data(), old.data(), ReduceOp::max);
    EXPECT_EQ(old, element(type, expected[7]));
    // compare_and_swap: a wrong guess changes nothing, a right one swaps.
    w.compare_and_swap(1, 8, element(type, 1).data(), element(type, 42).data(), old.data());
    EXPECT_EQ(old, element(type, 9));
    w.compare_and_swap(1, 8, element(type, 9).data(), element(type, 42).data(), old.data());
    EXPECT_EQ(old, element(type, 9));
    expected[8] = 42;
    w.flush_all();
    EXPECT_EQ(rig.memory(1), elements(type, expected));
    EXPECT_EQ(rig.memory(0), elements(type, std::vector<int>(9, 0))) << "rank 0's window touched";
  }
}

// Bounds, ranks and closed windows: named errors, nothing written.
TEST_P(WindowPaths, BadAccessesAreNamedAndWriteNothing) {
  WindowRig rig(3, GetParam(), Datatype::int32, 4);
  WindowCore& w = *rig.windows[1];
  const auto values = elements(Datatype::int32, {7, 7});
  EXPECT_EQ(error_of([&] { w.put(2, 3, values.data(), 2); }),
            "invalid argument: rank 1: window(int32 x 4) put to rank 2: elements [3, 5) (offset "
            "12 B, length 8 B) are outside the window of 4 elements (16 B); nothing was written");
  EXPECT_NE(error_of([&] { w.get(0, 5, nullptr, 0); }).find("elements [5, 5)"), std::string::npos);
  EXPECT_NE(error_of([&] {
              w.accumulate(3, 0, values.data(), 1, ReduceOp::sum);
            }).find("rank 3 is not in [0, 3)"),
            std::string::npos);
  std::byte old[4];
  EXPECT_NE(error_of([&] {
              w.fetch_and_op(0, 4, values.data(), old, ReduceOp::sum);
            }).find("elements [4, 5)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              w.compare_and_swap(-1, 0, values.data(), values.data(), old);
            }).find("rank -1 is not in"),
            std::string::npos);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(rig.memory(r), elements(Datatype::int32, {0, 0, 0, 0}));
  // A departed target.
  rig.groups.depart(2);
  EXPECT_EQ(error_of([&] { w.put(2, 0, values.data(), 1); }),
            "peer failed: rank 1: window(int32 x 4) put to rank 2: rank 2 departed");
}

INSTANTIATE_TEST_SUITE_P(MappedAndPut, WindowPaths, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "mapped" : "put"; });

TEST(WindowCreation, DifferentTypesOrCountsAreNamedEverywhere) {
  for (bool type_differs : {true, false}) {
    MemoryWorld world(3);
    WorldGroups groups(world);
    std::vector<std::string> errors;
    EXPECT_THROW(groups.construct_all<WindowCore>(
                     [&](int r) {
                       const bool odd = r == 1;
                       return std::make_unique<WindowCore>(
                           groups.group(r),
                           odd && type_differs ? Datatype::float32 : Datatype::int32,
                           odd && !type_differs ? 5 : 4);
                     },
                     &errors),
                 Error);
    ASSERT_EQ(errors.size(), 3u);
    const std::string other = type_differs ? "window(float32 x 4)" : "window(int32 x 5)";
    EXPECT_EQ(errors[0],
              "rank 0: window(int32 x 4): rank 1 created " + other +
                  " for this call; every rank must create its window with the same element type "
                  "and count (nothing was written)");
    EXPECT_NE(errors[1].find("rank 0 created window(int32 x 4)"), std::string::npos) << errors[1];
  }
}

TEST(WindowCreation, DepartedRankIsNamed) {
  MemoryWorld world(3);
  WorldGroups groups(world);
  groups.depart(2);
  std::vector<std::string> errors;
  EXPECT_THROW(groups.construct_all<WindowCore>(
                   [&](int r) -> std::unique_ptr<WindowCore> {
                     if (r == 2) return nullptr;  // it is gone
                     return std::make_unique<WindowCore>(groups.group(r), Datatype::int64, 8);
                   },
                   &errors),
               Error);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "rank 0: window(int64 x 8) over 3 ranks: rank 2 departed");
}

// Sub-word elements: neighbours in one word updated by compare-and-swap
// loops keep each other's updates.
TEST(WordOps, SubWordElementsShareAWord) {
  alignas(8) std::byte memory[8] = {};
  MappedWords words(memory);
  for (int round = 0; round < 100; ++round) {
    for (size_t i = 0; i < 4; ++i) {
      const int8_t one = 1;
      combine(words, i, Datatype::int8, ReduceOp::sum, reinterpret_cast<const std::byte*>(&one),
              nullptr);
    }
  }
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(static_cast<int8_t>(memory[i]), 100);
  const WordSpot spot = word_spot(6, Datatype::int16);
  EXPECT_EQ(spot.word_offset, 4u);
  EXPECT_EQ(spot.width, 4);
  EXPECT_EQ(spot.shift, 2);
  RmaAtomicOp op{};
  EXPECT_TRUE(native_op(ReduceOp::bxor, Datatype::uint32, &op));
  EXPECT_EQ(op, RmaAtomicOp::bxor);
  EXPECT_FALSE(native_op(ReduceOp::sum, Datatype::int16, &op));
  EXPECT_FALSE(native_op(ReduceOp::sum, Datatype::float64, &op));
  EXPECT_FALSE(native_op(ReduceOp::max, Datatype::int64, &op));
}

}  // namespace
}  // namespace grove::rma
