// The benchmark driver for the reliable fence (Comm::fence). A cell's size is
// one rank's blob; the release carries every rank's blob (N x size plus
// framing). "Algorithms" are the release topologies of fence_algorithm:
// routing (the release travels the routing tree) and release:K (the
// derived release tree at radix K).
//
// Besides the whole fence, the driver reports the release coverage of each
// call from fence_timing (the root stamps when it starts the release, every
// rank when it holds it; the root learns the latest from the acks): a row
// "<algorithm>/release_coverage(payload=B)" per cell, paired with the
// release's size on the wire, so releases of different sizes are never
// averaged together (docs/fence.md).

#include <fmt/format.h>

#include "api/comm_state.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "runtime/fence_engine.hpp"
#include "suite/driver.hpp"

namespace grove::bench {
namespace {

class FenceDriver : public Driver {
 public:
  std::string name() const override { return "fence"; }
  std::string algorithm_param() const override { return "fence_algorithm"; }
  std::vector<std::string> algorithms(int) const override {
    return {"routing", "release:2", "release:3", "release:4", "release:8"};
  }
  void prepare(Comm& comm, size_t bytes, uint32_t generation) override {
    generation_ = generation;
    bytes_ = bytes;
    mine_.resize(bytes);
    for (size_t i = 0; i < bytes; ++i)
      mine_[i] = pattern_byte(comm.rank(), i, generation);
  }
  // Blocking: the call is the whole fence, so the runner's start-to-wait
  // time is the fence's (the returned Request is already complete).
  Request start(Comm& comm) override {
    harvest(comm);
    result_ = comm.ifence(mine_).wait();
    const auto& engine = comm.state().fence;
    if (engine && comm.rank() == 0) pending_.push_back(engine->generations_started() - 1);
    return Request();
  }
  void verify(Comm& comm) override {
    for (int r = 0; r < comm.size(); ++r) {
      const auto& got = result_.at(static_cast<size_t>(r));
      bool right = got.size() == bytes_;
      for (size_t i = 0; right && i < got.size(); ++i)
        right = got[i] == pattern_byte(r, i, generation_);
      if (!right) {
        throw Error(Errc::internal, fmt::format("bench fence: rank {}: the entry of rank {} is "
                                                "wrong ({} bytes, expected {})",
                                                comm.rank(), r, got.size(), bytes_));
      }
    }
  }
  void clear_side_samples() override {
    pending_.clear();
    coverage_.clear();
  }
  std::vector<std::pair<std::string, std::vector<double>>> side_samples(Comm& comm) override {
    harvest(comm);
    return {{fmt::format("release_coverage(payload={})", payload_), coverage_}};
  }

 private:
  // Coverage is known at the root once every rank acked, usually by the
  // next call; the engine keeps the stamps of its last 64 fences.
  void harvest(Comm& comm) {
    const auto& engine = comm.state().fence;
    if (!engine) return;
    std::vector<uint64_t> still;
    for (uint64_t g : pending_) {
      const auto t = engine->timing(g);
      if (t && t->covered > 0) {
        coverage_.push_back(t->covered - t->started);
        payload_ = t->payload_bytes;
      } else if (engine->generations_started() - g < 60) {
        still.push_back(g);
      }
    }
    pending_ = std::move(still);
  }

  // Stamps for the coverage rows, on for the whole benchmark run.
  params::ScopedSet timing_{"fence_timing", "true"};
  uint32_t generation_ = 0;
  size_t bytes_ = 0;
  std::vector<std::byte> mine_;
  std::vector<std::vector<std::byte>> result_;
  std::vector<uint64_t> pending_;
  std::vector<double> coverage_;
  size_t payload_ = 0;
};

}  // namespace

std::unique_ptr<Driver> make_fence_driver() {
  return std::make_unique<FenceDriver>();
}

}  // namespace grove::bench
