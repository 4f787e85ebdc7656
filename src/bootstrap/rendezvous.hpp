#pragma once
// The launcher's side of the `local` bootstrap: a Unix socket in a private
// directory, the job key, one connection per admitted rank, the bootstrap
// collectives and failure notices. Single-threaded; the launcher's poll loop
// drives it through pollfds()/handle()/on_time().

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/wire.hpp"
#include "grove/error.hpp"

namespace grove::launch {

using Clock = std::chrono::steady_clock;

// Where run directories are made: $TMPDIR, else /tmp.
std::string run_directory_parent();

class Rendezvous {
 public:
  // `notify`: a departure is announced to the survivors and later
  // collectives complete over the live ranks; otherwise a collective that
  // still needs a departed rank fails, naming it.
  Rendezvous(int size, bool notify);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  const std::string& key() const { return key_; }

  // The descriptors to poll now; hand the same entries, with revents filled
  // in, back to handle().
  std::vector<pollfd> pollfds() const;
  void handle(const std::vector<pollfd>& ready);
  // The earliest time on_time() has work (a collective or handshake deadline).
  std::optional<Clock::time_point> next_deadline() const;
  void on_time(Clock::time_point now);

  // A rank left the job: its process ended (`how`: "exited with code 0") or
  // it closed its connection. Idempotent.
  void depart(int rank, const std::string& how);

  bool admitted(int rank) const { return ranks_[rank].fd >= 0; }
  // Ranks whose connection closed and that have not departed yet, with the time
  // it happened; the launcher departs them once their exit status is known.
  std::vector<std::pair<int, Clock::time_point>> closed_connections() const;

 private:
  struct Connection {
    int fd = -1;
    wire::FrameReader reader{wire::kMaxHelloPayload};
    std::vector<std::byte> out;  // queued bytes not yet written
    bool close_when_flushed = false;
    Clock::time_point deadline;  // for the hello (run_hello_timeout_ms), or for flushing a refusal
  };
  struct RankState {
    int fd = -1;  // admitted connection, -1 if none
    wire::FrameReader reader{wire::kMaxPayload};
    std::vector<std::byte> out;
    bool departed = false;
    std::string how;                             // how it departed: "exited with code 0"
    std::optional<Clock::time_point> closed_at;  // its connection closed (EOF or error)
  };
  struct Collective {
    uint64_t seq = 0;
    wire::FrameType type = wire::FrameType::allgather_request;
    Clock::time_point started;
    std::vector<std::optional<Blob>> blobs;  // by rank; set when it contributed
    int contributions = 0;
  };

  void accept_new();
  void serve_stranger(Connection& c, short revents);
  void admit(Connection& c, const wire::Frame& frame);
  void serve_rank(int rank, short revents);
  void on_request(int rank, const wire::Frame& frame);
  void try_complete();
  void fail_collective(Errc code, const std::string& message);
  void send_to_rank(int rank, const wire::Frame& frame);
  // Closes an admitted rank's connection; it has not departed until depart().
  void close_rank(int rank);
  std::string collective_name(const Collective& c) const;

  int size_;
  bool notify_;
  std::string dir_;
  std::string socket_path_;
  std::string key_;
  int listen_fd_ = -1;
  std::list<Connection> strangers_;  // connected, not admitted yet; oldest first
  uint64_t evicted_ = 0;             // strangers closed to make room for newer ones
  uint64_t silent_closed_ = 0;       // strangers closed at their hello deadline
  std::vector<RankState> ranks_;
  std::vector<FailureNotice> notices_;                 // every notice sent so far, in order
  uint64_t version_ = 0;                               // count of departures announced
  std::optional<Collective> open_;                     // at most one: a rank waits for each reply
  uint64_t finished_seq_ = 0;                          // the last collective completed or failed
  std::optional<wire::CollectiveError> last_failure_;  // answer to late joiners of it
};

}  // namespace grove::launch
