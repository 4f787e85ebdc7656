// The parts every table of `grove rma-bench` shares (rma_bench_common.hpp).

#include "rma_bench_common.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "core/params.hpp"
#include "core/stats.hpp"

namespace grove::tools::rma {

std::vector<uint64_t> parse_counts(const std::string& option, const std::string& text, uint64_t min,
                                   uint64_t max) {
  std::vector<uint64_t> out;
  for (size_t pos = 0; pos <= text.size();) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    pos = comma + 1;
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
      throw Error(Errc::usage,
                  fmt::format("{}: '{}' is not a whole number (in '{}')", option, item, text));
    }
    if (value < min || value > max) {
      throw Error(Errc::usage,
                  fmt::format("{}: {} is outside its range [{}, {}]", option, value, min, max));
    }
    out.push_back(value);
  }
  return out;
}

size_t parse_one_size(const std::string& option, const std::string& text, size_t min) {
  uint64_t value = 0;
  try {
    value = params::parse_bytes(text, option);
  } catch (const Error& e) {
    throw Error(Errc::usage, e.what());
  }
  if (value < min) {
    throw Error(Errc::usage, fmt::format("{} {}: at least {} bytes are needed", option, text, min));
  }
  return value;
}

void add_table_options(CLI::App& sub, Args& args) {
  sub.add_option("--table", args.table,
                 "compare (latency, goodput, inject), loss (raw mode by offered rate), width "
                 "(safe mode, all to all), window (put and get)")
      ->capture_default_str();
  sub.add_option("--payload", args.payload, "loss, width: bytes a message (at least 8)")
      ->capture_default_str();
  sub.add_option("--messages", args.messages,
                 "loss: messages a repeat; width: messages a peer and repeat")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  sub.add_option("--depths", args.depths, "loss: ring depths (comma list)")->capture_default_str();
  sub.add_option("--from-tsv", args.from_tsv,
                 "Summarise these TSVs (grove's, grove-rma-peer-*'s) instead of running")
      ->expected(1, 1000);
  sub.add_option("--paces", args.paces,
                 "loss: nanoseconds between the starts of two sends, 0 flat out (comma list)")
      ->capture_default_str();
}

void background_traffic(Comm& comm) {
  const int me = comm.rank();
  const bool leader = me % 2 == 0;
  const int partner = leader ? me + 1 : me - 1;
  std::vector<std::byte> buffer(kNoiseBytes);
  if (partner >= comm.size()) {  // an odd rank out only waits
    comm.recv(std::span(buffer), 0, kTagStop);
    return;
  }
  for (;;) {
    if (leader) {
      if (comm.iprobe(0, kTagStop)) {
        comm.recv(std::span(buffer), 0, kTagStop);
        comm.send(std::span<const std::byte>(buffer.data(), 0), partner, kTagStop);
        return;
      }
      comm.send(std::span<const std::byte>(buffer), partner, kTagNoise);
      comm.recv(std::span(buffer), partner, kTagNoise);
    } else {
      const MessageInfo got = comm.recv(std::span(buffer), partner, Comm::any_tag);
      if (got.tag == kTagStop) return;
      comm.send(std::span<const std::byte>(buffer), partner, kTagNoise);
    }
  }
}

void stop_background(Comm& comm) {
  std::byte none[1];
  for (int r = 2; r < comm.size(); r += 2)
    comm.send(std::span<const std::byte>(none, 0), r, kTagStop);
}

void sync_pair(Comm& comm) {
  std::byte none[1];
  const int other = 1 - comm.rank();
  if (comm.rank() == 0) {
    comm.send(std::span<const std::byte>(none, 0), other, kTagSync);
    comm.recv(std::span(none), other, kTagSync);
  } else {
    comm.recv(std::span(none), other, kTagSync);
    comm.send(std::span<const std::byte>(none, 0), other, kTagSync);
  }
}

void write_tsv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream file(path);
  if (!file) throw Error(Errc::usage, fmt::format("grove rma-bench: cannot write {}", path));
  file << "mode\tbackground\tmetric\tpayload\trepeat\tvalue\n";
  for (const Row& r : rows) {
    file << fmt::format("{}\t{}\t{}\t{}\t{}\t{:.6g}\n", r.mode, r.background ? 1 : 0, r.metric,
                        r.payload, r.repeat, r.value);
  }
}

void read_tsv(const std::string& path, std::vector<Row>& rows) {
  std::ifstream file(path);
  if (!file) throw Error(Errc::usage, fmt::format("--from-tsv: cannot read {}", path));
  std::string line;
  if (!std::getline(file, line) || line != "mode\tbackground\tmetric\tpayload\trepeat\tvalue") {
    throw Error(Errc::usage, fmt::format("--from-tsv: {}: line 1 is not rma-bench's header", path));
  }
  for (int number = 2; std::getline(file, line); ++number) {
    std::vector<std::string> f;
    for (size_t pos = 0; pos <= line.size();) {
      const size_t tab = std::min(line.find('\t', pos), line.size());
      f.push_back(line.substr(pos, tab - pos));
      pos = tab + 1;
    }
    Row r;
    char* end = nullptr;
    bool ok = f.size() == 6 && (f[1] == "0" || f[1] == "1");
    if (ok) {
      r.mode = f[0];
      r.background = f[1] == "1";
      r.metric = f[2];
      r.payload = std::strtoull(f[3].c_str(), &end, 10);
      ok = !f[3].empty() && *end == '\0';
      r.repeat = static_cast<int>(std::strtol(f[4].c_str(), &end, 10));
      ok = ok && !f[4].empty() && *end == '\0';
      r.value = std::strtod(f[5].c_str(), &end);
      ok = ok && !f[5].empty() && *end == '\0';
    }
    if (!ok) {
      throw Error(Errc::usage,
                  fmt::format("--from-tsv: {}: line {} is not a row of six fields (mode, "
                              "background 0/1, metric, payload, repeat, value)",
                              path, number));
    }
    rows.push_back(r);
  }
}

void print_cells(const std::vector<Row>& rows,
                 const std::function<std::string(const Row&)>& suffix) {
  // The mode column as wide as its longest entry (a sweep's setting).
  size_t width = 6;
  for (const Row& r : rows)
    width = std::max(width, r.mode.size());
  fmt::print("{:<{}} {:>9} {:<16} {:>12} {:>26}  {}\n", "mode", width, "payload", "metric",
             "median", "95% CI", suffix ? "path" : "");
  std::vector<std::string> keys;
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, const Row*> first;
  for (const Row& r : rows) {
    const std::string key =
        fmt::format("{}/{}/{}/{}", r.mode, r.background ? 1 : 0, r.payload, r.metric);
    if (values.find(key) == values.end()) {
      keys.push_back(key);
      first[key] = &r;
    }
    values[key].push_back(r.value);
  }
  for (const std::string& key : keys) {
    const Row& r = *first[key];
    const stats::Summary s = stats::summarize(values[key], key);
    fmt::print("{:<{}} {:>9} {:<16} {:>12.4g} [{:.4g}, {:.4g}]{}\n", r.mode, width, r.payload,
               r.metric, s.median, s.median_ci.lo, s.median_ci.hi, suffix ? suffix(r) : "");
  }
}

}  // namespace grove::tools::rma
