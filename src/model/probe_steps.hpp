#pragma once
// The experiments `grove probe` is made of (model/probe.hpp has the
// procedure that strings them together). Each sends its own Command to the
// peer and waits for every message it posted before it returns, so the next
// experiment starts with nothing in flight.

#include <cstdint>

#include "model/probe.hpp"

namespace grove::model::probe {

// The cost of reading the transport's clock, microseconds: the minimum over
// 5 runs of 1000 reads.
double clock_overhead(const Link& link);

struct PingPong {
  Estimate rtt, os;
};
// RTT(m) and o_s(m): ping-pong with m bytes out, 0 back. `rtt_hint` (us, > 0)
// sizes the batches; warm-up as the options say.
PingPong ping_pong(Link& link, uint64_t bytes, double rtt_hint, double overhead,
                   const ProbeOptions& options);

// o_r(m): 0 bytes out, m back; the receive is posted 1.2 RTT(m) (at least
// 100 clock reads) after the request left.
Estimate receive_overhead(Link& link, uint64_t bytes, double rtt, double overhead,
                          const ProbeOptions& options);

struct Flood {
  double per_message_us = 0;
  int runs = 0;
};
// g(m) by flooding: runs doubling from 10 until the time per message is
// stable and `rtt0` is below 1% of the loop (or the runs cap: 2560, and
// 256 MiB in all).
Flood flood(Link& link, uint64_t bytes, double rtt0, double overhead);

// One flat release of `copies` copies of `bytes`: from the first post until
// the acknowledgement, less `ack_one_way` (L + g(0)).
Estimate flat_release(Link& link, uint64_t bytes, int copies, double ack_one_way, double overhead,
                      const ProbeOptions& options);

// Sends posted together (model/probe.hpp's gp(m)).
inline constexpr int kPostedCopies = 8;
// gp(m): the gap between sends of `bytes` posted together, from flat
// releases of 1 and kPostedCopies copies (their difference over
// kPostedCopies - 1, at least 0).
double posted_gap(Link& link, uint64_t bytes, double ack_one_way, double overhead,
                  const ProbeOptions& options);

}  // namespace grove::model::probe
