#include "bootstrap/notice_box.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove {

NoticeBox::NoticeBox() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) {
    throw Error(Errc::bootstrap, fmt::format("bootstrap: eventfd(): {}", std::strerror(errno)));
  }
}

NoticeBox::~NoticeBox() {
  ::close(fd_);
}

bool NoticeBox::report(int rank, const std::string& how) {
  std::lock_guard lock(mutex_);
  if (!departed_.insert(rank).second) return false;
  pending_.push_back(FailureNotice{rank, ++version_, how});
  const uint64_t one = 1;
  // Cannot fail short of a counter overflow (2^64 - 2 reports).
  [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
  return true;
}

bool NoticeBox::departed(int rank) const {
  std::lock_guard lock(mutex_);
  return departed_.count(rank) != 0;
}

std::vector<FailureNotice> NoticeBox::take() {
  std::lock_guard lock(mutex_);
  // Under the lock, so the descriptor is readable exactly while `pending_`
  // is not empty.
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(fd_, &count, sizeof count);
  std::vector<FailureNotice> out;
  out.swap(pending_);
  return out;
}

}  // namespace grove
