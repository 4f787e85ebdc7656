#pragma once
// The PMIx client calls of the `pmix` bootstrap (pmix.cpp), each bounded and
// each failure a grove::Error naming the call, the rank and the PMIx status.

#include <pmix.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "bootstrap/bootstrap.hpp"

namespace grove::pmix_calls {

// "UNREACHABLE (-25)".
std::string status_text(pmix_status_t status);

// A job-level uint32 (PMIX_JOB_SIZE, ...); throws if PMIx has none.
uint32_t get_uint32(const pmix_proc_t& me, const pmix_proc_t& proc, const char* key,
                    std::string_view what);
// A value this rank's server holds already (PMIX_OPTIONAL: never a request
// that waits on another host), or nothing.
std::optional<std::string> get_string(const pmix_proc_t& proc, const char* key);
// `rank`'s byte object under `key`, or nothing; throws Errc::protocol if
// the value is of another type.
std::optional<Blob> get_blob(const pmix_proc_t& me, int rank, const std::string& key);

// PMIx_Put (PMIX_GLOBAL) of `bytes` under `key`, then PMIx_Commit.
void put(const pmix_proc_t& me, const std::string& key, std::span<const std::byte> bytes,
         std::string_view doing);

// A fence over `me`'s whole job (collecting the data if `collect`): returns
// PMIX_SUCCESS or PMIX_ERR_PARTIAL_SUCCESS (the server lost a participant)
// and throws otherwise. Waits at most timeout_ms plus a second; the server
// is asked to give up after timeout_ms (whole seconds, PMIX_TIMEOUT). On a
// timeout `abandoned` says which fence was left behind: the caller must not
// start another (it could be matched with this one).
pmix_status_t fence(const pmix_proc_t& me, bool collect, std::string_view doing,
                    std::string& abandoned);

}  // namespace grove::pmix_calls
