#pragma once
// Failure notices found by background threads (PMIx event handlers, the
// watch) for the thread that drives the session. The first report of a rank
// counts; later ones are dropped. Versions count the departures this
// process has learned, 1, 2, ... in the order it learned them.

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace grove {

class NoticeBox {
 public:
  NoticeBox();
  ~NoticeBox();
  NoticeBox(const NoticeBox&) = delete;
  NoticeBox& operator=(const NoticeBox&) = delete;

  // Readable exactly while notices wait to be taken.
  int fd() const { return fd_; }
  // Thread-safe. Returns false when `rank` was reported before.
  bool report(int rank, const std::string& how);
  bool departed(int rank) const;
  // The notices not taken yet, in version order (non-blocking).
  std::vector<FailureNotice> take();

 private:
  mutable std::mutex mutex_;
  std::set<int> departed_;
  std::vector<FailureNotice> pending_;
  uint64_t version_ = 0;
  int fd_ = -1;  // eventfd, counting pending reports
};

}  // namespace grove
