// The Gloo peer of `grove bench`: times Gloo's own collectives (tcp
// transport on 127.0.0.1 only) with the suite's cells, cadence and timing
// method. Ranks find each other through a gloo FileStore in a directory.
//
// Two ways to start it:
//   grove-peer-gloo -n 4 --coll bcast ...     forks 4 ranks itself (private
//                                              temp store, removed at exit)
//   grove run -n 4 grove-peer-gloo ...        one rank per process, from
//                                              GROVE_JOB_RANK / GROVE_JOB_SIZE;
//                                              store beside GROVE_JOB_RENDEZVOUS
//                                              or in --store DIR

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/config.h>
#include <gloo/gather.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

#include "grove/error.hpp"
#include "peer_common.hpp"

namespace grove::bench::peer {
namespace {

// Every Gloo wait (connect, collectives) gives up after this long.
constexpr std::chrono::seconds kGlooTimeout{120};

using Context = std::shared_ptr<gloo::Context>;
using ReduceFn = void (*)(void*, const void*, const void*, size_t);
const ReduceFn kSumFloat = &gloo::sum<float>;

class GlooJob : public Job {
 public:
  explicit GlooJob(Context context) : context_(std::move(context)) {}
  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }
  const Context& context() const { return context_; }
  void barrier() override {
    gloo::BarrierOptions opts(context_);
    gloo::barrier(opts);
  }
  bool agree(bool rank0_says) override {
    uint8_t flag = rank0_says ? 1 : 0;
    gloo::BroadcastOptions opts(context_);
    opts.setRoot(0);
    opts.setOutput(&flag, 1);
    gloo::broadcast(opts);
    return flag != 0;
  }
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override {
    std::vector<double> in(mine);
    in.resize(std::max<size_t>(mine.size(), 1));
    std::vector<double> all(in.size() * static_cast<size_t>(size()));
    gloo::GatherOptions opts(context_);
    opts.setRoot(0);
    opts.setInput(in.data(), in.size());
    if (rank() == 0) opts.setOutput(all.data(), all.size());
    gloo::gather(opts);
    std::vector<std::vector<double>> out;
    if (rank() != 0) return out;
    for (int r = 0; r < size(); ++r) {
      const auto first = all.begin() + static_cast<ptrdiff_t>(in.size()) * r;
      out.emplace_back(first, first + static_cast<ptrdiff_t>(mine.size()));
    }
    return out;
  }

 private:
  Context context_;
};

// One collective and its buffers. Options are built per call, as Gloo's
// users (PyTorch's ProcessGroupGloo) do; that cost is part of a Gloo call.
// Buffers are never empty so no null pointer reaches Gloo.
class GlooCollective : public Collective {
 public:
  GlooCollective(Kind kind, std::string name, Context context)
      : kind_(kind), name_(std::move(name)), context_(std::move(context)) {}

  void prepare(size_t bytes, uint32_t generation) override {
    block_ = bytes;
    generation_ = generation;
    const int rank = context_->rank;
    const size_t n = static_cast<size_t>(context_->size);
    const size_t elements = bytes / sizeof(float);
    auto sized = [](size_t count) { return std::max<size_t>(count, 1); };
    send_.assign(1, std::byte{0});
    recv_.assign(1, std::byte{0});
    fsend_.assign(sized(elements), 0.0f);
    frecv_.assign(sized(elements), 0.0f);
    switch (kind_) {
      case Kind::bcast:
        recv_.assign(sized(bytes), std::byte{0});
        if (rank == 0) fill(recv_.data(), bytes, 0);
        break;
      case Kind::scatter:
        recv_.assign(sized(bytes), std::byte{0});
        send_.assign(sized(n * bytes), std::byte{0});
        if (rank == 0) fill(send_.data(), n * bytes, 0);
        break;
      case Kind::gather:
      case Kind::allgather:
      case Kind::allgatherv:
        send_.assign(sized(bytes), std::byte{0});
        fill(send_.data(), bytes, 0);
        recv_.assign(sized(n * bytes), std::byte{0});
        break;
      case Kind::alltoall:
      case Kind::alltoallv:
        send_.assign(sized(n * bytes), std::byte{0});
        fill(send_.data(), n * bytes, 0);
        recv_.assign(sized(n * bytes), std::byte{0});
        break;
      case Kind::barrier:
      case Kind::reduce_scatter:  // never made (make_collective)
        break;
      case Kind::allreduce:
      case Kind::reduce:
        for (size_t i = 0; i < elements; ++i)
          fsend_[i] = cells::pattern_float(rank, i, generation);
        break;
    }
    scatter_inputs_.clear();
    for (size_t s = 0; s < n; ++s)
      scatter_inputs_.push_back(send_.data() + s * bytes);
    counts_.assign(n, static_cast<int64_t>(bytes));
    ucounts_.assign(n, bytes);
  }

  // Gloo's allgather divides by the block size: a 0-byte one traps (SIGFPE).
  bool supports(size_t bytes) const override { return bytes > 0 || kind_ != Kind::allgather; }

  void call() override {
    const size_t b = block_;
    const size_t n = static_cast<size_t>(context_->size);
    switch (kind_) {
      case Kind::bcast: {
        gloo::BroadcastOptions o(context_);
        o.setRoot(0);
        o.setOutput(recv_.data(), b);
        gloo::broadcast(o);
        break;
      }
      case Kind::scatter: {
        gloo::ScatterOptions o(context_);
        o.setRoot(0);
        if (context_->rank == 0) o.setInputs(scatter_inputs_, b);
        o.setOutput(recv_.data(), b);
        gloo::scatter(o);
        break;
      }
      case Kind::gather: {
        gloo::GatherOptions o(context_);
        o.setRoot(0);
        o.setInput(send_.data(), b);
        if (context_->rank == 0) o.setOutput(recv_.data(), n * b);
        gloo::gather(o);
        break;
      }
      case Kind::allgather: {
        gloo::AllgatherOptions o(context_);
        o.setInput(send_.data(), b);
        o.setOutput(recv_.data(), n * b);
        gloo::allgather(o);
        break;
      }
      case Kind::alltoall: {
        gloo::AlltoallOptions o(context_);
        o.setInput(send_.data(), n * b);
        o.setOutput(recv_.data(), n * b);
        gloo::alltoall(o);
        break;
      }
      case Kind::barrier: {
        gloo::BarrierOptions o(context_);
        gloo::barrier(o);
        break;
      }
      case Kind::allreduce: {
        gloo::AllreduceOptions o(context_);
        o.setInput(fsend_.data(), b / sizeof(float));
        o.setOutput(frecv_.data(), b / sizeof(float));
        o.setReduceFunction(kSumFloat);
        gloo::allreduce(o);
        break;
      }
      case Kind::reduce: {
        gloo::ReduceOptions o(context_);
        o.setRoot(0);
        o.setInput(fsend_.data(), b / sizeof(float));
        o.setOutput(frecv_.data(), b / sizeof(float));
        o.setReduceFunction(kSumFloat);
        gloo::reduce(o);
        break;
      }
      case Kind::allgatherv: {
        gloo::AllgathervOptions o(context_);
        o.setInput(send_.data(), b);
        o.setOutput(recv_.data(), ucounts_);
        gloo::allgatherv(o);
        break;
      }
      case Kind::alltoallv: {
        gloo::AlltoallvOptions o(context_);
        o.setInput(send_.data(), counts_);
        o.setOutput(recv_.data(), counts_);
        gloo::alltoallv(o);
        break;
      }
      case Kind::reduce_scatter:  // never made (make_collective)
        break;
    }
  }

  void verify() override {
    verify_result(kind_, name_, context_->rank, context_->size, block_, recv_, frecv_, generation_);
  }

 private:
  void fill(std::byte* out, size_t bytes, size_t offset) const {
    for (size_t i = 0; i < bytes; ++i)
      out[i] = cells::pattern(context_->rank, offset + i, generation_);
  }

  Kind kind_;
  std::string name_;
  Context context_;
  size_t block_ = 0;
  uint32_t generation_ = 0;
  std::vector<std::byte> send_, recv_;
  std::vector<float> fsend_, frecv_;
  std::vector<std::byte*> scatter_inputs_;
  std::vector<int64_t> counts_;
  std::vector<size_t> ucounts_;
};

// Only ever called with the GlooJob that run_rank made.
std::unique_ptr<Collective> make_collective(Job& job, const cells::Spec& spec) {
  const Context& context = static_cast<GlooJob&>(job).context();
  // reduce_scatter: Gloo's collective API has none (only an in-place
  // algorithm class), so its cells are skipped.
  const std::optional<Kind> kind = kind_named(spec.name);
  if (!kind || *kind == Kind::reduce_scatter) return nullptr;
  return std::make_unique<GlooCollective>(*kind, std::string(spec.name), context);
}

int run_rank(const Options& options, int rank, int size, const std::string& store_dir) {
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";  // loopback only
  attr.ai_family = AF_INET;
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(store_dir);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(kGlooTimeout);
  context->connectFullMesh(store, device);
  GlooJob job(context);
  run(job, make_collective, options,
      fmt::format("Gloo {}.{}.{} (libgloo-dev), tcp transport on 127.0.0.1, FileStore rendezvous",
                  GLOO_VERSION_MAJOR, GLOO_VERSION_MINOR, GLOO_VERSION_PATCH));
  return 0;
}

int guarded(const Options& options, int rank, int size, const std::string& store_dir) {
  try {
    return run_rank(options, rank, size, store_dir);
  } catch (const grove::Error& e) {
    std::fprintf(stderr, "grove-peer-gloo (rank %d): %s: %s\n", rank,
                 std::string(grove::errc_name(e.code())).c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "grove-peer-gloo (rank %d): gloo: %s\n", rank, e.what());
    return 1;
  }
}

// Forks `n` ranks and waits for them; the first rank to fail takes the rest
// down, so a hang in one cannot outlive the job. Every rank is bounded by
// Gloo's own timeout, so the wait is too.
int fork_ranks(const Options& options, int n) {
  char dir_template[] = "/tmp/grove-gloo-XXXXXX";
  if (!mkdtemp(dir_template)) throw Error(Errc::bootstrap, "cannot create a Gloo store directory");
  const std::string store_dir = dir_template;
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> children;
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      for (pid_t c : children)
        kill(c, SIGKILL);
      throw Error(Errc::bootstrap, "fork failed");
    }
    if (pid == 0) {
      const int status = guarded(options, r, n, store_dir);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(status);
    }
    children.push_back(pid);
  }
  int result = 0;
  size_t alive = children.size();
  while (alive > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) break;
    --alive;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "grove-peer-gloo: a rank (pid %d) died of signal %d (%s)\n",
                   static_cast<int>(pid), WTERMSIG(status), strsignal(WTERMSIG(status)));
    }
    if (!ok && result == 0) {
      result = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
      for (pid_t c : children) {
        if (c != pid) kill(c, SIGTERM);
      }
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(store_dir, ignored);
  return result;
}

int run_from_environment(const Options& options, const std::string& store_option) {
  const char* rank_text = std::getenv("GROVE_JOB_RANK");
  const char* size_text = std::getenv("GROVE_JOB_SIZE");
  if (!rank_text || !size_text) {
    throw Error(Errc::usage,
                "grove-peer-gloo: give -n N to fork N ranks, or run under `grove run -n N`");
  }
  const int rank = std::atoi(rank_text), size = std::atoi(size_text);
  if (size < 1 || rank < 0 || rank >= size) {
    throw Error(Errc::bootstrap,
                fmt::format("bad GROVE_JOB_RANK={} GROVE_JOB_SIZE={}", rank_text, size_text));
  }
  std::string store_dir = store_option;
  if (store_dir.empty()) {
    const char* rendezvous = std::getenv("GROVE_JOB_RENDEZVOUS");
    if (!rendezvous) throw Error(Errc::usage, "grove-peer-gloo: --store DIR is needed here");
    store_dir = std::filesystem::path(rendezvous).parent_path() / "gloo-store";
  }
  // Every rank creates it; whoever is first wins, the rest see EEXIST.
  if (mkdir(store_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Error(Errc::bootstrap, fmt::format("cannot create Gloo store '{}'", store_dir));
  }
  return guarded(options, rank, size, store_dir);
}

}  // namespace
}  // namespace grove::bench::peer

int main(int argc, char** argv) {
  using namespace grove::bench::peer;
  // --store DIR is Gloo's own option; the rest are the suite's.
  std::string store;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--store" && i + 1 < argc) {
      store = argv[++i];
      continue;
    }
    args.push_back(argv[i]);
  }
  try {
    const Options options = parse_options(static_cast<int>(args.size()), args.data(), "gloo");
    if (options.fork_ranks > 0) return fork_ranks(options, options.fork_ranks);
    return run_from_environment(options, store);
  } catch (const grove::Error& e) {
    std::fprintf(stderr, "grove-peer-gloo: %s: %s\n",
                 std::string(grove::errc_name(e.code())).c_str(), e.what());
    return e.code() == grove::Errc::usage ? 2 : 1;
  }
}
