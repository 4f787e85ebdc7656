#pragma once
// A fence on every rank of a MemoryWorld, for protocol tests with
// departures at chosen points. Each rank's engine talks through a
// TapTransport that records every active message it sends (peer, kind,
// topology, generation, tree version) and can cut the rank off after a
// chosen number of sends: the rank "dies" at exactly that message step.
//
// The test plays the launcher: kill() departs a rank in the world and
// hands the FailureNotice to the ranks the test chooses (every survivor, or
// only the root so that the view must travel the root's relay).

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "runtime/fence_engine.hpp"
#include "support/memory_world.hpp"
#include "transport/forwarding.hpp"

namespace grove::testing {

// A fence configuration with these radices (rollup_radix, release_radix,
// low_radix_release).
inline runtime::FenceConfig fence_config(int routing, int release, bool low = true) {
  runtime::FenceConfig c;
  c.routing_radix = routing;
  c.release_radix = release;
  c.low_radix_release = low;
  return c;
}

// The communicator context every FenceWorld engine runs under.
inline constexpr uint32_t kFenceWorldContext = 7;

// A release message's header under `c` (kind, topology, radices, context,
// generation); the caller sets the key, total, offset and payload.
runtime::FenceMessage release_header(const runtime::FenceConfig& c, uint64_t generation);

struct SentMessage {
  int from = -1;
  int to = -1;
  runtime::FenceKind kind = runtime::FenceKind::rollup;
  tag::Topology topology = tag::Topology::routing;
  uint64_t generation = 0;
  uint64_t tree_version = 0;
  bool retired = false;  // ack: "retired"
  // release / release_up: the segment [offset, offset + length) of `total`
  uint64_t offset = 0, length = 0, total = 0;
};

class TapTransport final : public ForwardingTransport {
 public:
  TapTransport(Transport& inner, std::vector<SentMessage>& log)
      : ForwardingTransport(inner), log_(log) {}
  // After `sends` more active messages this rank sends nothing at all.
  void cut_after(size_t sends) { budget_ = sends; }
  bool cut() const { return budget_ && *budget_ == 0; }
  // Called with every message this rank sends, as it is sent.
  void observe(std::function<void(const SentMessage&)> observer) {
    observer_ = std::move(observer);
  }

  std::string name() const override { return "tap"; }
  void am_send(int peer, uint16_t id, std::span<const std::byte> payload) override;

 private:
  std::vector<SentMessage>& log_;
  std::optional<size_t> budget_;
  std::function<void(const SentMessage&)> observer_;
};

class FenceWorld {
 public:
  FenceWorld(int size, runtime::FenceConfig config, MemoryWorld::Options options = {});
  // Each rank's own configuration (to test peers that disagree).
  FenceWorld(int size, const std::function<runtime::FenceConfig(int rank)>& config,
             MemoryWorld::Options options = {});
  ~FenceWorld();

  int size() const { return world_.size(); }
  runtime::FenceEngine& engine(int rank) { return *engines_[static_cast<size_t>(rank)]; }
  TapTransport& tap(int rank) { return *taps_[static_cast<size_t>(rank)]; }
  MemoryWorld& world() { return world_; }
  const std::vector<SentMessage>& log() const { return log_; }
  bool alive(int rank) const { return dead_.count(rank) == 0; }

  // The blob rank `rank` contributes to generation `generation`: sizes vary
  // (0 .. ~300 bytes) so the encoding of variable blobs is exercised.
  static Blob blob(int rank, uint64_t generation);
  // Every rank's blob is `bytes` long from now on (contents as blob()).
  void set_blob_bytes(size_t bytes) { blob_bytes_ = bytes; }
  Blob contribution(int rank, uint64_t generation) const;

  // Whether `rank` holds the result of `generation` (collected or not).
  bool got(int rank, uint64_t generation);

  // Every living rank starts its next fence with blob(rank, generation).
  void start_all();
  void start(int rank);

  // How the "launcher" tells survivors of a cut rank that drive() departs:
  // everyone at once (default); only the first living rank, so the view
  // must travel the root's relay; or the first living rank plus each other
  // survivor with probability 1/2 - each after a random 0..max_delay rounds.
  enum class Notices { all, root_only, random };
  void set_notices(Notices policy, uint64_t seed, size_t max_delay_rounds);

  // Departs `rank` and hands notice (rank, next version) to the living
  // ranks in `told` (all survivors when empty; {rank} tells nobody).
  void kill(int rank, const std::vector<int>& told = {});
  // Hands the last notices to ranks that were not told yet.
  void tell(int rank);

  // Progresses every living rank (and polls its engine) until `pred` holds.
  // Ranks whose tap is cut are departed as soon as they are seen cut, with a
  // notice to every survivor unless `quiet_cut`. Throws on a stall or after
  // `max_rounds`; the message lists each engine's pending work.
  void drive(const std::function<bool()>& pred, size_t max_rounds = 200000, bool quiet_cut = false);
  // Until every living rank delivered every generation it started.
  void drive_all(size_t max_rounds = 200000);

  // Checks every living rank's result of `generation` against the blobs:
  // identical everywhere, every non-departed entry exact, departed ones
  // empty and truly dead. Returns "" or the first difference.
  std::string verify(uint64_t generation);

  std::string describe();

 private:
  // Departs cut ranks, polls every engine, collects delivered results.
  void sweep(bool quiet_cut);
  void schedule_notices(const FailureNotice& notice);
  MemoryWorld world_;
  std::vector<SentMessage> log_;
  std::vector<std::unique_ptr<TapTransport>> taps_;
  std::vector<std::unique_ptr<runtime::FenceEngine>> engines_;
  std::vector<uint64_t> started_;  // fences started per rank
  std::vector<std::vector<std::optional<runtime::FenceResult>>> results_;
  std::set<int> dead_;
  std::optional<size_t> blob_bytes_;
  std::vector<FailureNotice> notices_;  // every notice issued, in order
  Notices policy_ = Notices::all;
  std::mt19937_64 rng_{1};
  size_t max_delay_ = 0;
  size_t round_ = 0;
  struct Pending {
    size_t due;
    int rank;
    FailureNotice notice;
  };
  std::vector<Pending> pending_;
};

// Sends `m` from `from` to `to` through the raw transport (not from's
// engine): bytes another process could have sent.
void inject(FenceWorld& w, int from, int to, const runtime::FenceMessage& m);

}  // namespace grove::testing
