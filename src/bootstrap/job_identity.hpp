#pragma once
// Who owns a resource that can outlive a crash, written into the resource's
// name so that a later process can tell whether the owner is gone: a
// `grove run` directory (`$TMPDIR/grove-run-<owner>-XXXXXX`, owned by its
// launcher) and a shared-memory segment (`/dev/shm/grove-<owner>.<ctx>.<n>`,
// owned by the rank that made it). `grove run` sweeps both before and after
// its job (sweep_stale_resources in launcher.cpp; docs/reliability.md).
//
// An owner is a pid and that process's start time (clock ticks after boot,
// field 22 of /proc/PID/stat): a pid alone is reused, the pair names one
// process until the machine reboots. Processes that share a /tmp or
// /dev/shm are assumed to share a PID namespace (a container has its own
// /dev/shm; run directories are also probed through their socket).

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace grove::job {

struct ProcessIdentity {
  pid_t pid = 0;
  uint64_t start_ticks = 0;

  // "PID-START", as names carry it.
  std::string token() const;
  // Reads a token at the start of `text`; the character after it, if any,
  // must not be a digit. nullopt when there is no token.
  static std::optional<ProcessIdentity> parse_prefix(std::string_view text);
  bool operator==(const ProcessIdentity&) const = default;
};

// This process.
ProcessIdentity self();
// The start time of process `pid`; nullopt when there is no such process.
std::optional<uint64_t> start_ticks_of(pid_t pid);

enum class Liveness { alive, gone, unknown };
// gone only when certain: no process has the pid, or the one that has it
// started at another time. unknown when /proc cannot be read.
Liveness liveness(const ProcessIdentity& owner);

// Names that carry an owner.
inline constexpr std::string_view kRunDirPrefix = "grove-run-";  // + token + "-XXXXXX"
inline constexpr std::string_view kSegmentPrefix = "grove-";     // + token + ".CTX.N"
// The name of a shared-memory segment this process makes for communicator
// context `context`; `n` tells apart the segments of one process that share
// a context (shm_open's form: one leading '/').
std::string segment_name(uint32_t context, int n);

// For each entry of `dir` named `prefix` + token + ..., owned by this user,
// whose owner is gone: calls remove(path) and lists the path if it returned
// true. Entries without a token (older names) are left alone.
std::vector<std::string> sweep(const std::string& dir, std::string_view prefix,
                               const std::function<bool(const std::string& path)>& remove);

// Removes the run directories under `tmp_dir` (a launcher's TMPDIR) and the
// shared-memory segments under /dev/shm whose owners are gone; returns the
// paths removed. A run directory whose socket still accepts a connection is
// kept whatever its name says.
std::vector<std::string> sweep_stale_resources(const std::string& tmp_dir);

}  // namespace grove::job
