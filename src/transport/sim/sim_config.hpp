#pragma once
// The simulator's network and host model. Every term is a parameter with a
// unit; SimConfig::from_params() reads the `sim_*` registry parameters, and
// tools and tests may also fill the struct directly.
//
// A message of m bytes from rank s (node ns) to rank d (node nd), posted at
// time p, goes through these stages (docs/simulator.md has the same text):
//
// 1. Software. Rank s owns `threads` worker threads. The send takes the
//    worker that becomes free first (FIFO in posting order) and holds it for
//    the per-copy software cost: `copy_us` (Hockney mode) or o_s(m) (pLogP).
//    So r sends posted in one burst finish their software at c, c, ..., i.e.
//    the last after ceil(r/t) * c. With overlap=false a worker is held until
//    its message has left the NIC (blocking sends: the single-port
//    assumption of the Hockney formulas, with threads = 1).
// 2. NIC egress. The message is ready for the wire when its software is done
//    (Hockney) or when its software starts (pLogP: g(m) >= o_s(m) includes
//    the overhead). A node's egress is one FIFO: a message occupies it for
//    m / B (Hockney) or g(m) (pLogP), shared by the node's ranks_per_node
//    ranks. The sender's completion fires when the last byte has left.
// 3. Latency. The first byte reaches node nd `alpha_us` (or L) after it left.
// 4. NIC ingress. A node's ingress is one FIFO in order of first-byte
//    arrival, occupied m / B (or g(m)) per message, cut-through: an
//    uncontended message ends alpha + m/B after its egress started.
// 5. Receive. The message is matched at the end of ingress. In Hockney mode
//    its completion is delayed by `recv_us` on the receiver's receive thread
//    (one per rank, FIFO); in pLogP mode o_r(m) occupies that thread without
//    delaying this completion (pLogP's L + g(m) already includes it).
//
// Messages between ranks of one node bypass the NIC: after stage 1 they take
// shm_alpha_us + m / shm_bandwidth, in order per sender.
//
// Local copy and reduce steps of a schedule cost no virtual time.

#include <cstdint>
#include <memory>
#include <string>

#include "transport/sim/plogp_table.hpp"

namespace grove::sim {

enum class CostModel : uint8_t { hockney, plogp };
enum class DataMode : uint8_t {
  real,   // payloads are copied end to end: results can be checked
  sizes,  // messages carry lengths only: nothing is copied or allocated
};

struct SimConfig {
  CostModel model = CostModel::hockney;
  DataMode data = DataMode::real;
  double alpha_us = 100;                    // network latency per message, first byte
  double copy_us = 25;                      // c: software cost of one send copy
  int threads = 8;                          // t: worker threads per rank sharing that cost
  double bandwidth_gbps = 10;               // B: one NIC direction, 10^9 bit/s
  double recv_us = 0;                       // receive-side software cost (Hockney mode)
  int ranks_per_node = 1;                   // ranks sharing one NIC
  double shm_alpha_us = 0.5;                // intra-node latency
  double shm_bandwidth_gbps = 100;          // intra-node bandwidth, 10^9 bit/s
  bool overlap = true;                      // false: a send holds its worker until it left the NIC
  double jitter = 0;                        // software cost x (1 + jitter * u), u uniform [0, 1)
  uint64_t seed = 1;                        // seeds the jitter; no other randomness exists
  std::shared_ptr<const PlogpTable> plogp;  // required in pLogP mode

  // Throws grove::Error(invalid_parameter) naming the field.
  void validate() const;
  // From the sim_* parameters (sim_plogp_table is a path, loaded here).
  static SimConfig from_params();
  // One line naming every term, for tool output and docs.
  std::string describe() const;
};

std::string_view cost_model_name(CostModel model);
std::string_view data_mode_name(DataMode mode);

}  // namespace grove::sim
