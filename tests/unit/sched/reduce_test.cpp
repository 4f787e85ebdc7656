#include "sched/reduce.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "grove/error.hpp"
#include "support/reference_reduce.hpp"

namespace grove::sched {
namespace {

// Reference: one element at a time, wrap-around integer arithmetic done in
// uint64_t so it is defined for every width and signedness.
template <class T>
T random_value(std::mt19937_64& rng) {
  if constexpr (std::is_integral_v<T>) {
    // Full range, so sums and products overflow and the wrap is exercised.
    return static_cast<T>(rng());
  } else {
    std::uniform_real_distribution<T> dist(-4, 4);
    return dist(rng);
  }
}

template <class T>
void check_all_ops(size_t count, size_t misalign) {
  const Datatype type = datatype_of<T>();
  std::mt19937_64 rng(count * 31 + misalign);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::band,
                      ReduceOp::bor, ReduceOp::bxor}) {
    if (!reduce_op_valid(op, type)) continue;
    std::vector<T> left(count), right(count);
    for (size_t i = 0; i < count; ++i) {
      left[i] = random_value<T>(rng);
      right[i] = random_value<T>(rng);
    }
    // misalign 0: the aligned path (typed loads); 1: the staged fallback
    // for elements wider than a byte. The kernel must not assume alignment.
    std::vector<std::byte> inout(count * sizeof(T) + misalign);
    std::vector<std::byte> in(count * sizeof(T) + misalign);
    // count 0: the vectors' data() may be null, which memcpy must not get
    // even for 0 bytes.
    if (count > 0) {
      std::memcpy(inout.data() + misalign, left.data(), count * sizeof(T));
      std::memcpy(in.data() + misalign, right.data(), count * sizeof(T));
    }
    reduce_bytes(op, type, inout.data() + misalign, in.data() + misalign, count * sizeof(T));
    for (size_t i = 0; i < count; ++i) {
      T got;
      std::memcpy(&got, inout.data() + misalign + i * sizeof(T), sizeof(T));
      const T want = testing::reference_reduce(op, left[i], right[i]);
      // Exact: the kernel applies the same single operation per element.
      ASSERT_EQ(std::memcmp(&got, &want, sizeof(T)), 0)
          << reduce_op_name(op) << " on " << datatype_name(type) << " element " << i << " of "
          << count;
    }
  }
}

template <class T>
void check_type() {
  // Counts around the kernel's internal block (2 KiB) and tiny ones.
  for (size_t count : {size_t{0}, size_t{1}, size_t{3}, size_t{17}, 2048 / sizeof(T) - 1,
                       2048 / sizeof(T), 2048 / sizeof(T) + 1, size_t{5000}}) {
    check_all_ops<T>(count, 0);
    check_all_ops<T>(count, 1);
  }
}

TEST(ReduceKernel, Int8) {
  check_type<int8_t>();
}
TEST(ReduceKernel, Int16) {
  check_type<int16_t>();
}
TEST(ReduceKernel, Int32) {
  check_type<int32_t>();
}
TEST(ReduceKernel, Int64) {
  check_type<int64_t>();
}
TEST(ReduceKernel, Uint8) {
  check_type<uint8_t>();
}
TEST(ReduceKernel, Uint16) {
  check_type<uint16_t>();
}
TEST(ReduceKernel, Uint32) {
  check_type<uint32_t>();
}
TEST(ReduceKernel, Uint64) {
  check_type<uint64_t>();
}
TEST(ReduceKernel, Float32) {
  check_type<float>();
}
TEST(ReduceKernel, Float64) {
  check_type<double>();
}

TEST(ReduceKernel, WrapsSignedOverflow) {
  int32_t a[2] = {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()};
  const int32_t b[2] = {1, -1};
  reduce_bytes(ReduceOp::sum, Datatype::int32, reinterpret_cast<std::byte*>(a),
               reinterpret_cast<const std::byte*>(b), sizeof(a));
  EXPECT_EQ(a[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(a[1], std::numeric_limits<int32_t>::max());
  uint16_t c = 65535;
  const uint16_t d = 65535;
  reduce_bytes(ReduceOp::prod, Datatype::uint16, reinterpret_cast<std::byte*>(&c),
               reinterpret_cast<const std::byte*>(&d), sizeof(c));
  EXPECT_EQ(c, 1);  // 65535^2 = 2^32 - 2^17 + 1, which is 1 mod 2^16
}

TEST(ReduceKernel, InPlaceAliasIsAllowed) {
  double a[3] = {1.5, -2, 3};
  reduce_bytes(ReduceOp::sum, Datatype::float64, reinterpret_cast<std::byte*>(a),
               reinterpret_cast<const std::byte*>(a), sizeof(a));
  EXPECT_EQ(a[0], 3.0);
  EXPECT_EQ(a[1], -4.0);
  EXPECT_EQ(a[2], 6.0);
}

TEST(ReduceKernel, RejectsBitwiseOnFloatAndPartialElements) {
  float f[2] = {1, 2};
  auto* bytes = reinterpret_cast<std::byte*>(f);
  try {
    reduce_bytes(ReduceOp::bxor, Datatype::float32, bytes, bytes, sizeof(f));
    FAIL() << "bitwise op on float accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("bxor"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos);
  }
  try {
    reduce_bytes(ReduceOp::sum, Datatype::float32, bytes, bytes, 6);
    FAIL() << "partial element accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("6 bytes"), std::string::npos);
  }
}

}  // namespace
}  // namespace grove::sched
