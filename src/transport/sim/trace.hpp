#pragma once
// The per-message trace of a simulation: one record per delivered message,
// written when it is delivered (so in delivery order, which is
// deterministic). A timeline plot can be drawn from the TSV form.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "transport/sim/sim_time.hpp"

namespace grove::sim {

struct TraceRecord {
  Time posted = 0;     // the send was posted
  Time wire = 0;       // its first byte left the sender's NIC
  Time delivered = 0;  // its last byte arrived at the receiver (matching time)
  int32_t src = -1;
  int32_t dst = -1;
  uint64_t bytes = 0;
  uint32_t channel = 0;  // tag channel, or the handler id of an active message
  bool active_message = false;

  bool operator==(const TraceRecord&) const = default;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void record(const TraceRecord& record) = 0;
};

class TraceVector final : public TraceSink {
 public:
  void record(const TraceRecord& record) override { records.push_back(record); }
  std::vector<TraceRecord> records;
};

// Writes TSV with a header row; times in microseconds (exact: 6 decimals of
// a picosecond clock). Columns: t_start_us t_end_us src dst bytes channel
// t_wire_us; an active message's channel is written "am<id>".
class TraceTsvWriter final : public TraceSink {
 public:
  // Throws grove::Error(invalid_argument) if the file cannot be written.
  explicit TraceTsvWriter(const std::string& path);
  ~TraceTsvWriter() override;
  TraceTsvWriter(const TraceTsvWriter&) = delete;
  TraceTsvWriter& operator=(const TraceTsvWriter&) = delete;
  void record(const TraceRecord& record) override;
  // Flushes and closes; throws if a write failed.
  void close();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

std::string format_trace_line(const TraceRecord& record);
inline constexpr const char* kTraceHeader =
    "t_start_us\tt_end_us\tsrc\tdst\tbytes\tchannel\tt_wire_us";

}  // namespace grove::sim
