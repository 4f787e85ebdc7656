#include "bootstrap/output.hpp"

#include <unistd.h>

#include <cerrno>
#include <utility>

#include <fmt/format.h>

namespace grove::launch {
namespace {

// A line longer than this is cut, so a rank that never writes a newline
// cannot make the launcher buffer without bound.
constexpr size_t kMaxLine = 64 * 1024;

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader went away: the output is lost, the job is not
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

TaggedOutput::TaggedOutput(int fd, int target, int rank)
    : fd_(fd), target_(target), prefix_(fmt::format("[{}] ", rank)) {}

TaggedOutput::TaggedOutput(TaggedOutput&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      target_(other.target_),
      prefix_(std::move(other.prefix_)),
      partial_(std::move(other.partial_)) {}

void TaggedOutput::write_line(std::string_view line) {
  std::string out;
  out.reserve(prefix_.size() + line.size() + 1);
  out += prefix_;
  out += line;
  out += '\n';
  write_all(target_, out);
}

void TaggedOutput::drain() {
  char chunk[16 * 1024];
  while (fd_ >= 0) {
    const ssize_t n = ::read(fd_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) return close();
    partial_.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1)
      write_line(std::string_view(partial_).substr(start, nl - start));
    partial_.erase(0, start);
    while (partial_.size() >= kMaxLine) {
      write_line(std::string_view(partial_).substr(0, kMaxLine));
      partial_.erase(0, kMaxLine);
    }
  }
}

void TaggedOutput::close() {
  if (fd_ < 0) return;
  if (!partial_.empty()) write_line(partial_);
  partial_.clear();
  ::close(fd_);
  fd_ = -1;
}

}  // namespace grove::launch
