// `grove explain` names the algorithm the call runs (tools/tuning/explain.hpp):
// for each case (collective, size, parameters) every rank explains the call
// on its world communicator, makes the call, and compares the explanation's
// choice with the plan the call ran (the communicator's most recent plan:
// shared memory, the hierarchy, or the schedule's algorithm). Cases cover
// the built-in rows, messages too large for shared memory, a forced parameter and a tuning
// file's row. Prints "explain_choice ok: N ranks, C cases" on rank 0.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "api/comm_state.hpp"
#include "core/params.hpp"
#include "grove/grove.hpp"
#include "tuning/explain.hpp"

namespace {

struct Case {
  const char* collective;
  uint64_t bytes;
  const char* param;  // "name=value" or ""
};

// A tuning file with one row per collective, so the choice comes from it.
std::string write_tuning_file(int rank) {
  const std::string path =
      (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
      "/grove_explain_choice_" + std::to_string(::getpid()) + "_" + std::to_string(rank) + ".json";
  std::ofstream out(path);
  out << R"({
  "format": "grove-selection/1",
  "bcast": [
    {"min_bytes": 1000, "algorithm": "chain", "note": "test row"}
  ],
  "scatter": [
    {"algorithm": "binomial"}
  ],
  "allreduce": [
    {"max_bytes": 4096, "algorithm": "ring"}
  ]
}
)";
  return path;
}

// What the last call on `comm` ran.
std::string ran(grove::Comm& comm) {
  const grove::detail::CallPlan* plan = comm.state().cache.most_recent();
  if (plan == nullptr) return "(no plan)";
  switch (plan->blocking) {
    case grove::detail::CallPlan::Blocking::shm:
      return "shm";
    case grove::detail::CallPlan::Blocking::hier:
      return "hier";
    case grove::detail::CallPlan::Blocking::schedule:
      break;
  }
  return plan->algorithm;
}

void call(grove::Comm& comm, const std::string& collective, uint64_t bytes) {
  const auto n = static_cast<size_t>(comm.size());
  std::vector<std::byte> one(bytes, std::byte{1}), all(bytes * n, std::byte{2});
  if (collective == "bcast") {
    comm.bcast(std::span(one), 0);
  } else if (collective == "scatter") {
    comm.scatter(std::span<const std::byte>(all), std::span(one), 0);
  } else if (collective == "allgather") {
    comm.allgather(std::span<const std::byte>(one), std::span(all));
  } else if (collective == "gather") {
    comm.gather(std::span<const std::byte>(one), std::span(all), 0);
  } else if (collective == "alltoall") {
    std::vector<std::byte> out(bytes * n);
    comm.alltoall(std::span<const std::byte>(all), std::span(out));
  } else if (collective == "allreduce") {
    std::vector<std::byte> out(bytes);
    comm.allreduce(std::span<const std::byte>(one), std::span(out), grove::Datatype::float32,
                   grove::ReduceOp::sum);
  } else {
    comm.barrier();
  }
}

}  // namespace

int main() {
  try {
    grove::Session session;
    grove::Comm& world = session.world();
    const std::string tuning_file = write_tuning_file(world.rank());
    const std::string tuning_param = "tuning_file=" + tuning_file;
    const std::vector<Case> cases = {
        {"bcast", 64, ""},
        {"bcast", 1 << 20, ""},
        {"bcast", 64, "shm_max_bytes=1"},
        {"bcast", 100000, "shm_max_bytes=1"},
        {"bcast", 64, "bcast_algorithm=knomial:3"},
        {"bcast", 4096, tuning_param.c_str()},
        {"bcast", 4096, "shm_max_bytes=1024"},
        {"scatter", 16, ""},
        {"scatter", 16, "shm_max_bytes=1"},
        {"scatter", 65536, tuning_param.c_str()},
        {"allgather", 256, "shm_max_bytes=1"},
        {"allgather", 256, ""},
        {"allreduce", 1024, tuning_param.c_str()},
        {"allreduce", 1 << 20, "shm_max_bytes=1"},
        // The single-copy path (on for this job's segment): from
        // shm_cma_min_bytes (shm_cma_min_block_bytes for blocks), past
        // shm_max_bytes; off by the parameter.
        {"alltoall", 1 << 20, ""},
        {"gather", 65536, "shm_max_bytes=1"},
        {"alltoall", 1 << 20, "shm_cma_min_block_bytes=0"},
        {"bcast", 1 << 20, "shm_cma_min_bytes=0"},
        {"allreduce", 1 << 20, ""},
        {"barrier", 0, ""},
        {"barrier", 0, "barrier_algorithm=dissemination"},
    };
    int failures = 0;
    for (const Case& c : cases) {
      const std::string param = c.param;
      const auto eq = param.find('=');
      std::unique_ptr<grove::params::ScopedSet> set;
      if (eq != std::string::npos)
        set = std::make_unique<grove::params::ScopedSet>(param.substr(0, eq), param.substr(eq + 1));
      const grove::tuning::Explanation e =
          grove::tuning::explain({c.collective, world.size(), c.bytes, true},
                                 grove::tuning::context_of(world), nullptr, "");
      call(world, c.collective, c.bytes);
      const std::string expected = e.choice.spec.to_string();
      const std::string actual = ran(world);
      // allgather's plan text may add how the call was made ("... in place").
      if (actual.rfind(expected, 0) != 0) {
        std::printf("rank %d: %s %llu B [%s]: explain says %s, the call ran %s\n", world.rank(),
                    c.collective, static_cast<unsigned long long>(c.bytes), c.param,
                    expected.c_str(), actual.c_str());
        ++failures;
      }
      if (world.rank() == 0) {
        std::printf("%s %llu B [%s]: %s (%s)\n", c.collective,
                    static_cast<unsigned long long>(c.bytes), c.param, actual.c_str(),
                    e.choice.reason.c_str());
      }
    }
    std::remove(tuning_file.c_str());
    // Every rank's verdict, so rank 0 reports for the job.
    int bad = failures;
    world.allreduce(
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(&failures), sizeof failures),
        std::span(reinterpret_cast<std::byte*>(&bad), sizeof bad), grove::Datatype::int32,
        grove::ReduceOp::sum);
    if (bad != 0) return 1;
    if (world.rank() == 0)
      std::printf("explain_choice ok: %d ranks, %zu cases\n", world.size(), cases.size());
    return 0;
  } catch (const std::exception& e) {
    std::printf("explain_choice failed: %s\n", e.what());
    return 1;
  }
}
