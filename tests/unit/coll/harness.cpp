#include "harness.hpp"

#include <memory>

#include "sched/executor.hpp"
#include "transport/tag.hpp"

namespace grove::coll::testing {

MemoryWorld::Options world_options(uint64_t case_hash) {
  static constexpr MemoryWorld::SendMode kModes[] = {MemoryWorld::SendMode::eager,
                                                     MemoryWorld::SendMode::rendezvous,
                                                     MemoryWorld::SendMode::immediate};
  MemoryWorld::Options options;
  options.send_mode = kModes[case_hash % 3];
  options.seed = (case_hash / 3) % 2 == 0 ? 0 : case_hash + 1;
  return options;
}

std::string run_schedules(const std::vector<sched::Schedule>& schedules, std::vector<RankIo>& io,
                          MemoryWorld::Options options,
                          const std::function<void(MemoryWorld&)>& inspect) {
  const int n = static_cast<int>(schedules.size());
  MemoryWorld world(n, options);
  const Tag base = tag::make(5, 77, tag::Topology::none, 9, 0);
  std::vector<std::unique_ptr<sched::Execution>> executions;
  try {
    for (int r = 0; r < n; ++r) {
      auto schedule = std::make_shared<const sched::Schedule>(schedules[static_cast<size_t>(r)]);
      RankIo& mine = io[static_cast<size_t>(r)];
      sched::Buffers buffers{mine.input.data(), mine.input.size(), mine.output.data(),
                             mine.output.size()};
      executions.push_back(
          std::make_unique<sched::Execution>(world.transport(r), schedule, buffers, base));
    }
    for (auto& e : executions)
      e->start();
    auto all_done = [&] {
      for (auto& e : executions)
        if (!e->done()) return false;
      return true;
    };
    world.run_until(all_done, 10000000, schedules.empty() ? "run" : schedules[0].algorithm);
  } catch (const std::exception& e) {
    std::string pending;
    for (auto& ex : executions)
      pending += "\n  " + ex->describe_pending();
    return std::string(e.what()) + pending;
  }
  for (auto& e : executions) {
    if (e->error()) return e->error()->what();
  }
  if (!world.quiescent())
    return "messages left in flight after every rank finished:\n" + world.describe();
  if (inspect) inspect(world);
  return "";
}

std::string run_built(int size, const std::function<sched::Schedule(int)>& build,
                      std::vector<RankIo>& io, MemoryWorld::Options options,
                      const std::function<void(MemoryWorld&)>& inspect) {
  std::vector<sched::Schedule> schedules;
  try {
    for (int r = 0; r < size; ++r)
      schedules.push_back(build(r));
  } catch (const std::exception& e) {
    return std::string("build failed: ") + e.what();
  }
  return run_schedules(schedules, io, options, inspect);
}

int64_t first_difference(const std::vector<std::byte>& got, const std::vector<std::byte>& want) {
  if (got.size() != want.size()) return static_cast<int64_t>(std::min(got.size(), want.size()));
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace grove::coll::testing
