#include "transport/sim/trace.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::sim {
namespace {

// Picoseconds as microseconds with six exact decimals (no floating point).
std::string micros(Time t) {
  const char* sign = t < 0 ? "-" : "";
  const uint64_t v = static_cast<uint64_t>(t < 0 ? -t : t);
  return fmt::format("{}{}.{:06}", sign, v / 1'000'000, v % 1'000'000);
}

}  // namespace

std::string format_trace_line(const TraceRecord& r) {
  const std::string channel =
      r.active_message ? fmt::format("am{}", r.channel) : fmt::format("{}", r.channel);
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}", micros(r.posted), micros(r.delivered), r.src,
                     r.dst, r.bytes, channel, micros(r.wire));
}

TraceTsvWriter::TraceTsvWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) {
    throw Error(Errc::invalid_argument,
                fmt::format("trace file {} cannot be written: {}", path, std::strerror(errno)));
  }
  std::fprintf(file_, "%s\n", kTraceHeader);
}

TraceTsvWriter::~TraceTsvWriter() {
  if (file_) std::fclose(file_);
}

void TraceTsvWriter::record(const TraceRecord& record) {
  if (!file_) return;
  const std::string line = format_trace_line(record);
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fputc('\n', file_);
}

void TraceTsvWriter::close() {
  if (!file_) return;
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed || close_failed)
    throw Error(Errc::invalid_argument, fmt::format("writing trace file {} failed", path_));
}

}  // namespace grove::sim
