#include "bootstrap/job_identity.hpp"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include <fmt/format.h>

namespace grove::job {
namespace {

// Field 22 of /proc/PID/stat. The second field (the command) is in
// parentheses and may itself hold spaces and parentheses: fields are
// counted after the last ')'.
std::optional<uint64_t> read_start_ticks(const std::string& stat_path) {
  std::ifstream in(stat_path);
  if (!in) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  size_t at = close + 1;
  // After ')' come fields 3, 4, ...: skip to field 22.
  for (int field = 3; field <= 22; ++field) {
    while (at < text.size() && text[at] == ' ')
      ++at;
    const size_t end = text.find(' ', at);
    if (field == 22) {
      uint64_t value = 0;
      const char* first = text.data() + at;
      const char* last = text.data() + (end == std::string::npos ? text.size() : end);
      const auto [ptr, ec] = std::from_chars(first, last, value);
      if (ec != std::errc() || ptr != last) return std::nullopt;
      return value;
    }
    if (end == std::string::npos) return std::nullopt;
    at = end;
  }
  return std::nullopt;
}

}  // namespace

std::string ProcessIdentity::token() const {
  return fmt::format("{}-{}", pid, start_ticks);
}

std::optional<ProcessIdentity> ProcessIdentity::parse_prefix(std::string_view text) {
  auto number = [&text](uint64_t& out) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc() || ptr == text.data()) return false;
    text.remove_prefix(static_cast<size_t>(ptr - text.data()));
    return true;
  };
  uint64_t pid = 0;
  uint64_t start = 0;
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
  if (!number(pid) || pid == 0 || pid > (1u << 22) || text.empty() || text.front() != '-') {
    return std::nullopt;  // pid_max is at most 2^22 on Linux
  }
  text.remove_prefix(1);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front())) || !number(start)) {
    return std::nullopt;
  }
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) return std::nullopt;
  return ProcessIdentity{static_cast<pid_t>(pid), start};
}

ProcessIdentity self() {
  static const ProcessIdentity me{::getpid(), read_start_ticks("/proc/self/stat").value_or(0)};
  // A forked child is another process: recompute when the pid changed.
  if (me.pid != ::getpid()) {
    return ProcessIdentity{::getpid(), read_start_ticks("/proc/self/stat").value_or(0)};
  }
  return me;
}

std::optional<uint64_t> start_ticks_of(pid_t pid) {
  return read_start_ticks(fmt::format("/proc/{}/stat", pid));
}

Liveness liveness(const ProcessIdentity& owner) {
  // Without a readable /proc nothing can be judged.
  if (!read_start_ticks("/proc/self/stat")) return Liveness::unknown;
  const auto start = start_ticks_of(owner.pid);
  return start && *start == owner.start_ticks ? Liveness::alive : Liveness::gone;
}

std::vector<std::string> sweep(const std::string& dir, std::string_view prefix,
                               const std::function<bool(const std::string& path)>& remove) {
  std::vector<std::string> removed;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return removed;
  const uid_t me = ::getuid();
  while (const dirent* e = ::readdir(d.get())) {
    const std::string_view name = e->d_name;
    if (!name.starts_with(prefix)) continue;
    const auto owner = ProcessIdentity::parse_prefix(name.substr(prefix.size()));
    if (!owner) continue;
    const std::string path = dir + "/" + std::string(name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || st.st_uid != me) continue;
    if (liveness(*owner) != Liveness::gone) continue;
    if (remove(path)) removed.push_back(path);
  }
  return removed;
}

std::string segment_name(uint32_t context, int n) {
  return fmt::format("/{}{}.{}.{}", kSegmentPrefix, self().token(), context, n);
}

namespace {

// True when something listens on the Unix socket at `path`.
bool socket_answers(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) return false;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  // EAGAIN: a listener whose backlog is full is still a listener.
  const bool answers = rc == 0 || errno == EAGAIN;
  ::close(fd);
  return answers;
}

// A run directory holds the launcher's socket and nothing else.
bool remove_run_directory(const std::string& path) {
  const std::string socket = path + "/rendezvous";
  if (socket_answers(socket)) return false;
  ::unlink(socket.c_str());
  return ::rmdir(path.c_str()) == 0;
}

bool remove_segment(const std::string& path) {
  const std::string name = "/" + path.substr(path.rfind('/') + 1);
  return ::shm_unlink(name.c_str()) == 0;
}

}  // namespace

std::vector<std::string> sweep_stale_resources(const std::string& tmp_dir) {
  std::vector<std::string> removed = sweep(tmp_dir, kRunDirPrefix, remove_run_directory);
  const std::vector<std::string> segments = sweep("/dev/shm", kSegmentPrefix, remove_segment);
  removed.insert(removed.end(), segments.begin(), segments.end());
  return removed;
}

}  // namespace grove::job
