#include "tuning/cross_copy.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "coll/shm/cma.hpp"
#include "core/timeouts.hpp"
#include "grove/error.hpp"
#include "sched/wait_loop.hpp"

namespace grove::tuning {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kWarmup = 4;    // rounds per size not kept (page faults, first misses)
constexpr int kRounds = 101;  // rounds per size kept
constexpr size_t kControlBytes = 4096;

// Rounds finished, one counter per rank on its own cache line. Rank 0
// advances `written` after it copied in (or published its buffer), rank 1
// `read` after it copied out; round k of rank 0 starts once `read` is k - 1.
struct alignas(64) Flag {
  std::atomic<uint64_t> rounds{0};
};
struct Control {
  Flag written;
  Flag read;
};
static_assert(sizeof(Control) <= kControlBytes);

// What each rank says after a step that may fail, so both go on alike.
struct Status {
  int32_t ok = 0;
  char why[124] = {};
};
static_assert(std::is_trivially_copyable_v<Status>);

Status status_of(const std::string& error) {
  Status s;
  s.ok = error.empty() ? 1 : 0;
  std::memcpy(s.why, error.data(), std::min(error.size(), sizeof(s.why) - 1));
  return s;
}

// Every rank's status; "" when all are ok, else the first failure's cause.
std::string agree(Comm& pair, const std::string& error) {
  const Status mine = status_of(error);
  std::vector<Status> all(2);
  pair.allgather(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(all)));
  for (size_t r = 0; r < all.size(); ++r) {
    all[r].why[sizeof(all[r].why) - 1] = '\0';  // bytes from another process
    if (all[r].ok == 0) return fmt::format("rank {}: {}", r, all[r].why);
  }
  return "";
}

// A MAP_SHARED mapping of one memfd: rank 0 creates it, rank 1 opens the
// same file through /proc/PID/fd/FD. Nothing has a name, so nothing is left
// behind whatever happens to the job.
struct Mapping {
  int fd = -1;
  void* base = MAP_FAILED;
  size_t length = 0;
  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (base != MAP_FAILED) ::munmap(base, length);
    if (fd >= 0) ::close(fd);
  }
  std::string map(int file) {
    base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
    return base == MAP_FAILED ? fmt::format("mmap of {} B: {}", length, std::strerror(errno)) : "";
  }
  Control& control() const { return *static_cast<Control*>(base); }
  std::byte* buffer(uint64_t round, size_t each) const {
    return static_cast<std::byte*>(base) + kControlBytes + (round % 2) * each;
  }
};

std::string create(Mapping& m) {
  m.fd = ::memfd_create("grove-probe-copies", MFD_CLOEXEC);
  if (m.fd < 0) return fmt::format("memfd_create: {}", std::strerror(errno));
  if (::ftruncate(m.fd, static_cast<off_t>(m.length)) != 0)
    return fmt::format("sizing the shared buffer to {} B: {}", m.length, std::strerror(errno));
  if (std::string error = m.map(m.fd); !error.empty()) return error;
  new (m.base) Control;
  // Every page now, not on first touch inside a timed copy.
  std::memset(static_cast<std::byte*>(m.base) + kControlBytes, 0, m.length - kControlBytes);
  return "";
}

std::string open_peer(Mapping& m, int32_t pid, int32_t fd) {
  const std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  const int file = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (file < 0) return fmt::format("open {}: {}", path, std::strerror(errno));
  std::string error = m.map(file);
  ::close(file);
  return error;
}

double clock_cost_us() {
  double best = 1e9;
  for (int run = 0; run < 5; ++run) {
    const auto t0 = Clock::now();
    auto last = t0;
    for (int i = 0; i < 1000; ++i)
      last = Clock::now();
    best = std::min(best, std::chrono::duration<double, std::micro>(last - t0).count() / 1000);
  }
  return best;
}

// Polls until `flag` reaches `rounds`: spinning as the engine's waits do,
// then, when the other rank takes long (a large copy, or a rank without its
// own core), yielding the core between polls. Errc::timeout after
// timeout_ms.
void await(const Flag& flag, uint64_t rounds, const char* what) {
  constexpr uint32_t kSpinPolls = 4096;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms());
  for (uint32_t polls = 1; flag.rounds.load(std::memory_order_acquire) < rounds; ++polls) {
    if (polls < kSpinPolls)
      sched::cpu_relax();
    else
      std::this_thread::yield();
    if (polls % kSpinPolls == 0 && Clock::now() > deadline) {
      throw Error(Errc::timeout,
                  fmt::format("grove probe: copies between ranks: timed out after {} ms waiting "
                              "for the other rank {} (round {})",
                              timeout_ms(), what, rounds));
    }
  }
}

double median(std::vector<double> samples) {
  const auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  return *mid;
}

std::vector<uint64_t> sizes_to(uint64_t max_bytes) {
  std::vector<uint64_t> out;
  for (uint64_t m = 1; m <= max_bytes; m *= 4)
    out.push_back(m);
  return out;
}

class Rounds {
 public:
  Rounds(const Mapping& shared, size_t each) : shared_(shared), each_(each) {}

  // Rank 0: copies `bytes` of `from` into the round's shared buffer; rank 1:
  // copies them out into `to`. The median per rank, us.
  double slot_copies(std::span<const std::byte> from, std::span<std::byte> to, size_t bytes,
                     bool writer) {
    std::vector<double> samples;
    for (int i = 0; i < kWarmup + kRounds; ++i) {
      const uint64_t k = ++round_;
      std::byte* slot = shared_.buffer(k, each_);
      if (writer) {
        await(control().read, k - 1, "to copy the last round out");
        const auto t0 = Clock::now();
        std::memcpy(slot, from.data(), bytes);
        keep(i, t0, samples);
        control().written.rounds.store(k, std::memory_order_release);
      } else {
        await(control().written, k, "to copy a round in");
        const auto t0 = Clock::now();
        std::memcpy(to.data(), slot, bytes);
        keep(i, t0, samples);
        sink_ ^= static_cast<unsigned>(to[bytes - 1]);
        control().read.rounds.store(k, std::memory_order_release);
      }
    }
    return median(std::move(samples));
  }

  // Rank 0 publishes (its buffer is `owner` in its address space), rank 1
  // reads `bytes` of it with process_vm_readv. The reader's median, us;
  // `error` gets the first failed read's cause.
  double peer_reads(int32_t owner_pid, uint64_t owner, std::span<std::byte> to, size_t bytes,
                    bool writer, std::string& error) {
    std::vector<double> samples;
    for (int i = 0; i < kWarmup + kRounds; ++i) {
      const uint64_t k = ++round_;
      if (writer) {
        await(control().read, k - 1, "to read the last round");
        control().written.rounds.store(k, std::memory_order_release);
        continue;
      }
      await(control().written, k, "to publish a round");
      const auto t0 = Clock::now();
      const shm::PeerRead read = shm::read_peer(owner_pid, owner, to.first(bytes));
      keep(i, t0, samples);
      if (read.error != 0 && error.empty()) {
        error = fmt::format("process_vm_readv of {} B: {} after {} B", bytes,
                            shm::read_error_text(read.error), read.done);
      }
      control().read.rounds.store(k, std::memory_order_release);
    }
    return writer ? 0 : median(std::move(samples));
  }

  // Rank 0: waits until rank 1 has finished every round (so rank 0's
  // buffers outlive every read of them).
  void drain() { await(control().read, round_, "to finish"); }

  void set_clock_cost(double us) { clock_us_ = us; }

 private:
  Control& control() const { return shared_.control(); }
  void keep(int i, Clock::time_point t0, std::vector<double>& samples) const {
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (i >= kWarmup) samples.push_back(std::max(0.0, us - clock_us_));
  }

  const Mapping& shared_;
  size_t each_;
  uint64_t round_ = 0;
  double clock_us_ = 0;
  unsigned sink_ = 0;  // keeps the reader's copies observable
};

}  // namespace

CrossCopies measure_cross_copies(Comm& pair, uint64_t max_bytes) {
  if (pair.size() != 2)
    throw Error(Errc::internal, "copies between ranks are measured on a pair of ranks");
  CrossCopies out;
  const bool writer = pair.rank() == 0;
  const std::vector<uint64_t> sizes = sizes_to(max_bytes);

  // Rank 0's pid, the memfd's number and the owner buffer's address.
  struct Setup {
    int32_t pid = 0;
    int32_t fd = -1;
    uint64_t owner = 0;
  } setup;
  std::vector<std::byte> own(max_bytes, std::byte{1});  // rank 0: source, owner buffer
  std::vector<std::byte> to(max_bytes, std::byte{0});   // rank 1: destination
  Mapping shared;
  shared.length = kControlBytes + 2 * max_bytes;
  std::string error;
  if (writer) {
    error = create(shared);
    setup = {static_cast<int32_t>(::getpid()), shared.fd, reinterpret_cast<uintptr_t>(own.data())};
  }
  pair.bcast(std::as_writable_bytes(std::span(&setup, 1)), 0);
  std::string why = agree(pair, error);
  if (why.empty()) {
    if (!writer) error = open_peer(shared, setup.pid, setup.fd);
    why = agree(pair, error);
  }
  if (!why.empty()) {
    out.missing = "copy_in, copy_out, copy_cma not measured: " + why;
    return out;
  }

  Rounds rounds(shared, max_bytes);
  rounds.set_clock_cost(clock_cost_us());
  std::vector<double> in_us, out_us, cma_us;
  for (uint64_t m : sizes) {
    const double us = rounds.slot_copies(own, to, m, writer);
    (writer ? in_us : out_us).push_back(us);
  }

  // A 1 B read first: whether process_vm_readv works here at all.
  std::string cma_error;
  if (!writer) {
    const shm::PeerRead probe = shm::read_peer(setup.pid, setup.owner, std::span(to).first(1));
    if (probe.error != 0) cma_error = "process_vm_readv: " + shm::read_error_text(probe.error);
  }
  std::string cma_missing = agree(pair, cma_error);
  if (cma_missing.empty()) {
    for (uint64_t m : sizes)
      cma_us.push_back(rounds.peer_reads(setup.pid, setup.owner, to, m, writer, cma_error));
    if (writer) rounds.drain();
    cma_missing = agree(pair, cma_error);
  }

  // Rank 1's medians to rank 0 (NaN-free: zeros where not measured).
  out_us.resize(sizes.size());
  cma_us.resize(sizes.size());
  pair.bcast(std::span(out_us), 1);
  pair.bcast(std::span(cma_us), 1);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto bytes = static_cast<double>(sizes[i]);
    if (writer) out.in.emplace_back(bytes, in_us[i]);
    out.out.emplace_back(bytes, out_us[i]);
    if (cma_missing.empty()) out.cma.emplace_back(bytes, cma_us[i]);
  }
  if (!cma_missing.empty()) out.missing = "copy_cma not measured: " + cma_missing;
  return out;
}

}  // namespace grove::tuning
