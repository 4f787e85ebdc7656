#pragma once
// The environment `grove run` gives each rank. Shared by the launcher, which
// sets these, and the `local` bootstrap, which reads them.

namespace grove::job_env {

inline constexpr const char* kRank = "GROVE_JOB_RANK";
inline constexpr const char* kSize = "GROVE_JOB_SIZE";
// Path of the launcher's Unix socket, inside a private (0700) directory.
inline constexpr const char* kRendezvous = "GROVE_JOB_RENDEZVOUS";
// Random per-job key every rank presents; a connection without it is refused.
inline constexpr const char* kKey = "GROVE_JOB_KEY";
// Comma-separated names given with `grove run --param`, so the registry
// records them with Source::command_line rather than env.
inline constexpr const char* kCmdlineParams = "GROVE_JOB_CMDLINE_PARAMS";
// How many cores the launcher could use; set when it bound each rank to one
// of them (a bound rank's own affinity says 1), so ranks can tell whether
// the host is oversubscribed.
inline constexpr const char* kCores = "GROVE_JOB_CORES";
// `grove run --hosts K`: the ranks are told they run on K hosts (rank r on
// host "host<r * K / N>"), though all run here: for testing what depends on
// placement (the hierarchical algorithms) on one machine.
inline constexpr const char* kHosts = "GROVE_JOB_HOSTS";

}  // namespace grove::job_env
