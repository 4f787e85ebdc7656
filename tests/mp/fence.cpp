// Multi-process driver for the reliable fence (src/runtime/fence_engine.hpp),
// launched by `grove run` (tests/mp/tests.cmake).
//
//   mp_fence             fences of variable blobs (0 B .. 70 KB), overlapped
//                        ifences, an empty-blob fence as a barrier; prints
//                        "fence ok: N ranks"
//   mp_fence kill K      K rounds; in each, a relay of the release tree holds
//                        the release (run with fence_release_delay_ms > 0) and
//                        is SIGKILLed inside that window, before it forwarded
//                        anything. Every survivor must complete the fence, and
//                        a second fence compares a digest of every survivor's
//                        bytes. Run with --on-failure=notify; prints
//                        "fence kill ok: S survivors, K kills, R replays".
//   mp_fence drop R1,R2.. the ranks listed are on a host that drops out of the
//                        network (the test cuts its link once rank 0 prints
//                        "drop ready"): fences repeat until the others see
//                        exactly those ranks departed, with identical bytes;
//                        prints "fence drop ok: S survivors, departed R1,R2..".
//                        The cut-off ranks stop once they see every other
//                        rank departed ("cut off: rank R"). Bounded by
//                        timeout_ms; run with a short pmix_watch_timeout_ms.
//
// Exit status: 0 when every check passed, 3 on a wrong result, 1 on a grove::Error.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/comm_state.hpp"
#include "coll/allgather.hpp"
#include "core/timeouts.hpp"
#include "grove/grove.hpp"
#include "runtime/fence_engine.hpp"
#include "topo/live_tree.hpp"

namespace {

using Blob = std::vector<std::byte>;

struct CheckFailed {
  std::string what;
};

void check(bool ok, const std::string& what) {
  if (!ok) throw CheckFailed{what};
}

Blob blob(int rank, int round) {
  static const size_t sizes[] = {0, 1, 7, 100, 4096, 33, 70000, 13};
  Blob out(sizes[static_cast<size_t>(rank * 3 + round) % std::size(sizes)]);
  for (size_t j = 0; j < out.size(); ++j)
    out[j] = static_cast<std::byte>((rank * 31 + round * 7 + static_cast<int>(j)) & 0xff);
  return out;
}

// Every entry: departed ranks empty, every other rank exactly its blob.
void check_result(const std::vector<Blob>& all, const std::vector<int>& departed, int size,
                  int round) {
  check(all.size() == static_cast<size_t>(size),
        fmt::format("round {}: {} entries for {} ranks", round, all.size(), size));
  const std::set<int> gone(departed.begin(), departed.end());
  for (int r = 0; r < size; ++r) {
    const Blob expected = gone.count(r) ? Blob{} : blob(r, round);
    check(all[static_cast<size_t>(r)] == expected,
          fmt::format("round {}: entry of rank {} has {} bytes, expected {}", round, r,
                      all[static_cast<size_t>(r)].size(), expected.size()));
  }
}

uint64_t digest(const std::vector<Blob>& all) {
  uint64_t h = 1469598103934665603ull;
  for (const Blob& b : all) {
    h = (h ^ b.size()) * 1099511628211ull;
    for (std::byte x : b)
      h = (h ^ static_cast<uint64_t>(x)) * 1099511628211ull;
  }
  return h;
}

int basic(grove::Session& session) {
  grove::Comm& world = session.world();
  const int n = world.size();
  for (int round = 0; round < 6; ++round) {
    grove::FenceRequest request = world.ifence(blob(world.rank(), round));
    check_result(request.wait(), request.departed(), n, round);
  }
  // Two fences in flight at once; the second contributes once the first is held.
  grove::FenceRequest a = world.ifence(blob(world.rank(), 6));
  grove::FenceRequest b = world.ifence(blob(world.rank(), 7));
  check_result(b.wait(), b.departed(), n, 7);
  check_result(a.wait(), a.departed(), n, 6);
  const auto barrier = world.fence({});
  for (const Blob& entry : barrier)
    check(entry.empty(), "a barrier's entry is not empty");
  if (world.rank() == 0) fmt::print("fence ok: {} ranks\n", n);
  return 0;
}

// The relay to kill in this round: a non-root rank of the release tree that
// has children of its own, chosen round by round among the root's children.
int pick_victim(int size, const std::set<int>& departed, int radix, int round) {
  const grove::topo::LiveTree tree(size, 0, departed, radix);
  const auto& members = tree.members();
  for (int i = 0; i < radix; ++i) {
    const int position = 1 + (round + i) % radix;
    if (position >= static_cast<int>(members.size())) continue;
    const int rank = members[static_cast<size_t>(position)];
    if (!tree.children(rank).empty()) return rank;
  }
  return -1;
}

int kill_rounds(grove::Session& session, int rounds) {
  grove::Comm& world = session.world();
  const int n = world.size();
  const int me = world.rank();
  const int radix = grove::coll::release_radix();
  std::set<int> departed;
  {
    grove::FenceRequest warm = world.ifence(blob(me, 0));
    check_result(warm.wait(), warm.departed(), n, 0);
  }
  int kills = 0;
  for (int round = 1; round <= rounds; ++round) {
    const int victim = pick_victim(n, departed, radix, round);
    check(victim > 0, fmt::format("round {}: no release relay left to kill", round));
    grove::FenceRequest request = world.ifence(blob(me, round));
    if (me == victim) {
      // Holding the release: delivered here, its forward held by
      // fence_release_delay_ms. Die before forwarding it to anyone.
      while (!request.test()) {
      }
      std::raise(SIGKILL);
    }
    const std::vector<Blob> all = request.wait();
    check_result(all, request.departed(), n, round);
    // Every survivor's bytes, compared through the next fence.
    const uint64_t mine = digest(all);
    Blob mine_bytes(sizeof mine);
    std::memcpy(mine_bytes.data(), &mine, sizeof mine);
    grove::FenceRequest compare = world.ifence(mine_bytes);
    const std::vector<Blob> digests = compare.wait();
    departed.insert(compare.departed().begin(), compare.departed().end());
    check(departed.count(victim) == 1,
          fmt::format("round {}: victim {} is not listed departed (departed: {})", round, victim,
                      fmt::join(departed, ",")));
    for (int r = 0; r < n; ++r) {
      if (departed.count(r)) continue;
      check(digests[static_cast<size_t>(r)] == mine_bytes,
            fmt::format("round {}: rank {} holds different bytes than rank {}", round, r, me));
    }
    ++kills;
  }
  // Evidence that the orphans were reached by repair: the replays every
  // survivor sent, summed.
  const uint64_t replays = world.state().fence->release_stats().replays;
  Blob replay_bytes(sizeof replays);
  std::memcpy(replay_bytes.data(), &replays, sizeof replays);
  uint64_t total_replays = 0;
  for (const Blob& b : world.fence(replay_bytes)) {
    uint64_t v = 0;
    if (b.size() == sizeof v) std::memcpy(&v, b.data(), sizeof v);
    total_replays += v;
  }
  check(total_replays > 0, "no release was replayed: the kills reached nobody's subtree");
  int first_alive = 0;
  while (departed.count(first_alive))
    ++first_alive;
  if (me == first_alive) {
    fmt::print("fence kill ok: {} survivors, {} kills, {} replays\n",
               n - static_cast<int>(departed.size()), kills, total_replays);
  }
  return 0;
}

std::set<int> parse_ranks(const std::string& list) {
  std::set<int> out;
  size_t at = 0;
  while (at < list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    out.insert(std::atoi(list.substr(at, comma - at).c_str()));
    at = comma + 1;
  }
  return out;
}

int drop_rounds(grove::Session& session, const std::set<int>& cut) {
  grove::Comm& world = session.world();
  const int n = world.size();
  const int me = world.rank();
  {
    grove::FenceRequest warm = world.ifence(blob(me, 0));
    check_result(warm.wait(), warm.departed(), n, 0);
  }
  if (me == 0) {
    fmt::print("drop ready\n");
    std::fflush(stdout);
  }
  const bool cut_off = cut.count(me) != 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(grove::timeout_ms());
  std::set<int> departed;
  for (int round = 1;; ++round) {
    check(std::chrono::steady_clock::now() < deadline,
          fmt::format("rank {}: after {} fences within timeout_ms the departed set is still {}", me,
                      round - 1, fmt::join(departed, ",")));
    grove::FenceRequest request = world.ifence(blob(me, round));
    const std::vector<Blob> all = request.wait();
    check_result(all, request.departed(), n, round);
    departed.insert(request.departed().begin(), request.departed().end());
    if (cut_off && static_cast<int>(departed.size()) == n - static_cast<int>(cut.size())) {
      fmt::print("cut off: rank {} sees {} departed\n", me, departed.size());
      return 0;
    }
    if (!cut_off) {
      // Departures may be learned one fence apart, never beyond the cut host.
      check(std::includes(cut.begin(), cut.end(), departed.begin(), departed.end()),
            fmt::format("rank {}: departed {}, expected only ranks of {}", me,
                        fmt::join(departed, ","), fmt::join(cut, ",")));
      if (departed == cut) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The survivors compare their bytes once more.
  const uint64_t mine = digest(world.fence(blob(me, 1000)));
  Blob mine_bytes(sizeof mine);
  std::memcpy(mine_bytes.data(), &mine, sizeof mine);
  const std::vector<Blob> digests = world.fence(mine_bytes);
  for (int r = 0; r < n; ++r) {
    if (cut.count(r)) continue;
    check(digests[static_cast<size_t>(r)] == mine_bytes,
          fmt::format("rank {} holds different bytes than rank {}", r, me));
  }
  int first_alive = 0;
  while (cut.count(first_alive))
    ++first_alive;
  if (me == first_alive) {
    fmt::print("fence drop ok: {} survivors, departed {}\n", n - static_cast<int>(cut.size()),
               fmt::join(cut, ","));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    grove::Session session;
    if (argc >= 3 && std::strcmp(argv[1], "kill") == 0)
      return kill_rounds(session, std::atoi(argv[2]));
    if (argc >= 3 && std::strcmp(argv[1], "drop") == 0)
      return drop_rounds(session, parse_ranks(argv[2]));
    return basic(session);
  } catch (const CheckFailed& failed) {
    fmt::print(stderr, "mp_fence: check failed: {}\n", failed.what);
    return 3;
  } catch (const grove::Error& e) {
    fmt::print(stderr, "mp_fence: {}\n", e.what());
    return 1;
  }
}
