// RingEndpoint: set-up, waiting and the public calls (the protocol:
// rma/ring_endpoint.hpp; writing: ring_writer.cpp; reading: ring_reader.cpp).

#include "rma/ring_endpoint.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "core/futex.hpp"

#include "core/params.hpp"
#include "rma/ring_state.hpp"
#include "sched/handshake_fence.hpp"
#include "sched/wait.hpp"
#include "sched/wait_loop.hpp"

namespace grove::rma {
namespace {

const params::BytesParam ring_direct_bytes{
    "ring_direct_bytes", 65536, 0, uint64_t{1} << 30,
    "ring lanes whose capacity exceeds this and whose writer has no mapping of the reader's "
    "memory (another host, rma_direct=false): a message longer than this travels by descriptor "
    "(the writer stages it in its own memory, the reader fetches it with one get); mapped lanes "
    "keep every message in their slots. Every rank must use the same value (docs/rma.md, "
    "\"Large messages\")"};

const params::BytesParam ring_chunk_bytes{
    "ring_chunk_bytes", 16384, 256, uint64_t{1} << 30,
    "safe ring lanes: a message longer than this is written into its slot in chunks of this "
    "size, each published at once, so the reader copies one chunk while the next is written"};

const params::ChoiceParam ring_slot_copy{
    "ring_slot_copy",
    "two_pass",
    {"two_pass", "one_pass", "unchecked"},
    "how a ring slot's payload is copied and checksummed (CRC-32C) on both sides "
    "(rma/slot_copy.hpp): two_pass (checksum and copy as two passes), one_pass (both at once), "
    "or unchecked (a diagnostic "
    "for measuring the checksum's share: no payload CRC is written or checked, only the guard "
    "and the length; every rank must use the same value)"};

const params::BytesParam ring_crc_bytes{
    "ring_crc_bytes", 2048, 0, uint64_t{1} << 30,
    "ring slots written through a mapping (same host): the payload CRC-32C covers a message's "
    "first this many bytes (rounded down to a multiple of 64; 0: the whole payload). Longer "
    "payloads are checked there and by their guard and length only: a full CRC pass on each "
    "side made the ring lose to point-to-point in the machine's fast copy state at 4-8 KiB and "
    "from 32 KiB (docs/rma.md \"Checksum coverage\")"};

const params::BytesParam ring_single_copy_bytes{
    "ring_single_copy_bytes", 0, 0, uint64_t{1} << 30,
    "safe ring lanes within one host: send() of a message longer than this offers it to the "
    "reader, which copies it once, straight from the sender's buffer (process_vm_readv), while "
    "the sender waits; not taken within ring_single_copy_wait_us, it is written into its slot "
    "as usual (0, the default: never; it lost to the chunked slots here, a system call costing "
    "about 1 us: docs/rma.md \"Large messages\")"};

const params::IntParam ring_single_copy_wait_us{
    "ring_single_copy_wait_us", 100, 0, 60000000,
    "how long (microseconds) a ring message offered for a single copy waits for the reader to "
    "take it before the sender writes it into its slot instead"};

const params::BoolParam ring_single_copy_crc{
    "ring_single_copy_crc", false,
    "whether a ring message copied once (ring_single_copy_bytes) is checksummed: the sender "
    "checksums its buffer before offering it and the reader what it received. Off: the payload "
    "never lies in shared memory (the offer itself keeps its own CRC); docs/rma.md \"Large "
    "messages\" has the reason and the cost"};

SlotCopy slot_copy_from_params() {
  const std::string& v = ring_slot_copy.get();
  return v == "one_pass"    ? SlotCopy::one_pass
         : v == "unchecked" ? SlotCopy::unchecked
                            : SlotCopy::two_pass;
}

}  // namespace

namespace {

// Which lanes' writers map their reader's memory, as every member learns it
// before the layout is fixed (a mapped lane keeps whole slots, an unmapped
// one above ring_direct_bytes stages its payloads: docs/rma.md "Large
// messages"). Two collective rounds: every member allocates a small region
// and exchanges its key with the agreement header (so a member that passed
// other lanes is named here, as it would be by the ring's own exchange), and
// attaches its lanes' peers; then every member publishes, for each lane it
// writes, whether it mapped the reader's region, and everyone reads the
// writers' answers. The probe regions are freed once everyone has answered
// (nobody attaches them afterwards).
std::vector<bool> probe_mapping(Group& group, const RingLayout& layout,
                                const std::vector<bool>& attach, const std::string& what) {
  const int me = group.rank();
  const auto& lanes = layout.lanes();
  RegionSet probe = exchange_regions(
      group, kCacheLine, layout.encode(),
      [&](const std::vector<std::span<const std::byte>>& headers) {
        for (size_t m = 0; m < headers.size(); ++m)
          layout.check_same(headers[m], static_cast<int>(m), me);
      },
      attach, what);
  std::vector<std::byte> mine(lanes.size(), std::byte{0});
  for (size_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i].src != me) continue;
    const RmaTarget* target = probe.targets[static_cast<size_t>(lanes[i].dst)].get();
    if (target != nullptr && target->mapped() != nullptr) mine[i] = std::byte{1};
  }
  const std::vector<std::vector<std::byte>> answers = group.allgather(mine, what);
  std::vector<bool> mapped(lanes.size(), false);
  for (size_t i = 0; i < lanes.size(); ++i) {
    const int writer = lanes[i].src;
    const size_t got =
        writer < static_cast<int>(answers.size()) ? answers[static_cast<size_t>(writer)].size() : 0;
    if (got != lanes.size() ||
        std::to_integer<unsigned>(answers[static_cast<size_t>(writer)][i]) > 1) {
      throw Error(Errc::protocol,
                  fmt::format("rank {}: {}: rank {} answered {} bytes for {} lanes when asked "
                              "which lanes it maps; no ring was created",
                              me, what, writer, got, lanes.size()));
    }
    const std::vector<std::byte>& answer = answers[static_cast<size_t>(writer)];
    mapped[i] = answer[i] == std::byte{1};
  }
  return mapped;
}

}  // namespace

std::string RingEndpoint::State::lane_name(const LaneSpec& spec) const {
  return fmt::format("ring lane {} -> {} ({}, depth {}, capacity {} B)", spec.src, spec.dst,
                     RingLayout::mode_name(layout.mode()), spec.depth, spec.capacity);
}

void RingEndpoint::State::check_usable(const char* call) const {
  if (broken) throw *broken;
  if (closed) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: ring {}: the ring is closed", rank(), call));
  }
}

OutLane& RingEndpoint::State::out_lane(int dst, const char* call) {
  check_usable(call);
  if (dst < 0 || dst >= layout.size() || out_by_dst[static_cast<size_t>(dst)] < 0) {
    std::string mine;
    for (const OutLane& o : out)
      mine += fmt::format("{}{}", mine.empty() ? "" : ", ", o.spec.dst);
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: ring {} to {}: no lane {} -> {} (this rank writes to: {})",
                            rank(), call, dst, rank(), dst, mine.empty() ? "none" : mine));
  }
  return out[static_cast<size_t>(out_by_dst[static_cast<size_t>(dst)])];
}

InLane& RingEndpoint::State::in_lane(int src, const char* call) {
  check_usable(call);
  if (src < 0 || src >= layout.size() || in_by_src[static_cast<size_t>(src)] < 0) {
    std::string mine;
    for (const InLane& i : in)
      mine += fmt::format("{}{}", mine.empty() ? "" : ", ", i.spec.src);
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: ring {} from {}: no lane {} -> {} (this rank reads from: {})",
                            rank(), call, src, src, rank(), mine.empty() ? "none" : mine));
  }
  return in[static_cast<size_t>(in_by_src[static_cast<size_t>(src)])];
}

bool RingEndpoint::State::in_flight() const {
  for (const OutLane& o : out) {
    for (const Flight& f : o.flights) {
      if (f.busy > 0) return true;
    }
  }
  for (const InLane& i : in) {
    if (i.ack_flight.busy > 0 || i.fetch_flight.busy > 0) return true;
  }
  return false;
}

void RingEndpoint::State::wake(int peer) {
  group->transport().am_send(peer, kRingWakeup, {});
}

void RingEndpoint::State::wake_asleep(std::atomic<uint32_t>& word, uint32_t state, int peer) {
  if (state == kSleepOnFutex) {
    // Cleared first: the sleeper's futex wait then returns at once even if
    // this wake comes before it, and the sleeper knows it was woken.
    if (word.exchange(kAwake, std::memory_order_acq_rel) == kSleepOnFutex) {
      futex_wake_shared(&word, 1);
    }
    return;
  }
  wake(peer);
}

namespace {

const params::IntParam ring_sleep_look_us{
    "ring_sleep_look_us", 200, 1, 1000000,
    "a ring wait asleep on its lane's futex (mapped lane) first sleeps at most this long "
    "(microseconds) without the membarrier that makes a missed wake-up impossible; the peer's "
    "wake-up ends it at once, and a wake-up missed by a publisher racing the sleep costs at most "
    "this (docs/rma.md \"Waiting\")"};

// How a ring call waits: the one wait loop (sched/wait_loop.hpp) over this
// rank's own memory, with the shared-memory cadence (a poll is a look at a
// slot, the transport is progressed every wait_rounds_per_progress spinning
// rounds, every round when a lane goes through the transport). Two
// differences: a message arriving chunk by chunk counts as activity, so
// hybrid's spin window restarts with every chunk and a reader never sleeps
// in the middle of a message that is moving; and the sleep is on the
// sleeping word itself (a futex) when the wait is on one mapped lane, else
// on the transport's fd (Transport::block), which the peer's wake-up message
// ends. Before it sleeps the waiter sets its sleeping words and looks once
// more (see ring_endpoint.hpp and docs/rma.md "Waiting" for why no wake-up
// is missed). Nothing is allocated or formatted unless the wait fails:
// `what` and `detail` name it then.
template <class Condition>
void ring_wait(RingEndpoint::State& s, Condition& condition,
               std::span<std::atomic<uint32_t>* const> flags, std::span<SleepCounts* const> sleeps,
               std::span<const int> peers, bool through_transport, FunctionRef<std::string()> what,
               FunctionRef<std::string()> detail) {
  struct Waiter : sched::WaiterBase {
    RingEndpoint::State& s;
    Condition& condition;
    std::span<std::atomic<uint32_t>* const> flags;
    std::span<SleepCounts* const> sleeps;
    std::span<const int> peers;
    FunctionRef<std::string()> what;
    std::chrono::microseconds brief;  // shm_wake_interval_us
    bool on_futex;
    uint64_t chunks_seen;
    // The condition consumes what it finds (a message, a slot): once true it
    // is not asked again.
    bool done = false;
    bool ready() { return done || (done = condition()); }
    void check() {
      for (int peer : peers) {
        if (s.group->departed(peer)) {
          throw Error(Errc::peer_failed,
                      fmt::format("rank {}: {}: rank {} departed", s.rank(), what(), peer));
        }
      }
    }
    bool progress() {
      const bool active = s.group->transport().progress();
      const bool moved = s.chunks_copied != chunks_seen;
      chunks_seen = s.chunks_copied;
      return active || moved;
    }
    void count_timeout() {
      for (SleepCounts* count : sleeps)
        ++count->timed_out;
    }
    void sleep(std::chrono::microseconds max) {
      for (SleepCounts* count : sleeps)
        ++count->slept;
      if (on_futex) {
        sleep_on_futex(max);
      } else {
        sleep_on_transport(max);
      }
    }
    // One mapped lane: the publisher reads kSleepOnFutex, clears the word
    // and wakes it (RingEndpoint::State::wake_sleeper). A futex sleep sees
    // neither transport activity nor failure notices, so it lasts at most
    // shm_wake_interval_us, as the shared-memory collectives' (docs/wait.md).
    // First a look of ring_sleep_look_us with only this side's full fence:
    // a publisher whose seq store was still in its store buffer when it read
    // the word may miss it, and the look's end finds that message. Then the
    // peers' barrier (sleep_fence), after which no wake-up is missed.
    void sleep_on_futex(std::chrono::microseconds max) {
      std::atomic<uint32_t>* word = flags[0];
      // Read here, not per wait: only a wait that sleeps needs it.
      const std::chrono::microseconds look(ring_sleep_look_us.get());
      max = std::min(max, brief);
      word->store(kSleepOnFutex, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (!ready()) {
        const bool look_only = max <= look;
        futex_sleep(word, std::min(max, look), look_only);
        if (!look_only && word->load(std::memory_order_acquire) == kSleepOnFutex) {
          std::chrono::microseconds rest = max - look;
          if (!sched::sleep_fence()) rest = std::min(rest, look);
          if (!ready()) futex_sleep(word, rest, true);
        }
      }
      word->store(kAwake, std::memory_order_relaxed);
    }
    // A sleep whose word is still set at its end was not woken; `counted`:
    // it is the sleep's last part, so one that ran out its limit is a
    // timeout (a signal or a late FUTEX_WAKE can end it earlier).
    void futex_sleep(std::atomic<uint32_t>* word, std::chrono::microseconds limit, bool counted) {
      const auto begin = std::chrono::steady_clock::now();
      futex_wait_shared(word, kSleepOnFutex, limit);
      if (counted && word->load(std::memory_order_acquire) == kSleepOnFutex &&
          std::chrono::steady_clock::now() - begin >= limit)
        count_timeout();
    }
    // Several lanes, or a lane through the transport: every publisher (a
    // mapped one seeing kSleepOnTransport, an unmapped one always) sends the
    // wake-up message that ends the block.
    void sleep_on_transport(std::chrono::microseconds max) {
      for (std::atomic<uint32_t>* f : flags)
        f->store(kSleepOnTransport, std::memory_order_relaxed);
      // Without the peers' barrier a publisher may miss the word: sleep
      // briefly then (sched/handshake_fence.hpp).
      if (!sched::sleep_fence()) max = std::min(max, brief);
      if (!ready()) {
        const auto begin = std::chrono::steady_clock::now();
        s.group->transport().block(s.group->notice_fd(), max);
        if (std::chrono::steady_clock::now() - begin >= max) count_timeout();
      }
      for (std::atomic<uint32_t>* f : flags)
        f->store(kAwake, std::memory_order_relaxed);
    }
  };
  const sched::WaitOptions options = sched::wait_options_from_params();
  sched::WaitCadence cadence = sched::local_memory_cadence(options);
  cadence.activity_restarts_spin = true;
  cadence.yield_after_activity = false;
  // `through_transport` is false when this rank maps the peer's memory; a
  // futex sleeper also needs the peer to map this rank's (its publications
  // then reach the word), which holds on one host, where UCX maps either
  // both ways or neither. Were it not so, the peer's wake-up message would
  // not end the futex sleep and each such sleep would last
  // shm_wake_interval_us (slower, never stuck).
  const bool on_futex = !through_transport && flags.size() == 1;
  cadence.max_sleep = on_futex ? options.shm_wake_interval : options.block_slice;
  if (through_transport) cadence.rounds_per_progress = 1;
  Waiter waiter{{},        s,
                condition, flags,
                sleeps,    peers,
                what,      options.shm_wake_interval,
                on_futex,  s.chunks_copied};
  bool in_time;
  try {
    in_time = sched::wait_loop(waiter, options, cadence);
  } catch (...) {
    for (std::atomic<uint32_t>* f : flags)
      f->store(kAwake, std::memory_order_relaxed);
    throw;
  }
  if (!in_time) throw Error(Errc::timeout, sched::timeout_message(what(), options.timeout, detail));
}

}  // namespace

RingEndpoint::RingEndpoint(std::shared_ptr<Group> group, std::vector<LaneSpec> lanes,
                           RingMode mode) {
  const int me = group->rank();
  RingLayout layout(std::move(lanes), mode, group->size(), me, ring_direct_bytes.get());
  state_ = std::make_shared<State>(group, std::move(layout));
  State& s = *state_;
  s.chunk_bytes = ring_chunk_bytes.get();
  s.slot_copy = slot_copy_from_params();
  s.crc_bytes = ring_crc_bytes.get() / 64 * 64;
  if (ring_crc_bytes.get() > 0 && s.crc_bytes == 0) s.crc_bytes = 64;
  s.single_copy_bytes = ring_single_copy_bytes.get();
  s.single_copy_crc = ring_single_copy_crc.get();
  s.single_copy_wait = std::chrono::microseconds(ring_single_copy_wait_us.get());
  if (s.single_copy_bytes > 0) s.self_target = shm::own_probe_target();
  const auto& specs = s.layout.lanes();
  std::vector<bool> attach(static_cast<size_t>(group->size()), false);
  for (const LaneSpec& l : specs) {
    if (l.src == me) attach[static_cast<size_t>(l.dst)] = true;
    if (l.dst == me) attach[static_cast<size_t>(l.src)] = true;
  }
  const std::string what =
      fmt::format("ring({}, {} lanes)", RingLayout::mode_name(mode), specs.size());
  group->register_wakeup(kRingWakeup);
  // Before any peer can sleep on this ring: they wait for this rank in the
  // exchange below.
  sched::asymmetric_fences();
  auto check = [&](const std::vector<std::span<const std::byte>>& headers) {
    for (size_t m = 0; m < headers.size(); ++m)
      s.layout.check_same(headers[m], static_cast<int>(m), me);
  };
  if (s.layout.mapping_matters())
    s.layout.set_mapped(probe_mapping(*group, s.layout, attach, what));
  s.regions =
      exchange_regions(*group, s.layout.region_bytes(me), s.layout.encode(), check, attach, what);

  std::byte* base = s.regions.local->data();
  s.out_by_dst.assign(static_cast<size_t>(group->size()), -1);
  s.in_by_src.assign(static_cast<size_t>(group->size()), -1);
  for (size_t i = 0; i < specs.size(); ++i) {
    const LaneSpec& l = specs[i];
    const int lane = static_cast<int>(i);
    if (l.src == me) {
      OutLane o;
      o.lane = lane;
      o.spec = l;
      o.stride = s.layout.stride(lane);
      o.inline_capacity = s.layout.inline_capacity(lane);
      if (s.layout.direct(lane)) {
        o.blocks_offset = s.layout.staging_offset(lane);
        o.blocks = base + o.blocks_offset;
        o.block_stride = s.layout.staging_stride(lane);
      }
      o.target = s.regions.targets[static_cast<size_t>(l.dst)].get();
      o.inbox = s.layout.inbox_offset(lane);
      // A direct lane's slots and payloads are read through the transport
      // (the layout made it direct because the probe found no mapping).
      if (o.target->mapped() != nullptr && !s.layout.direct(lane)) {
        o.mapped = o.target->mapped() + o.inbox;
      }
      o.credit = reinterpret_cast<CreditLine*>(base + s.layout.credit_offset(lane));
      if (o.mapped == nullptr) {
        o.staging.assign(l.depth * o.stride, std::byte{0});
        o.flights = std::vector<Flight>(l.depth);
      }
      s.out_by_dst[static_cast<size_t>(l.dst)] = static_cast<int>(s.out.size());
      s.out.push_back(std::move(o));
    }
    if (l.dst == me) {
      InLane in;
      in.lane = lane;
      in.spec = l;
      in.stride = s.layout.stride(lane);
      in.inline_capacity = s.layout.inline_capacity(lane);
      if (s.layout.direct(lane)) {
        in.blocks_offset = s.layout.staging_offset(lane);
        in.block_stride = s.layout.staging_stride(lane);
      }
      in.header = reinterpret_cast<LaneHeader*>(base + s.layout.inbox_offset(lane));
      in.slots = base + s.layout.inbox_offset(lane) + sizeof(LaneHeader);
      in.owner = &s;
      in.credit_target = s.regions.targets[static_cast<size_t>(l.src)].get();
      in.credit_offset = s.layout.credit_offset(lane);
      if (in.credit_target->mapped() != nullptr) {
        in.credit_mapped =
            reinterpret_cast<CreditLine*>(in.credit_target->mapped() + in.credit_offset);
      }
      s.in_by_src[static_cast<size_t>(l.src)] = static_cast<int>(s.in.size());
      s.in.push_back(std::move(in));
    }
  }
  for (InLane& lane : s.in) {
    s.any_flags.push_back(&lane.header->reader_sleeping);
    s.any_sleeps.push_back(&lane.sleeps);
    s.any_sources.push_back(lane.spec.src);
    s.any_through_transport = s.any_through_transport || lane.credit_mapped == nullptr;
  }
}

RingEndpoint::~RingEndpoint() {
  if (!state_) return;
  State& s = *state_;
  if (!s.closed && s.in_flight()) {
    try {
      sched::wait_until(
          s.group->transport(), s.group->notice_fd(), [&s] { return !s.in_flight(); },
          "ring teardown");
    } catch (const Error&) {
    }
  }
  // A completion may still come for a put in flight: keep its Flight alive.
  if (s.in_flight()) new std::shared_ptr<State>(state_);
}

const RingLayout& RingEndpoint::layout() const {
  return state_->layout;
}

int RingEndpoint::rank() const {
  return state_->rank();
}

std::byte* RingEndpoint::local_memory() {
  return state_->regions.local ? state_->regions.local->data() : nullptr;
}

bool RingEndpoint::try_send(int dst, std::span<const std::byte> message) {
  State& s = *state_;
  return s.try_send(s.out_lane(dst, "send"), message);
}

namespace {

// A send's wait on the lane's credit line (the reader's credits and its
// declines of an offer wake it) until `ready`; `what` names the send if the
// wait fails.
template <class Ready>
void wait_on_credits(RingEndpoint::State& s, OutLane& lane, Ready& ready,
                     FunctionRef<std::string()> what) {
  std::atomic<uint32_t>* const flags[] = {&lane.credit->writer_sleeping};
  SleepCounts* const sleeps[] = {&lane.sleeps};
  const int peers[] = {lane.spec.dst};
  ring_wait(s, ready, flags, sleeps, peers, lane.mapped == nullptr, what, [&] {
    return fmt::format("the reader has consumed {} of {} messages sent", lane.acked, lane.sent);
  });
}

// A send of message lane.sent + 1 that found the lane full: waits until
// `sent` (the send's next attempt) succeeds; the time goes to wait_seconds.
template <class Sent>
void wait_to_send(RingEndpoint::State& s, OutLane& lane, Sent& sent) {
  const auto begin = std::chrono::steady_clock::now();
  auto record = [&] {
    lane.wait_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  try {
    wait_on_credits(s, lane, sent, [&] {
      return fmt::format("rank {}: {}: send of message {}", s.rank(), s.lane_name(lane.spec),
                         lane.sent + 1);
    });
  } catch (...) {
    record();
    throw;
  }
  record();
}

}  // namespace

// A message offered for a single copy (ring_single_copy.cpp): first the
// credit of its slot (the fallback needs it; counted in `waits` as any
// send's), then the reader's credit of it, or its decline, or the end of
// ring_single_copy_wait_us (then the slot).
void RingEndpoint::State::send_single_copy(OutLane& lane, std::span<const std::byte> message) {
  auto offered = [&] { return try_offer(lane, message); };
  if (!offered()) wait_to_send(*this, lane, offered);
  const auto deadline = std::chrono::steady_clock::now() + single_copy_wait;
  auto settled = [&] { return offer_settled(lane, message, deadline); };
  if (settled()) return;
  try {
    wait_on_credits(*this, lane, settled, [&] {
      return fmt::format("rank {}: {}: send of message {} (offered for a single copy)", rank(),
                         lane_name(lane.spec), lane.offered);
    });
  } catch (const Error& error) {
    abandon_offer(lane, error);
    if (broken) throw *broken;
    throw;
  }
}

void RingEndpoint::send(int dst, std::span<const std::byte> message) {
  State& s = *state_;
  OutLane& lane = s.out_lane(dst, "send");
  if (s.single_copy_eligible(lane, message.size())) {
    // Offered only to a reader that has consumed everything before it (so
    // most likely waits for it): one that lags is busy or descheduled, and
    // the slots let this rank run ahead of it instead of waiting.
    s.refresh_credits(lane);
    if (lane.acked == lane.sent) {
      s.send_single_copy(lane, message);
      return;
    }
  }
  auto sent = [&] { return s.try_send(lane, message); };
  if (!sent()) wait_to_send(s, lane, sent);
}

std::optional<size_t> RingEndpoint::try_recv(int src, std::span<std::byte> out) {
  State& s = *state_;
  InLane& lane = s.in_lane(src, "recv");
  auto got = s.poll(lane, out, true);
  if (!got) s.group->transport().progress();
  return got;
}

size_t RingEndpoint::recv(int src, std::span<std::byte> out) {
  State& s = *state_;
  InLane& lane = s.in_lane(src, "recv");
  if (auto got = s.poll(lane, out, true)) return *got;
  std::optional<size_t> got;
  auto arrived = [&] { return (got = s.poll(lane, out, true)).has_value(); };
  std::atomic<uint32_t>* const flags[] = {&lane.header->reader_sleeping};
  SleepCounts* const sleeps[] = {&lane.sleeps};
  const int peers[] = {src};
  ring_wait(
      s, arrived, flags, sleeps, peers, lane.credit_mapped == nullptr,
      [&] {
        return fmt::format("rank {}: {}: recv of message {}", s.rank(), s.lane_name(lane.spec),
                           lane.expected);
      },
      [&] {
        return fmt::format("delivered {}, lost {}, corrupt {}", lane.delivered, lane.lost,
                           lane.corrupt);
      });
  return *got;
}

std::optional<RingEndpoint::Received> RingEndpoint::try_recv_any(std::span<std::byte> out) {
  State& s = *state_;
  s.check_usable("recv_any");
  const size_t n = s.in.size();
  for (size_t k = 0; k < n; ++k) {
    InLane& lane = s.in[(s.next_any + k) % n];
    if (auto got = s.poll(lane, out, false)) {
      s.next_any = (s.next_any + k + 1) % n;
      return Received{lane.spec.src, *got};
    }
  }
  s.group->transport().progress();
  return std::nullopt;
}

RingEndpoint::Received RingEndpoint::recv_any(std::span<std::byte> out) {
  State& s = *state_;
  s.check_usable("recv_any");
  if (s.in.empty()) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: ring recv_any: no lane leads to this rank", s.rank()));
  }
  std::optional<Received> got;
  auto poll_all = [&]() -> bool {
    const size_t n = s.in.size();
    for (size_t k = 0; k < n; ++k) {
      InLane& lane = s.in[(s.next_any + k) % n];
      if (auto bytes = s.poll(lane, out, false)) {
        s.next_any = (s.next_any + k + 1) % n;
        got = Received{lane.spec.src, *bytes};
        return true;
      }
    }
    return false;
  };
  if (poll_all()) return *got;
  ring_wait(
      s, poll_all, s.any_flags, s.any_sleeps, s.any_sources, s.any_through_transport,
      [&] { return fmt::format("rank {}: ring recv_any", s.rank()); },
      [&] {
        std::string text;
        for (const InLane& lane : s.in)
          text += fmt::format("{}from {}: delivered {}", text.empty() ? "" : "; ", lane.spec.src,
                              lane.delivered);
        return text;
      });
  return *got;
}

std::vector<LaneCounters> RingEndpoint::counters() const {
  const State& s = *state_;
  std::vector<LaneCounters> out;
  for (size_t i = 0; i < s.layout.lanes().size(); ++i) {
    const LaneSpec& spec = s.layout.lanes()[i];
    if (spec.src != s.rank() && spec.dst != s.rank()) continue;
    LaneCounters c;
    c.src = spec.src;
    c.dst = spec.dst;
    for (const OutLane& o : s.out) {
      if (o.lane != static_cast<int>(i)) continue;
      c.sent = o.sent;
      c.chunked = o.chunked;
      c.by_descriptor = o.by_descriptor;
      c.single_copy = o.single_copy;
      c.waits = o.waits;
      c.wait_seconds = o.wait_seconds;
      c.sleeps = o.sleeps.slept;
      c.sleeps_timed_out = o.sleeps.timed_out;
    }
    for (const InLane& in : s.in) {
      if (in.lane != static_cast<int>(i)) continue;
      c.delivered = in.delivered;
      c.lost = in.lost;
      c.corrupt = in.corrupt;
      c.max_lag = in.max_lag;
      c.sleeps = in.sleeps.slept;
      c.sleeps_timed_out = in.sleeps.timed_out;
    }
    out.push_back(c);
  }
  return out;
}

void RingEndpoint::close() {
  State& s = *state_;
  if (s.closed) return;
  // Credits owed through the transport, then every put in flight.
  for (InLane& lane : s.in) {
    if (s.layout.mode() == RingMode::safe && !s.broken) s.send_credit(lane);
  }
  if (s.in_flight()) {
    sched::wait_until(
        s.group->transport(), s.group->notice_fd(), [&s] { return !s.in_flight(); },
        fmt::format("rank {}: ring close", s.rank()));
  }
  s.closed = true;
  s.group->barrier("ring close");
  s.regions.targets.clear();
  s.regions.local.reset();
}

}  // namespace grove::rma
