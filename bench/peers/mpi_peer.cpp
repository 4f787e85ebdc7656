// The MPI peer of `grove bench`: times the MPI library's own blocking
// collectives with the suite's cells, cadence and timing method. Built twice,
// against Open MPI (grove-peer-openmpi) and MPICH (grove-peer-mpich); the
// TSV library column is GROVE_PEER_LIBRARY unless --library says otherwise.
//
// Run it as any MPI program: mpirun.openmpi -n 4 grove-peer-openmpi --coll bcast

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "peer_common.hpp"

#ifndef GROVE_PEER_LIBRARY
#error "GROVE_PEER_LIBRARY must name the MPI library (openmpi, mpich)"
#endif

namespace grove::bench::peer {
namespace {

class MpiJob : public Job {
 public:
  MpiJob() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  bool agree(bool rank0_says) override {
    unsigned char flag = rank0_says ? 1 : 0;
    MPI_Bcast(&flag, 1, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
    return flag != 0;
  }
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override {
    const int n = static_cast<int>(mine.size());
    std::vector<double> all(rank_ == 0 ? mine.size() * static_cast<size_t>(size_) : 1);
    MPI_Gather(mine.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    std::vector<std::vector<double>> out;
    if (rank_ != 0) return out;
    for (int r = 0; r < size_; ++r) {
      const auto first = all.begin() + static_cast<ptrdiff_t>(mine.size()) * r;
      out.emplace_back(first, first + n);
    }
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
};

// One collective with its buffers. Byte collectives use MPI_BYTE; reductions
// use MPI_FLOAT with MPI_SUM (cells.hpp). Buffers are never empty, so no
// null pointer reaches MPI even for 0-byte cells.
class MpiCollective : public Collective {
 public:
  MpiCollective(Kind kind, std::string name, int rank, int size)
      : kind_(kind), name_(std::move(name)), rank_(rank), size_(size) {}

  void prepare(size_t bytes, uint32_t generation) override {
    block_ = bytes;
    generation_ = generation;
    const size_t n = static_cast<size_t>(size_);
    const size_t elements = bytes / sizeof(float);
    send_.assign(1, std::byte{0});
    recv_.assign(1, std::byte{0});
    fsend_.assign(1, 0.0f);
    frecv_.assign(1, 0.0f);
    switch (kind_) {
      case Kind::bcast:
        recv_.assign(std::max<size_t>(bytes, 1), std::byte{0});
        if (rank_ == 0) fill_pattern(recv_, bytes, 0);
        break;
      case Kind::scatter:
        recv_.assign(std::max<size_t>(bytes, 1), std::byte{0});
        if (rank_ == 0) {
          send_.resize(std::max<size_t>(n * bytes, 1));
          fill_pattern(send_, n * bytes, 0);
        }
        break;
      case Kind::gather:
      case Kind::allgather:
      case Kind::allgatherv:
        send_.resize(std::max<size_t>(bytes, 1));
        fill_pattern(send_, bytes, 0);
        recv_.assign(std::max<size_t>(n * bytes, 1), std::byte{0});
        break;
      case Kind::alltoall:
      case Kind::alltoallv:
        send_.resize(std::max<size_t>(n * bytes, 1));
        fill_pattern(send_, n * bytes, 0);
        recv_.assign(std::max<size_t>(n * bytes, 1), std::byte{0});
        break;
      case Kind::barrier:
        break;
      case Kind::allreduce:
      case Kind::reduce:
        fill_floats(fsend_, elements);
        frecv_.assign(std::max<size_t>(elements, 1), 0.0f);
        break;
      case Kind::reduce_scatter:
        fill_floats(fsend_, n * elements);
        frecv_.assign(std::max<size_t>(elements, 1), 0.0f);
        break;
    }
    counts_.assign(n, static_cast<int>(bytes));
    displs_.resize(n);
    for (size_t s = 0; s < n; ++s)
      displs_[s] = static_cast<int>(s * bytes);
  }

  void call() override {
    const int b = static_cast<int>(block_);
    const int f = static_cast<int>(block_ / sizeof(float));
    MPI_Comm w = MPI_COMM_WORLD;
    switch (kind_) {
      case Kind::bcast:
        MPI_Bcast(recv_.data(), b, MPI_BYTE, 0, w);
        break;
      case Kind::scatter:
        MPI_Scatter(send_.data(), b, MPI_BYTE, recv_.data(), b, MPI_BYTE, 0, w);
        break;
      case Kind::gather:
        MPI_Gather(send_.data(), b, MPI_BYTE, recv_.data(), b, MPI_BYTE, 0, w);
        break;
      case Kind::allgather:
        MPI_Allgather(send_.data(), b, MPI_BYTE, recv_.data(), b, MPI_BYTE, w);
        break;
      case Kind::alltoall:
        MPI_Alltoall(send_.data(), b, MPI_BYTE, recv_.data(), b, MPI_BYTE, w);
        break;
      case Kind::barrier:
        MPI_Barrier(w);
        break;
      case Kind::allreduce:
        MPI_Allreduce(fsend_.data(), frecv_.data(), f, MPI_FLOAT, MPI_SUM, w);
        break;
      case Kind::reduce:
        MPI_Reduce(fsend_.data(), frecv_.data(), f, MPI_FLOAT, MPI_SUM, 0, w);
        break;
      case Kind::reduce_scatter:
        MPI_Reduce_scatter_block(fsend_.data(), frecv_.data(), f, MPI_FLOAT, MPI_SUM, w);
        break;
      case Kind::allgatherv:
        MPI_Allgatherv(send_.data(), b, MPI_BYTE, recv_.data(), counts_.data(), displs_.data(),
                       MPI_BYTE, w);
        break;
      case Kind::alltoallv:
        MPI_Alltoallv(send_.data(), counts_.data(), displs_.data(), MPI_BYTE, recv_.data(),
                      counts_.data(), displs_.data(), MPI_BYTE, w);
        break;
    }
  }

  void verify() override {
    verify_result(kind_, name_, rank_, size_, block_, recv_, frecv_, generation_);
  }

 private:
  void fill_pattern(std::vector<std::byte>& buffer, size_t bytes, size_t offset) const {
    for (size_t i = 0; i < bytes; ++i)
      buffer[i] = cells::pattern(rank_, offset + i, generation_);
  }
  void fill_floats(std::vector<float>& buffer, size_t elements) const {
    buffer.assign(std::max<size_t>(elements, 1), 0.0f);
    for (size_t i = 0; i < elements; ++i)
      buffer[i] = cells::pattern_float(rank_, i, generation_);
  }

  Kind kind_;
  std::string name_;
  int rank_, size_;
  size_t block_ = 0;
  uint32_t generation_ = 0;
  std::vector<std::byte> send_, recv_;
  std::vector<float> fsend_, frecv_;
  std::vector<int> counts_, displs_;
};

std::unique_ptr<Collective> make_collective(Job& job, const cells::Spec& spec) {
  const std::optional<Kind> kind = kind_named(spec.name);
  if (!kind) return nullptr;
  return std::make_unique<MpiCollective>(*kind, std::string(spec.name), job.rank(), job.size());
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(length));
  version = version.substr(0, version.find_first_of(",\n"));
  // MPICH says "MPICH Version:\t4.0.2": no tabs in a settings line.
  std::replace(version.begin(), version.end(), '\t', ' ');
  return version;
}

}  // namespace
}  // namespace grove::bench::peer

int main(int argc, char** argv) {
  using namespace grove::bench::peer;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  try {
    const Options options = parse_options(argc, argv, GROVE_PEER_LIBRARY);
    MpiJob job;
    run(job, make_collective, options, library_version() + ", blocking MPI collectives");
  } catch (const grove::Error& e) {
    std::fprintf(stderr, "grove-peer-%s (rank %d): %s: %s\n", GROVE_PEER_LIBRARY, rank,
                 std::string(grove::errc_name(e.code())).c_str(), e.what());
    status = e.code() == grove::Errc::usage ? 2 : 1;
    // A usage error is the same on every rank; anything else may be one
    // rank's alone, and its peers would wait for it forever.
    if (status != 2) MPI_Abort(MPI_COMM_WORLD, status);
  }
  MPI_Finalize();
  return status;
}
