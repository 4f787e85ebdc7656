#include "sched/executor.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>

#include <fmt/format.h>

#include "core/params.hpp"
#include "sched/reduce.hpp"
#include "sched/wait_loop.hpp"

namespace grove::sched {

namespace {

// `ended`: a message the transport reported without completing it (failed
// or cancelled after the execution failed).
enum class StepState : uint8_t { waiting, ready, in_flight, done, ended };

constexpr StepId kNoStep = std::numeric_limits<StepId>::max();

const params::IntParam cancel_wait_ms{
    "cancel_wait_ms", 1000, 0, 600000,
    "a call that fails, times out or is dropped cancels the messages it posted and waits at most "
    "this long (ms) for the transport to report them; one still under way then (a UCX rendezvous "
    "whose receiver never comes) fails the connection to its peer and is waited for as long again"};

std::string_view buffer_name(Buffer b) {
  switch (b) {
    case Buffer::input:
      return "input";
    case Buffer::output:
      return "output";
    case Buffer::scratch:
      return "scratch";
  }
  return "?";
}

std::string describe_step(const Step& step) {
  switch (step.kind) {
    case Kind::send:
      return fmt::format("send to {} on channel {}, {} bytes", step.peer, step.channel,
                         step.src.length);
    case Kind::recv:
      return fmt::format("recv from {} on channel {}, {} bytes", step.peer, step.channel,
                         step.dst.length);
    case Kind::copy:
      return fmt::format("copy {} bytes", step.src.length);
    case Kind::reduce:
      return fmt::format("reduce {} bytes", step.dst.length);
  }
  return "?";
}

bool is_message(Kind kind) {
  return kind == Kind::send || kind == Kind::recv;
}

// A binary min-heap of step ids over storage reserved at construction, so
// the hot path never allocates: the executor posts ready steps lowest id first.
class StepHeap {
 public:
  void reserve(size_t n) { ids_.reserve(n); }
  bool empty() const { return ids_.empty(); }
  void clear() { ids_.clear(); }
  size_t size() const { return ids_.size(); }
  StepId top() const { return ids_.front(); }
  void push(StepId id) {
    ids_.push_back(id);
    std::push_heap(ids_.begin(), ids_.end(), std::greater<>());
  }
  StepId pop() {
    std::pop_heap(ids_.begin(), ids_.end(), std::greater<>());
    const StepId id = ids_.back();
    ids_.pop_back();
    return id;
  }

 private:
  std::vector<StepId> ids_;
};

}  // namespace

struct Execution::State {
  // The context pointer of one message's completion: which execution, which step.
  struct Slot {
    State* state;
    StepId step;
  };

  // What the state was last prepared for: a state taken from the pool (see
  // take) whose key equals the new execution's skips validation and the
  // dependency graph, which depend on nothing else. The schedule is held by
  // `schedule` while the key names it, so its address cannot be reused.
  struct PreparedFor {
    const Schedule* schedule = nullptr;
    int ranks = 0;
    bool payload = true;
    size_t input_length = 0, output_length = 0;
    bool input_null = true, output_null = true;
    bool operator==(const PreparedFor&) const = default;
  };

  Transport* transport = nullptr;
  std::shared_ptr<const Schedule> schedule;
  Buffers buffers;
  Tag base_tag = 0;
  // Not cleared between executions of a pooled state: a schedule writes a
  // scratch byte before it reads it (every collective's tests pass with
  // scratch filled with garbage at each start).
  std::vector<std::byte> scratch;
  PreparedFor prepared;  // valid only after a prepare() that did not throw

  // Invariant: remaining[i] == number of step i's dependencies not yet done.
  std::vector<uint32_t> remaining;
  std::vector<uint32_t> initial_remaining;  // remaining[] before the start
  // Steps that depend on step i: dependents[dependents_begin[i], dependents_begin[i+1]).
  std::vector<uint32_t> dependents_begin;
  std::vector<StepId> dependents;
  std::vector<uint32_t> fill;  // prepare()'s cursor per step, kept for its capacity
  std::vector<StepState> states;
  std::vector<Slot> slots;
  StepHeap ready_local, ready_sends, ready_recvs;
  uint32_t sends_in_flight = 0;
  uint32_t recvs_in_flight = 0;
  size_t completed = 0;
  bool started = false;
  bool payload = true;  // transport->carries_payload()
  // True while pump() runs: completions that arrive meanwhile (immediate
  // completion inside send/recv) only record themselves, so nothing recurses.
  bool pumping = false;
  // Set when the Execution is destroyed with messages still in flight: the
  // state then lives until the transport reports the last of them.
  bool orphaned = false;
  std::optional<Error> error;

  // Pooled states, per thread (executions are made and dropped once per
  // collective call): a repeated call reuses the state, its vectors' capacity
  // and, for the same schedule and buffer lengths, its prepared graph.
  // Invariant: a pooled state has nothing in flight (orphaned states are
  // never pooled) and is not referenced by any transport.
  //
  // Plain data (constant-initialised, trivially destructible), so reaching it
  // costs one thread-local lookup and it stays readable after its thread's
  // destructors ran; `Reaper` deletes the states when the thread ends.
  struct Pool {
    static constexpr int kMaxKept = 8;
    State* states[kMaxKept];
    int count;
    bool armed;  // this thread's Reaper exists
    bool gone;   // this thread's Reaper ran: keep nothing more
  };
  static inline thread_local Pool pool{};
  struct Reaper {
    ~Reaper() {
      Pool& p = pool;
      p.gone = true;
      while (p.count > 0)
        delete p.states[--p.count];
    }
  };

  // A pooled state, preferring one last prepared for `wanted`; else a new one.
  static std::unique_ptr<State> take(const Schedule* wanted) {
    Pool& p = pool;
    if (p.count == 0) return std::make_unique<State>();
    int pick = p.count - 1;  // the most recently returned
    for (int i = p.count - 1; i >= 0; --i) {
      if (p.states[i]->prepared.schedule == wanted) {
        pick = i;
        break;
      }
    }
    std::unique_ptr<State> out(p.states[pick]);
    for (int i = pick + 1; i < p.count; ++i)
      p.states[i - 1] = p.states[i];
    --p.count;
    return out;
  }

  static void give(std::unique_ptr<State> state) {
    Pool& p = pool;
    if (p.gone || p.count == Pool::kMaxKept) return;  // `state` is freed here
    if (!p.armed) {
      thread_local Reaper reaper;
      (void)reaper;
      p.armed = true;
    }
    p.states[p.count++] = state.release();
  }

  // Makes this (new or pooled) state ready for a new execution.
  void reset(Transport& t, std::shared_ptr<const Schedule> s, Buffers b, Tag tag) {
    transport = &t;
    schedule = std::move(s);
    buffers = b;
    base_tag = tag;
    sends_in_flight = recvs_in_flight = 0;
    completed = 0;
    started = pumping = orphaned = false;
    error.reset();
    ready_local.clear();
    ready_sends.clear();
    ready_recvs.clear();
  }

  const std::vector<Step>& steps() const { return schedule->steps; }

  std::string where(StepId id) const {
    return fmt::format("rank {} {}: step {} ({})", transport->rank(),
                       schedule->algorithm.empty() ? "schedule" : schedule->algorithm, id,
                       describe_step(steps()[id]));
  }

  size_t buffer_length(Buffer b) const {
    switch (b) {
      case Buffer::input:
        return buffers.input_length;
      case Buffer::output:
        return buffers.output_length;
      case Buffer::scratch:
        return schedule->scratch_bytes;
    }
    return 0;
  }

  // Without payload (see carries_payload) buffers may be null; a null base
  // gives a null pointer rather than an offset from null.
  static std::byte* offset_from(std::byte* base, size_t offset) {
    return base == nullptr ? nullptr : base + offset;
  }

  const std::byte* read_ptr(const Region& r) {
    if (r.buffer != Buffer::input) return write_ptr(r);
    return buffers.input == nullptr ? nullptr : buffers.input + r.offset;
  }

  std::byte* write_ptr(const Region& r) {
    return offset_from(r.buffer == Buffer::output ? buffers.output : scratch.data(), r.offset);
  }

  void validate_region(StepId id, const Region& r, std::string_view role, bool written) const {
    const size_t length = buffer_length(r.buffer);
    auto bad = [&](const std::string& cause) {
      throw Error(Errc::invalid_argument, fmt::format("{}: {} region: {}", where(id), role, cause));
    };
    if (written && r.buffer == Buffer::input) bad("writes the read-only input buffer");
    if (r.offset > length || r.length > length - r.offset) {
      bad(fmt::format("[{}, +{}) exceeds the {}-byte {} buffer", r.offset, r.length, length,
                      buffer_name(r.buffer)));
    }
    const bool missing = r.buffer == Buffer::input    ? buffers.input == nullptr
                         : r.buffer == Buffer::output ? buffers.output == nullptr
                                                      : false;
    if (payload && missing && r.length > 0)
      bad(fmt::format("the {} buffer is null", buffer_name(r.buffer)));
  }

  void validate() {
    const Schedule& s = *schedule;
    if (s.max_sends == 0 || s.max_recvs == 0) {
      throw Error(Errc::invalid_argument,
                  fmt::format("rank {} {}: max_sends and max_recvs must be at least 1",
                              transport->rank(), s.algorithm));
    }
    for (StepId id = 0; id < s.steps.size(); ++id) {
      const Step& step = s.steps[id];
      if (step.deps_begin > step.deps_end || step.deps_end > s.deps.size()) {
        throw Error(Errc::invalid_argument,
                    fmt::format("{}: dependency range out of bounds", where(id)));
      }
      for (uint32_t d = step.deps_begin; d < step.deps_end; ++d) {
        if (s.deps[d] >= id) {
          throw Error(Errc::invalid_argument,
                      fmt::format("{}: depends on later step {}", where(id), s.deps[d]));
        }
      }
      if (is_message(step.kind)) {
        if (step.peer < 0 || step.peer >= transport->size()) {
          throw Error(Errc::invalid_argument, fmt::format("{}: peer {} is outside [0, {})",
                                                          where(id), step.peer, transport->size()));
        }
        if (step.channel >= (1u << tag::kChannelBits)) {
          throw Error(Errc::invalid_argument,
                      fmt::format("{}: channel {} does not fit in {} tag bits", where(id),
                                  step.channel, tag::kChannelBits));
        }
      }
      switch (step.kind) {
        case Kind::send:
          validate_region(id, step.src, "source", false);
          break;
        case Kind::recv:
          validate_region(id, step.dst, "destination", true);
          break;
        case Kind::copy:
        case Kind::reduce:
          validate_region(id, step.src, "source", false);
          validate_region(id, step.dst, "destination", true);
          if (step.src.length != step.dst.length) {
            throw Error(Errc::invalid_argument,
                        fmt::format("{}: source is {} bytes but destination is {}", where(id),
                                    step.src.length, step.dst.length));
          }
          if (step.kind == Kind::reduce) {
            if (!reduce_op_valid(s.op, s.dtype)) {
              throw Error(Errc::invalid_argument,
                          fmt::format("{}: {} is not defined on {}", where(id),
                                      reduce_op_name(s.op), datatype_name(s.dtype)));
            }
            if (step.dst.length % datatype_size(s.dtype) != 0) {
              throw Error(Errc::invalid_argument,
                          fmt::format("{}: {} bytes is not a whole number of {} elements",
                                      where(id), step.dst.length, datatype_name(s.dtype)));
            }
          }
          break;
      }
    }
  }

  void prepare() {
    const size_t n = steps().size();
    // Sizes-only transports (the simulator at scale) move no bytes, so no
    // scratch is allocated and local steps only keep the dependency order.
    payload = transport->carries_payload();
    const PreparedFor wanted{
        schedule.get(),           transport->size(),     payload,
        buffers.input_length,     buffers.output_length, buffers.input == nullptr,
        buffers.output == nullptr};
    if (wanted != prepared) {
      prepared = PreparedFor{};  // a throw below leaves the state unprepared
      if (payload) scratch.resize(schedule->scratch_bytes);
      validate();
      build_graph();
      prepared = wanted;
    }
    remaining = initial_remaining;  // same size: copies, never allocates
    states.assign(n, StepState::waiting);
  }

  // The dependency graph in CSR form, the initial dependency counts and the
  // slots; sized once per schedule, so a pooled state reallocates nothing
  // when its next schedule is no larger.
  void build_graph() {
    const size_t n = steps().size();
    initial_remaining.resize(n);
    slots.resize(n);
    dependents_begin.assign(n + 1, 0);
    dependents.resize(schedule->deps.size());
    size_t sends = 0, recvs = 0, locals = 0;
    for (StepId id = 0; id < n; ++id) {
      const Step& step = steps()[id];
      slots[id] = Slot{this, id};
      initial_remaining[id] = step.deps_end - step.deps_begin;
      for (uint32_t d = step.deps_begin; d < step.deps_end; ++d)
        dependents_begin[schedule->deps[d] + 1]++;
      (step.kind == Kind::send ? sends : step.kind == Kind::recv ? recvs : locals)++;
    }
    for (size_t i = 0; i < n; ++i)
      dependents_begin[i + 1] += dependents_begin[i];
    fill.assign(dependents_begin.begin(), dependents_begin.end() - 1);
    for (StepId id = 0; id < n; ++id) {
      const Step& step = steps()[id];
      for (uint32_t d = step.deps_begin; d < step.deps_end; ++d)
        dependents[fill[schedule->deps[d]]++] = id;
    }
    ready_sends.reserve(sends);
    ready_recvs.reserve(recvs);
    ready_local.reserve(locals);
  }

  void make_ready(StepId id) {
    states[id] = StepState::ready;
    switch (steps()[id].kind) {
      case Kind::send:
        ready_sends.push(id);
        break;
      case Kind::recv:
        ready_recvs.push(id);
        break;
      default:
        ready_local.push(id);
        break;
    }
  }

  void complete(StepId id) {
    states[id] = StepState::done;
    ++completed;
    for (uint32_t i = dependents_begin[id]; i < dependents_begin[id + 1]; ++i) {
      const StepId next = dependents[i];
      if (--remaining[next] == 0) make_ready(next);
    }
  }

  void fail(Errc code, StepId id, const std::string& cause) {
    if (!error) error.emplace(code, fmt::format("{}: {}", where(id), cause));
  }

  void message_done(StepId id, const Status& status) {
    const Step& step = steps()[id];
    if (step.kind == Kind::send)
      --sends_in_flight;
    else
      --recvs_in_flight;
    states[id] = StepState::ended;  // complete() below makes it done
    if (error) return;
    if (!status.ok) {
      switch (status.code) {
        case Errc::truncated:
          fail(status.code, id,
               fmt::format("message from peer {} is longer than the {}-byte receive (truncated)",
                           step.peer, step.dst.length));
          break;
        case Errc::peer_failed:
          fail(status.code, id, fmt::format("peer {} failed", step.peer));
          break;
        default:
          fail(status.code, id,
               fmt::format("the transport reported {} for peer {}", errc_name(status.code),
                           step.peer));
          break;
      }
      return;
    }
    if (step.kind == Kind::recv && status.length != step.dst.length) {
      fail(Errc::mismatch, id,
           fmt::format("peer {} sent {} bytes where {} were expected (peers disagree on the "
                       "schedule)",
                       step.peer, status.length, step.dst.length));
      return;
    }
    complete(id);
  }

  static void on_message(void* context, const Status& status) {
    const Slot& slot = *static_cast<const Slot*>(context);
    State& state = *slot.state;
    state.message_done(slot.step, status);
    if (state.orphaned) {
      if (state.sends_in_flight + state.recvs_in_flight == 0) delete &state;
      return;
    }
    if (!state.pumping) state.pump();
  }

  void run_local(StepId id) {
    const Step& step = steps()[id];
    if (payload && step.src.length > 0) {
      if (step.kind == Kind::copy) {
        std::memmove(write_ptr(step.dst), read_ptr(step.src), step.src.length);
      } else {
        reduce_bytes(schedule->op, schedule->dtype, write_ptr(step.dst), read_ptr(step.src),
                     step.dst.length);
      }
    }
    complete(id);
  }

  void post(StepId id) {
    const Step& step = steps()[id];
    states[id] = StepState::in_flight;
    const Tag tag = tag::with_channel(base_tag, step.channel);
    if (step.kind == Kind::send) {
      ++sends_in_flight;
      transport->send(step.peer, tag, read_ptr(step.src), step.src.length, &State::on_message,
                      &slots[id]);
    } else {
      ++recvs_in_flight;
      transport->recv(step.peer, tag, write_ptr(step.dst), step.dst.length, &State::on_message,
                      &slots[id]);
    }
  }

  // Runs or posts ready steps, lowest step id first, within the in-flight
  // limits, until nothing more can start.
  void pump_steps() {
    while (!error) {
      StepId best = kNoStep;
      StepHeap* from = nullptr;
      auto consider = [&](StepHeap& heap, bool allowed) {
        if (allowed && !heap.empty() && heap.top() < best) {
          best = heap.top();
          from = &heap;
        }
      };
      consider(ready_local, true);
      consider(ready_sends, sends_in_flight < schedule->max_sends);
      consider(ready_recvs, recvs_in_flight < schedule->max_recvs);
      if (from == nullptr) return;
      from->pop();
      if (is_message(steps()[best].kind))
        post(best);
      else
        run_local(best);
    }
  }

  size_t in_flight() const { return sends_in_flight + recvs_in_flight; }

  // Execution::abort's cancellation: each message in flight once with
  // `mode` (fail_peer for a departed peer in any case).
  void cancel_in_flight(CancelMode mode, FunctionRef<bool(int)> departed) {
    for (StepId id = 0; id < steps().size(); ++id) {
      if (states[id] != StepState::in_flight) continue;
      const Step& step = steps()[id];
      const bool gone = departed && departed(step.peer);
      transport->cancel(step.peer, tag::with_channel(base_tag, step.channel), &slots[id],
                        gone ? CancelMode::fail_peer : mode);
    }
  }

  bool await_reports() {
    return await_cancelled(*transport, [this] { return in_flight() == 0; });
  }

  size_t abort(FunctionRef<bool(int)> departed) {
    if (in_flight() == 0) return 0;
    cancel_in_flight(CancelMode::request, departed);
    if (await_reports()) return 0;
    cancel_in_flight(CancelMode::fail_peer, departed);
    await_reports();
    return in_flight();
  }

  void pump() {
    pumping = true;
    try {
      pump_steps();
    } catch (const Error& e) {
      if (!error)
        error.emplace(e.code(), fmt::format("rank {} {}: {}", transport->rank(),
                                            schedule->algorithm, e.what()));
    } catch (const std::exception& e) {
      if (!error)
        error.emplace(Errc::internal, fmt::format("rank {} {}: {}", transport->rank(),
                                                  schedule->algorithm, e.what()));
    }
    pumping = false;
  }
};

bool await_cancelled(Transport& transport, FunctionRef<bool()> all_reported) {
  struct Waiter : WaiterBase {
    Transport& transport;
    FunctionRef<bool()> all_reported;
    bool ready() const { return all_reported(); }
    void check() {}
    bool progress() { return transport.progress(); }
    void sleep(std::chrono::microseconds max) { transport.block(-1, max); }
  };
  WaitOptions options = wait_options_from_params();
  options.timeout = std::chrono::milliseconds(cancel_wait_ms.get());
  Waiter waiter{{}, transport, all_reported};
  return waiter.ready() || wait_loop(waiter, options, transport_cadence(options));
}

Execution::Execution(Transport& transport, std::shared_ptr<const Schedule> schedule,
                     Buffers buffers, Tag base_tag) {
  if (!schedule) throw Error(Errc::internal, "Execution: no schedule");
  state_ = State::take(schedule.get());
  state_->reset(transport, std::move(schedule), buffers, base_tag);
  try {
    state_->prepare();
  } catch (...) {
    State::give(std::move(state_));  // nothing was posted
    throw;
  }
}

Execution::~Execution() {
  if (!state_) return;
  if (state_->in_flight() > 0) {
    try {
      abort(Error(Errc::cancelled,
                  fmt::format("rank {} {}: execution dropped before it completed",
                              state_->transport->rank(), state_->schedule->algorithm)));
    } catch (const std::exception&) {
      // Progress failed while cancelling: what is in flight stays so.
    }
  }
  if (state_->in_flight() > 0) {
    // The transport still holds pointers into the state; it frees itself when
    // the last completion arrives (see State::on_message).
    state_->orphaned = true;
    (void)state_.release();
    return;
  }
  State::give(std::move(state_));
}

size_t Execution::abort(const Error& cause, FunctionRef<bool(int)> departed) {
  State& s = *state_;
  if (!s.error) s.error.emplace(cause);
  return s.abort(departed);
}

void Execution::start() {
  State& s = *state_;
  if (s.started) {
    throw Error(Errc::internal, fmt::format("rank {} {}: execution started twice",
                                            s.transport->rank(), s.schedule->algorithm));
  }
  s.started = true;
  for (StepId id = 0; id < s.steps().size(); ++id) {
    if (s.remaining[id] == 0) s.make_ready(id);
  }
  s.pump();
}

bool Execution::done() const {
  return state_->started && (state_->error || state_->completed == state_->steps().size());
}

const std::optional<Error>& Execution::error() const {
  return state_->error;
}

const Schedule& Execution::schedule() const {
  return *state_->schedule;
}

std::string Execution::describe_pending() const {
  const State& s = *state_;
  const size_t total = s.steps().size();
  std::string out = fmt::format("rank {} {}: {} of {} steps done", s.transport->rank(),
                                s.schedule->algorithm, s.completed, total);
  if (!s.started) return out + " (not started)";
  constexpr int kListed = 8;
  int listed = 0;
  size_t in_flight = 0, ready = 0, waiting = 0;
  std::string pending;
  for (StepId id = 0; id < total; ++id) {
    switch (s.states[id]) {
      case StepState::in_flight:
        ++in_flight;
        if (listed++ < kListed)
          pending += fmt::format("{}{} (step {})", listed > 1 ? ", " : "",
                                 describe_step(s.steps()[id]), id);
        break;
      case StepState::ready:
        ++ready;
        break;
      case StepState::waiting:
        ++waiting;
        break;
      case StepState::done:
      case StepState::ended:
        break;
    }
  }
  if (in_flight > 0) {
    out += fmt::format("; waiting on {}", pending);
    if (in_flight > kListed) out += fmt::format(" and {} more", in_flight - kListed);
  }
  if (ready > 0) out += fmt::format("; {} ready but held by the in-flight limits", ready);
  if (waiting > 0) out += fmt::format("; {} waiting on dependencies", waiting);
  return out;
}

}  // namespace grove::sched
