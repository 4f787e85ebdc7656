#include "rma/window_core.hpp"

#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "rma/abandon.hpp"
#include "rma/word_ops.hpp"
#include "sched/wait.hpp"

namespace grove::rma {

// Operations posted to the transport and not yet complete. Held by a
// shared_ptr; a window destroyed with operations still in flight (after a
// failure) leaves it alive so a late completion never writes freed memory.
struct WindowCore::Inflight {
  size_t outstanding = 0;
  bool failed = false;
  Errc code = Errc::internal;
  // One-shot completions of blocking operations whose wait was abandoned
  // (a timeout); kept until the window goes.
  std::vector<std::shared_ptr<void>> orphans;

  static void done(void* context, const Status& status) {
    auto* self = static_cast<Inflight*>(context);
    --self->outstanding;
    if (!status.ok && !self->failed) {
      self->failed = true;
      self->code = status.code;
    }
  }
};

namespace {

struct Single {
  bool done = false;
  Status status;
  uint64_t fetched = 0;  // a fetching atomic's result lands here
  static void complete(void* context, const Status& status) {
    auto* self = static_cast<Single*>(context);
    self->done = true;
    self->status = status;
  }
};

// Header of a window's creation exchange: what each member believes.
struct WindowHeader {
  uint32_t type;
  uint32_t element;
  uint64_t count;
};

std::string window_name(Datatype type, size_t count) {
  return fmt::format("window({} x {})", datatype_name(type), count);
}

// Words of a target reached through the transport: every call waits for
// its own completion.
class RemoteWords final : public WordAccess {
 public:
  using Waiter = std::function<void(const std::shared_ptr<Single>&, const char*)>;
  RemoteWords(Transport& transport, RmaTarget& target, Waiter wait)
      : transport_(transport), target_(target), wait_(std::move(wait)) {}

  uint64_t load(size_t word_offset, uint8_t width) override {
    // An atomic read: fetch-and-add of zero.
    RmaAtomic atomic;
    atomic.op = RmaAtomicOp::add;
    atomic.width = width;
    return run(word_offset, atomic, "atomic read");
  }
  uint64_t compare_swap(size_t word_offset, uint8_t width, uint64_t expected,
                        uint64_t desired) override {
    RmaAtomic atomic;
    atomic.op = RmaAtomicOp::cswap;
    atomic.width = width;
    atomic.compare = expected;
    atomic.operand = desired;
    return run(word_offset, atomic, "compare-and-swap");
  }
  bool native(size_t word_offset, uint8_t width, RmaAtomicOp op, uint64_t operand,
              uint64_t* fetch) override {
    // The transport fetches the previous value of add only (transport.hpp).
    if (fetch != nullptr && op != RmaAtomicOp::add) return false;
    RmaAtomic atomic;
    atomic.op = op;
    atomic.width = width;
    atomic.operand = operand;
    if (fetch != nullptr) {
      *fetch = run(word_offset, atomic, "fetching atomic");
      return true;
    }
    transport_.rma_atomic(target_, word_offset, atomic, post_done_, post_context_);
    return true;
  }
  // Where posted (non-fetching) atomics report completion.
  void set_post_completion(CompletionFn done, void* context) {
    post_done_ = done;
    post_context_ = context;
  }

 private:
  uint64_t run(size_t word_offset, RmaAtomic atomic, const char* what) {
    auto single = std::make_shared<Single>();
    atomic.fetch = &single->fetched;
    transport_.rma_atomic(target_, word_offset, atomic, &Single::complete, single.get());
    wait_(single, what);
    return single->fetched;
  }

  Transport& transport_;
  RmaTarget& target_;
  Waiter wait_;
  CompletionFn post_done_ = nullptr;
  void* post_context_ = nullptr;
};

}  // namespace

WindowCore::WindowCore(std::shared_ptr<Group> group, Datatype type, size_t count)
    : group_(std::move(group)),
      type_(type),
      count_(count),
      element_(datatype_size(type)),
      inflight_(std::make_shared<Inflight>()) {
  if (count > (size_t{1} << 50) / element_) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {}: too many elements", group_->rank(), name()));
  }
  const WindowHeader mine{static_cast<uint32_t>(type), static_cast<uint32_t>(element_), count};
  const std::string what = name();
  const int me = group_->rank();
  auto check = [&](const std::vector<std::span<const std::byte>>& headers) {
    for (size_t m = 0; m < headers.size(); ++m) {
      WindowHeader theirs{};
      if (headers[m].size() != sizeof(theirs)) {
        throw Error(Errc::protocol, fmt::format("rank {}: {}: rank {} sent a {}-byte header", me,
                                                what, m, headers[m].size()));
      }
      std::memcpy(&theirs, headers[m].data(), sizeof(theirs));
      if (theirs.type != mine.type || theirs.count != mine.count) {
        const auto their_type = static_cast<Datatype>(theirs.type);
        throw Error(
            Errc::mismatch,
            fmt::format("rank {}: {}: rank {} created {} for this call; every rank must create "
                        "its window with the same element type and count (nothing was written)",
                        me, what, m,
                        theirs.type <= static_cast<uint32_t>(Datatype::float64)
                            ? window_name(their_type, theirs.count)
                            : fmt::format("a window of unknown type {}", theirs.type)));
      }
    }
  };
  // Whole words, so an element's containing word lies inside the region.
  const size_t bytes = (count * element_ + 7) / 8 * 8;
  regions_ = exchange_regions(*group_, bytes, std::as_bytes(std::span(&mine, 1)), check, {}, what);
}

WindowCore::~WindowCore() {
  if (!closed_) {
    // Not collective here: the owner failed before close(). Let operations
    // in flight finish (bounded), then let go of the memory.
    try {
      if (inflight_->outstanding > 0) {
        sched::wait_until(
            group_->transport(), group_->notice_fd(),
            [this] { return inflight_->outstanding == 0; }, name() + " teardown");
      }
    } catch (const Error&) {
    }
  }
  if (inflight_->outstanding > 0) {
    // A completion may still come: keep its target alive.
    new std::shared_ptr<Inflight>(inflight_);
  }
  regions_.targets.clear();
  regions_.local.reset();
}

std::byte* WindowCore::local() {
  check_open("local");
  return regions_.local->data();
}

std::string WindowCore::name() const {
  return window_name(type_, count_);
}

void WindowCore::check_open(const char* call) const {
  if (closed_) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {} {}: the window is closed", group_->rank(), name(), call));
  }
}

void WindowCore::check_access(const char* call, int target, size_t index, size_t n) {
  check_open(call);
  const int me = group_->rank();
  if (target < 0 || target >= group_->size()) {
    throw Error(Errc::invalid_argument, fmt::format("rank {}: {} {}: rank {} is not in [0, {})", me,
                                                    name(), call, target, group_->size()));
  }
  if (index > count_ || n > count_ - index) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {} {} to rank {}: elements [{}, {}) (offset {} B, length "
                            "{} B) are outside the window of {} elements ({} B); nothing was "
                            "written",
                            me, name(), call, target, index, index + n, index * element_,
                            n * element_, count_, count_ * element_));
  }
  if (target != me && group_->departed(target)) {
    throw Error(Errc::peer_failed, fmt::format("rank {}: {} {} to rank {}: rank {} departed", me,
                                               name(), call, target, target));
  }
}

void WindowCore::wait(const std::function<bool()>& done, const std::string& what) {
  sched::wait_until(group_->transport(), group_->notice_fd(), done, what);
}

// A blocking operation's wait failed (a timeout, a departure): the
// transport may still read or write the caller's buffer, so the call does
// not return before the operation completed or the connection to `target`
// was given up (rma/abandon.hpp). If even that does not end it, its
// completion state stays alive with the window and the error says so.
void WindowCore::await(const std::shared_ptr<void>& keep, const std::function<bool()>& done,
                       int target, const std::string& what) {
  try {
    wait(done, what);
  } catch (const Error& e) {
    if (abandon_rma(group_->transport(), target, FunctionRef<bool()>(done))) throw;
    inflight_->orphans.push_back(keep);
    throw Error(e.code(), fmt::format("{} (the operation could not be stopped: the transport may "
                                      "still access its buffer)",
                                      e.what()));
  }
}

void WindowCore::raise_failures(const char* call, int target) {
  if (!inflight_->failed) return;
  inflight_->failed = false;
  const std::vector<int> gone = departed_members(*group_);
  const std::string cause =
      !gone.empty() ? describe_departed(gone)
                    : fmt::format("the transport reported {}", errc_name(inflight_->code));
  throw Error(
      inflight_->code == Errc::peer_failed || !gone.empty() ? Errc::peer_failed : inflight_->code,
      fmt::format("rank {}: {} {}{}: an earlier operation failed: {}", group_->rank(), name(), call,
                  target >= 0 ? fmt::format(" to rank {}", target) : "", cause));
}

void WindowCore::put(int target, size_t index, const std::byte* data, size_t n) {
  check_access("put", target, index, n);
  RmaTarget& t = target_of(target);
  const size_t offset = index * element_;
  const size_t length = n * element_;
  if (length == 0) return;
  if (t.mapped() != nullptr) {
    std::memcpy(t.mapped() + offset, data, length);
    return;
  }
  // The caller may reuse `data` when this returns: wait for local completion.
  auto single = std::make_shared<Single>();
  group_->transport().rma_put(t, offset, data, length, &Single::complete, single.get());
  await(
      single, [&] { return single->done; }, target,
      fmt::format("rank {}: {} put to rank {}", group_->rank(), name(), target));
  if (!single->status.ok) {
    inflight_->failed = true;
    inflight_->code = single->status.code;
    raise_failures("put", target);
  }
}

void WindowCore::get(int target, size_t index, std::byte* out, size_t n) {
  check_access("get", target, index, n);
  RmaTarget& t = target_of(target);
  const size_t offset = index * element_;
  const size_t length = n * element_;
  if (length == 0) return;
  if (t.mapped() != nullptr) {
    std::memcpy(out, t.mapped() + offset, length);
    return;
  }
  auto single = std::make_shared<Single>();
  group_->transport().rma_get(t, offset, out, length, &Single::complete, single.get());
  await(
      single, [&] { return single->done; }, target,
      fmt::format("rank {}: {} get from rank {}", group_->rank(), name(), target));
  if (!single->status.ok) {
    inflight_->failed = true;
    inflight_->code = single->status.code;
    raise_failures("get", target);
  }
}

namespace {

void check_op(int rank, const std::string& window, const char* call, ReduceOp op, Datatype type) {
  if (!reduce_op_valid(op, type)) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {} {}: {} is not defined on {} (bitwise operations take "
                            "integers); nothing was written",
                            rank, window, call, reduce_op_name(op), datatype_name(type)));
  }
}

}  // namespace

void WindowCore::accumulate(int target, size_t index, const std::byte* data, size_t n,
                            ReduceOp op) {
  check_op(group_->rank(), name(), "accumulate", op, type_);
  check_access("accumulate", target, index, n);
  RmaTarget& t = target_of(target);
  if (t.mapped() != nullptr) {
    MappedWords words(t.mapped());
    for (size_t i = 0; i < n; ++i)
      combine(words, (index + i) * element_, type_, op, data + i * element_, nullptr);
    return;
  }
  const std::string what =
      fmt::format("rank {}: {} accumulate to rank {}", group_->rank(), name(), target);
  RemoteWords words(group_->transport(), t,
                    [&](const std::shared_ptr<Single>& single, const char* step) {
                      await(
                          single, [&] { return single->done; }, target, what + " (" + step + ")");
                      if (!single->status.ok) {
                        inflight_->failed = true;
                        inflight_->code = single->status.code;
                        raise_failures("accumulate", target);
                      }
                    });
  words.set_post_completion(&Inflight::done, inflight_.get());
  for (size_t i = 0; i < n; ++i) {
    RmaAtomicOp native{};
    if (native_op(op, type_, &native)) ++inflight_->outstanding;
    combine(words, (index + i) * element_, type_, op, data + i * element_, nullptr);
  }
}

void WindowCore::fetch_and_op(int target, size_t index, const std::byte* operand, std::byte* old,
                              ReduceOp op) {
  check_op(group_->rank(), name(), "fetch_and_op", op, type_);
  check_access("fetch_and_op", target, index, 1);
  RmaTarget& t = target_of(target);
  if (t.mapped() != nullptr) {
    MappedWords words(t.mapped());
    combine(words, index * element_, type_, op, operand, old);
    return;
  }
  const std::string what =
      fmt::format("rank {}: {} fetch_and_op at rank {}", group_->rank(), name(), target);
  RemoteWords words(group_->transport(), t,
                    [&](const std::shared_ptr<Single>& single, const char* step) {
                      await(
                          single, [&] { return single->done; }, target, what + " (" + step + ")");
                      if (!single->status.ok) {
                        inflight_->failed = true;
                        inflight_->code = single->status.code;
                        raise_failures("fetch_and_op", target);
                      }
                    });
  combine(words, index * element_, type_, op, operand, old);
}

void WindowCore::compare_and_swap(int target, size_t index, const std::byte* compare,
                                  const std::byte* desired, std::byte* old) {
  check_access("compare_and_swap", target, index, 1);
  RmaTarget& t = target_of(target);
  if (t.mapped() != nullptr) {
    MappedWords words(t.mapped());
    rma::compare_and_swap(words, index * element_, type_, compare, desired, old);
    return;
  }
  const std::string what =
      fmt::format("rank {}: {} compare_and_swap at rank {}", group_->rank(), name(), target);
  RemoteWords words(group_->transport(), t,
                    [&](const std::shared_ptr<Single>& single, const char* step) {
                      await(
                          single, [&] { return single->done; }, target, what + " (" + step + ")");
                      if (!single->status.ok) {
                        inflight_->failed = true;
                        inflight_->code = single->status.code;
                        raise_failures("compare_and_swap", target);
                      }
                    });
  rma::compare_and_swap(words, index * element_, type_, compare, desired, old);
}

void WindowCore::flush(int target) {
  check_access("flush", target, 0, 0);
  // Stores through a mapping are ordered before what this rank does next
  // (a message telling the target to look).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (target_of(target).mapped() == nullptr) {
    ++inflight_->outstanding;
    group_->transport().rma_flush(target, &Inflight::done, inflight_.get());
  }
  if (inflight_->outstanding > 0) {
    wait([this] { return inflight_->outstanding == 0; },
         fmt::format("rank {}: {} flush of rank {}", group_->rank(), name(), target));
  }
  raise_failures("flush", target);
}

void WindowCore::flush_all() {
  check_open("flush_all");
  std::atomic_thread_fence(std::memory_order_seq_cst);
  ++inflight_->outstanding;
  group_->transport().rma_flush(-1, &Inflight::done, inflight_.get());
  wait([this] { return inflight_->outstanding == 0; },
       fmt::format("rank {}: {} flush_all", group_->rank(), name()));
  raise_failures("flush_all", -1);
}

void WindowCore::close() {
  if (closed_) return;
  flush_all();
  closed_ = true;
  // Nobody frees its memory while another rank may still access it.
  group_->barrier(name() + " close");
  regions_.targets.clear();
  regions_.local.reset();
}

}  // namespace grove::rma
