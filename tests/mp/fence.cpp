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
//
// Exit status: 0 when every check passed, 3 on a wrong result, 1 on a grove::Error.

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/comm_state.hpp"
#include "coll/allgather.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  try {
    grove::Session session;
    if (argc >= 3 && std::strcmp(argv[1], "kill") == 0)
      return kill_rounds(session, std::atoi(argv[2]));
    return basic(session);
  } catch (const CheckFailed& failed) {
    fmt::print(stderr, "mp_fence: check failed: {}\n", failed.what);
    return 3;
  } catch (const grove::Error& e) {
    fmt::print(stderr, "mp_fence: {}\n", e.what());
    return 1;
  }
}
