// bootstrap_from_environment() and the `singleton` backend.

#include <cstdlib>
#include <limits>
#include <string_view>

#include <charconv>

#include <fmt/format.h>

#include "bootstrap/backends.hpp"
#include "bootstrap/job_env.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove {
namespace {

class SingletonBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "singleton"; }
  const Hosts& hosts() const override { return hosts_; }
  std::vector<Blob> allgather(std::span<const std::byte> mine) override {
    return {Blob(mine.begin(), mine.end())};
  }
  void barrier() override {}
  int notice_fd() const override { return -1; }
  std::vector<FailureNotice> poll_notices() override { return {}; }

 private:
  Hosts hosts_ = one_host(1);
};

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) {
    throw Error(Errc::bootstrap,
                fmt::format("bootstrap: {} is set but {} is missing or empty (was this process "
                            "started by grove run?)",
                            job_env::kRendezvous, name));
  }
  return value;
}

int env_int(const char* name, int min, int max) {
  const std::string text = required_env(name);
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < min || value > max) {
    throw Error(Errc::bootstrap, fmt::format("bootstrap: {}='{}' is not an integer in [{}, {}]",
                                             name, text, min, max));
  }
  return value;
}

}  // namespace

std::unique_ptr<Bootstrap> make_singleton_bootstrap() {
  return std::make_unique<SingletonBootstrap>();
}

std::unique_ptr<Bootstrap> bootstrap_from_environment() {
  // Parameters first: the bootstrap's own waits read timeout_ms.
  params::load_process_params();
  const char* rendezvous = std::getenv(job_env::kRendezvous);
  if (!rendezvous || !*rendezvous) {
    if (pmix_environment()) return make_pmix_bootstrap();
    return make_singleton_bootstrap();
  }
  const int size = env_int(job_env::kSize, 1, std::numeric_limits<int>::max());
  const int rank = env_int(job_env::kRank, 0, size - 1);
  return make_local_bootstrap(rank, size, rendezvous, required_env(job_env::kKey));
}

}  // namespace grove
