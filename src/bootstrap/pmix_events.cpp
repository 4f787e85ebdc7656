#include "bootstrap/pmix_events.hpp"

#include <mutex>
#include <span>
#include <string>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove {
namespace {

// PMIx hands its handlers no user pointer: the one live instance is here.
std::mutex current_mutex;
PmixEvents* current = nullptr;

void handler(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[],
             size_t ninfo, pmix_info_t*, size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
             void* cbdata) {
  {
    std::lock_guard lock(current_mutex);
    if (current != nullptr) current->on_event(status, source, info, ninfo);
  }
  // Let any other handler see the event too.
  if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
}

// The events that mean "these processes have ended", and losing the
// connection to the server.
constexpr pmix_status_t kDeparture[] = {
    PMIX_ERR_PROC_ABORTED,         PMIX_ERR_PROC_ABORTED_BY_SIG,
    PMIX_ERR_PROC_TERM_WO_SYNC,    PMIX_EVENT_PROC_TERMINATED,
    PMIX_PROC_TERMINATED,          PMIX_ERR_PROC_REQUESTED_ABORT,
    PMIX_ERR_PROC_KILLED_BY_CMD,   PMIX_ERR_EXIT_NONZERO_TERM,
    PMIX_ERR_PROC_FAILED_TO_START, PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED,
    PMIX_ERR_LOST_CONNECTION,
};
constexpr pmix_status_t kNodeDown[] = {PMIX_EVENT_NODE_DOWN};

}  // namespace

PmixEvents::PmixEvents(const pmix_proc_t& me, int size, NoticeBox& box)
    : me_(me), size_(size), box_(box) {
  {
    std::lock_guard lock(current_mutex);
    current = this;
  }
  // Without a registration callback the call blocks and returns the
  // handler's id (>= 0) or an error (< 0). Particular codes, not a default
  // handler: PMIx 4.2's server keeps a client's default handler only if some
  // other client registered one first, and then never relays events to it.
  auto add = [&](std::span<const pmix_status_t> codes) {
    std::vector<pmix_status_t> copy(codes.begin(), codes.end());
    const pmix_status_t id = PMIx_Register_event_handler(copy.data(), copy.size(), nullptr, 0,
                                                         handler, nullptr, nullptr);
    if (id >= 0) handlers_.push_back(static_cast<size_t>(id));
    return id;
  };
  if (const pmix_status_t id = add(kDeparture); id < 0) {
    std::lock_guard lock(current_mutex);
    current = nullptr;
    throw Error(Errc::bootstrap,
                fmt::format("bootstrap rank {}: PMIx refused the handler of departure events: {}",
                            me.rank, PMIx_Error_string(id)));
  }
  // Node events are "system" events, which a server refuses when its host
  // does not take event registrations (Slurm's): then ranks learn of a lost
  // node from the watch alone.
  add(kNodeDown);
}

PmixEvents::~PmixEvents() {
  for (size_t h : handlers_)
    PMIx_Deregister_event_handler(h, nullptr, nullptr);
  std::lock_guard lock(current_mutex);
  if (current == this) current = nullptr;
}

void PmixEvents::on_event(pmix_status_t status, const pmix_proc_t* source, const pmix_info_t info[],
                          size_t ninfo) {
  if (status == PMIX_ERR_LOST_CONNECTION) {
    server_lost_ = true;
    return;
  }
  std::vector<pmix_proc_t> affected;
  int exit_code = 0;
  bool has_exit_code = false;
  for (size_t i = 0; i < ninfo; ++i) {
    const pmix_info_t& item = info[i];
    if (PMIX_CHECK_KEY(&item, PMIX_EVENT_AFFECTED_PROC) && item.value.type == PMIX_PROC &&
        item.value.data.proc != nullptr) {
      affected.push_back(*item.value.data.proc);
    } else if (PMIX_CHECK_KEY(&item, PMIX_EVENT_AFFECTED_PROCS) &&
               item.value.type == PMIX_DATA_ARRAY && item.value.data.darray != nullptr &&
               item.value.data.darray->type == PMIX_PROC) {
      const auto* procs = static_cast<const pmix_proc_t*>(item.value.data.darray->array);
      for (size_t p = 0; p < item.value.data.darray->size; ++p)
        affected.push_back(procs[p]);
    } else if (PMIX_CHECK_KEY(&item, PMIX_EXIT_CODE) && item.value.type == PMIX_INT) {
      exit_code = item.value.data.integer;
      has_exit_code = true;
    }
  }
  if (affected.empty() && source != nullptr) affected.push_back(*source);
  const std::string how = has_exit_code ? fmt::format("PMIx event {} (exit code {})",
                                                      PMIx_Error_string(status), exit_code)
                                        : fmt::format("PMIx event {}", PMIx_Error_string(status));
  for (const pmix_proc_t& proc : affected) {
    // Wildcards and other jobs' processes name nobody of this job.
    if (!PMIX_CHECK_NSPACE(proc.nspace, me_.nspace) ||
        proc.rank >= static_cast<pmix_rank_t>(size_) || proc.rank == me_.rank) {
      continue;
    }
    box_.report(static_cast<int>(proc.rank), how);
  }
}

}  // namespace grove
