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

bool never(const CostCase&) {
  return false;
}

double sum_doubling(int steps, double block, const PortModel& m) {
  double t = 0;
  for (int i = 0; i < steps; ++i)
    t += m.u(std::ldexp(block, i)) + m.lambda;
  return t;
}

// Powers of two whose vector splits into P equal parts.
bool even_split(const CostCase& c) {
  return is_power(c.ranks, 2) && std::fmod(c.bytes, c.ranks) == 0;
}

using Cost = std::function<double(const CostCase&, const PortModel&)>;
using When = std::function<bool(const CostCase&)>;

ClosedForm form(std::string collective, std::string name, std::string formula,
                std::string published, When exact_when, double tolerance, bool two_sided,
                Cost cost) {
  return ClosedForm{
      std::move(collective), std::move(name), std::move(formula), std::move(published),
      std::move(exact_when), tolerance,       two_sided,          std::move(cost)};
}

std::vector<ClosedForm> make_forms() {
  std::vector<ClosedForm> f;
  // ------------------------------------------------------------ bcast
  f.push_back(form("bcast", "flat", "(P-1) u(m) + L", "(P-1)g(m) + L [REC]", always, 0, false,
                   [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * m.u(c.bytes) + m.lambda;
                   }));
  f.push_back(form("bcast", "chain", "(P-1) (u(m) + L)", "(P-1)(g(m) + L) [REC]", always, 0, false,
                   [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * (m.u(c.bytes) + m.lambda);
                   }));
  f.push_back(form(
      "bcast", "pipeline", "(S + P - 2) u(s) + (P-1) L, S = ceil(m/s) segments of s bytes",
      "(P-1)(g(s)+L) + (k-1)g(s) [REC]; (P+ns-2)(a+ms b) [SEC]",
      [](const CostCase& c) {
        return std::fmod(c.bytes, static_cast<double>(c.spec->segment)) == 0;
      },
      0.5, false,
      [](const CostCase& c, const PortModel& m) {
        const double s = std::min(static_cast<double>(c.spec->segment), c.bytes);
        const double segments = std::ceil(c.bytes / s);
        return (segments + c.ranks - 2) * m.u(s) + (c.ranks - 1) * m.lambda;
      }));
  const std::string kary_text =
      "max((d-1)(k u(m) + L), (d + s) u(m) + d L): d = heap height, s = the largest base-k "
      "digit sum below the last level's rank count; d (k u(m) + L) for a full tree";
  auto kary = [](const CostCase& c, const PortModel& m) {
    return kary_bcast(c.ranks, radix_of(c), c.bytes, m);
  };
  f.push_back(form("bcast", "binary", kary_text,
                   "(ceil(log2(P+1)) + ns - 2)(2a + ms b) [SEC]: the b term is 2 ms b", always, 0,
                   false, kary));
  f.push_back(
      form("bcast", "kary", kary_text, "d k(a+mb) [DER] (full trees)", always, 0, false, kary));
  f.push_back(form("bcast", "binomial", "ceil(log2 P) u(m) + floor(log2 P) L",
                   "floor(log2 P)g(m) + ceil(log2 P)L [REC]: floor and ceil swapped; lgp(a+nb) "
                   "[MPICH]",
                   always, 0, false, [](const CostCase& c, const PortModel& m) {
                     return ceil_log(c.ranks, 2) * m.u(c.bytes) + floor_log2(c.ranks) * m.lambda;
                   }));
  f.push_back(form(
      "bcast", "knomial", "d ((k-1) u(m) + L), d = ceil(log_k P)", "(k-1)ceil(log_k P)(a+mb) [DER]",
      [](const CostCase& c) { return is_power(c.ranks, radix_of(c)); }, 1.0, false,
      [](const CostCase& c, const PortModel& m) {
        const int k = radix_of(c);
        return ceil_log(c.ranks, k) * ((k - 1) * m.u(c.bytes) + m.lambda);
      }));
  f.push_back(form("bcast", "scatter_allgather",
                   "scatter sum_{i<ceil(log2 P)} (u(2^i b) + L) + ring (P-1)(u(b) + L), b = "
                   "ceil(m/P): a sum of phases that in fact overlap and stall",
                   "(lgp + p - 1)a + 2n(p-1)/p b [MPICH]", never, 0.6, true,
                   [](const CostCase& c, const PortModel& m) {
                     const int p = c.ranks;
                     const double b = std::ceil(c.bytes / p);
                     double t = 0;
                     for (int i = 0; i < ceil_log(p, 2); ++i)
                       t += m.u(std::min(std::ldexp(b, i), c.bytes)) + m.lambda;
                     return t + (p - 1) * (m.u(b) + m.lambda);
                   }));
  // ---------------------------------------------------------- barrier
  f.push_back(form("barrier", "dissemination", "ceil(log2 P) (u(0) + L)", "ceil(lgp) a [DER][SEC]",
                   always, 0, false, [](const CostCase& c, const PortModel& m) {
                     return ceil_log(c.ranks, 2) * (m.u(0) + m.lambda);
                   }));
  f.push_back(form(
      "barrier", "knomial",
      "d (k u(0) + 2 L + (k-2) w(0)), d = ceil(log_k P): fan-in d (u(0) + L + (k-2) w(0)), "
      "fan-out d ((k-1) u(0) + L)",
      "none", [](const CostCase& c) { return is_power(c.ranks, radix_of(c)); }, 0.7, true,
      [](const CostCase& c, const PortModel& m) {
        const int k = radix_of(c);
        return ceil_log(c.ranks, k) * (k * m.u(0) + 2 * m.lambda + (k - 2) * m.w(0));
      }));
  f.push_back(form("barrier", "flat", "P u(0) + 2 L + (P-2) w(0)", "none", always, 0, false,
                   [](const CostCase& c, const PortModel& m) {
                     return c.ranks * m.u(0) + 2 * m.lambda + (c.ranks - 2) * m.w(0);
                   }));
  // ----------------------------------------------------------- gather
  f.push_back(form("gather", "flat", "u(m) + L + (P-2) w(m)",
                   "(P-1)(a+mb) [SEC]: there the receiver pays a per message", always, 0, false,
                   [](const CostCase& c, const PortModel& m) {
                     return m.u(c.bytes) + m.lambda + (c.ranks - 2) * m.w(c.bytes);
                   }));
  f.push_back(form("gather", "binomial", "sum_{i<log2 P} (u(2^i m) + L)",
                   "lgp a + n(p-1)/p b [MPICH]", power_of_two, 1.0, false,
                   [](const CostCase& c, const PortModel& m) {
                     return sum_doubling(ceil_log(c.ranks, 2), c.bytes, m);
                   }));
  f.push_back(form(
      "gather", "kary",
      "sum over levels (u(S m) + L + (c-1) w(S m)), S = a child's subtree, c = min(k, P-1)", "none",
      [](const CostCase& c) {
        return full_kary(c.ranks, radix_of(c)) || c.ranks <= radix_of(c) + 1;
      },
      4.0, false,
      [](const CostCase& c, const PortModel& m) {
        return kary_gather(c.ranks, radix_of(c), c.bytes, m);
      }));
  // ---------------------------------------------------------- scatter
  f.push_back(form("scatter", "flat", "(P-1) u(m) + L", "(P-1)g(m) + L [REC]", always, 0, false,
                   [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * m.u(c.bytes) + m.lambda;
                   }));
  f.push_back(form("scatter", "binomial", "sum_{i<log2 P} u(2^i m) + log2(P) L",
                   "sum_j g(2^j m) + ceil(log2 P)L [REC]", power_of_two, 1.0, false,
                   [](const CostCase& c, const PortModel& m) {
                     return sum_doubling(ceil_log(c.ranks, 2), c.bytes, m);
                   }));
  f.push_back(form("scatter", "chain", "sum_{j=1}^{P-1} (u(j m) + L)",
                   "sum_j g(j m) + (P-1)L [REC]", always, 0, false,
                   [](const CostCase& c, const PortModel& m) {
                     double t = 0;
                     for (int j = 1; j < c.ranks; ++j)
                       t += m.u(j * c.bytes) + m.lambda;
                     return t;
                   }));
  // -------------------------------------------------------- allgather
  f.push_back(form("allgather", "ring", "(P-1) (u(m) + L)", "(p-1)a + n(p-1)/p b [MPICH]", always,
                   0, false, [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * (m.u(c.bytes) + m.lambda);
                   }));
  f.push_back(form("allgather", "recursive_doubling",
                   "sum_{i<log2 P} (u(2^i m) + L); other P: fold (u(m) + L), the power-of-two "
                   "steps with 2m blocks, unfold (u(P m) + L)",
                   "lgp a + n(p-1)/p b [MPICH] (powers of two)", power_of_two, 0.4, false,
                   [](const CostCase& c, const PortModel& m) {
                     const int p2 = 1 << floor_log2(c.ranks);
                     if (p2 == c.ranks) return sum_doubling(floor_log2(p2), c.bytes, m);
                     return sum_doubling(floor_log2(p2), 2 * c.bytes, m) + m.u(c.bytes) +
                            m.u(c.ranks * c.bytes) + 2 * m.lambda;
                   }));
  f.push_back(form(
      "allgather", "bruck",
      "sum_i (u(b_i m) + [b_i >= 2] u(0) + L), b_i = min(2^i, P - 2^i): a wrapped range is two "
      "messages; ignores a later step's message queueing ahead on the ingress",
      "ceil(lgp)a + n(p-1)/p b [MPICH]", never, 0.55, true,
      [](const CostCase& c, const PortModel& m) {
        double t = 0;
        for (int64_t d = 1; d < c.ranks; d *= 2) {
          const double blocks = static_cast<double>(std::min<int64_t>(d, c.ranks - d));
          // Ranges of two or more blocks wrap for some rank.
          t += m.u(blocks * c.bytes) + (blocks >= 2 ? m.u(0) : 0) + m.lambda;
        }
        return t;
      }));
  f.push_back(form(
      "allgather", "neighbor_exchange", "(u(m) + L) + (P/2 - 1)(u(2m) + L)",
      "none (Chen et al.: P/2 steps)", always, 0, false, [](const CostCase& c, const PortModel& m) {
        if (c.ranks < 2) return 0.0;
        return m.u(c.bytes) + m.lambda + (c.ranks / 2 - 1) * (m.u(2 * c.bytes) + m.lambda);
      }));
  auto gather_bcast = [](const CostCase& c, const PortModel& m) {
    return kary_gather(c.ranks, coll::rollup_radix(), c.bytes, m) +
           kary_bcast(c.ranks, coll::release_radix(), c.ranks * c.bytes, m);
  };
  f.push_back(form(
      "allgather", "gather_bcast", "kary gather (rollup_radix) + kary bcast of P m (release_radix)",
      "none",
      [](const CostCase& c) {
        return full_kary(c.ranks, coll::rollup_radix()) || c.ranks <= coll::rollup_radix() + 1;
      },
      4.0, false, gather_bcast));
  // ------------------------------------------------------- allgatherv
  // m is the largest block.
  f.push_back(form("allgatherv", "ring", "(P-1) (u(largest block) + L)", "as allgather ring", never,
                   0.05, false, [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * (m.u(c.bytes) + m.lambda);
                   }));
  f.push_back(form("allgatherv", "gather_bcast", "as allgather gather_bcast with the largest block",
                   "none", never, 4.0, false, gather_bcast));
  // --------------------------------------------------------- alltoall
  f.push_back(form("alltoall", "linear", "(P-1) u(m) + L", "(P-1)g(m) + L [DER]; (P-1)(a+mb) [DER]",
                   always, 0, false, [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * m.u(c.bytes) + m.lambda;
                   }));
  f.push_back(form("alltoall", "pairwise", "(P-1) u(m) + L",
                   "(P-1)(g(m) + L) [DER]: steps do not wait for each other; (p-1)a + nb [MPICH]",
                   always, 0, false, [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * m.u(c.bytes) + m.lambda;
                   }));
  f.push_back(form("alltoall", "bruck",
                   "sum_k (u(c_k m) + L), c_k = #{j in [1, P): bit k of j set}",
                   "ceil(log2 P)(a + (P/2) m b) [DER]; lgp a + (n/2) lgp b [MPICH]", power_of_two,
                   0.5, true, [](const CostCase& c, const PortModel& m) {
                     double t = 0;
                     for (int64_t bit = 1; bit < c.ranks; bit *= 2) {
                       double blocks = 0;
                       for (int64_t j = 1; j < c.ranks; ++j)
                         blocks += (j & bit) ? 1 : 0;
                       t += m.u(blocks * c.bytes) + m.lambda;
                     }
                     return t;
                   }));
  f.push_back(form("alltoallv", "pairwise", "(P-1) u(largest block) + L", "as alltoall pairwise",
                   never, 0.05, false, [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * m.u(c.bytes) + m.lambda;
                   }));
  // ------------------------------------------------------- reductions
  // n = the vector's bytes; local reductions cost nothing (gamma = 0).
  auto halving = [](int p, double n, const PortModel& m) {
    double t = 0;
    for (int64_t part = 2; part <= p; part *= 2)
      t += m.u(n / static_cast<double>(part)) + m.lambda;
    return t;
  };
  f.push_back(form("reduce", "binomial",
                   "floor(log2 P) (u(n) + L), other P + w(n): the most hops to the root; children "
                   "arrive apart at powers of two",
                   "lgp(a + nb + ng) [MPICH]", power_of_two, 0.3, true,
                   [](const CostCase& c, const PortModel& m) {
                     // Other P: two children can arrive together; one waits w(n).
                     const double queue = is_power(c.ranks, 2) ? 0 : m.w(c.bytes);
                     return floor_log2(c.ranks) * (m.u(c.bytes) + m.lambda) + queue;
                   }));
  f.push_back(form("reduce", "rabenseifner",
                   "2 sum_{i=1}^{log2 P} (u(n / 2^i) + L); other P: + (u(n) + L) for the fold",
                   "2lgp a + 2n(p-1)/p b + n(p-1)/p g [MPICH]", even_split, 0.3, true,
                   [halving](const CostCase& c, const PortModel& m) {
                     const int p2 = 1 << floor_log2(c.ranks);
                     const double fold = p2 == c.ranks ? 0 : m.u(c.bytes) + m.lambda;
                     return fold + 2 * halving(p2, c.bytes, m);
                   }));
  f.push_back(form("allreduce", "recursive_doubling",
                   "log2(P) (u(n) + L); other P: + 2 (u(n) + L) (fold, unfold)",
                   "lgp(a + nb + ng) [MPICH]", power_of_two, 0.4, false,
                   [](const CostCase& c, const PortModel& m) {
                     const int d = floor_log2(c.ranks);
                     const bool fold = (1 << d) != c.ranks;
                     return (d + (fold ? 2 : 0)) * (m.u(c.bytes) + m.lambda);
                   }));
  f.push_back(form(
      "allreduce", "ring", "2 (P-1) (u(ceil(n/P)) + L)",
      "(p-1)a + n(p-1)/p b twice (reduce-scatter + allgather) [MPICH]",
      [](const CostCase& c) { return std::fmod(c.bytes, c.ranks) == 0; }, 0.05, false,
      [](const CostCase& c, const PortModel& m) {
        return 2 * (c.ranks - 1) * (m.u(std::ceil(c.bytes / c.ranks)) + m.lambda);
      }));
  f.push_back(form("allreduce", "rabenseifner",
                   "2 sum_{i=1}^{log2 P} (u(n / 2^i) + L); other P: + 2 (u(n) + L) (fold, unfold)",
                   "2lgp a + 2n(p-1)/p b + n(p-1)/p g [MPICH]", even_split, 0.3, true,
                   [halving](const CostCase& c, const PortModel& m) {
                     const int p2 = 1 << floor_log2(c.ranks);
                     const double fold = p2 == c.ranks ? 0 : 2 * (m.u(c.bytes) + m.lambda);
                     return fold + 2 * halving(p2, c.bytes, m);
                   }));
  f.push_back(form("reduce_scatter", "ring", "(P-1) (u(m) + L), m = one block",
                   "(p-1)a + n(p-1)/p (b+g) [MPICH, pairwise]", always, 0, false,
                   [](const CostCase& c, const PortModel& m) {
                     return (c.ranks - 1) * (m.u(c.bytes) + m.lambda);
                   }));
  f.push_back(form("reduce_scatter", "recursive_halving",
                   "sum_{i=1}^{log2 P} (u(ceil(P / 2^i) m) + L); other P: + (u(P m) + L) to fold "
                   "and (u(m) + L) to hand a block back",
                   "lgp a + n(p-1)/p (b+g) [MPICH]", power_of_two, 0.4, true,
                   [](const CostCase& c, const PortModel& m) {
                     const int p2 = 1 << floor_log2(c.ranks);
                     double t = 0;
                     for (int64_t part = 2; part <= p2; part *= 2)
                       t +=
                           m.u(std::ceil(static_cast<double>(c.ranks) / part) * c.bytes) + m.lambda;
                     if (p2 != c.ranks) t += m.u(c.ranks * c.bytes) + m.u(c.bytes) + 2 * m.lambda;
                     return t;
                   }));
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
