#pragma once
// `grove run --tag-output`: one rank's stdout or stderr, read from a pipe and
// copied line by line to the launcher's own stream with a "[rank] " prefix.

#include <string>

namespace grove::launch {

class TaggedOutput {
 public:
  // Takes ownership of `fd` (non-blocking read end); writes to `target`.
  TaggedOutput(int fd, int target, int rank);
  ~TaggedOutput() { close(); }
  TaggedOutput(TaggedOutput&& other) noexcept;
  TaggedOutput& operator=(TaggedOutput&&) = delete;
  TaggedOutput(const TaggedOutput&) = delete;
  TaggedOutput& operator=(const TaggedOutput&) = delete;

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  // Reads what is available and writes every complete line; at end of
  // stream writes the unterminated rest as a line and closes.
  void drain();
  // Writes any unterminated rest and closes the pipe.
  void close();

 private:
  void write_line(std::string_view line);

  int fd_;
  int target_;
  std::string prefix_;
  std::string partial_;  // bytes after the last newline seen
};

}  // namespace grove::launch
