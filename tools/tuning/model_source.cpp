#include "tuning/model_source.hpp"

#include <fmt/format.h>

#include "grove/error.hpp"
#include "model/cost.hpp"
#include "model/probe_fit.hpp"

namespace grove::tuning {

ModelSource load_model(const std::string& plogp_path, const std::string& kind) {
  if (plogp_path.empty()) {
    throw Error(Errc::usage, "a pLogP table is needed (--plogp FILE; `grove probe` writes one)");
  }
  const sim::PlogpTable table = sim::PlogpTable::load(plogp_path);
  ModelSource out;
  out.plogp = plogp_path;
  if (kind == "plogp") {
    out.port = model::plogp_model(table);
    out.description = fmt::format(
        "pLogP table {} (L {:.3f} us, g(0) {:.3f} us, g(64 KiB) {:.3f} us, g(1 MiB) {:.3f} us)",
        plogp_path, table.latency_us(), table.g_us(0), table.g_us(65536), table.g_us(1 << 20));
    return out;
  }
  if (kind == "hockney") {
    const model::probe::HockneyFit fit = model::probe::fit_hockney(table);
    out.port = model::hockney_model(fit.alpha_us, fit.beta_us_per_byte);
    out.description =
        fmt::format("Hockney fit of {} (alpha {:.3f} us, beta {:.6g} us/B, {:.2f} Gbit/s)",
                    plogp_path, fit.alpha_us, fit.beta_us_per_byte, fit.bandwidth_gbps());
    return out;
  }
  throw Error(Errc::usage, fmt::format("--model '{}': plogp or hockney", kind));
}

}  // namespace grove::tuning
