// Barrier on shared memory, in one of two forms (parameter shm_barrier):
//
// - flags: every member publishes that it entered the call and waits until
//   every other member has too. One hop: each member leaves as soon as it
//   sees the last arrival.
// - release: every member publishes its arrival; member 0 waits for all of
//   them and then publishes a second call number, the release, which the
//   others wait for. Two hops, and member 0 leaves first.
//
// Why two forms: the call after a barrier. After a flags barrier whichever
// member saw the last arrival first leaves first; when the next call is
// rooted at member 0 (a bcast, a scatter) the others then wait for member 0
// to publish, and where members outnumber cores, for it to get a core.
// After a release barrier member 0 leaves first, so its next call's data is
// most likely published by the time the others look for it. The trade, at
// 2 ranks on 2 cores (docs/shm.md, "Barrier"): the barrier alone takes
// 0.67 us against flags' 0.41, a bcast or scatter of 1-16 B after it 0.33
// against 0.45 (and the others' time in it halves), an allgather after it
// up to 1.1-1.26x longer. `auto` takes the release form: with flags, small
// bcasts and scatters measured 1.2-1.7x MPICH's per-rank mean with a
// barrier before each call, with release at or below it; a code whose
// barriers precede symmetric calls may prefer flags.
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
// numbers, the flags form one. `auto` is the release form.

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
    "leaves first, so a rooted call after the barrier finds its data sooner), or auto "
    "(release); every rank must use the same"};

}  // namespace

bool release_barrier_for(std::string_view choice) {
  return choice != "flags";
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
  if (!release_barrier_for(shm_barrier.get())) {
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
