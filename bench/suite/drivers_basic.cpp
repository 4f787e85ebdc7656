// Benchmark drivers for bcast and barrier.

#include <fmt/format.h>

#include "coll/algorithm.hpp"

#include "grove/error.hpp"
#include "suite/driver.hpp"

namespace grove::bench {
namespace {

class BcastDriver : public Driver {
 public:
  std::string name() const override { return "bcast"; }
  std::string algorithm_param() const override { return "bcast_algorithm"; }
  // Every registered algorithm (the registry's examples), shm included.
  std::vector<std::string> algorithms(int size) const override {
    return coll::algorithm_examples_for("bcast", size, true);
  }
  void prepare(Comm& comm, size_t bytes, uint32_t generation) override {
    generation_ = generation;
    buffer_.assign(bytes, std::byte{0});
    if (comm.rank() == root_) {
      for (size_t i = 0; i < bytes; ++i)
        buffer_[i] = pattern_byte(root_, i, generation);
    }
  }
  Request start(Comm& comm) override { return comm.ibcast(std::span(buffer_), root_); }
  void call(Comm& comm) override { comm.bcast(std::span(buffer_), root_); }
  void verify(Comm& comm) override {
    for (size_t i = 0; i < buffer_.size(); ++i) {
      if (buffer_[i] != pattern_byte(root_, i, generation_)) {
        throw Error(Errc::internal,
                    fmt::format("bench bcast: rank {} byte {} is {:#04x}, expected {:#04x}",
                                comm.rank(), i, static_cast<int>(buffer_[i]),
                                static_cast<int>(pattern_byte(root_, i, generation_))));
      }
    }
  }

 private:
  int root_ = 0;
  uint32_t generation_ = 0;
  std::vector<std::byte> buffer_;
};

class BarrierDriver : public Driver {
 public:
  std::string name() const override { return "barrier"; }
  std::string algorithm_param() const override { return "barrier_algorithm"; }
  std::vector<std::string> algorithms(int size) const override {
    return coll::algorithm_examples_for("barrier", size, true);
  }
  size_t round_bytes(size_t) const override { return 0; }
  void prepare(Comm&, size_t, uint32_t) override {}
  Request start(Comm& comm) override { return comm.ibarrier(); }
  void call(Comm& comm) override { comm.barrier(); }
  void verify(Comm&) override {}
};

}  // namespace

std::unique_ptr<Driver> make_bcast_driver() {
  return std::make_unique<BcastDriver>();
}
std::unique_ptr<Driver> make_barrier_driver() {
  return std::make_unique<BarrierDriver>();
}

}  // namespace grove::bench
