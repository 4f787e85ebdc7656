#include "sched/handshake_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace grove::sched {
namespace {

long membarrier(int command) {
  return ::syscall(SYS_membarrier, command, 0, 0);
}

bool register_process() {
  const long commands = membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || (commands & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0 &&
         membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
}

}  // namespace

bool asymmetric_fences() {
  static const bool registered = register_process();
  return registered;
}

void publish_fence() {
  if (asymmetric_fences()) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

bool sleep_fence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
}

}  // namespace grove::sched
