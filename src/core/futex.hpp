#pragma once
// Futex calls on a word in memory shared between processes (the
// shared-memory segment's control lines, a ring lane's sleeping words): not
// FUTEX_PRIVATE_FLAG, which would key the word by this process's address
// space and never meet the peer's wake.

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>

namespace grove {

// Sleeps while *word == expected, at most `max`. A wake, a changed word
// (EAGAIN), a signal (EINTR) and the time limit all return; the caller looks
// at its condition again.
inline void futex_wait_shared(std::atomic<uint32_t>* word, uint32_t expected,
                              std::chrono::microseconds max) {
  const int64_t us = std::max<int64_t>(max.count(), 0);
  timespec limit{static_cast<time_t>(us / 1000000), static_cast<long>((us % 1000000) * 1000)};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &limit, nullptr, 0);
}

// Wakes up to `count` sleepers on `word` (INT_MAX: all).
inline void futex_wake_shared(std::atomic<uint32_t>* word, int count = INT_MAX) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
}

}  // namespace grove
