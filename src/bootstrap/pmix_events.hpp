#pragma once
// PMIx event handlers of the `pmix` bootstrap: a launcher's report that a
// process of this job ended (PMIX_ERR_PROC_ABORTED, PMIX_EVENT_PROC_TERMINATED,
// PMIX_ERR_PROC_ABORTED_BY_SIG, ...) becomes a FailureNotice in the box, as
// `grove run --on-failure=notify` does; losing the connection to the PMIx
// server is remembered, so later bootstrap calls fail naming it. Handlers
// run on PMIx's progress thread. One instance per process (PMIx_Init is
// process-wide).

#include <pmix.h>

#include <atomic>
#include <cstddef>
#include <vector>

#include "bootstrap/notice_box.hpp"

namespace grove {

class PmixEvents {
 public:
  // Registers the handlers for a job of `size` ranks; throws
  // grove::Error(bootstrap) if PMIx refuses.
  PmixEvents(const pmix_proc_t& me, int size, NoticeBox& box);
  // Deregisters them (before PMIx_Finalize).
  ~PmixEvents();
  PmixEvents(const PmixEvents&) = delete;
  PmixEvents& operator=(const PmixEvents&) = delete;

  bool server_lost() const { return server_lost_.load(); }

  // What the handler does with one event (for tests): reports every
  // affected process of this job other than this one.
  void on_event(pmix_status_t status, const pmix_proc_t* source, const pmix_info_t info[],
                size_t ninfo);

 private:
  pmix_proc_t me_;
  int size_;
  NoticeBox& box_;
  std::vector<size_t> handlers_;
  std::atomic<bool> server_lost_{false};
};

}  // namespace grove
