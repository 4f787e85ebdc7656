// Benchmark drivers for scatter, gather, allgather, allgatherv, alltoall,
// alltoallv, reduce, allreduce and reduce_scatter. A cell's size is the
// bytes of one rank's block (scatter, gather, allgather(v), reduce_scatter),
// of one rank's block to each peer (alltoall(v)), or of the whole vector
// (reduce, allreduce; rounded to 4-byte int32 elements, summed).

#include <cstring>

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "grove/error.hpp"
#include "suite/driver.hpp"

namespace grove::bench {
namespace {

using Bytes = std::vector<std::byte>;

Bytes pattern_block(int rank, size_t length, uint32_t generation, size_t start = 0) {
  Bytes out(length);
  for (size_t i = 0; i < length; ++i)
    out[i] = pattern_byte(rank, start + i, generation);
  return out;
}

void expect(const char* collective, int rank, const Bytes& got, const Bytes& want) {
  if (got.size() == want.size() &&
      (got.empty() || std::memcmp(got.data(), want.data(), got.size()) == 0)) {
    return;
  }
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i])
    ++i;
  throw Error(Errc::internal,
              fmt::format("bench {}: rank {} byte {} is wrong ({} bytes, expected {})", collective,
                          rank, i, got.size(), want.size()));
}

// The int32 element i of `rank`'s vector, and the sum over ranks (wrapping).
int32_t element(int rank, size_t i, uint32_t generation) {
  return static_cast<int32_t>(static_cast<uint32_t>(pattern_byte(rank, i, generation)) *
                              (static_cast<uint32_t>(rank) + 1));
}

Bytes int32_vector(int rank, size_t count, uint32_t generation, size_t first = 0) {
  Bytes out(count * 4);
  for (size_t i = 0; i < count; ++i) {
    const int32_t v = element(rank, first + i, generation);
    std::memcpy(out.data() + i * 4, &v, 4);
  }
  return out;
}

Bytes int32_sum(int size, size_t count, uint32_t generation, size_t first = 0) {
  Bytes out(count * 4);
  for (size_t i = 0; i < count; ++i) {
    uint32_t sum = 0;
    for (int r = 0; r < size; ++r)
      sum += static_cast<uint32_t>(element(r, first + i, generation));
    std::memcpy(out.data() + i * 4, &sum, 4);
  }
  return out;
}

// Common parts: the algorithm list from the collective's registry.
class CollDriver : public Driver {
 public:
  explicit CollDriver(std::string collective) : collective_(std::move(collective)) {}
  std::string name() const override { return collective_; }
  std::string algorithm_param() const override { return collective_ + "_algorithm"; }
  std::vector<std::string> algorithms(int size) const override {
    return coll::algorithm_examples_for(collective_, size, true);
  }

 protected:
  std::string collective_;
  uint32_t generation_ = 0;
  size_t bytes_ = 0;
  Bytes send_, recv_;
};

class ScatterDriver : public CollDriver {
 public:
  ScatterDriver() : CollDriver("scatter") {}
  void prepare(Comm& comm, size_t bytes, uint32_t generation) override {
    generation_ = generation;
    bytes_ = bytes;
    send_ = comm.rank() == 0
                ? pattern_block(0, bytes * static_cast<size_t>(comm.size()), generation)
                : Bytes{};
    recv_.assign(bytes, std::byte{0});
  }
  Request start(Comm& comm) override { return comm.iscatter(send_, recv_, 0); }
  void call(Comm& comm) override { comm.scatter(send_, recv_, 0); }
  void verify(Comm& comm) override {
    expect("scatter", comm.rank(), recv_,
           pattern_block(0, bytes_, generation_, bytes_ * static_cast<size_t>(comm.rank())));
  }
};

class GatherDriver : public CollDriver {
 public:
  GatherDriver() : CollDriver("gather") {}
  void prepare(Comm& comm, size_t bytes, uint32_t generation) override {
    generation_ = generation;
    bytes_ = bytes;
    send_ = pattern_block(comm.rank(), bytes, generation);
    recv_.assign(comm.rank() == 0 ? bytes * static_cast<size_t>(comm.size()) : 0, std::byte{0});
  }
  Request start(Comm& comm) override { return comm.igather(send_, recv_, 0); }
  void call(Comm& comm) override { comm.gather(send_, recv_, 0); }
  void verify(Comm& comm) override {
    if (comm.rank() != 0) return;
    Bytes want;
    for (int r = 0; r < comm.size(); ++r) {
      const Bytes b = pattern_block(r, bytes_, generation_);
      want.insert(want.end(), b.begin(), b.end());
    }
    expect("gather", comm.rank(), recv_, want);
  }
};

class AllgatherDriver : public CollDriver {
 public:
  explicit AllgatherDriver(bool v) : CollDriver(v ? "allgatherv" : "allgather"), v_(v) {}
  void prepare(Comm& comm, size_t bytes, uint32_t generation) override {
    generation_ = generation;
    bytes_ = bytes;
    send_ = pattern_block(comm.rank(), bytes, generation);
    recv_.assign(bytes * static_cast<size_t>(comm.size()), std::byte{0});
    counts_.assign(static_cast<size_t>(comm.size()), bytes);
  }
  Request start(Comm& comm) override {
    return v_ ? comm.iallgatherv(send_, recv_, counts_) : comm.iallgather(send_, recv_);
  }
  void call(Comm& comm) override {
    if (v_) {
      comm.allgatherv(send_, recv_, counts_);
    } else {
      comm.allgather(send_, recv_);
    }
  }
  void verify(Comm& comm) override {
    Bytes want;
    for (int r = 0; r < comm.size(); ++r) {
      const Bytes b = pattern_block(r, bytes_, generation_);
      want.insert(want.end(), b.begin(), b.end());
    }
    expect(collective_.c_str(), comm.rank(), recv_, want);
  }

 private:
  bool v_;
  std::vector<size_t> counts_;
};

class AlltoallDriver : public CollDriver {
 public:
  explicit AlltoallDriver(bool v) : CollDriver(v ? "alltoallv" : "alltoall"), v_(v) {}
  void prepare(Comm& comm, size_t bytes, uint32_t generation) override {
    generation_ = generation;
    bytes_ = bytes;
    send_.clear();
    for (int j = 0; j < comm.size(); ++j) {
      const Bytes b = pattern_block(comm.rank() * 4096 + j, bytes, generation);
      send_.insert(send_.end(), b.begin(), b.end());
    }
    recv_.assign(send_.size(), std::byte{0});
    counts_.assign(static_cast<size_t>(comm.size()), bytes);
  }
  Request start(Comm& comm) override {
    return v_ ? comm.ialltoallv(send_, recv_, {counts_, {}, counts_, {}})
              : comm.ialltoall(send_, recv_);
  }
  void call(Comm& comm) override {
    if (v_) {
      comm.alltoallv(send_, recv_, {counts_, {}, counts_, {}});
    } else {
      comm.alltoall(send_, recv_);
    }
  }
  void verify(Comm& comm) override {
    Bytes want;
    for (int i = 0; i < comm.size(); ++i) {
      const Bytes b = pattern_block(i * 4096 + comm.rank(), bytes_, generation_);
      want.insert(want.end(), b.begin(), b.end());
    }
    expect(collective_.c_str(), comm.rank(), recv_, want);
  }

 private:
  bool v_;
  std::vector<size_t> counts_;
};

// reduce (to rank 0), allreduce and reduce_scatter of int32 sums.
class ReductionDriver : public CollDriver {
 public:
  explicit ReductionDriver(std::string collective) : CollDriver(std::move(collective)) {}
  size_t round_bytes(size_t bytes) const override { return bytes / 4 * 4; }
  void prepare(Comm& comm, size_t bytes, uint32_t generation) override {
    generation_ = generation;
    count_ = bytes / 4;
    const bool scatter = collective_ == "reduce_scatter";
    send_ = int32_vector(comm.rank(), scatter ? count_ * static_cast<size_t>(comm.size()) : count_,
                         generation);
    const bool has_output = collective_ != "reduce" || comm.rank() == 0;
    recv_.assign(has_output ? count_ * 4 : 0, std::byte{0});
  }
  Request start(Comm& comm) override {
    if (collective_ == "reduce")
      return comm.ireduce(send_, recv_, Datatype::int32, ReduceOp::sum, 0);
    if (collective_ == "allreduce")
      return comm.iallreduce(send_, recv_, Datatype::int32, ReduceOp::sum);
    return comm.ireduce_scatter(send_, recv_, Datatype::int32, ReduceOp::sum);
  }
  void call(Comm& comm) override {
    if (collective_ == "reduce") {
      comm.reduce(send_, recv_, Datatype::int32, ReduceOp::sum, 0);
    } else if (collective_ == "allreduce") {
      comm.allreduce(send_, recv_, Datatype::int32, ReduceOp::sum);
    } else {
      comm.reduce_scatter(send_, recv_, Datatype::int32, ReduceOp::sum);
    }
  }
  void verify(Comm& comm) override {
    if (collective_ == "reduce" && comm.rank() != 0) return;
    const size_t first =
        collective_ == "reduce_scatter" ? count_ * static_cast<size_t>(comm.rank()) : 0;
    expect(collective_.c_str(), comm.rank(), recv_,
           int32_sum(comm.size(), count_, generation_, first));
  }

 private:
  size_t count_ = 0;
};

}  // namespace

std::vector<std::unique_ptr<Driver>> make_collective_drivers() {
  std::vector<std::unique_ptr<Driver>> out;
  out.push_back(std::make_unique<ScatterDriver>());
  out.push_back(std::make_unique<GatherDriver>());
  out.push_back(std::make_unique<AllgatherDriver>(false));
  out.push_back(std::make_unique<AllgatherDriver>(true));
  out.push_back(std::make_unique<AlltoallDriver>(false));
  out.push_back(std::make_unique<AlltoallDriver>(true));
  out.push_back(std::make_unique<ReductionDriver>("reduce"));
  out.push_back(std::make_unique<ReductionDriver>("allreduce"));
  out.push_back(std::make_unique<ReductionDriver>("reduce_scatter"));
  return out;
}

}  // namespace grove::bench
