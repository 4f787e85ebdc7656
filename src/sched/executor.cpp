#include "sched/executor.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>

#include <fmt/format.h>

#include "core/params.hpp"
#include "sched/context_registry.hpp"
#include "sched/ready_steps.hpp"
#include "sched/reduce.hpp"
#include "sched/step_cells.hpp"
#include "sched/step_graph.hpp"
#include "sched/wait_loop.hpp"

namespace grove::sched {

namespace {

constexpr StepId kNoStep = std::numeric_limits<StepId>::max();

const params::IntParam cancel_wait_ms{
    "cancel_wait_ms", 1000, 0, 600000,
    "a call that fails, times out or is dropped cancels the messages it posted and waits at most "
    "this long (ms) for the transport to report them; one still under way then (a UCX rendezvous "
    "whose receiver never comes) fails the connection to its peer and is waited for as long again"};

}  // namespace

struct alignas(64) Execution::State {
  // What the state was last prepared for: a state taken from the pool (see
  // take) whose key equals the new execution's skips validation, which
  // depends on nothing else. The schedule is held by `schedule` while the
  // key names it, so its address cannot be reused.
  struct PreparedFor {
    const Schedule* schedule = nullptr;
    int ranks = 0;
    int shift = 0;
    bool payload = true;
    size_t input_length = 0, output_length = 0;
    bool input_null = true, output_null = true;
    bool operator==(const PreparedFor&) const = default;
  };

  // ---- The hot part: what completing a step and posting the steps it
  // readies read and write, in the state's first three cache lines, of
  // which a schedule without in-flight limits reads two (the simulator runs
  // thousands of executions in turn, so each completion loads its state's
  // lines afresh: the fewer, the faster).
  // Line 0. Set by prepare(): the schedule's steps, its graph (shared by
  // every execution of the schedule: its dependents are read through it),
  // its symmetry (the layout length_of and peer_of read when shift != 0).
  const Step* steps = nullptr;
  const StepGraph* graph_view = nullptr;  // graph.get()
  Transport* transport = nullptr;
  Tag base_tag = 0;
  const Symmetry* symmetry = nullptr;  // &schedule->symmetry
  uint32_t remaining = 0;              // steps not done
  // Messages in flight (with limits, also counted by kind below).
  uint32_t in_flight_count = 0;
  // Names this state in completion contexts (ContextRegistry): a message's
  // context is (context_index, step), so in-flight messages cost nothing here.
  const uint32_t context_index;
  // This rank runs `schedule` relabelled by `shift` (Symmetry): 0 for a
  // schedule built for this rank.
  int32_t shift = 0;
  // A schedule without in-flight limits keeps all ready steps in
  // ready_local: lowest id first among all is then the same order.
  bool unlimited = false;
  bool started = false;
  // True while pump() runs: completions that arrive meanwhile (immediate
  // completion inside send/recv) only record themselves, so nothing recurses.
  bool pumping = false;
  // Set when the Execution is destroyed with messages still in flight: the
  // state then lives until the transport reports the last of them.
  bool orphaned = false;
  bool failed = false;  // error.has_value(), read where the error is not
  bool payload = true;  // transport->carries_payload()
  // Line 1, read only by a schedule with in-flight limits (a pairwise
  // alltoall's completion reads both counts and both queues): the ready
  // sends and receives, the counts in flight by kind and the limits.
  ReadySteps ready_sends, ready_recvs;
  uint32_t sends_in_flight = 0, recvs_in_flight = 0;  // counted only with limits
  uint32_t max_sends = kUnlimited, max_recvs = kUnlimited;
  // Line 2: the ready steps (all of them without limits; else the local
  // ones) and the cells (what every access reads first).
  ReadySteps ready_local;
  // Invariant: a waiting step's cell counts its dependencies not yet done.
  StepCells cells;

  // ---- The rest: read when steps move bytes (only with payload), or when
  // an execution is made, fails or ends.
  uint32_t step_total = 0;              // schedule->steps.size()
  Execution::DoneFn done_fn = nullptr;  // notify_when_done
  ReadySpill spill_local, spill_sends, spill_recvs;
  const std::byte* input = nullptr;   // buffers.input
  std::byte* output = nullptr;        // buffers.output
  std::byte* scratch_data = nullptr;  // scratch.data() as prepare() left it
  std::shared_ptr<const Schedule> schedule;
  // Derived from `schedule` alone and shared with every other execution of
  // it; `graph_of_schedule` names the schedule it was derived from.
  std::shared_ptr<const StepGraph> graph;
  const Schedule* graph_of_schedule = nullptr;
  Buffers buffers;
  // Not cleared between executions of a pooled state: a schedule writes a
  // scratch byte before it reads it (every collective's tests pass with
  // scratch filled with garbage at each start).
  std::vector<std::byte> scratch;
  PreparedFor prepared;        // valid only after a prepare() that did not throw
  std::optional<Error> error;  // set by set_error, with `failed`
  void* done_context = nullptr;

  State() : context_index(ContextRegistry::add(this)) {}
  ~State() { ContextRegistry::remove(context_index); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Pooled states, per thread (executions are made and dropped once per
  // collective call): a repeated call reuses the state, its vectors' capacity
  // and, for the same schedule and buffer lengths, its validation.
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
    step_total = static_cast<uint32_t>(schedule->steps.size());
    remaining = step_total;
    buffers = b;
    input = b.input;
    output = b.output;
    base_tag = tag;
    in_flight_count = sends_in_flight = recvs_in_flight = 0;
    started = pumping = orphaned = failed = false;
    error.reset();
    done_fn = nullptr;
    ready_local.clear();
    ready_sends.clear();
    ready_recvs.clear();
  }

  size_t step_count() const { return step_total; }

  // The first error is kept; `failed` says there is one.
  void set_error(const Error& e) {
    error.emplace(e);
    failed = true;
  }

  // Step `id` as this rank runs it: the schedule's own, or its relabelled
  // copy (written to `copy`) when the schedule was built for another rank.
  const Step& step_at(StepId id, Step& copy) const {
    const Step& raw = schedule->steps[id];
    if (shift == 0) return raw;
    copy = relabel_step(*schedule, raw, shift);
    return copy;
  }

  // The parts of step `raw` the hot path uses, as this rank runs it.
  int peer_of(const Step& raw) const {
    if (shift == 0) return raw.peer;
    const int peer = raw.peer + shift;  // both below size: one subtraction wraps it
    const int size = symmetry->size;
    return peer >= size ? peer - size : peer;
  }
  // prepare() checked every step as this rank runs it (validate_steps, or
  // the relabel summary for every shift), so a marked region of one block
  // moves here without the checks relabel_region makes; it equals
  // relabel_region's result (a span of one block ends where it starts). A
  // span of several blocks takes the checked path.
  Region region_of(const Region& raw) const {
    if (shift == 0 || raw.mark == Mark::none) return raw;
    if (raw.mark == Mark::block && raw.span != 1) return relabel_region(*schedule, raw, shift);
    const size_t moved = moved_block(raw);
    Region out = raw;
    out.block = static_cast<uint32_t>(moved);
    out.length = symmetry->lengths_of(raw.buffer)[moved];
    if (raw.mark == Mark::block) {
      const std::vector<size_t>& offsets = symmetry->offsets_of(raw.buffer);
      out.offset = raw.offset - offsets[raw.block] + offsets[moved];
    }
    return out;
  }
  // region_of's length alone (without payload the hot path needs no more).
  size_t length_of(const Region& raw) const {
    if (shift == 0 || raw.mark == Mark::none) return raw.length;
    if (raw.mark == Mark::block && raw.span != 1)
      return relabel_region(*schedule, raw, shift).length;
    return symmetry->lengths_of(raw.buffer)[moved_block(raw)];
  }
  // Every layout of a symmetric schedule has `size` blocks (prepare() checked).
  size_t moved_block(const Region& raw) const {
    const size_t blocks = symmetry->lengths.size();
    const size_t moved = raw.block + static_cast<size_t>(shift);  // both below blocks
    return moved >= blocks ? moved - blocks : moved;
  }

  std::string where(StepId id) const {
    Step copy;
    return fmt::format("rank {} {}: step {} ({})", transport->rank(),
                       schedule->algorithm.empty() ? "schedule" : schedule->algorithm, id,
                       describe_step(step_at(id, copy)));
  }

  // Without payload (see carries_payload) buffers may be null; a null base
  // gives a null pointer rather than an offset from null.
  static std::byte* offset_from(std::byte* base, size_t offset) {
    return base == nullptr ? nullptr : base + offset;
  }

  const std::byte* read_ptr(const Region& r) {
    if (r.buffer != Buffer::input) return write_ptr(r);
    return input == nullptr ? nullptr : input + r.offset;
  }

  std::byte* write_ptr(const Region& r) {
    return offset_from(r.buffer == Buffer::output ? output : scratch_data, r.offset);
  }

  // The relabelling this rank applies to `schedule`: throws when the
  // schedule was built for another rank and does not cover this one.
  int shift_for_this_rank() const {
    const Symmetry& sym = schedule->symmetry;
    const int rank = transport->rank();
    if (!sym.declared() || rank == sym.built_for) return 0;
    const int d = transport->size() == sym.size ? sym.shift_of(rank) : -1;
    if (d < 0) {
      throw Error(Errc::invalid_argument,
                  fmt::format("rank {} of {}: the schedule {} was built for rank {} of {} and "
                              "covers only ranks {} apart",
                              rank, transport->size(), schedule->algorithm, sym.built_for, sym.size,
                              sym.period));
    }
    return d;
  }

  void prepare() {
    // Sizes-only transports (the simulator at scale) move no bytes, so no
    // scratch is allocated and local steps only keep the dependency order.
    payload = transport->carries_payload();
    shift = 0;  // where() relabels nothing until the shift is known
    const int wanted_shift = shift_for_this_rank();
    const PreparedFor wanted{schedule.get(),
                             transport->size(),
                             wanted_shift,
                             payload,
                             buffers.input_length,
                             buffers.output_length,
                             buffers.input == nullptr,
                             buffers.output == nullptr};
    if (wanted != prepared) {
      prepared = PreparedFor{};  // a throw below leaves the state unprepared
      if (graph_of_schedule != schedule.get()) {
        graph = graph_of(schedule);
        graph_of_schedule = schedule.get();
      }
      if (payload) scratch.resize(schedule->scratch_bytes);
      const ValidationTarget target{transport->rank(), transport->size(), &buffers, payload};
      // A relabelled copy whose summary fits these buffers is valid step by
      // step; otherwise (and always for the schedule's own rank) check each.
      if (wanted_shift == 0 || !relabel_summary_admits(*graph, *schedule, target))
        validate_steps(*schedule, wanted_shift, target);
      prepared = wanted;
    }
    shift = wanted_shift;
    const Symmetry& sym = schedule->symmetry;
    symmetry = &sym;
    scratch_data = scratch.data();
    steps = schedule->steps.data();
    max_sends = schedule->max_sends;
    max_recvs = schedule->max_recvs;
    unlimited = max_sends == kUnlimited && max_recvs == kUnlimited;
    graph_view = graph.get();
    cells.reset(*graph);
  }

  void make_ready(StepId id) {
    cells.set(id, StepCells::kReady);
    queue_ready(id);
  }

  // Queues a step whose cell says ready.
  void queue_ready(StepId id) {
    if (unlimited) {
      ready_local.push(id, spill_local);
      return;
    }
    switch (steps[id].kind) {
      case Kind::send:
        ready_sends.push(id, spill_sends);
        break;
      case Kind::recv:
        ready_recvs.push(id, spill_recvs);
        break;
      default:
        ready_local.push(id, spill_local);
        break;
    }
  }

  void complete(StepId id) {
    cells.finish(id);
    --remaining;
    const StepId* dependents = graph_view->dependents.data();
    const uint32_t* begin = graph_view->dependents_begin.data();
    cells.satisfy_each(dependents + begin[id], dependents + begin[id + 1],
                       [this](StepId next) { queue_ready(next); });
  }

  void fail(Errc code, StepId id, const std::string& cause) {
    if (!failed) set_error(Error(code, fmt::format("{}: {}", where(id), cause)));
  }

  // Out of line (the completion path is flattened around them): a message
  // the transport failed, and a receive of the wrong length.
  [[gnu::noinline]] void failed_message(StepId id, const Status& status) {
    cells.set(id, StepCells::kEnded);
    Step copy;
    const Step& step = step_at(id, copy);
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
  }
  [[gnu::noinline]] void wrong_length(StepId id, size_t length, size_t expected) {
    cells.set(id, StepCells::kEnded);
    fail(Errc::mismatch, id,
         fmt::format("peer {} sent {} bytes where {} were expected (peers disagree on the "
                     "schedule)",
                     peer_of(steps[id]), length, expected));
  }

  void message_done(StepId id, const Status& status) {
    const Step& raw = steps[id];
    --in_flight_count;
    if (!unlimited) {
      if (raw.kind == Kind::send)
        --sends_in_flight;
      else
        --recvs_in_flight;
    }
    // Reported, so no longer in flight: complete() below makes it done;
    // every other way out marks it ended (abort() cancels only what is in
    // flight).
    if (failed) {
      cells.set(id, StepCells::kEnded);
      return;
    }
    if (!status.ok) {
      failed_message(id, status);
      return;
    }
    if (raw.kind == Kind::recv) {
      const size_t expected = length_of(raw.dst);
      if (status.length != expected) {
        wrong_length(id, status.length, expected);
        return;
      }
    }
    complete(id);
  }

  // Flattened: completing a step, making its dependents ready and posting
  // them is one function (the simulator runs this for every message).
  [[gnu::flatten]] static void on_message(void* context, const Status& status) {
    auto& state = *static_cast<State*>(ContextRegistry::owner(ContextRegistry::index_of(context)));
    state.message_done(ContextRegistry::step_of(context), status);
    if (state.orphaned) {
      if (state.in_flight_count == 0) delete &state;
      return;
    }
    if (state.pumping) return;  // the outer pump and its caller go on
    state.pump();
    state.maybe_notify_done();
  }

  bool finished() const { return started && (failed || remaining == 0); }
  // Last thing its caller does: the callback may destroy the execution.
  void maybe_notify_done() {
    if (!finished() || done_fn == nullptr) return;
    const Execution::DoneFn fn = done_fn;
    done_fn = nullptr;
    fn(done_context);
  }

  void run_local(StepId id) {
    const Step& raw = steps[id];
    if (payload) {  // without payload a local step only keeps the order
      const Region src = region_of(raw.src);
      const Region dst = region_of(raw.dst);
      if (src.length > 0) {
        if (raw.kind == Kind::copy) {
          std::memmove(write_ptr(dst), read_ptr(src), src.length);
        } else {
          reduce_bytes(schedule->op, schedule->dtype, write_ptr(dst), read_ptr(src), dst.length);
        }
      }
    }
    complete(id);
  }

  void post(StepId id) {
    const Step& raw = steps[id];
    const bool send = raw.kind == Kind::send;
    const Region& region = send ? raw.src : raw.dst;
    const size_t length = length_of(region);
    // An empty block of a marked region moves nothing: done without a message
    // (its peer's step for that block is empty too).
    if (length == 0 && region.mark != Mark::none) [[unlikely]] {
      complete(id);
      return;
    }
    cells.set(id, StepCells::kInFlight);
    const Tag tag = tag::with_channel(base_tag, raw.channel);
    void* context = ContextRegistry::token(context_index, id);
    ++in_flight_count;
    if (!unlimited) ++(send ? sends_in_flight : recvs_in_flight);
    try {
      // A transport without payload is handed no buffer (it reads and
      // writes none; the buffers may be null).
      if (send) {
        transport->send(peer_of(raw), tag, payload ? read_ptr(region_of(raw.src)) : nullptr, length,
                        &State::on_message, context);
      } else {
        transport->recv(peer_of(raw), tag, payload ? write_ptr(region_of(raw.dst)) : nullptr,
                        length, &State::on_message, context);
      }
    } catch (...) {
      // A post that throws left nothing with the transport: it is not in
      // flight, and abort() must not wait for it to be cancelled.
      --in_flight_count;
      if (!unlimited) --(send ? sends_in_flight : recvs_in_flight);
      cells.set(id, StepCells::kEnded);
      throw;
    }
  }

  // Runs or posts ready steps, lowest step id first, within the in-flight
  // limits, until nothing more can start.
  void pump_steps() {
    if (unlimited) {
      while (!failed && !ready_local.empty()) {
        const StepId id = ready_local.top();
        ready_local.pop();
        const Kind kind = steps[id].kind;
        if (kind == Kind::send || kind == Kind::recv)
          post(id);
        else
          run_local(id);
      }
      return;
    }
    while (!failed) {
      StepId best = kNoStep;
      ReadySteps* from = nullptr;
      if (!ready_local.empty()) {
        best = ready_local.top();
        from = &ready_local;
      }
      if (!ready_sends.empty() && sends_in_flight < max_sends && ready_sends.top() < best) {
        best = ready_sends.top();
        from = &ready_sends;
      }
      if (!ready_recvs.empty() && recvs_in_flight < max_recvs && ready_recvs.top() < best) {
        best = ready_recvs.top();
        from = &ready_recvs;
      }
      if (from == nullptr) return;
      from->pop();
      if (from == &ready_local)
        run_local(best);
      else
        post(best);
    }
  }

  size_t in_flight() const { return in_flight_count; }

  // Execution::abort's cancellation: each message in flight once with
  // `mode` (fail_peer for a departed peer in any case).
  void cancel_in_flight(CancelMode mode, FunctionRef<bool(int)> departed) {
    for (StepId id = 0; id < step_count(); ++id) {
      if (cells.peek(id) != StepCells::kInFlight) continue;
      Step copy;
      const Step& step = step_at(id, copy);
      const bool gone = departed && departed(step.peer);
      transport->cancel(step.peer, tag::with_channel(base_tag, step.channel),
                        ContextRegistry::token(context_index, id),
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
      if (!failed)
        set_error(Error(e.code(), fmt::format("rank {} {}: {}", transport->rank(),
                                              schedule->algorithm, e.what())));
    } catch (const std::exception& e) {
      if (!failed)
        set_error(Error(Errc::internal, fmt::format("rank {} {}: {}", transport->rank(),
                                                    schedule->algorithm, e.what())));
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

CompletionFn Execution::completion_fn() {
  return &State::on_message;
}

void Execution::prefetch_completion(const void* context) {
  // The hot part (see State): lines 0 and 2, and line 1, which only a
  // schedule with limits reads (one line more costs less than a test).
  const auto* state =
      static_cast<const char*>(ContextRegistry::owner(ContextRegistry::index_of(context)));
  if (state == nullptr) return;
  __builtin_prefetch(state);
  __builtin_prefetch(state + 64);
  __builtin_prefetch(state + 128);
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
    // The transport still holds contexts naming the state; it frees itself
    // when the last completion arrives (see State::on_message).
    state_->orphaned = true;
    (void)state_.release();
    return;
  }
  State::give(std::move(state_));
}

size_t Execution::abort(const Error& cause, FunctionRef<bool(int)> departed) {
  State& s = *state_;
  if (!s.failed) s.set_error(cause);
  return s.abort(departed);
}

void Execution::start() {
  State& s = *state_;
  if (s.started) {
    throw Error(Errc::internal, fmt::format("rank {} {}: execution started twice",
                                            s.transport->rank(), s.schedule->algorithm));
  }
  s.started = true;
  for (const StepId id : s.graph->roots)
    s.make_ready(id);
  s.pump();
  s.maybe_notify_done();
}

bool Execution::done() const {
  return state_->finished();
}

void Execution::notify_when_done(DoneFn fn, void* context) {
  state_->done_fn = fn;
  state_->done_context = context;
}

const std::optional<Error>& Execution::error() const {
  return state_->error;
}

const Schedule& Execution::schedule() const {
  return *state_->schedule;
}

size_t Execution::footprint(size_t steps, size_t window, size_t ready_storage) {
  constexpr size_t kAllocation = 16;  // malloc's own bytes per block
  const size_t chunk = StepCells::chunk_cells_for(steps);
  const size_t chunks =
      steps == 0 ? 0 : std::min((window + chunk - 1) / chunk + 1, (steps + chunk - 1) / chunk);
  const size_t per_chunk_index = sizeof(uint8_t*) + sizeof(uint32_t);
  return sizeof(State) + kAllocation * 6 + chunks * (chunk + kAllocation) +
         (steps + chunk - 1) / chunk * per_chunk_index + ready_storage * sizeof(StepId);
}

std::string Execution::describe_pending() const {
  const State& s = *state_;
  const size_t total = s.step_count();
  std::string out = fmt::format("rank {} {}: {} of {} steps done", s.transport->rank(),
                                s.schedule->algorithm, total - s.remaining, total);
  if (!s.started) return out + " (not started)";
  constexpr int kListed = 8;
  int listed = 0;
  size_t in_flight = 0, ready = 0, waiting = 0;
  std::string pending;
  for (StepId id = 0; id < total; ++id) {
    switch (s.cells.peek(id)) {
      case StepCells::kInFlight: {
        ++in_flight;
        Step copy;
        if (listed++ < kListed)
          pending += fmt::format("{}{} (step {})", listed > 1 ? ", " : "",
                                 describe_step(s.step_at(id, copy)), id);
        break;
      }
      case StepCells::kReady:
        ++ready;
        break;
      case StepCells::kDone:
        break;
      case StepCells::kEnded:
        break;
      default:
        ++waiting;
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
