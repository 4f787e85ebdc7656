#include "coll/shm/reduce_chunks.hpp"

#include "core/params.hpp"

#include <cstring>

#include "coll/shm/group.hpp"
#include "sched/reduce.hpp"

namespace grove::shm {
namespace {

const params::BytesParam shm_split_reduction_bytes{
    "shm_split_reduction_bytes", 4096, 0, uint64_t{1} << 30,
    "shared-memory reduce/allreduce: vectors of at least this many bytes are combined in two "
    "phases (each rank one chunk, then all gather the chunks); smaller ones by every reader"};

}  // namespace

size_t split_reduction_bytes() {
  return shm_split_reduction_bytes.get();
}

Chunk reduction_chunk(size_t bytes, size_t element, int members, int member) {
  const size_t count = bytes / element;
  const auto n = static_cast<size_t>(members);
  const auto m = static_cast<size_t>(member);
  const size_t lo = count * m / n;
  const size_t hi = count * (m + 1) / n;
  return {lo * element, (hi - lo) * element};
}

uint64_t reduce_own_chunk(Group& group, uint64_t operands, const CallSignature& signature,
                          size_t bytes, Datatype type, ReduceOp op) {
  group.await_all(operands, signature);
  // Every member has entered `operands`, so every reader of the slot buffer
  // the next call uses (last written in operands - 1 or before) is done
  // with it: no guard wait.
  const uint64_t results = group.begin();
  group.claim_slot(results);
  const Chunk chunk = reduction_chunk(bytes, datatype_size(type), group.size(), group.rank());
  std::byte* out = group.own_slot(results) + chunk.first;
  if (chunk.length > 0) {
    std::memcpy(out, group.slot(0, operands) + chunk.first, chunk.length);
    for (int m = 1; m < group.size(); ++m)
      sched::reduce_bytes(op, type, out, group.slot(m, operands) + chunk.first, chunk.length);
  }
  group.publish(results, signature);
  return results;
}

void gather_chunks(Group& group, uint64_t results, const CallSignature& signature, size_t bytes,
                   Datatype type, std::byte* out) {
  for (int m = 0; m < group.size(); ++m) {
    const Chunk chunk = reduction_chunk(bytes, datatype_size(type), group.size(), m);
    if (m != group.rank()) group.await_member(m, results, signature);
    std::memcpy(out + chunk.first, group.slot(m, results) + chunk.first, chunk.length);
  }
}

}  // namespace grove::shm
