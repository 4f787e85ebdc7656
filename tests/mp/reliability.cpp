// Multi-process driver for the promises of docs/reliability.md that live in
// the library, run by `grove run` (tests/mp/tests.cmake). Modes:
//
//   late_sender
//       2 ranks, with bcast_algorithm=binomial and timeout_ms=1000. Rank 0
//       enters each of two bcasts of 4096 B 1.5 s late; rank 1 times out in
//       both, and its receive must be cancelled: the first call's buffer
//       holds a canary that the late message must not touch; the second
//       call's buffer is freed after the throw (a late write is then a
//       heap-use-after-free that AddressSanitizer reports). Prints
//       "late_sender ok".
//   late_p2p
//       2 ranks, timeout_ms=1000. Rank 0 sends two messages of 4096 B (tag 7
//       with bytes 0x11, then tag 8 with 0x22), each 1.5 s late. Rank 1's recv of the first
//       times out (its buffer holds a canary); its irecv of the second is
//       dropped at once and the buffer freed. Neither receive may take a
//       message: rank 1 then receives both, in order, exactly. Prints
//       "late_p2p ok".
//   departed WAITED PATH
//       3 ranks, --on-failure=notify. Rank 2 exits (code 3) 200 ms into a
//       bcast of 64 B; rank 0 waits in that bcast for WAITED: "late" (root
//       1, which enters 5 s late) or "gone" (root 2). Rank 0 must fail with
//       Errc::peer_failed naming rank 2, on PATH "shm" (the shared-memory
//       segment) or "schedule" (run with a forced algorithm; the driver
//       checks which path the call took). Prints "departed ok: rank 0
//       named rank 2".
//   dup_killed VICTIM DELAY_MS
//       N ranks, --on-failure=notify: every rank calls dup() in a loop; the
//       victim SIGKILLs itself DELAY_MS in. Every survivor's dup() must fail
//       with Errc::peer_failed naming the victim. Rank 0 prints its pid
//       first, so tests can look for its shared-memory segments afterwards.
//       Prints, per survivor, "dup_killed ok: rank R named rank V", and
//       "dups made: K" once.
//
// How soon a survivor names the departed rank is measured by the test
// (tests/mp/named_in_time.sh), from the launcher's notice.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "api/comm_state.hpp"
#include "coll/shm/group.hpp"
#include "grove/grove.hpp"

namespace {

using grove::Comm;
using grove::Errc;

constexpr std::byte kCanary{0xA5};

uint64_t shm_calls(Comm& comm) {
  const grove::shm::Group* group = comm.state().shm.get();
  return group == nullptr ? 0 : group->calls();
}

// Prints the error and whether it names `departed` as the failed rank.
bool names(const grove::Error& e, int departed, const std::string& mode, int rank) {
  const std::string text = e.what();
  std::printf("rank %d: %s: %s\n", rank, std::string(grove::errc_name(e.code())).c_str(),
              text.c_str());
  // Named by the failure notice ("rank V departed") or, when the transport
  // saw the connection fail first, by the failed message ("peer V failed").
  const bool named = e.code() == Errc::peer_failed &&
                     (text.find(fmt::format("rank {} departed", departed)) != std::string::npos ||
                      text.find(fmt::format("peer {} failed", departed)) != std::string::npos);
  if (named) {
    std::printf("%s ok: rank %d named rank %d\n", mode.c_str(), rank, departed);
  } else {
    std::printf("%s FAILED: rank %d: the error does not name rank %d\n", mode.c_str(), rank,
                departed);
  }
  std::fflush(stdout);
  return named;
}

// After a timed-out bcast: rank 0 sends its bcast message, then both run
// a non-blocking barrier (the schedule path, so rank 1 takes in every
// message rank 0 sent before it: a receive left posted would get the late
// bcast message here).
int late_sender(Comm& world) {
  const int rank = world.rank();
  std::vector<std::byte> canary(4096, kCanary);
  for (int round = 0; round < 2; ++round) {
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      std::vector<std::byte> message(4096, std::byte{0x11});
      world.bcast(std::span(message), 0);
    } else {
      auto freed = std::make_unique<std::vector<std::byte>>(4096, kCanary);
      std::vector<std::byte>& buffer = round == 0 ? canary : *freed;
      try {
        world.bcast(std::span(buffer), 0);
        std::printf("late_sender FAILED: round %d: no timeout\n", round);
        return 1;
      } catch (const grove::Error& e) {
        if (e.code() != Errc::timeout) throw;
      }
      freed.reset();  // in round 1, a late write is now a use after free
    }
    world.ibarrier().wait();
  }
  for (std::byte b : canary) {
    if (b != kCanary) {
      std::printf(
          "late_sender FAILED: the late message was written into the buffer of a call "
          "that had thrown\n");
      return 1;
    }
  }
  world.barrier();
  if (rank == 1) std::printf("late_sender ok\n");
  return 0;
}

// Point-to-point receives that time out or are dropped are cancelled: the
// late messages stay for the next receives.
int late_p2p(Comm& world) {
  // A tag per round: a receive posted in round 1 must not match round 0's
  // late message, which is by then waiting at rank 1.
  constexpr int kTags[2] = {7, 8};
  const int rank = world.rank();
  std::vector<std::byte> canary(4096, kCanary);
  for (int round = 0; round < 2; ++round) {
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      std::vector<std::byte> message(4096, round == 0 ? std::byte{0x11} : std::byte{0x22});
      world.send(std::span<const std::byte>(message), 1, kTags[round]);
    } else if (round == 0) {
      try {
        world.recv(std::span(canary), 0, kTags[0]);
        std::printf("late_p2p FAILED: no timeout\n");
        return 1;
      } catch (const grove::Error& e) {
        if (e.code() != Errc::timeout) throw;
      }
    } else {
      auto freed = std::make_unique<std::vector<std::byte>>(4096, kCanary);
      { grove::Request dropped = world.irecv(std::span(*freed), 0, kTags[1]); }
      freed.reset();  // a late write is now a use after free
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    }
    world.ibarrier().wait();
  }
  if (rank == 1) {
    for (std::byte b : canary) {
      if (b != kCanary) {
        std::printf(
            "late_p2p FAILED: the late message was written into a timed-out recv's buffer\n");
        return 1;
      }
    }
    for (int round = 0; round < 2; ++round) {
      const std::byte expected = round == 0 ? std::byte{0x11} : std::byte{0x22};
      std::vector<std::byte> got(4096, kCanary);
      const grove::MessageInfo info = world.recv(std::span(got), 0, kTags[round]);
      if (info.bytes != got.size() || got != std::vector<std::byte>(4096, expected)) {
        std::printf("late_p2p FAILED: expected 4096 B of 0x%02x, got %zu B starting 0x%02x\n",
                    static_cast<unsigned>(expected), info.bytes, static_cast<unsigned>(got[0]));
        return 1;
      }
    }
  }
  world.barrier();
  if (rank == 1) std::printf("late_p2p ok\n");
  return 0;
}

int departed(Comm& world, const std::string& waited, const std::string& path) {
  const int rank = world.rank();
  std::vector<std::byte> buffer(64);
  world.barrier();
  if (rank == 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::_Exit(3);
  }
  const int root = waited == "late" ? 1 : 2;
  if (rank == 1) {
    if (waited == "late") std::this_thread::sleep_for(std::chrono::milliseconds(5000));
    try {
      world.bcast(std::span(buffer), root);
    } catch (const grove::Error&) {
    }
    std::fflush(stdout);
    std::_Exit(0);  // the finalize barrier would fail on rank 2
  }
  const uint64_t before = shm_calls(world);
  bool ok = false;
  try {
    world.bcast(std::span(buffer), root);
    std::printf("departed FAILED: rank 0: no error\n");
  } catch (const grove::Error& e) {
    ok = names(e, 2, "departed", rank);
  }
  const bool on_shm = shm_calls(world) != before;
  if (on_shm != (path == "shm")) {
    std::printf("departed FAILED: the call %s the shared-memory path\n",
                on_shm ? "took" : "did not take");
    ok = false;
  }
  std::fflush(stdout);
  std::_Exit(ok ? 0 : 1);
}

int dup_killed(Comm& world, int victim, int delay_ms) {
  const int rank = world.rank();
  if (rank == 0) {
    std::printf("pid of rank 0: %d\n", static_cast<int>(::getpid()));
    std::fflush(stdout);
  }
  world.barrier();
  if (rank == victim) {
    std::thread([delay_ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      ::raise(SIGKILL);
    }).detach();
  }
  bool ok = false;
  int made = 0;
  try {
    for (;;) {
      Comm copy = world.dup();
      copy.barrier();
      ++made;
    }
  } catch (const grove::Error& e) {
    ok = names(e, victim, "dup_killed", rank);
  }
  // One survivor says how far the loop got (a kill during the first dup
  // tests less than one during the hundredth).
  if (rank == (victim == 0 ? 1 : 0)) std::printf("dups made: %d\n", made);
  std::fflush(stdout);
  std::_Exit(ok ? 0 : 1);  // the finalize barrier would fail on the victim
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    grove::Session session;
    Comm& world = session.world();
    if (mode == "late_sender") return late_sender(world);
    if (mode == "late_p2p") return late_p2p(world);
    if (mode == "departed" && argc == 4) return departed(world, argv[2], argv[3]);
    if (mode == "dup_killed" && argc == 4)
      return dup_killed(world, std::atoi(argv[2]), std::atoi(argv[3]));
    std::fprintf(stderr,
                 "usage: mp_reliability late_sender | late_p2p | departed late|gone shm|schedule | "
                 "dup_killed VICTIM DELAY_MS\n");
    return 2;
  } catch (const std::exception& e) {
    std::printf("%s FAILED: %s\n", mode.c_str(), e.what());
    return 1;
  }
}
