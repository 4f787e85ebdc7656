#pragma once
// The two ends of `grove probe` over any Transport (UCX in a job, the
// simulator in tests): the measuring rank's Link, which posts and times
// messages, and the peer's Responder, which answers them.
//
// Protocol, on three tag channels of one context id that no communicator
// uses (the probe's own dup of the world):
//   channel 0  Command (32 bytes): measurer -> peer
//   channel 1  data messages:      measurer -> peer
//   channel 2  replies:            peer -> measurer
// A Command says: `rounds` times, receive `count` messages of `in_bytes`,
// then send one reply of `out_bytes`. Every experiment of the procedure
// (ping-pong, the peer's m-byte reply for o_r, flooding, flat releases) is
// one such command, so the peer needs no other state. `stop` ends it.
//
// Both ends are single-threaded and never block inside a callback:
// completions only set flags, and pump() (peer) or wait() (measurer) act on
// them. On the simulator both ends live in one thread: the measurer's waits
// call the peer's pump(), and an idle world advances its virtual clock.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/function_ref.hpp"
#include "transport/transport.hpp"

namespace grove::model::probe {

struct Command {
  // exchange_posted: as exchange, but the peer posts a round's `count`
  // receives together before any completes, as a collective's receiver does
  // (a rendezvous sender then waits for no receive to be posted); at most
  // kMaxPostedCount.
  enum class Op : uint32_t { exchange = 1, stop = 2, exchange_posted = 3 };
  Op op = Op::exchange;
  uint32_t count = 1;   // messages per round, measurer -> peer
  uint64_t rounds = 1;  // rounds, each ended by one reply
  uint64_t in_bytes = 0;
  uint64_t out_bytes = 0;

  static constexpr size_t kWireBytes = 32;
  // Little-endian, fixed layout: the peer may run on another host.
  void encode(std::byte* out) const;
  // Throws grove::Error(protocol) naming `from` for an unknown operation or
  // a size beyond kMaxBytes: bytes from another process are checked.
  static Command decode(const std::byte* in, int from);
};

// The largest message either end accepts (the probe stops at 8 x 4 MiB by
// default; --max-size is bounded by this).
inline constexpr uint64_t kMaxBytes = uint64_t{1} << 30;
inline constexpr uint32_t kMaxCount = 1u << 20;
inline constexpr uint32_t kMaxPostedCount = 64;

// One message in flight: the completion callback sets `done`.
struct Op {
  bool posted = false;
  bool done = false;
  Status status;
  void reset() { posted = done = false; }
  static void complete(void* context, const Status& status);
};

struct Channels {
  Tag command, data, reply;
  explicit Channels(uint32_t context);
};

// The measuring end. Times are microseconds on the transport's clock
// (virtual time on the simulator).
class Link {
 public:
  // `pump` (may be empty) runs after every progress() of a wait: the
  // simulator's peer. `timeout` bounds every wait (grove::Error(timeout)).
  Link(Transport& transport, int peer, uint32_t context, std::function<void()> pump,
       std::chrono::milliseconds timeout);

  int peer() const { return peer_; }
  bool virtual_clock() const { return virtual_clock_; }
  double now_us() const;

  void command(const Command& command);  // sent and waited for
  // Posts a data message of `bytes` in `slot` (several may be in flight: a
  // flood, a flat release) / the reply receive of `bytes`; wait() for their
  // `done`. A slot is reused only after its message completed, and a larger
  // size only after every data message completed (they share one buffer).
  Op& post_data(size_t slot, size_t bytes);
  Op& post_reply(size_t bytes);
  // Progresses until done() (the peer pumped after each progress): under
  // wait_policy on a real transport, as a collective waits; advancing the
  // virtual clock when the simulated world is idle.
  void wait(FunctionRef<bool()> done, std::string_view what);
  void wait(Op& op, std::string_view what);
  // Progresses until now_us() >= until_us: busy on a real clock, advancing
  // the virtual one when the simulated world is idle.
  void wait_until_time(double until_us);

 private:
  void check(const Op& op, std::string_view what) const;

  Transport& transport_;
  int peer_;
  Channels channels_;
  std::function<void()> pump_;
  std::chrono::milliseconds timeout_;
  bool virtual_clock_;
  std::deque<Op> data_ops_;  // a deque: posted Ops never move
  Op reply_op_, command_op_;
  std::vector<std::byte> out_, in_;
  std::byte command_bytes_[Command::kWireBytes] = {};
};

// The answering end.
class Responder {
 public:
  Responder(Transport& transport, int measurer, uint32_t context);
  // Posts whatever the protocol calls for next; never waits. Returns true if
  // anything moved (a completion handled or an operation posted).
  bool pump();
  bool stopped() const { return stopped_; }
  // Progresses and pumps until a stop command, waiting under wait_policy
  // between commands. Throws grove::Error(timeout)
  // when nothing moves for `idle_timeout`, or the error of a failed message.
  void serve(std::chrono::milliseconds idle_timeout);

 private:
  enum class State { idle, data, reply };
  void check(const Op& op, std::string_view what) const;

  Transport& transport_;
  int measurer_;
  Channels channels_;
  State state_ = State::idle;
  Command current_;
  uint64_t rounds_left_ = 0;
  uint32_t received_ = 0;
  bool stopping_ = false;  // a stop arrived; stopped once the last reply left
  bool stopped_ = false;
  Op command_op_, data_op_, reply_op_;
  std::deque<Op> posted_ops_;  // exchange_posted: the round's receives (a deque: Ops never move)
  // Separate buffers: a reply may still be leaving while the next data
  // message arrives. The receives of one exchange_posted round share the
  // data buffer: its bytes are not looked at.
  std::vector<std::byte> data_buffer_, reply_buffer_;
  std::byte command_bytes_[Command::kWireBytes] = {};
};

}  // namespace grove::model::probe
