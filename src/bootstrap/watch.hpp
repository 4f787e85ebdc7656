#pragma once
// The watch: how the `pmix` bootstrap learns that a rank left the job when
// the launcher does not tell (Open MPI 4.1's mpirun and Slurm 22.05 deliver
// no PMIx failure events; docs/cluster.md). Every pair of ranks keeps one TCP
// connection with kernel keepalive and sends nothing on it after the
// handshake, so
//   - a connection that ends (closed or reset) means the peer's process
//     ended, whatever ended it: the kernel closes a dead process's sockets;
//   - one that times out means the peer's host stopped answering (keepalive
//     probes unanswered for pmix_watch_timeout_ms): the host dropped out.
// Either reports the peer departed to the NoticeBox. Peers on this host are
// reached over loopback, others at the IPv4 addresses they publish. One
// thread per process sleeps in poll() on the connections; the kernel, not
// the thread, answers keepalive probes, so a busy or stopped rank is never
// taken for a dead one.
//
// Handshake (lower rank connects to higher): the connector sends magic,
// its rank and the acceptor's key (16 bytes); the acceptor checks them and
// answers magic and its rank (8 bytes). A connection that fails the check
// is closed and not counted: the key keeps strangers from posing as ranks.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/notice_box.hpp"

namespace grove {

// What a rank publishes so that peers can connect to its watch.
struct WatchCard {
  uint64_t key = 0;
  uint16_t port = 0;
  std::vector<uint32_t> ipv4;  // host byte order, this host's non-loopback addresses

  std::string encode() const;
  // Throws grove::Error(protocol) naming what is wrong with `text`.
  static WatchCard decode(std::string_view text);
  // "198.18.0.1" for 0xc6120001.
  static std::string address_text(uint32_t address);
};

class Watch {
 public:
  // Opens the listening socket; `keepalive_timeout` is how long a silent
  // host is given (at least 2 s: probes are whole seconds apart).
  Watch(int rank, int size, NoticeBox& box, std::chrono::milliseconds keepalive_timeout);
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  const WatchCard& card() const { return card_; }
  // Connects with every other rank (bounded by timeout_ms; throws
  // grove::Error naming the ranks it could not reach), then starts the
  // thread. `cards[r]` is rank r's card.
  void connect(const std::vector<WatchCard>& cards, const Hosts& hosts);

 private:
  void run();
  void report(int peer, int err);

  int rank_;
  int size_;
  NoticeBox& box_;
  std::chrono::milliseconds keepalive_timeout_;
  WatchCard card_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;        // eventfd: the destructor wakes the thread
  std::vector<int> links_;  // by rank: the connection, -1 for self or once reported
  std::thread thread_;
};

}  // namespace grove
