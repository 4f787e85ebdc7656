// Barrier on shared memory: every member publishes that it entered the call
// and waits until every other member has too.

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {

bool barrier(Group* group) {
  if (group == nullptr) return false;
  barrier(*group);
  return true;
}

void barrier(Group& group) {
  const CallSignature signature{coll::Collective::barrier, -1, 0};
  const uint64_t call = group.begin();
  group.publish(call, signature);
  group.await_all(call, signature);
}

}  // namespace grove::shm
