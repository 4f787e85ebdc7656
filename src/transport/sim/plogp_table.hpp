#pragma once
// A pLogP parameter table: o_s(m), o_r(m), g(m) per message size m, and the
// latency L. The simulator reads it in pLogP mode; the model layer evaluates
// closed forms with it; the probe writes it.
//
// Text format (one table per file; '#' starts a comment; fields separated by
// blanks or tabs; times in microseconds):
//
//   format  grove-plogp/1        # optional; when present, `end` is required
//   L       5.2                  # the end-to-end latency, once
//   bytes   os_us  or_us  g_us   # optional header row
//   0       1.1    1.0    2.0    # one row per measured size, sizes increasing
//   1024    1.6    1.5    3.1
//   gap_posted 1024 2.4          # optional, repeated: gp(m), the gap of sends
//                                #   posted together (below)
//   port    shared               # optional: serial (the default) or shared (below)
//   call_us 1.4                  # optional: grove's fixed cost of one call
//   shm_us  0.5                  # optional: the shared-memory engine's fixed cost
//   copy    4096   0.2           # optional, repeated: one memcpy of BYTES, us
//   copy_in  4096  0.3           # optional, repeated: the copy curves between
//   copy_out 4096  0.5           #   two ranks (CopyKind below), as `copy`
//   copy_cma 4096  2.1
//   end                          # the last line but comments (`grove probe` writes it)
//
// The optional lines are the host terms of docs/tuning.md ("Host terms"): the
// simulator ignores them; the model adds call_us to every schedule algorithm's
// form and prices the shared-memory engine with shm_us and the copy curves.
//
// A table that declares its format must end with `end`, so a file cut short
// at a line boundary is refused as truncated rather than read as a shorter
// table. Tables without the `format` line (hand-written) need no `end`.
//
// Lookup interpolates linearly between measured sizes and extrapolates from
// the last two rows above the largest (as the pLogP benchmark's lookup does);
// below the smallest size it returns the first row.
//
// g(m) is one message's time beyond L (the probe derives it from a round
// trip). Where sends posted together leave one after another sooner than
// that, gp(m) < g(m) (a rendezvous: each message's request-and-grant round
// trip is in g(m), and messages in flight together overlap theirs), a
// sender is free for its next message after gp(m) and a message still takes
// g(m) + L: the port model's u(m) = min(g(m), gp(m)) (send_gap_us) and its
// latency L + g(m) - u(m) (handshake_us). Without gap_posted rows u = g.
//
// `port shared` says the sends a rank posts together to different ranks
// share its port (a NIC between hosts: each connection gets a share while
// they last), where `serial` has them leave one after another
// (coll/cost_terms.hpp). The model's fan-out trees read it; the simulator's
// port is serial whatever the table says.

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace grove::sim {

// What a copy curve measures: where the bytes come from and go to, as the
// shared-memory engine copies them (docs/tuning.md, "Host terms").
enum class CopyKind {
  local,  // `copy`: memcpy within one process, both buffers warm in its cache
  in,     // `copy_in`: memcpy into a shared buffer the other rank copied out last
  out,    // `copy_out`: memcpy out of a shared buffer the other rank wrote last
  cma,    // `copy_cma`: process_vm_readv of the other rank's buffer into one's own
};
inline constexpr CopyKind kCopyKinds[] = {CopyKind::local, CopyKind::in, CopyKind::out,
                                          CopyKind::cma};
// The table's keyword of a curve ("copy", "copy_in", ...).
const char* copy_keyword(CopyKind kind);

// (bytes, us) rows, bytes increasing.
using Curve = std::vector<std::pair<double, double>>;
using CopyCurve = Curve;

class PlogpTable {
 public:
  struct Row {
    double bytes = 0;
    double os_us = 0;
    double or_us = 0;
    double g_us = 0;
  };

  PlogpTable() = default;
  // Throws grove::Error(invalid_parameter) naming `origin` and the line.
  static PlogpTable parse(std::string_view text, std::string_view origin);
  static PlogpTable load(const std::string& path);
  // A table from rows given in code (tests, the model tool). Rows must have
  // increasing sizes; throws otherwise.
  static PlogpTable from_rows(double latency_us, std::vector<Row> rows);

  double latency_us() const { return latency_us_; }
  double os_us(double bytes) const { return lookup(bytes, &Row::os_us); }
  double or_us(double bytes) const { return lookup(bytes, &Row::or_us); }
  double g_us(double bytes) const { return lookup(bytes, &Row::g_us); }
  // The gap of sends posted together (gap_posted rows), and the port
  // model's terms from it (above): without the rows g(m) and 0.
  bool has_posted_gap() const { return !posted_gap_.empty(); }
  const Curve& posted_gap() const { return posted_gap_; }
  double send_gap_us(double bytes) const;
  double handshake_us(double bytes) const { return g_us(bytes) - send_gap_us(bytes); }
  void set_posted_gap(Curve rows);
  bool shared_port() const { return shared_port_; }
  void set_shared_port(bool shared) { shared_port_ = shared; }
  const std::vector<Row>& rows() const { return rows_; }
  std::string to_text() const;

  // Host terms (0 / empty when the table has none).
  double call_us() const { return call_us_; }
  double shm_us() const { return shm_us_; }
  bool has_copy(CopyKind kind = CopyKind::local) const { return !curve(kind).empty(); }
  // One copy of `bytes` of that kind, interpolated as the rows are; 0
  // without that curve.
  double copy_us(double bytes, CopyKind kind = CopyKind::local) const;
  const CopyCurve& copy_curve(CopyKind kind) const { return curve(kind); }
  // Sets the host terms; copy rows as (bytes, us) with increasing bytes.
  void set_host_terms(double call_us, double shm_us, CopyCurve copy);
  void set_copy_curve(CopyKind kind, CopyCurve rows);

 private:
  double lookup(double bytes, double Row::*field) const;
  void check(std::string_view origin) const;
  const CopyCurve& curve(CopyKind kind) const { return copies_[static_cast<size_t>(kind)]; }

  double latency_us_ = 0;
  std::vector<Row> rows_;
  double call_us_ = 0;
  double shm_us_ = 0;
  CopyCurve copies_[std::size(kCopyKinds)];  // by CopyKind
  Curve posted_gap_;
  bool shared_port_ = false;
};

}  // namespace grove::sim
