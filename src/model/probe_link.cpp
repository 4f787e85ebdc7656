#include "model/probe_link.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "sched/wait.hpp"
#include "transport/tag.hpp"

namespace grove::model::probe {
namespace {

constexpr uint32_t kCommandChannel = 0;
constexpr uint32_t kDataChannel = 1;
constexpr uint32_t kReplyChannel = 2;

void put64(std::byte* out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
uint64_t get64(const std::byte* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(std::to_integer<uint8_t>(in[i])) << (8 * i);
  return v;
}

// How long an idle simulated world moves its clock per empty wait.
constexpr std::chrono::microseconds kVirtualStep{1000};

}  // namespace

void Command::encode(std::byte* out) const {
  put64(out, static_cast<uint64_t>(op) | (static_cast<uint64_t>(count) << 32));
  put64(out + 8, rounds);
  put64(out + 16, in_bytes);
  put64(out + 24, out_bytes);
}

Command Command::decode(const std::byte* in, int from) {
  const uint64_t head = get64(in);
  Command c;
  const auto op = static_cast<uint32_t>(head & 0xffffffffu);
  c.count = static_cast<uint32_t>(head >> 32);
  c.rounds = get64(in + 8);
  c.in_bytes = get64(in + 16);
  c.out_bytes = get64(in + 24);
  if (op != static_cast<uint32_t>(Op::exchange) && op != static_cast<uint32_t>(Op::stop) &&
      op != static_cast<uint32_t>(Op::exchange_posted)) {
    throw Error(Errc::protocol, fmt::format("probe: rank {} sent an unknown command {}", from, op));
  }
  c.op = static_cast<Op>(op);
  const uint32_t max_count = c.op == Op::exchange_posted ? kMaxPostedCount : kMaxCount;
  if (c.op != Op::stop && (c.count == 0 || c.count > max_count || c.rounds == 0 ||
                           c.in_bytes > kMaxBytes || c.out_bytes > kMaxBytes)) {
    throw Error(
        Errc::protocol,
        fmt::format("probe: rank {} sent a command out of bounds (count {}, rounds {}, "
                    "{} B in, {} B out; at most {} messages of {} B)",
                    from, c.count, c.rounds, c.in_bytes, c.out_bytes, max_count, kMaxBytes));
  }
  return c;
}

void Op::complete(void* context, const Status& status) {
  auto* op = static_cast<Op*>(context);
  op->status = status;
  op->done = true;
}

Channels::Channels(uint32_t context)
    : command(tag::make(context, 0, tag::Topology::none, 0, kCommandChannel)),
      data(tag::make(context, 0, tag::Topology::none, 0, kDataChannel)),
      reply(tag::make(context, 0, tag::Topology::none, 0, kReplyChannel)) {}

// ---- Link -----------------------------------------------------------------

Link::Link(Transport& transport, int peer, uint32_t context, std::function<void()> pump,
           std::chrono::milliseconds timeout)
    : transport_(transport),
      peer_(peer),
      channels_(context),
      pump_(std::move(pump)),
      timeout_(timeout),
      virtual_clock_(transport.name() == "sim") {}

double Link::now_us() const {
  return transport_.now() * 1e6;
}

void Link::check(const Op& op, std::string_view what) const {
  if (!op.status.ok) {
    throw Error(op.status.code, fmt::format("probe: {} with rank {} failed ({})", what, peer_,
                                            errc_name(op.status.code)));
  }
}

void Link::command(const Command& command) {
  command.encode(command_bytes_);
  command_op_.reset();
  command_op_.posted = true;
  transport_.send(peer_, channels_.command, command_bytes_, Command::kWireBytes, &Op::complete,
                  &command_op_);
  wait(command_op_, "sending a command");
}

Op& Link::post_data(size_t slot, size_t bytes) {
  while (data_ops_.size() <= slot)
    data_ops_.emplace_back();
  if (out_.size() < bytes) out_.resize(bytes);
  Op& op = data_ops_[slot];
  op.reset();
  op.posted = true;
  // Every slot sends from the same bytes: their content is never read.
  transport_.send(peer_, channels_.data, out_.data(), bytes, &Op::complete, &op);
  return op;
}

Op& Link::post_reply(size_t bytes) {
  if (in_.size() < bytes) in_.resize(bytes);
  reply_op_.reset();
  reply_op_.posted = true;
  transport_.recv(peer_, channels_.reply, in_.data(), bytes, &Op::complete, &reply_op_);
  return reply_op_;
}

void Link::wait(FunctionRef<bool()> done, std::string_view what) {
  if (!virtual_clock_) {
    // A real transport waits under wait_policy, as a collective does. Both
    // ends spinning without ever sleeping starves whatever else the message
    // needs on the host: on the emulated cluster (two cores, the links'
    // packet processing in ksoftirqd) every one-way trip then took a whole
    // scheduler tick, 4 ms, where ucx_perftest measures 8 us.
    sched::WaitOptions options = sched::wait_options_from_params();
    options.timeout = timeout_;
    sched::wait_until_described(
        transport_, -1,
        [&] {
          if (pump_) pump_();
          return done();
        },
        [&] { return fmt::format("probe: {} with rank {}", what, peer_); }, options);
    return;
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout_;
  uint32_t polls = 0;
  while (!done()) {
    const bool moved = transport_.progress();
    if (pump_) pump_();
    if (!moved) transport_.block(-1, kVirtualStep);
    // The clock is read every 256 polls.
    if ((++polls & 255) == 0 && Clock::now() > deadline) {
      throw Error(Errc::timeout, fmt::format("probe: {} with rank {}: timed out after {} ms", what,
                                             peer_, timeout_.count()));
    }
  }
}

void Link::wait(Op& op, std::string_view what) {
  wait([&op] { return op.done; }, what);
  check(op, what);
}

void Link::wait_until_time(double until_us) {
  if (!virtual_clock_) {
    wait([&] { return now_us() >= until_us; }, "waiting");
    return;
  }
  while (now_us() < until_us) {
    const bool moved = transport_.progress();
    if (pump_) pump_();
    if (moved) continue;
    const double left = until_us - now_us();
    transport_.block(
        -1, std::chrono::microseconds(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(left)))));
  }
}

// ---- Responder --------------------------------------------------------------

Responder::Responder(Transport& transport, int measurer, uint32_t context)
    : transport_(transport), measurer_(measurer), channels_(context) {}

void Responder::check(const Op& op, std::string_view what) const {
  if (!op.status.ok) {
    throw Error(op.status.code, fmt::format("probe: {} from rank {} failed ({})", what, measurer_,
                                            errc_name(op.status.code)));
  }
}

bool Responder::pump() {
  bool moved = false;
  for (;;) {
    if (stopping_) {
      // The last reply must have left before the buffers may go.
      if (reply_op_.posted && !reply_op_.done) return moved;
      stopped_ = true;
      return true;
    }
    switch (state_) {
      case State::idle: {
        if (stopped_) return moved;
        if (!command_op_.posted) {
          command_op_.posted = true;
          transport_.recv(measurer_, channels_.command, command_bytes_, Command::kWireBytes,
                          &Op::complete, &command_op_);
          moved = true;
        }
        if (!command_op_.done) return moved;
        check(command_op_, "a command");
        if (command_op_.status.length != Command::kWireBytes) {
          throw Error(Errc::protocol,
                      fmt::format("probe: rank {} sent a {} B command (expected {})", measurer_,
                                  command_op_.status.length, Command::kWireBytes));
        }
        const Command next = Command::decode(command_bytes_, measurer_);
        if (next.op == Command::Op::stop) {
          command_op_.reset();
          stopping_ = true;
          continue;
        }
        // A larger reply buffer may replace the old one only once the last
        // reply has left it.
        if (next.out_bytes > reply_buffer_.size() && reply_op_.posted && !reply_op_.done) {
          return moved;
        }
        command_op_.reset();
        current_ = next;
        if (data_buffer_.size() < current_.in_bytes) data_buffer_.resize(current_.in_bytes);
        if (reply_buffer_.size() < current_.out_bytes) reply_buffer_.resize(current_.out_bytes);
        rounds_left_ = current_.rounds;
        received_ = 0;
        state_ = State::data;
        moved = true;
        continue;
      }
      case State::data: {
        if (received_ == current_.count) {
          state_ = State::reply;
          continue;
        }
        if (current_.op == Command::Op::exchange_posted) {
          if (posted_ops_.empty()) {
            for (uint32_t i = 0; i < current_.count; ++i) {
              Op& op = posted_ops_.emplace_back();
              op.posted = true;
              transport_.recv(measurer_, channels_.data, data_buffer_.data(),
                              static_cast<size_t>(current_.in_bytes), &Op::complete, &op);
            }
            moved = true;
          }
          for (const Op& op : posted_ops_)
            if (!op.done) return moved;
          for (const Op& op : posted_ops_)
            check(op, "a data message");
          posted_ops_.clear();
          received_ = current_.count;
          moved = true;
          continue;
        }
        if (!data_op_.posted) {
          data_op_.posted = true;
          transport_.recv(measurer_, channels_.data, data_buffer_.data(),
                          static_cast<size_t>(current_.in_bytes), &Op::complete, &data_op_);
          moved = true;
        }
        if (!data_op_.done) return moved;
        check(data_op_, "a data message");
        data_op_.reset();
        ++received_;
        moved = true;
        continue;
      }
      case State::reply: {
        // The previous round's reply must have left before this one goes.
        if (reply_op_.posted && !reply_op_.done) return moved;
        if (reply_op_.posted) {
          check(reply_op_, "a reply");
          reply_op_.reset();
        }
        reply_op_.posted = true;
        transport_.send(measurer_, channels_.reply, reply_buffer_.data(),
                        static_cast<size_t>(current_.out_bytes), &Op::complete, &reply_op_);
        moved = true;
        received_ = 0;
        state_ = --rounds_left_ > 0 ? State::data : State::idle;
        continue;
      }
    }
  }
}

void Responder::serve(std::chrono::milliseconds idle_timeout) {
  // Waits under wait_policy between commands (Link::wait says why); the
  // bound restarts whenever something moved.
  sched::WaitOptions options = sched::wait_options_from_params();
  options.timeout = idle_timeout;
  // Under hybrid a reply still in flight keeps this rank spinning: a
  // rendezvous reply needs its progress once the measurer posts the
  // receive, which it does only after a pause longer than the spin window
  // (receive_overhead), and a wake-up then would be timed as the
  // measurer's receive overhead.
  sched::WaitOptions sending = options;
  if (sending.policy == sched::WaitPolicy::hybrid) sending.policy = sched::WaitPolicy::spin;
  while (!stopped_) {
    const bool replying = reply_op_.posted && !reply_op_.done;
    sched::wait_until_described(
        transport_, -1, [&] { return pump() || stopped_; },
        [&] { return fmt::format("probe: rank {} sent nothing", measurer_); },
        replying ? sending : options);
  }
}

}  // namespace grove::model::probe
