// Barrier on shared memory, in one of two forms (parameter shm_barrier):
//
// - flags: every member publishes that it entered the call and waits until
//   every other member has too. One hop: each member leaves as soon as it
//   sees the last arrival.
// - release: every member publishes its arrival; member 0 waits for all of
//   them and then publishes a second call number, the release, which the
//   others wait for. Two hops, and member 0 leaves first.
//
// Why two forms: on a host with more members than cores, whichever member
// runs first after a flags barrier starts its next call while the others
// may not run for a while; when that next call is rooted at member 0 (a
// bcast, a scatter) and member 0 is not running, the members that are spin
// and yield until it gets a core. After a release barrier no member leaves
// before member 0 has, and member 0 leaves first, so its next call's data is
// most likely published by the time the others look for it. With a core per
// member the flags form's single hop is the quicker (docs/shm.md,
// "Barrier").
//
// The release form's second number costs member 0 nothing in its next
// call: the other members enter it together with their arrival, not when
// they see it. A writer of call k waits until every member has entered
// call k-1 (group.hpp); had the others entered the release only once
// released, member 0's next call would wait for each of them to get a core
// and see the release, which is what the form is to avoid. Entering it
// early keeps the invariants: the barrier reads no data, so a member that
// entered the release has finished everything the number promises.
//
// Every member must use the same form: the release form takes two call
// numbers, the flags form one. `auto` decides from the group's size and the
// host's online cores, which every member of the group sees alike.

#include <unistd.h>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"
#include "core/params.hpp"

namespace grove::shm {
namespace {

const params::ChoiceParam shm_barrier{
    "shm_barrier",
    "auto",
    {"auto", "flags", "release"},
    "the shared-memory barrier: flags (every member waits for every other's arrival; one hop), "
    "release (member 0 gathers the arrivals, then releases the others; two hops, member 0 "
    "leaves first), or auto (release on a host with more members than online cores, else "
    "flags); every rank must use the same"};

long online_cores() {
  static const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores;
}

}  // namespace

bool release_barrier_for(std::string_view choice, int members, long cores) {
  if (choice == "release") return true;
  if (choice == "flags") return false;
  return cores > 0 && members > cores;
}

bool barrier(Group* group) {
  if (group == nullptr) return false;
  barrier(*group);
  return true;
}

void barrier(Group& group) {
  const CallSignature signature{coll::Collective::barrier, -1, 0};
  const uint64_t call = group.begin();
  group.publish(call, signature);
  if (!release_barrier_for(shm_barrier.get(), group.size(), online_cores())) {
    group.await_all(call, signature);
    return;
  }
  const uint64_t release = group.begin();
  if (group.rank() == 0) {
    group.await_all(call, signature);
    group.publish(release, signature);
  } else {
    group.publish(release, signature);
    group.await_member(0, release, signature);
  }
}

}  // namespace grove::shm
