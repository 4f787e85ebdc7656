#pragma once
// The single-copy form of shm::reduce and shm::allreduce (docs/shm.md,
// "Single copy"): every member publishes its operand where it is; member m
// copies chunk m of every operand straight out of its owner's buffer and
// combines them in rank order, ((r0 op r1) op r2) ..., as the two-phase
// slot reduction does (reduce_chunks.hpp), so the results are the same
// bits; then it publishes its combined chunk, and the readers of the
// result copy each chunk straight out of its member's scratch buffer.
//
// Three call numbers: the operands (k), the combined chunks (k+1) and
// "consumed" (k+2). A member's operand stays valid until every member has
// entered k+1 (each has then read its chunk of every operand); its
// combined chunk until every reader of the result has entered k+2.

#include <cstddef>
#include <cstdint>

#include "grove/types.hpp"

namespace grove::shm {

class Group;
struct CallSignature;

// Publishes `operand` (bytes long) in call `operands`, combines this
// member's chunk of every member's operand, begins and publishes the next
// call with that chunk, and returns its number. The chunk is combined at
// its place in `result` (bytes long; a member that receives the result)
// unless that is where this member's own operand chunk is (in place): then,
// and without a `result`, in its scratch buffer.
uint64_t combine_own_chunk(Group& group, uint64_t operands, const CallSignature& signature,
                           const std::byte* operand, size_t bytes, Datatype type, ReduceOp op,
                           std::byte* result);

// Copies every member's combined chunk of call `results` into `out` (bytes
// long; the `result` given to combine_own_chunk, whose own chunk is then
// copied only if it was combined in scratch), waiting for each member as
// needed.
void pull_chunks(Group& group, uint64_t results, const CallSignature& signature, size_t bytes,
                 Datatype type, std::byte* out);

}  // namespace grove::shm
