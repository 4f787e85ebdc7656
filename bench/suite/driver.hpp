#pragma once
// One collective's hooks for the benchmark: buffers for a size, starting one
// call, and checking the result bytes. The runner times; drivers only do.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "grove/comm.hpp"

namespace grove::bench {

class Driver {
 public:
  virtual ~Driver() = default;
  virtual std::string name() const = 0;
  // The parameter that forces this collective's algorithm ("bcast_algorithm").
  virtual std::string algorithm_param() const = 0;
  // What `--algo all` expands to on `size` ranks.
  virtual std::vector<std::string> algorithms(int size) const = 0;
  // Bytes per rank that a cell of `bytes` moves; drivers round to their
  // element size (a reduction of 4-byte ints cannot move 7 bytes).
  virtual size_t round_bytes(size_t bytes) const { return bytes; }
  // Allocates buffers for `bytes` and fills them with a pattern that
  // depends on rank, position and `generation`.
  virtual void prepare(Comm& comm, size_t bytes, uint32_t generation) = 0;
  virtual Request start(Comm& comm) = 0;
  // One call in the blocking form: what the suite times and verifies, as the
  // peers time their libraries' blocking collectives. (Blocking calls may
  // take paths the non-blocking form cannot, e.g. grove's shared-memory
  // collectives.)
  virtual void call(Comm& comm) { start(comm).wait(); }
  // Throws grove::Error naming the first wrong byte (rank, offset, values).
  virtual void verify(Comm& comm) = 0;
  // Times a driver measures itself (seconds, one per call), reported on rank
  // 0 as extra rows of the cell: (label, samples). The runner clears them
  // before the timed loop and reads them after it. The fence reports its
  // release coverage this way.
  virtual void clear_side_samples() {}
  virtual std::vector<std::pair<std::string, std::vector<double>>> side_samples(Comm&) {
    return {};
  }
};

// Every collective the suite knows, in table order.
std::vector<std::unique_ptr<Driver>> all_drivers();

// A deterministic byte pattern, so every rank can compute what another
// rank's buffer must hold.
inline std::byte pattern_byte(int rank, size_t offset, uint32_t generation) {
  uint64_t x = (static_cast<uint64_t>(rank) << 40) ^ (offset * 0x9e3779b97f4a7c15ull) ^
               (static_cast<uint64_t>(generation) * 0xbf58476d1ce4e5b9ull);
  x ^= x >> 29;
  return static_cast<std::byte>(x & 0xff);
}

}  // namespace grove::bench
