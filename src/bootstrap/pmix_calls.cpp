#include "bootstrap/pmix_calls.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "core/timeouts.hpp"
#include "grove/error.hpp"

namespace grove::pmix_calls {
namespace {

// One non-blocking PMIx fence, waited for with a deadline. The state is
// shared with the callback, which may run after the waiter gave up.
struct FenceWait {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;

  static void callback(pmix_status_t status, void* cbdata) {
    auto* hold = static_cast<std::shared_ptr<FenceWait>*>(cbdata);
    {
      std::lock_guard lock((*hold)->mutex);
      (*hold)->done = true;
      (*hold)->status = status;
    }
    (*hold)->done_cv.notify_all();
    delete hold;
  }
};

std::optional<pmix_value_t*> get_local(const pmix_proc_t& proc, const char* key) {
  pmix_info_t optional;
  PMIX_INFO_CONSTRUCT(&optional);
  bool yes = true;
  PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
  pmix_value_t* value = nullptr;
  const pmix_status_t rc = PMIx_Get(&proc, key, &optional, 1, &value);
  PMIX_INFO_DESTRUCT(&optional);
  if (rc != PMIX_SUCCESS || value == nullptr) return std::nullopt;
  return value;
}

}  // namespace

std::string status_text(pmix_status_t status) {
  return fmt::format("{} ({})", PMIx_Error_string(status), status);
}

uint32_t get_uint32(const pmix_proc_t& me, const pmix_proc_t& proc, const char* key,
                    std::string_view what) {
  pmix_value_t* value = nullptr;
  const pmix_status_t rc = PMIx_Get(&proc, key, nullptr, 0, &value);
  if (rc != PMIX_SUCCESS || value == nullptr || value->type != PMIX_UINT32) {
    if (value != nullptr) PMIX_VALUE_RELEASE(value);
    throw Error(Errc::bootstrap,
                fmt::format("bootstrap rank {}: PMIx_Get of {} ({}) failed: {}", me.rank, what, key,
                            rc == PMIX_SUCCESS ? "not a uint32" : status_text(rc)));
  }
  const uint32_t out = value->data.uint32;
  PMIX_VALUE_RELEASE(value);
  return out;
}

std::optional<std::string> get_string(const pmix_proc_t& proc, const char* key) {
  std::optional<pmix_value_t*> value = get_local(proc, key);
  if (!value) return std::nullopt;
  std::optional<std::string> out;
  if ((*value)->type == PMIX_STRING && (*value)->data.string != nullptr)
    out = (*value)->data.string;
  PMIX_VALUE_RELEASE(*value);
  return out;
}

std::optional<Blob> get_blob(const pmix_proc_t& me, int rank, const std::string& key) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, me.nspace, static_cast<pmix_rank_t>(rank));
  std::optional<pmix_value_t*> value = get_local(proc, key.c_str());
  if (!value) return std::nullopt;
  std::optional<Blob> out;
  if ((*value)->type == PMIX_BYTE_OBJECT) {
    const auto* first = reinterpret_cast<const std::byte*>((*value)->data.bo.bytes);
    out = Blob(first, first + (*value)->data.bo.size);
  }
  PMIX_VALUE_RELEASE(*value);
  if (!out) {
    throw Error(Errc::protocol, fmt::format("bootstrap rank {}: rank {}'s '{}' is not a byte "
                                            "object",
                                            me.rank, rank, key));
  }
  return out;
}

void put(const pmix_proc_t& me, const std::string& key, std::span<const std::byte> bytes,
         std::string_view doing) {
  pmix_value_t value;
  PMIX_VALUE_CONSTRUCT(&value);
  value.type = PMIX_BYTE_OBJECT;
  // PMIx_Put copies the value.
  value.data.bo.bytes = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
  value.data.bo.size = bytes.size();
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &value);
  if (rc != PMIX_SUCCESS) {
    throw Error(Errc::bootstrap,
                fmt::format("bootstrap rank {}: {}: PMIx_Put of '{}' ({} bytes) refused: {}",
                            me.rank, doing, key, bytes.size(), status_text(rc)));
  }
  rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) {
    throw Error(Errc::bootstrap, fmt::format("bootstrap rank {}: {}: PMIx_Commit refused: {}",
                                             me.rank, doing, status_text(rc)));
  }
}

pmix_status_t fence(const pmix_proc_t& me, bool collect, std::string_view doing,
                    std::string& abandoned) {
  const int64_t timeout = timeout_ms();
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  bool yes = collect;
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  int seconds = static_cast<int>(std::min<int64_t>((timeout + 999) / 1000, 1 << 30));
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);

  auto wait = std::make_shared<FenceWait>();
  auto* hold = new std::shared_ptr<FenceWait>(wait);
  const pmix_status_t rc = PMIx_Fence_nb(&job, 1, info, 2, &FenceWait::callback, hold);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc == PMIX_OPERATION_SUCCEEDED) {
    delete hold;
    return PMIX_SUCCESS;
  }
  if (rc != PMIX_SUCCESS) {
    delete hold;
    throw Error(Errc::bootstrap, fmt::format("bootstrap rank {}: {}: PMIx_Fence refused: {}",
                                             me.rank, doing, status_text(rc)));
  }
  std::unique_lock lock(wait->mutex);
  const auto limit = std::chrono::milliseconds(timeout + std::min<int64_t>(timeout, 1000));
  if (!wait->done_cv.wait_for(lock, limit, [&] { return wait->done; })) {
    abandoned = std::string(doing);
    throw Error(Errc::timeout,
                fmt::format("bootstrap rank {}: {}: the PMIx fence did not complete within "
                            "timeout_ms = {} (a rank has not joined it or its data has not "
                            "arrived; PMIx does not say which)",
                            me.rank, doing, timeout));
  }
  const pmix_status_t status = wait->status;
  if (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) return status;
  if (status == PMIX_ERR_TIMEOUT) {
    // Servers on other hosts may still hold their part of it.
    abandoned = std::string(doing);
    throw Error(Errc::timeout,
                fmt::format("bootstrap rank {}: {}: the PMIx server gave up on the fence after "
                            "timeout_ms = {} (a rank has not joined it)",
                            me.rank, doing, timeout));
  }
  throw Error(Errc::bootstrap, fmt::format("bootstrap rank {}: {}: the PMIx fence failed: {}",
                                           me.rank, doing, status_text(status)));
}

}  // namespace grove::pmix_calls
