// The `pmix` bootstrap: a rank started by a launcher that speaks PMIx
// (Open MPI's mpirun, PRRTE's prterun, Slurm's srun --mpi=pmix).
//
// - rank, size, hosts: PMIx_Init, PMIX_JOB_SIZE, PMIX_HOSTNAME of every rank
//   (checked against PMIX_LOCAL_PEERS); a launcher that does not give every
//   rank's host name has them exchanged at start-up instead.
// - allgather(k): each rank puts its blob under "grove.ag.<k>", commits,
//   joins a collecting PMIx fence and gets every rank's key; barrier: a fence
//   without data (pmix_calls.hpp: bounded by timeout_ms whatever the server
//   does).
// - failures: PMIx events (pmix_events.hpp) and the watch (watch.hpp), both
//   into one NoticeBox; a rank that departed before it contributed has an
//   empty allgather entry.
// - pmix_detach: after start-up the rank may finalize PMIx (Session calls
//   started()): under Slurm 22.05 the step is killed as soon as any client
//   vanishes without having finalized (docs/cluster.md).

#include <pmix.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/backends.hpp"
#include "bootstrap/notice_box.hpp"
#include "bootstrap/pmix_calls.hpp"
#include "bootstrap/pmix_events.hpp"
#include "bootstrap/watch.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

extern char** environ;

namespace grove {
namespace {

const params::ChoiceParam pmix_detach{
    "pmix_detach",
    "auto",
    {"auto", "on", "off"},
    "finalize PMIx once the transport is connected (the bootstrap then only reports failures): "
    "on, off, or auto (on under Slurm, whose PMIx plugin kills the whole step when a rank "
    "vanishes without finalizing)"};
const params::BoolParam pmix_watch{
    "pmix_watch", true,
    "the pmix bootstrap keeps a TCP connection to every rank and reports a rank departed when it "
    "closes (the launchers at hand send no PMIx failure events)"};
const params::IntParam pmix_watch_timeout_ms{
    "pmix_watch_timeout_ms", 10000, 2000, 3600000,
    "how long a rank's host may leave the watch's TCP keepalive unanswered before its ranks are "
    "reported departed (ms)"};

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap() {
    pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap: PMIx_Init failed: {} (the environment names a PMIx "
                              "server; was this process started by mpirun or srun --mpi=pmix, "
                              "and is that launcher still running?)",
                              pmix_calls::status_text(rc)));
    }
    try {
      start();
    } catch (...) {
      shut_down();
      throw;
    }
  }

  ~PmixBootstrap() override { shut_down(); }

  int rank() const override { return static_cast<int>(me_.rank); }
  int size() const override { return size_; }
  std::string name() const override { return "pmix"; }
  const Hosts& hosts() const override { return hosts_; }

  std::vector<Blob> allgather(std::span<const std::byte> mine) override {
    const uint64_t seq = ++seq_;
    const std::string doing = fmt::format("allgather #{}", seq);
    const std::string key = fmt::format("grove.ag.{}", seq);
    const pmix_status_t fenced = put_and_fence(key, mine, doing);
    std::vector<Blob> out(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      std::optional<Blob> blob = pmix_calls::get_blob(me_, r, key);
      if (blob) {
        out[static_cast<size_t>(r)] = std::move(*blob);
        continue;
      }
      // A rank the server lost during the fence (it says so) left the job.
      if (fenced == PMIX_ERR_PARTIAL_SUCCESS) {
        notices_.report(r, fmt::format("left during bootstrap {} (PMIx fence: {})", doing,
                                       PMIx_Error_string(fenced)));
      }
      if (!notices_.departed(r)) {
        throw Error(Errc::bootstrap,
                    fmt::format("bootstrap rank {}: {}: the PMIx server has no '{}' from rank {} "
                                "after the fence (it refused or lost the key)",
                                rank(), doing, key, r));
      }
    }
    return out;
  }

  void barrier() override {
    const std::string doing = fmt::format("barrier #{}", ++seq_);
    check_usable(doing);
    pmix_calls::fence(me_, false, doing, abandoned_);
  }

  int notice_fd() const override { return notices_.fd(); }
  std::vector<FailureNotice> poll_notices() override { return notices_.take(); }

  void started() override {
    const std::string& detach = pmix_detach.get();
    const bool under_slurm = std::getenv("SLURM_STEP_ID") != nullptr;
    if (detach == "off" || (detach == "auto" && !under_slurm)) return;
    events_.reset();
    PMIx_Finalize(nullptr, 0);
    detached_ = true;
  }

 private:
  void start() {
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me_.nspace, PMIX_RANK_WILDCARD);
    const uint32_t size = pmix_calls::get_uint32(me_, job, PMIX_JOB_SIZE, "the job size");
    if (size < 1 || size > static_cast<uint32_t>(std::numeric_limits<int>::max()) ||
        me_.rank >= size) {
      throw Error(Errc::bootstrap, fmt::format("bootstrap: PMIx says rank {} of {} (PMIX_JOB_SIZE)",
                                               me_.rank, size));
    }
    size_ = static_cast<int>(size);
    events_ = std::make_unique<PmixEvents>(me_, size_, notices_);

    // One fence at start-up carries the watch cards and every rank's own
    // idea of its host name (used when PMIx does not name every host).
    if (pmix_watch.get()) {
      watch_ = std::make_unique<Watch>(rank(), size_, notices_,
                                       std::chrono::milliseconds(pmix_watch_timeout_ms.get()));
    }
    const std::string own_host = own_host_name();
    const std::string card =
        (watch_ ? watch_->card().encode() : std::string("-")) + "\n" + own_host;
    put_and_fence("grove.start", std::as_bytes(std::span(card)), "start-up exchange");
    std::vector<std::string> exchanged_hosts(static_cast<size_t>(size_));
    std::vector<WatchCard> cards(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      std::optional<Blob> blob = pmix_calls::get_blob(me_, r, "grove.start");
      if (!blob) {
        throw Error(Errc::bootstrap,
                    fmt::format("bootstrap rank {}: start-up exchange: the PMIx server has no "
                                "'grove.start' from rank {} after the fence (it refused or lost "
                                "the key)",
                                rank(), r));
      }
      const std::string text(reinterpret_cast<const char*>(blob->data()), blob->size());
      const size_t newline = text.find('\n');
      if (newline == std::string::npos || newline + 1 == text.size()) {
        throw Error(Errc::protocol,
                    fmt::format("bootstrap rank {}: rank {}'s start-up record has no host name",
                                rank(), r));
      }
      exchanged_hosts[static_cast<size_t>(r)] = text.substr(newline + 1);
      if (watch_) {
        try {
          cards[static_cast<size_t>(r)] = WatchCard::decode(text.substr(0, newline));
        } catch (const Error& e) {
          throw Error(Errc::protocol,
                      fmt::format("bootstrap rank {}: rank {}'s {}", rank(), r, e.what()));
        }
      }
    }
    hosts_ = Hosts::from_names(host_names().value_or(exchanged_hosts));
    check_local_peers(job);
    if (watch_) watch_->connect(cards, hosts_);
  }

  void shut_down() {
    watch_.reset();
    events_.reset();
    if (!detached_) PMIx_Finalize(nullptr, 0);
    detached_ = true;
  }

  std::string own_host_name() {
    if (std::optional<std::string> name = pmix_calls::get_string(me_, PMIX_HOSTNAME)) return *name;
    return this_host_name();
  }

  // Every rank's host as PMIx names it, or nothing if it misses any.
  std::optional<std::vector<std::string>> host_names() {
    std::vector<std::string> names;
    names.reserve(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      pmix_proc_t proc;
      PMIX_LOAD_PROCID(&proc, me_.nspace, static_cast<pmix_rank_t>(r));
      std::optional<std::string> name = pmix_calls::get_string(proc, PMIX_HOSTNAME);
      if (!name || name->empty()) return std::nullopt;
      names.push_back(std::move(*name));
    }
    return names;
  }

  // PMIX_LOCAL_PEERS, when given, must list exactly the ranks that share
  // this rank's host name: the two come from the same launcher.
  void check_local_peers(const pmix_proc_t& job) {
    std::optional<std::string> peers = pmix_calls::get_string(job, PMIX_LOCAL_PEERS);
    if (!peers) return;
    std::vector<int> listed;
    size_t at = 0;
    while (at < peers->size()) {
      const size_t comma = std::min(peers->find(',', at), peers->size());
      listed.push_back(std::atoi(peers->substr(at, comma - at).c_str()));
      at = comma + 1;
    }
    std::sort(listed.begin(), listed.end());
    const std::vector<int> derived = local_peers();
    if (listed != derived) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: PMIx lists local peers {} but ranks {} share "
                              "this host's name '{}'",
                              rank(), *peers, fmt::join(derived, ","),
                              hosts_.names[static_cast<size_t>(host_of(rank()))]));
    }
  }

  pmix_status_t put_and_fence(const std::string& key, std::span<const std::byte> mine,
                              std::string_view doing) {
    check_usable(doing);
    pmix_calls::put(me_, key, mine, doing);
    return pmix_calls::fence(me_, true, doing, abandoned_);
  }

  void check_usable(std::string_view doing) const {
    if (detached_) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: {}: the pmix bootstrap finalized PMIx after "
                              "start-up (pmix_detach = {}); it only reports failures now",
                              me_.rank, doing, pmix_detach.get()));
    }
    if (!abandoned_.empty()) {
      throw Error(Errc::bootstrap, fmt::format("bootstrap rank {}: {}: unusable since {} timed out",
                                               me_.rank, doing, abandoned_));
    }
    if (events_ && events_->server_lost()) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: {}: lost the connection to the PMIx server "
                              "(its launcher daemon ended or its host dropped out)",
                              me_.rank, doing));
    }
  }

  pmix_proc_t me_{};
  int size_ = 0;
  Hosts hosts_;
  uint64_t seq_ = 0;       // the last allgather or barrier started
  std::string abandoned_;  // the fence that timed out (empty: none, usable)
  bool detached_ = false;  // PMIx finalized
  NoticeBox notices_;
  std::unique_ptr<PmixEvents> events_;
  std::unique_ptr<Watch> watch_;
};

}  // namespace

bool pmix_environment() {
  const char* nspace = std::getenv("PMIX_NAMESPACE");
  const char* rank = std::getenv("PMIX_RANK");
  if (nspace && *nspace && rank && *rank) return true;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "PMIX_SERVER_URI", 15) == 0) return true;
  return false;
}

std::unique_ptr<Bootstrap> make_pmix_bootstrap() {
  return std::make_unique<PmixBootstrap>();
}

}  // namespace grove
