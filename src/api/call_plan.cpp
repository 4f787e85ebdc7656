#include "api/call_plan.hpp"

#include <algorithm>

#include "core/params.hpp"

namespace grove::detail {
namespace {

const params::IntParam schedule_cache_size{
    "schedule_cache_size", 256, 1, 1 << 20,
    "Schedules kept per communicator, keyed by the call's shape; least recently used goes first"};

// One step of a multiplicative hash over 64-bit words (the shape is a few
// words; no byte-wise loop on the hot path).
uint64_t mix(uint64_t h, uint64_t value) {
  h = (h ^ value) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

}  // namespace

bool CallShape::operator==(const CallShape& other) const {
  if (collective != other.collective || in_place != other.in_place || dtype != other.dtype ||
      op != other.op || root != other.root || count != other.count) {
    return false;
  }
  for (size_t i = 0; i < lists.size(); ++i) {
    const auto& a = lists[i];
    const auto& b = other.lists[i];
    if (a.size() != b.size()) return false;
    if (!a.empty() && !std::equal(a.begin(), a.end(), b.begin())) return false;
  }
  return true;
}

size_t CallShapeHash::operator()(const CallShape& s) const {
  uint64_t h = 0;
  h = mix(h, static_cast<uint64_t>(s.collective) | uint64_t{s.in_place} << 8 |
                 uint64_t{static_cast<uint8_t>(s.dtype)} << 16 |
                 uint64_t{static_cast<uint8_t>(s.op)} << 24 |
                 uint64_t{static_cast<uint32_t>(s.root)} << 32);
  h = mix(h, s.count);
  for (const auto& list : s.lists) {
    if (list.empty()) continue;
    h = mix(h, list.size());
    for (size_t v : list)
      h = mix(h, v);
  }
  return static_cast<size_t>(h);
}

const std::shared_ptr<const CallPlan>* PlanCache::find(const CallShape& shape) {
  // A repeated call finds its plan among the few most recent without
  // hashing: a loop of one call finds it in front, and a loop that
  // alternates a few calls (a barrier and a collective, say; the barrier has
  // a plan too) one or two entries behind. Shapes of different collectives
  // differ in their first word, so a miss here costs a compare or two.
  auto recent = lru_.begin();
  for (int i = 0; i < kRecentScan && recent != lru_.end(); ++i, ++recent) {
    if ((*recent)->shape == shape) {
      ++hits_;
      if (i > 0) {
        lru_.splice(lru_.begin(), lru_, recent);
        refresh_front();
      }
      return &lru_.front();
    }
  }
  auto it = entries_.find(shape);
  if (it == entries_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  refresh_front();
  return &*it->second;
}

const std::shared_ptr<const CallPlan>& PlanCache::insert(std::shared_ptr<const CallPlan> plan) {
  // Erase a stale plan of this shape first: its key's lists point into it.
  if (auto it = entries_.find(plan->shape); it != entries_.end()) {
    const Lru::iterator stale = it->second;
    entries_.erase(it);
    lru_.erase(stale);
  }
  lru_.push_front(std::move(plan));
  entries_.emplace(lru_.front()->shape, lru_.begin());
  while (entries_.size() > static_cast<size_t>(schedule_cache_size.get())) {
    entries_.erase(lru_.back()->shape);
    lru_.pop_back();
  }
  refresh_front();
  return lru_.front();
}

void PlanCache::refresh_front() {
  front_ = Front{};
  if (lru_.empty()) return;
  const CallPlan& plan = *lru_.front();
  if (plan.shape.has_lists()) return;
  front_.head = plan.shape.head();
  front_.count = plan.shape.count;
  front_.generation = plan.params_generation;
  front_.blocking = plan.blocking;
  front_.shm_route = plan.shm_route;
  front_.plan = &lru_.front();
}

}  // namespace grove::detail
