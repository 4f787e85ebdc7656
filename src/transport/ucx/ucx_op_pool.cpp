#include "transport/ucx/ucx_op_pool.hpp"

#include <new>

namespace grove::ucx {
namespace {

constexpr size_t kAlign = 64;  // a cache line; UCP requests hold atomics
constexpr size_t kOpsPerChunk = 64;

size_t round_up(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

OpPool::OpPool(size_t ucp_prefix)
    : prefix_(round_up(ucp_prefix)), stride_(prefix_ + round_up(sizeof(Op))) {}

OpPool::~OpPool() {
  for (std::byte* chunk : chunks_)
    ::operator delete[](chunk, std::align_val_t{kAlign});
}

void OpPool::grow() {
  auto* chunk =
      static_cast<std::byte*>(::operator new[](stride_* kOpsPerChunk, std::align_val_t{kAlign}));
  chunks_.push_back(chunk);
  free_.reserve(chunks_.size() * kOpsPerChunk);
  for (size_t i = kOpsPerChunk; i-- > 0;) {
    free_.push_back(new (chunk + i * stride_ + prefix_) Op{});
  }
}

Op* OpPool::get() {
  if (free_.empty()) grow();
  Op* op = free_.back();
  free_.pop_back();
  static_cast<OpHeader&>(*op) = OpHeader{};
  return op;
}

void OpPool::put(Op* op) {
  free_.push_back(op);
}

}  // namespace grove::ucx
