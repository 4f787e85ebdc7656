#pragma once
// The plan of a collective call (its algorithm, wire stamp and schedule),
// cached per communicator by the call's shape, so a repeated call resolves
// nothing, formats nothing and allocates nothing.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "coll/collective.hpp"
#include "coll/shm/route.hpp"
#include "grove/types.hpp"
#include "sched/executor.hpp"
#include "sched/schedule.hpp"

namespace grove::detail {

using Collective = coll::Collective;

// Everything except the buffers' addresses that decides a call's plan on one
// communicator: equal shapes, under the same parameters, get the same plan.
// Fields a collective does not use keep their defaults.
struct CallShape {
  Collective collective = Collective::other;
  bool in_place = false;
  Datatype dtype = Datatype::uint8;
  ReduceOp op = ReduceOp::sum;
  int32_t root = -1;
  uint64_t count = 0;  // bytes or elements, as the collective's front end defines
  // allgatherv, alltoallv: their count and offset lists, compared by value.
  // The caller's lists during a lookup; the plan's own copies in the cache.
  std::array<std::span<const size_t>, 4> lists{};

  bool operator==(const CallShape& other) const;

  // Every field but the count and the lists in one word (see
  // PlanCache::Front): collective, in_place, dtype, op and root, the first
  // eight bytes (no padding among them: the static_asserts below), read
  // as one load.
  uint64_t head() const {
    uint64_t word;
    std::memcpy(&word, this, sizeof word);
    return word;
  }
  bool has_lists() const {
    return !lists[0].empty() || !lists[1].empty() || !lists[2].empty() || !lists[3].empty();
  }
};

static_assert(std::is_standard_layout_v<CallShape> && std::is_trivially_copyable_v<CallShape>);
static_assert(offsetof(CallShape, collective) == 0 && offsetof(CallShape, in_place) == 1 &&
              offsetof(CallShape, dtype) == 2 && offsetof(CallShape, op) == 3 &&
              offsetof(CallShape, root) == 4 && offsetof(CallShape, count) == 8);

struct CallShapeHash {
  size_t operator()(const CallShape& shape) const;
};

// One resolved call shape. Immutable once made; shared by the cache and by
// every Operation of that shape.
struct CallPlan {
  CallShape shape;  // its lists point into `list_storage`
  std::array<std::vector<size_t>, 4> list_storage;
  // How a blocking call of this shape runs: selection chose the
  // shared-memory engine, the hierarchical algorithm, or the schedule below.
  enum class Blocking : uint8_t { schedule, shm, hier };
  Blocking blocking = Blocking::schedule;
  // When `blocking` is shm: the segment's route for this shape
  // (shm::Group::route), decided with the plan, so a repeated call reads no
  // parameter to decide it. It depends only on the shape, the parameters
  // and what the members agreed when the segment was made, as the plan
  // does.
  shm::Route shm_route = shm::Route::none;
  // Why selection refused the call, per form (a forced algorithm that cannot
  // run it); empty when it did not. Thrown when a call of that form is made.
  std::string blocking_error;
  std::string schedule_error;
  // The schedule path: the choice for a non-blocking call (and for a
  // blocking one when `blocking` says schedule).
  std::string algorithm;  // canonical text ("binomial", "knomial:4"), for errors
  uint8_t stamp = 0;      // (collective, algorithm, parameters) on the wire
  std::shared_ptr<const sched::Schedule> schedule;
  // The call's name in errors ("bcast(root 0, 1 B, binomial)"), made only
  // when an error is reported; `buffers` are the failing call's. Null: the
  // name is `fixed_name`.
  std::string (*describe)(const CallPlan& plan, const sched::Buffers& buffers) = nullptr;
  std::string fixed_name;
  uint64_t params_generation = 0;  // params::generation() it was resolved under

  std::string name(const sched::Buffers& buffers) const {
    return describe != nullptr ? describe(*this, buffers) : fixed_name;
  }
};

// Plans by shape, bounded (parameter schedule_cache_size); least recently
// used goes first.
class PlanCache {
 public:
  // The most recent plan's key and what a blocking call of its shape does,
  // in one place: a repeated blocking call on shared memory reads only
  // this (hot()), not the list, the plan or the parameters; one that is
  // refused or runs a schedule goes on to the plan. Shapes with lists are never
  // here (their key is not a few words); a plan whose shape has lists
  // leaves `head` at kNoHead.
  struct Front {
    // No shape has it: its collective byte would be 255.
    static constexpr uint64_t kNoHead = ~uint64_t{0};
    uint64_t head = kNoHead;  // CallShape::head()
    uint64_t count = 0;
    uint64_t generation = 0;  // the plan's params_generation
    CallPlan::Blocking blocking = CallPlan::Blocking::schedule;
    shm::Route shm_route = shm::Route::none;
    const std::shared_ptr<const CallPlan>* plan = nullptr;
  };

  // The front entry if it is `shape`'s plan, resolved under `generation`
  // (counted as a hit), else null: then find() and insert() as usual.
  // Inline: this is all a repeated blocking call of one shape looks up.
  const Front* hot(const CallShape& shape, uint64_t generation) {
    if (front_.head != shape.head() || front_.count != shape.count ||
        front_.generation != generation || shape.has_lists()) {
      return nullptr;
    }
    ++hits_;
    return &front_;
  }
  // The plan for `shape`, or null. A hit makes it the most recently used.
  const std::shared_ptr<const CallPlan>* find(const CallShape& shape);
  // Adds `plan` (its shape's lists must point into its own storage),
  // replacing a plan of the same shape, and evicts beyond the bound.
  const std::shared_ptr<const CallPlan>& insert(std::shared_ptr<const CallPlan> plan);
  size_t size() const { return entries_.size(); }
  // The plan found or inserted last (null when none): what the last call on
  // the communicator ran. `grove explain`'s test compares it with the
  // explanation.
  const CallPlan* most_recent() const { return lru_.empty() ? nullptr : lru_.front().get(); }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  // Entries at the front of `lru_` compared by shape before the hash lookup.
  static constexpr int kRecentScan = 4;
  using Lru = std::list<std::shared_ptr<const CallPlan>>;
  // Sets front_ from lru_.front(); called whenever that changes.
  void refresh_front();

  Front front_;  // first: it is what a repeated call reads
  Lru lru_;
  // Invariant: every key is the shape of the plan its iterator names (so its
  // lists stay valid exactly as long as the entry).
  std::unordered_map<CallShape, Lru::iterator, CallShapeHash> entries_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace grove::detail
