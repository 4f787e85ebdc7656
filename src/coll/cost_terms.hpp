#pragma once
// The closed-form cost of an algorithm, declared with it in its collective's
// registry entry (coll/registry.hpp), and the terms the forms share.
//
// Every form is written over one port model, the simulator's with one worker
// thread: a rank's sends leave one after another, each holding the sender
// for u(m); a message reaches its receiver l(m) after its sending ended;
// receiving costs the receiver nothing but its ingress, which takes w(m) per
// message in arrival order.
//
//   Hockney:  u(m) = alpha + m beta,  w(m) = m beta,  l(m) = 0
//   pLogP:    u(m) = w(m) = g(m),  l(m) = L; with a measured gap of sends
//             posted together gp(m) < g(m) (a rendezvous round trip that
//             such sends overlap), u(m) = w(m) = gp(m) and
//             l(m) = L + g(m) - gp(m): one message still takes g(m) + L
//
// (model/cost.hpp makes both from measured parameters.) A port between hosts
// (a NIC) is `shared_port`: the sends a rank posts together to different
// ranks progress at once, each getting an equal share of the port while it
// lasts, so k equal sends all end k u(m) after posting instead of the i-th
// at i u(m). The forms of trees that fan out (a rank sending to several
// children: bcast's trees, scatter's binomial tree) evaluate the tree under
// that rule (cost::shared_fan_out); every other form is the same on both
// ports (one send at a time, or sends whose last end is what counts). The
// simulator's port is serial only. Local copies and
// reductions cost nothing (gamma = 0). A form is exact where its
// `exact_when` holds (a power of two, a full tree, equal segments, ...) and
// elsewhere within `tolerance` (relative) of the simulated schedule, from
// above unless `two_sided`. docs/models.md lists every form beside the
// published one.

#include <functional>
#include <string>

#include "core/function_ref.hpp"
#include "topo/tree.hpp"

namespace grove::coll {

struct AlgorithmSpec;

struct PortModel {
  std::function<double(double bytes)> u;  // sender occupancy of one message, us
  std::function<double(double bytes)> w;  // ingress occupancy of one message, us
  double lambda = 0;                      // latency, us
  // The part of a message's own time its sender does not hold the port for
  // (pLogP: g(m) - gp(m) where sends posted together overlap it); empty: 0.
  std::function<double(double bytes)> handshake;
  // The latency of a message of `bytes`: from the end of its sending to its
  // delivery.
  double l(double bytes) const { return handshake ? lambda + handshake(bytes) : lambda; }
  // Sends posted together share the port (above); false: they leave one
  // after another.
  bool shared_port = false;
  // Host terms (docs/tuning.md), measured by `grove probe`; zero/empty when
  // unknown. The forms above never read them: model::predict_us adds call_us
  // to a schedule algorithm's form, and the shared-memory engine's forms
  // (shm_us, copy) are priced only when `copy` is set.
  double call_us = 0;                        // grove's fixed cost of one call
  double shm_us = 0;                         // the shm engine's publish-and-observe cost
  std::function<double(double bytes)> copy;  // one memcpy of `bytes` within a process, us
  // Copies between two ranks of a host, as the engine makes them: into a
  // shared buffer the other rank copied out last, out of one it wrote last,
  // and process_vm_readv of its buffer. Empty: priced as `copy` (a table
  // from before the probe measured them).
  std::function<double(double bytes)> copy_in, copy_out, copy_cma;
};

struct CostCase {
  const AlgorithmSpec* spec;
  int ranks;
  double bytes;  // the collective's size argument: block bytes where per rank
};

struct ClosedForm {
  std::string formula;    // human-readable, in u, w, lambda
  std::string published;  // the published form and its source, or "none"
  std::function<bool(const CostCase&)> exact_when;
  double tolerance = 0;
  bool two_sided = false;
  // Empty: the algorithm has no closed form (it is not modelled).
  std::function<double(const CostCase&, const PortModel&)> cost;
  // The local copies (the schedule's copy steps) on its critical path,
  // priced with PortModel::copy: a host term like call_us (docs/tuning.md),
  // added by model::predict_us when the model has a copy curve. The form
  // above leaves them out because the simulator does not time copies.
  // Empty: none on the path.
  std::function<double(const CostCase&, const PortModel&)> copies;
  std::string copies_formula;  // human-readable, in c(n)
};

// Shorthand for a registry entry's form.
ClosedForm closed_form(std::string formula, std::string published,
                       std::function<bool(const CostCase&)> exact_when, double tolerance,
                       bool two_sided,
                       std::function<double(const CostCase&, const PortModel&)> cost);
// `form` with the copies on its critical path (ClosedForm::copies).
ClosedForm with_copies(ClosedForm form, std::string formula,
                       std::function<double(const CostCase&, const PortModel&)> copies);

namespace cost {

// Least d with k^d >= n.
int ceil_log(int64_t n, int64_t k);
int floor_log2(int64_t n);
bool is_power(int64_t n, int64_t k);
// n = 1 + k + ... + k^d for some d: every level of the heap is full.
bool full_kary(int64_t n, int64_t k);
// The height of a k-ary heap tree of n ranks: ceil(log_k((k-1) n + 1)) - 1.
int kary_height(int n, int k);
// The spec's radix ("binary" counts as 2).
int radix_of(const CostCase& c);
bool always(const CostCase&);
bool never(const CostCase&);
bool power_of_two(const CostCase& c);
// Powers of two whose vector splits into P equal parts.
bool even_split(const CostCase& c);

// Gather up a k-ary heap, level by level from the bottom: exact for a single
// level and for full trees, an upper bound otherwise.
double kary_gather(int p, int k, double block, const PortModel& m);
// Bcast down a k-ary heap: exact for every P (see cost_terms.cpp).
double kary_bcast(int p, int k, double bytes, const PortModel& m);
// Down `tree` (rooted at rank 0) on a shared port: every rank posts its
// sends to all its children when its own message has arrived (at 0 for the
// root), and they share its port: with works u(b_1) <= ... <= u(b_k), the
// i-th ends sum_{j<i} u(b_j) + (k - i + 1) u(b_i) after posting, and
// reaches its child l(b_i) later. Returns the last arrival. `edge_bytes`
// gives the bytes to a child; a child with 0 gets no message and is not
// waited for (nor is its subtree, which then gets none either). O(P log P).
double shared_fan_out(const topo::Tree& tree, FunctionRef<double(int child)> edge_bytes,
                      const PortModel& m);
// sum_{i < steps} (u(2^i block) + lambda).
double sum_doubling(int steps, double block, const PortModel& m);
// sum over halving steps 2, 4, ..., p of (u(n / part) + lambda).
double halving(int p, double n, const PortModel& m);

}  // namespace cost
}  // namespace grove::coll
