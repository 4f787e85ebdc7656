#pragma once
// The two-phase reduction of shm::reduce and shm::allreduce for larger
// vectors: after every member has put its operand in its slot (call
// `operands`), member m combines chunk m of all operands in rank order into
// its slot of the next call and publishes that call. Each member then
// reads N chunks of results instead of N whole operands, and the combining
// work is shared (a reduce-scatter in shared memory).

#include <cstddef>
#include <cstdint>
#include <span>

#include "grove/types.hpp"

namespace grove::shm {

class Group;
struct CallSignature;

// The parameter shm_split_reduction_bytes: from this many bytes a reduction
// takes two phases; below, one is cheaper (every reader combines all
// operands itself; the second phase costs a round of waiting).
size_t split_reduction_bytes();

// Byte range [first, first + length) of member m's chunk: elements split
// as evenly as possible, in member order.
struct Chunk {
  size_t first = 0;
  size_t length = 0;
};
Chunk reduction_chunk(size_t bytes, size_t element, int members, int member);

// Waits for every member's operand of call `operands`, combines this
// member's chunk into its slot of call `operands + 1` (which it begins and
// publishes) at the chunk's own offset, and returns that call's number.
uint64_t reduce_own_chunk(Group& group, uint64_t operands, const CallSignature& signature,
                          size_t bytes, Datatype type, ReduceOp op);

// Copies every member's combined chunk of call `results` into `out` (bytes
// long), waiting for each member as needed.
void gather_chunks(Group& group, uint64_t results, const CallSignature& signature, size_t bytes,
                   Datatype type, std::byte* out);

}  // namespace grove::shm
