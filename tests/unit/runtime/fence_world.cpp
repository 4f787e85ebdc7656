#include "unit/runtime/fence_world.hpp"

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::testing {

void TapTransport::am_send(int peer, uint16_t id, std::span<const std::byte> payload) {
  if (budget_) {
    if (*budget_ == 0) return;
    --*budget_;
  }
  const runtime::FenceMessage m = runtime::decode_fence_message(payload, rank());
  log_.push_back({rank(), peer, m.header.kind, m.header.topology, m.header.generation,
                  m.header.tree_version, m.retired, m.offset, runtime::segment_bytes(m).size(),
                  m.total});
  if (observer_) observer_(log_.back());
  inner().am_send(peer, id, payload);
}

FenceWorld::FenceWorld(int size, runtime::FenceConfig config, MemoryWorld::Options options)
    : FenceWorld(
          size, [config](int) { return config; }, options) {}

FenceWorld::FenceWorld(int size, const std::function<runtime::FenceConfig(int)>& config,
                       MemoryWorld::Options options)
    : world_(size, options),
      started_(static_cast<size_t>(size)),
      results_(static_cast<size_t>(size)) {
  for (int r = 0; r < size; ++r) {
    taps_.push_back(std::make_unique<TapTransport>(world_.transport(r), log_));
    engines_.push_back(
        std::make_unique<runtime::FenceEngine>(*taps_.back(), kFenceWorldContext, config(r)));
  }
}

FenceWorld::~FenceWorld() = default;

Blob FenceWorld::blob(int rank, uint64_t generation) {
  const size_t length = (static_cast<size_t>(rank) * 37 + generation * 11) % 301;
  Blob out(length);
  for (size_t i = 0; i < length; ++i)
    out[i] = static_cast<std::byte>((rank * 131 + static_cast<int>(generation) * 17 + i) & 0xff);
  return out;
}

Blob FenceWorld::contribution(int rank, uint64_t generation) const {
  if (!blob_bytes_) return blob(rank, generation);
  Blob out(*blob_bytes_);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>((rank * 131 + static_cast<int>(generation) * 17 + i) & 0xff);
  return out;
}

bool FenceWorld::got(int rank, uint64_t generation) {
  const auto& mine = results_[static_cast<size_t>(rank)];
  if (generation < mine.size() && mine[generation]) return true;
  return engine(rank).delivered(generation);
}

void FenceWorld::start(int rank) {
  const uint64_t g = started_[static_cast<size_t>(rank)]++;
  const Blob mine = contribution(rank, g);
  const uint64_t got = engine(rank).start(mine);
  if (got != g)
    throw Error(Errc::internal, fmt::format("rank {}: generation {} != {}", rank, got, g));
  results_[static_cast<size_t>(rank)].emplace_back();
}

void FenceWorld::start_all() {
  for (int r = 0; r < size(); ++r)
    if (alive(r)) start(r);
}

void FenceWorld::kill(int rank, const std::vector<int>& told) {
  if (!alive(rank)) return;
  dead_.insert(rank);
  world_.depart(rank);
  notices_.push_back({rank, notices_.size() + 1, "killed by the test"});
  if (told.empty()) {
    for (int r = 0; r < size(); ++r)
      if (alive(r)) engine(r).on_notice(notices_.back());
  } else {
    for (int r : told)
      if (alive(r)) engine(r).on_notice(notices_.back());
  }
}

void FenceWorld::set_notices(Notices policy, uint64_t seed, size_t max_delay_rounds) {
  policy_ = policy;
  rng_.seed(seed);
  max_delay_ = max_delay_rounds;
}

void FenceWorld::tell(int rank) {
  for (const FailureNotice& notice : notices_)
    engine(rank).on_notice(notice);
}

void FenceWorld::schedule_notices(const FailureNotice& notice) {
  int first = -1;
  for (int r = 0; r < size(); ++r) {
    if (!alive(r)) continue;
    if (first < 0) first = r;
    const bool told =
        policy_ == Notices::all || r == first || (policy_ == Notices::random && rng_() % 2 == 0);
    if (!told) continue;
    const size_t delay = max_delay_ > 0 ? rng_() % (max_delay_ + 1) : 0;
    if (r == first) {
      // The root hears everything, in order (a new root may have missed
      // notices its dead predecessor never relayed).
      for (const FailureNotice& earlier : notices_)
        pending_.push_back({round_ + delay, r, earlier});
    } else {
      pending_.push_back({round_ + delay, r, notice});
    }
  }
}

void FenceWorld::sweep(bool quiet_cut) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->due <= round_ && alive(it->rank)) engine(it->rank).on_notice(it->notice);
    it = it->due <= round_ || !alive(it->rank) ? pending_.erase(it) : it + 1;
  }
  for (int r = 0; r < size(); ++r) {
    if (!alive(r)) continue;
    if (tap(r).cut()) {
      if (quiet_cut || policy_ != Notices::all || max_delay_ > 0) {
        kill(r, {r});  // nobody yet
        if (!quiet_cut) schedule_notices(notices_.back());
      } else {
        kill(r);
      }
      continue;
    }
    engine(r).poll();
    engine(r).check_error();
    auto& mine = results_[static_cast<size_t>(r)];
    for (uint64_t g = 0; g < mine.size(); ++g)
      if (!mine[g] && engine(r).delivered(g)) mine[g] = engine(r).take_result(g);
  }
}

void FenceWorld::drive(const std::function<bool()>& pred, size_t max_rounds, bool quiet_cut) {
  for (size_t round = 0;; ++round, ++round_) {
    sweep(quiet_cut);
    if (pred()) return;
    if (round == max_rounds) {
      throw Error(Errc::timeout,
                  fmt::format("fence world: not done after {} rounds\n{}", max_rounds, describe()));
    }
    const bool active = world_.progress_all();
    if (!active && world_.quiescent() && pending_.empty()) {
      // Engines may have work that only a poll starts (a deferred fence).
      sweep(quiet_cut);
      if (pred()) return;
      if (world_.quiescent()) {
        throw Error(Errc::timeout, fmt::format("fence world: stalled\n{}", describe()));
      }
    }
  }
}

void FenceWorld::drive_all(size_t max_rounds) {
  drive(
      [this] {
        for (int r = 0; r < size(); ++r) {
          if (!alive(r)) continue;
          for (const auto& result : results_[static_cast<size_t>(r)])
            if (!result) return false;
        }
        return true;
      },
      max_rounds);
}

std::string FenceWorld::verify(uint64_t generation) {
  const runtime::FenceResult* first = nullptr;
  int first_rank = -1;
  for (int r = 0; r < size(); ++r) {
    if (!alive(r)) continue;
    const auto& mine = results_[static_cast<size_t>(r)];
    if (generation >= mine.size() || !mine[generation])
      return fmt::format("rank {} has no result of generation {}", r, generation);
    const runtime::FenceResult& result = *mine[generation];
    if (!first) {
      first = &result;
      first_rank = r;
    } else if (result.blobs != first->blobs || result.departed != first->departed) {
      return fmt::format("ranks {} and {} hold different results of generation {}", first_rank, r,
                         generation);
    }
  }
  if (!first) return "";
  for (int r = 0; r < size(); ++r) {
    const bool listed =
        std::find(first->departed.begin(), first->departed.end(), r) != first->departed.end();
    const Blob& got = first->blobs[static_cast<size_t>(r)];
    if (listed) {
      if (alive(r)) return fmt::format("living rank {} is listed departed", r);
      if (!got.empty()) return fmt::format("departed rank {} has a non-empty entry", r);
    } else if (got != contribution(r, generation)) {
      return fmt::format("entry of rank {} differs ({} bytes)", r, got.size());
    }
  }
  return "";
}

std::string FenceWorld::describe() {
  std::string out;
  for (int r = 0; r < size(); ++r) {
    if (!alive(r)) {
      out += fmt::format("rank {}: dead\n", r);
      continue;
    }
    out += fmt::format("rank {}: {}\n", r, engine(r).describe_pending());
  }
  return out + world_.describe();
}

runtime::FenceMessage release_header(const runtime::FenceConfig& c, uint64_t generation) {
  runtime::FenceMessage m;
  m.header.kind = runtime::FenceKind::release;
  m.header.topology = c.release_topology();
  m.header.low_radix_release = c.low_radix_release;
  m.header.routing_radix = static_cast<uint32_t>(c.routing_radix);
  m.header.release_radix = static_cast<uint32_t>(c.release_radix);
  m.header.context = kFenceWorldContext;
  m.header.generation = generation;
  return m;
}

void inject(FenceWorld& w, int from, int to, const runtime::FenceMessage& m) {
  w.world().transport(from).am_send(to, runtime::fence_am_id(m.header.topology, kFenceWorldContext),
                                    runtime::encode_fence_message(m));
}

}  // namespace grove::testing
