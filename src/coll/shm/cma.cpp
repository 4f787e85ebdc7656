#include "coll/shm/cma.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "core/params.hpp"

namespace grove::shm {
namespace {

const params::BytesParam shm_cma_min_bytes{
    "shm_cma_min_bytes", 512 * 1024, 0, uint64_t{1} << 40,
    "blocking bcast, gather, allgather, reduce and allreduce on one host whose message (block, "
    "vector) is "
    "at least this many bytes are copied once, straight between the ranks' buffers "
    "(process_vm_readv), instead of through the shared-memory slots; not bounded by "
    "shm_max_bytes or shm_slot_bytes (0: never)"};

const params::BytesParam shm_cma_min_block_bytes{
    "shm_cma_min_block_bytes", 256 * 1024, 0, uint64_t{1} << 40,
    "the same for blocking scatter and alltoall, by their block: their slot path copies every "
    "block through one rank (the root's N blocks in, or every rank's N in and N out), so the "
    "single copy pays from smaller blocks (0: never)"};

// The word other members read when they probe this process; its value is
// set once, before the first probe target is handed out, and never again.
uint64_t probe_word = 0;

uint64_t make_token() {
  const auto now =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const uint64_t token =
      (static_cast<uint64_t>(::getpid()) << 32) ^ now ^ reinterpret_cast<uintptr_t>(&probe_word);
  return token == 0 ? 1 : token;
}

}  // namespace

namespace {

bool by_block(coll::Collective collective) {
  return collective == coll::Collective::scatter || collective == coll::Collective::alltoall;
}

}  // namespace

size_t cma_min_bytes(coll::Collective collective) {
  return by_block(collective) ? shm_cma_min_block_bytes.get() : shm_cma_min_bytes.get();
}

std::string_view cma_param_name(coll::Collective collective) {
  return by_block(collective) ? shm_cma_min_block_bytes.name() : shm_cma_min_bytes.name();
}

PeerRead read_peer(pid_t pid, uint64_t address, std::span<std::byte> to) {
  PeerRead out;
  while (out.done < to.size()) {
    iovec local{to.data() + out.done, to.size() - out.done};
    iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(address + out.done)),
                 to.size() - out.done};
    const ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      out.error = errno;
      return out;
    }
    // A read that copies nothing without an error would loop for ever.
    if (n == 0) {
      out.error = -1;
      return out;
    }
    out.done += static_cast<size_t>(n);
  }
  return out;
}

ProbeTarget own_probe_target() {
  static const uint64_t token = [] {
    probe_word = make_token();
    return probe_word;
  }();
  ProbeTarget t;
  t.pid = static_cast<int32_t>(::getpid());
  t.address = reinterpret_cast<uintptr_t>(&probe_word);
  t.token = token;
  return t;
}

ProbeResult probe_peers(std::span<const ProbeTarget> targets, int self) {
  ProbeResult result;
  for (size_t m = 0; m < targets.size(); ++m) {
    if (static_cast<int>(m) == self) continue;
    uint64_t seen = 0;
    PeerRead read;
    read.error = ESRCH;  // bytes from another process: no pid of a process
    if (targets[m].pid > 0) {
      read = read_peer(targets[m].pid, targets[m].address,
                       std::as_writable_bytes(std::span(&seen, 1)));
    }
    // A wrong value: the pid names another process (another pid
    // namespace), whose memory is not the member's.
    const int error = read.error != 0 ? read.error : seen != targets[m].token ? -2 : 0;
    if (error != 0) {
      result.peer = static_cast<int32_t>(m);
      result.error = error;
      return result;
    }
  }
  result.ok = 1;
  return result;
}

CmaVerdict cma_verdict(std::span<const ProbeResult> results) {
  CmaVerdict verdict;
  for (size_t m = 0; m < results.size(); ++m) {
    if (results[m].ok == 1) continue;
    const std::string cause = results[m].error == -2
                                  ? std::string(
                                        "it read another value than the one published "
                                        "(the ranks do not share a pid namespace?)")
                                  : read_error_text(results[m].error);
    verdict.reason = fmt::format("rank {} cannot read rank {}'s memory with process_vm_readv: {}",
                                 m, results[m].peer, cause);
    return verdict;
  }
  verdict.on = true;
  return verdict;
}

std::string read_error_text(int error) {
  if (error == -1) return "short read (the rest is not mapped in that process)";
  if (error == -2) return "wrong value";
  return std::strerror(error);
}

}  // namespace grove::shm
