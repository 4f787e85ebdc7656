#include "model/cost.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "coll/allgather.hpp"
#include "grove/error.hpp"
#include "model/radix.hpp"

namespace grove::model {
namespace {

// Least d with k^d >= n.
int ceil_log(int64_t n, int64_t k) {
  int d = 0;
  for (int64_t reach = 1; reach < n; reach *= k)
    ++d;
  return d;
}
int floor_log2(int64_t n) {
  int d = 0;
  while ((int64_t{2} << d) <= n)
    ++d;
  return d;
}
bool is_power(int64_t n, int64_t k) {
  int64_t x = 1;
  while (x < n)
    x *= k;
  return x == n;
}
// n = 1 + k + ... + k^d for some d: every level of the heap is full.
bool full_kary(int64_t n, int64_t k) {
  int64_t total = 1, level = 1;
  while (total < n) {
    level *= k;
    total += level;
  }
  return total == n;
}
int radix_of(const CostCase& c) {
  return c.spec->name == "binary" ? 2 : c.spec->radix;
}
bool always(const CostCase&) {
  return true;
}
bool power_of_two(const CostCase& c) {
  return is_power(c.ranks, 2);
}

// The largest base-k digit sum among 0 .. n (n >= 0).
int max_digit_sum(int64_t n, int k) {
  std::vector<int> digits;
  for (int64_t x = n; x > 0; x /= k)
    digits.push_back(static_cast<int>(x % k));
  int above = 0, best = 0;
  for (int j = static_cast<int>(digits.size()) - 1; j >= 0; --j) {
    // Keep the digits above j, lower digit j by one, fill below with k-1.
    if (digits[static_cast<size_t>(j)] > 0)
      best = std::max(best, above + digits[static_cast<size_t>(j)] - 1 + j * (k - 1));
    above += digits[static_cast<size_t>(j)];
  }
  return std::max(best, above);  // n itself
}

// Gather up a k-ary heap, level by level from the bottom: the children of a
// node finish together and their subtrees' messages queue on its ingress.
// Exact for a single level and for full trees; an upper bound otherwise
// (each level costed as if full, with at most P-1 children).
double kary_gather(int p, int k, double block, const PortModel& m) {
  const int d = kary_height(p, k);
  const int children = std::min(k, p - 1);
  if (d <= 1) return p <= 1 ? 0 : m.u(block) + m.lambda + (children - 1) * m.w(block);
  double t = 0;
  double subtree = 1;  // ranks in a child's subtree at the current level
  for (int level = 1; level <= d; ++level) {
    const double bytes = subtree * block;
    t += m.u(bytes) + m.lambda + (children - 1) * m.w(bytes);
    subtree = subtree * k + 1;
  }
  return t;
}

// Bcast down a k-ary heap of height d: a rank's path costs, per hop, its
// position among its parent's children times u, plus L. Levels above the
// last are full, so the worst rank is either the rightmost of level d-1,
// (d-1)(k u + L), or the level-d rank whose index i in its level has the
// largest base-k digit sum, (d + digitsum(i)) u + d L. Exact for every P.
double kary_bcast(int p, int k, double bytes, const PortModel& m) {
  if (p <= 1) return 0;
  const int d = kary_height(p, k);
  int64_t above = 0, level = 1;  // ranks in levels 0 .. d-1
  for (int i = 0; i < d; ++i) {
    above += level;
    level *= k;
  }
  const int64_t last_level = p - above;  // ranks on level d (>= 1)
  const double deep = (d + max_digit_sum(last_level - 1, k)) * m.u(bytes) + d * m.lambda;
  const double shallow = (d - 1) * (k * m.u(bytes) + m.lambda);
  return std::max(deep, shallow);
}

std::vector<ClosedForm> make_forms() {
  std::vector<ClosedForm> f;
  // ------------------------------------------------------------ bcast
  f.push_back({"bcast", "flat", "(P-1) u(m) + L", "(P-1)g(m) + L [REC]; (P-1)(a+mb) [SEC]", always,
               0, false, [](const CostCase& c, const PortModel& m) {
                 return (c.ranks - 1) * m.u(c.bytes) + m.lambda;
               }});
  f.push_back({"bcast", "chain", "(P-1) (u(m) + L)", "(P-1)(g(m) + L) [REC]", always, 0, false,
               [](const CostCase& c, const PortModel& m) {
                 return (c.ranks - 1) * (m.u(c.bytes) + m.lambda);
               }});
  f.push_back({"bcast", "pipeline", "(S + P - 2) u(s) + (P-1) L, S = ceil(m/s)",
               "(P-1)(g(s)+L) + (k-1)g(s) [REC]; (P+ns-2)(a+ms b) [SEC]",
               [](const CostCase& c) {
                 return std::fmod(c.bytes, static_cast<double>(c.spec->segment)) == 0;
               },
               0.5, false,
               [](const CostCase& c, const PortModel& m) {
                 const double s = std::min(static_cast<double>(c.spec->segment), c.bytes);
                 const double segments = std::ceil(c.bytes / s);
                 return (segments + c.ranks - 2) * m.u(s) + (c.ranks - 1) * m.lambda;
               }});
  auto kary = [](const CostCase& c, const PortModel& m) {
    return kary_bcast(c.ranks, radix_of(c), c.bytes, m);
  };
  auto kary_full = [](const CostCase& c) { return full_kary(c.ranks, radix_of(c)); };
  const std::string kary_text =
      "max((d-1)(k u(m) + L), (d + s) u(m) + d L): d = heap height, s = the largest base-k digit "
      "sum below the last level's rank count; d (k u(m) + L) for a full tree";
  f.push_back({"bcast", "binary", kary_text,
               "(ceil(log2(P+1)) + ns - 2)(2a + ms b) [SEC]: the b term is 2 ms b", always, 0,
               false, kary});
  f.push_back({"bcast", "kary", kary_text, "d k(a+mb) [DER] (full trees)", always, 0, false, kary});
  f.push_back({"bcast", "binomial", "ceil(log2 P) u(m) + floor(log2 P) L",
               "floor(log2 P)g(m) + ceil(log2 P)L [REC]: floor and ceil swapped; lgp(a+nb) [MPICH]",
               always, 0, false, [](const CostCase& c, const PortModel& m) {
                 return ceil_log(c.ranks, 2) * m.u(c.bytes) + floor_log2(c.ranks) * m.lambda;
               }});
  f.push_back({"bcast", "knomial", "d ((k-1) u(m) + L), d = ceil(log_k P)",
               "(k-1)ceil(log_k P)(a+mb) [DER]",
               [](const CostCase& c) { return is_power(c.ranks, radix_of(c)); }, 1.0, false,
               [](const CostCase& c, const PortModel& m) {
                 const int k = radix_of(c);
                 return ceil_log(c.ranks, k) * ((k - 1) * m.u(c.bytes) + m.lambda);
               }});
  f.push_back({"bcast", "scatter_allgather",
               "scatter sum_i (u(2^i b) + L) + ring (P-1)(u(b) + L), b = ceil(m/P): phases overlap",
               "(lgp + p - 1)a + 2n(p-1)/p b [MPICH]", [](const CostCase&) { return false; }, 1.0,
               false,
               [](const CostCase& c, const PortModel& m) {
                 const int p = c.ranks;
                 const double b = std::ceil(c.bytes / p);
                 double t = 0;
                 for (int i = 0; i < ceil_log(p, 2); ++i)
                   t += m.u(std::min(std::ldexp(b, i), c.bytes)) + m.lambda;
                 return t + (p - 1) * (m.u(b) + m.lambda);
               }});
  // ---------------------------------------------------------- barrier
  f.push_back({"barrier", "dissemination", "ceil(log2 P) (u(0) + L)", "ceil(lgp) a [DER][SEC]",
               always, 0, false, [](const CostCase& c, const PortModel& m) {
                 return ceil_log(c.ranks, 2) * (m.u(0) + m.lambda);
               }});
  f.push_back({"barrier", "knomial", "d (k u(0) + 2 L), d = ceil(log_k P): fan-in d (u(0)+L)",
               "none", [](const CostCase& c) { return is_power(c.ranks, radix_of(c)); }, 1.0, true,
               [](const CostCase& c, const PortModel& m) {
                 const int k = radix_of(c);
                 return ceil_log(c.ranks, k) * (k * m.u(0) + 2 * m.lambda);
               }});
  f.push_back({"barrier", "flat", "P u(0) + 2 L + (P-2) w(0)", "none", always, 0, false,
               [](const CostCase& c, const PortModel& m) {
                 return c.ranks * m.u(0) + 2 * m.lambda + (c.ranks - 2) * m.w(0);
               }});
  // ----------------------------------------------------------- gather
  f.push_back({"gather", "flat", "u(m) + L + (P-2) w(m)", "(P-1)(a+mb): receiver pays a [SEC]",
               always, 0, false, [](const CostCase& c, const PortModel& m) {
                 return m.u(c.bytes) + m.lambda + (c.ranks - 2) * m.w(c.bytes);
               }});
  f.push_back({"gather", "binomial", "sum_{i<log2 P} (u(2^i m) + L)", "lgp a + n(p-1)/p b [MPICH]",
               power_of_two, 1.0, false, [](const CostCase& c, const PortModel& m) {
                 double t = 0;
                 for (int i = 0; i < ceil_log(c.ranks, 2); ++i)
                   t += m.u(std::ldexp(c.bytes, i)) + m.lambda;
                 return t;
               }});
  f.push_back({"gather", "kary",
               "sum over levels (u(S m) + L + (c-1) w(S m)), S = a child's subtree, c = min(k, "
               "P-1) children",
               "none",
               [](const CostCase& c) {
                 return full_kary(c.ranks, radix_of(c)) || c.ranks <= radix_of(c) + 1;
               },
               3.0, false,
               [](const CostCase& c, const PortModel& m) {
                 return kary_gather(c.ranks, radix_of(c), c.bytes, m);
               }});
  // ---------------------------------------------------------- scatter
  f.push_back({"scatter", "flat", "(P-1) u(m) + L", "(P-1)g(m) + L [REC]", always, 0, false,
               [](const CostCase& c, const PortModel& m) {
                 return (c.ranks - 1) * m.u(c.bytes) + m.lambda;
               }});
  f.push_back({"scatter", "binomial", "sum_{i<log2 P} u(2^i m) + log2 P L",
               "sum_j g(2^j m) + ceil(log2 P)L [REC]", power_of_two, 1.0, false,
               [](const CostCase& c, const PortModel& m) {
                 const int d = ceil_log(c.ranks, 2);
                 double t = d * m.lambda;
                 for (int i = 0; i < d; ++i)
                   t += m.u(std::ldexp(c.bytes, i));
                 return t;
               }});
  f.push_back({"scatter", "chain", "sum_{j=1}^{P-1} (u(j m) + L)", "sum_j g(j m) + (P-1)L [REC]",
               always, 0, false, [](const CostCase& c, const PortModel& m) {
                 double t = 0;
                 for (int j = 1; j < c.ranks; ++j)
                   t += m.u(j * c.bytes) + m.lambda;
                 return t;
               }});
  // -------------------------------------------------------- allgather
  f.push_back({"allgather", "ring", "(P-1) (u(m) + L)", "(p-1)a + n(p-1)/p b [MPICH]", always, 0,
               false, [](const CostCase& c, const PortModel& m) {
                 return (c.ranks - 1) * (m.u(c.bytes) + m.lambda);
               }});
  f.push_back({"allgather", "recursive_doubling",
               "sum_{i<log2 P} (u(2^i m) + L); other P: fold (u(m) + L), the power-of-two steps "
               "with 2m blocks, unfold (u(P m) + L)",
               "lgp a + n(p-1)/p b [MPICH] (powers of two)", power_of_two, 0.05, false,
               [](const CostCase& c, const PortModel& m) {
                 const int p2 = 1 << floor_log2(c.ranks);
                 const bool fold = p2 != c.ranks;
                 const double block = fold ? 2 * c.bytes : c.bytes;
                 double t = 0;
                 for (int i = 0; (1 << i) < p2; ++i)
                   t += m.u(std::ldexp(block, i)) + m.lambda;
                 if (fold) t += m.u(c.bytes) + m.u(c.ranks * c.bytes) + 2 * m.lambda;
                 return t;
               }});
  f.push_back({"allgather", "bruck",
               "sum_i (u(b_i m) + u(0) + L), b_i = min(2^i, P - 2^i): a wrapped range is two "
               "messages",
               "ceil(lgp)a + n(p-1)/p b [MPICH]", [](const CostCase&) { return false; }, 1.0, false,
               [](const CostCase& c, const PortModel& m) {
                 double t = 0;
                 for (int64_t d = 1; d < c.ranks; d *= 2) {
                   const double blocks = static_cast<double>(std::min<int64_t>(d, c.ranks - d));
                   t += m.u(blocks * c.bytes) + m.u(0) + m.lambda;
                 }
                 return t;
               }});
  f.push_back({"allgather", "neighbor_exchange", "(u(m) + L) + (P/2 - 1)(u(2m) + L)",
               "none (Chen et al.: P/2 steps)", always, 0, false,
               [](const CostCase& c, const PortModel& m) {
                 if (c.ranks < 2) return 0.0;
                 return m.u(c.bytes) + m.lambda + (c.ranks / 2 - 1) * (m.u(2 * c.bytes) + m.lambda);
               }});
  f.push_back({"allgather", "gather_bcast",
               "kary gather (rollup_radix) + kary bcast of P m (release_radix)", "none",
               [](const CostCase& c) {
                 return full_kary(c.ranks, coll::rollup_radix()) ||
                        c.ranks <= coll::rollup_radix() + 1;
               },
               3.0, false,
               [](const CostCase& c, const PortModel& m) {
                 return kary_gather(c.ranks, coll::rollup_radix(), c.bytes, m) +
                        kary_bcast(c.ranks, coll::release_radix(), c.ranks * c.bytes, m);
               }});
  // ------------------------------------------------------- allgatherv
  // m is the largest block (the simulator's test blocks are m .. m+2).
  f.push_back({"allgatherv", "ring", "(P-1) (u(max block) + L)", "as allgather ring",
               [](const CostCase&) { return false; }, 0.05, false,
               [](const CostCase& c, const PortModel& m) {
                 return (c.ranks - 1) * (m.u(c.bytes) + m.lambda);
               }});
  f.push_back({"allgatherv", "gather_bcast", "as allgather gather_bcast with the largest block",
               "none", [](const CostCase&) { return false; }, 3.0, false,
               [](const CostCase& c, const PortModel& m) {
                 return kary_gather(c.ranks, coll::rollup_radix(), c.bytes, m) +
                        kary_bcast(c.ranks, coll::release_radix(), c.ranks * c.bytes, m);
               }});
  return f;
}

}  // namespace

PortModel hockney_model(double alpha_us, double beta_us_per_byte) {
  PortModel m;
  m.u = [=](double bytes) { return alpha_us + bytes * beta_us_per_byte; };
  m.w = [=](double bytes) { return bytes * beta_us_per_byte; };
  m.lambda = 0;
  return m;
}

PortModel plogp_model(const sim::PlogpTable& table) {
  PortModel m;
  auto shared = std::make_shared<sim::PlogpTable>(table);
  m.u = [shared](double bytes) { return shared->g_us(bytes); };
  m.w = [shared](double bytes) { return shared->g_us(bytes); };
  m.lambda = table.latency_us();
  return m;
}

const std::vector<ClosedForm>& closed_forms() {
  static const std::vector<ClosedForm> forms = make_forms();
  return forms;
}

const ClosedForm& closed_form(const std::string& collective, const std::string& name) {
  for (const ClosedForm& f : closed_forms())
    if (f.collective == collective && f.name == name) return f;
  throw Error(Errc::invalid_argument,
              fmt::format("no closed form for {} algorithm '{}'", collective, name));
}

double predict_us(const std::string& collective, const std::string& algorithm, int ranks,
                  double bytes, const PortModel& model) {
  const coll::AlgorithmSpec spec = coll::parse_algorithm(collective, algorithm);
  const ClosedForm& form = closed_form(collective, spec.name);
  if (ranks <= 1) return 0;
  if (bytes == 0 && collective != "barrier") return 0;
  return form.cost(CostCase{&spec, ranks, bytes}, model);
}

}  // namespace grove::model
