#pragma once
// grove::Ring: fixed-slot ring channels over one-sided memory. A ring is a
// set of lanes (src, dst, depth, capacity), created collectively over a Comm
// with the same lanes and mode on every rank. Lane (src, dst) is a circular
// buffer of `depth` slots of `capacity` bytes in dst's memory; src alone
// writes it, dst alone reads it, and a read looks at dst's own memory only.
//
//   grove::Ring ring(world, {{0, 1, 32, 4096}, {1, 0, 32, 4096}}, grove::RingMode::safe);
//   if (world.rank() == 0) ring.send(1, std::as_bytes(std::span(data)));
//   else size_t n = ring.recv(0, std::as_writable_bytes(std::span(buffer)));
//
// Modes:
// - safe: nothing is lost; a sender waits while the lane is full (the reader
//   has not consumed `depth` messages; stats().waits counts such sends), and
//   every message is delivered in order.
// - raw: a sender never waits and overwrites the oldest slot; a reader that
//   finds messages overwritten skips to the oldest one left, in order, and
//   counts the gap as `lost`. Once the reader has seen the last message sent,
//   delivered + lost == sent.
// Long messages: between ranks of one host (the writer maps the reader's
// memory) every message goes in its slot, and in safe mode one longer than
// ring_chunk_bytes is copied in chunks the reader copies out while the next
// is written; but with the parameter ring_single_copy_bytes set (0, off, by
// default), send() (safe mode) of a longer message, to a reader that
// consumed every earlier message, first offers it: the reader copies it once, straight from the
// sender's buffer, and send() returns on its credit, or after
// ring_single_copy_wait_us (100) writes it into its slot after all. Without a mapping (another
// host, or rma_direct=false), on a lane whose capacity exceeds the parameter ring_direct_bytes (64
// KiB by default, the same on every rank) a longer message stays in the writer's memory and its
// slot carries a descriptor; the reader fetches the payload with one get straight into the receive
// buffer. A slot that fails its checks (guard, length, descriptor, CRC-32C) is counted `corrupt`
// and read again later. Between ranks of one host the CRC covers a payload's first
// ring_crc_bytes (2 KiB; 0: all of it), so a longer one is checked there and by its guard
// and length only (docs/rma.md "Checksum coverage"). In safe mode a slot holding a later message
// than expected (the writer lapped the reader) is an error. docs/rma.md has the protocol, its costs
// and measurements.
//
// Errors (grove::Error, nothing sent or written): lanes that name a rank
// outside the communicator or the same rank twice, a zero depth, two lanes
// for one pair, a lane list or mode that differs between ranks (named:
// which rank, which lane), a message longer than the lane's capacity, a
// receive buffer shorter than the message (Errc::truncated; the message
// stays), a send or receive on a lane that does not exist. Every wait is
// bounded by timeout_ms and ends early with Errc::peer_failed when the peer
// departs. close() is collective; rings must go before their Session.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/comm.hpp"

namespace grove {

namespace detail {
class RingState;
}

enum class RingMode { safe, raw };

struct Lane {
  int src = 0;
  int dst = 0;
  uint32_t depth = 0;   // slots
  size_t capacity = 0;  // bytes of the longest message
};

// One lane's counters as this rank sees them: the writer's side (sent,
// chunked, by_descriptor, single_copy, waits, wait_seconds) on its source, the reader's
// side (delivered, lost, corrupt, max_lag) on its destination; the other
// side's fields are zero. `sleeps` is this rank's, on either side.
struct LaneStats {
  int src = -1;
  int dst = -1;
  uint64_t sent = 0;
  uint64_t chunked = 0;        // of those, copied into the slot chunk by chunk
  uint64_t by_descriptor = 0;  // of those, staged in the writer's memory and fetched
  uint64_t single_copy = 0;    // of those, copied once by the reader from the sender's buffer
  uint64_t waits = 0;          // safe mode: sends that found the lane full
  double wait_seconds = 0;     // time those sends waited
  uint64_t delivered = 0;
  uint64_t lost = 0;     // raw mode: messages overwritten before they were read
  uint64_t corrupt = 0;  // messages whose slot failed its checks (then read again)
  uint64_t max_lag = 0;  // the largest sequence advance of one delivery (1 without loss)
  // Times a send or receive waiting on this lane (recv_any: on any lane)
  // set its sleeping word to sleep under wait_policy until the peer wakes it.
  uint64_t sleeps = 0;
  // Of those, sleeps that ran out their time limit (shm_wake_interval_us on
  // one lane of this host, else wait_block_slice_us) rather than being
  // woken by the peer: a wake-up missed or late, or a peer silent that long.
  uint64_t sleeps_timed_out = 0;
};

class Ring {
 public:
  Ring() = default;
  Ring(Comm& comm, std::vector<Lane> lanes, RingMode mode);

  // On lane (rank, dst). send waits (safe mode) while the lane is full;
  // try_send returns false instead. A send of a message offered for a
  // single copy (above) also waits for the reader to copy it, at most
  // ring_single_copy_wait_us unless the reader has begun.
  void send(int dst, std::span<const std::byte> message);
  bool try_send(int dst, std::span<const std::byte> message);
  // The next message of lane (src, rank) into `out`; its length.
  size_t recv(int src, std::span<std::byte> out);
  std::optional<size_t> try_recv(int src, std::span<std::byte> out);
  struct Received {
    int src = -1;
    size_t bytes = 0;
  };
  // The next message of any lane into this rank (polled round-robin).
  Received recv_any(std::span<std::byte> out);
  std::optional<Received> try_recv_any(std::span<std::byte> out);

  template <class T>
  void send(int dst, std::span<const std::type_identity_t<T>> message) {
    send(dst, std::as_bytes(message));
  }
  template <class T>
  requires(!std::is_same_v<T, std::byte>) size_t recv(int src, std::span<T> out) {
    return recv(src, std::as_writable_bytes(out));
  }

  // Counters of every lane this rank writes or reads, sorted by (src, dst).
  std::vector<LaneStats> stats() const;
  void close();

  detail::RingState& state() { return *state_; }

 private:
  std::shared_ptr<detail::RingState> state_;
};

}  // namespace grove
