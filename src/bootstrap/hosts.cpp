// Hosts: numbering the hosts of a job, and this machine's name.

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "bootstrap/backends.hpp"
#include "grove/error.hpp"

namespace grove {

Hosts Hosts::from_names(const std::vector<std::string>& names_by_rank) {
  Hosts hosts;
  std::map<std::string, int, std::less<>> number;
  hosts.of_rank.reserve(names_by_rank.size());
  for (const std::string& name : names_by_rank) {
    auto [it, added] = number.try_emplace(name, hosts.count());
    if (added) hosts.names.push_back(name);
    hosts.of_rank.push_back(it->second);
  }
  return hosts;
}

std::vector<int> Hosts::ranks_on(int host) const {
  std::vector<int> ranks;
  for (size_t r = 0; r < of_rank.size(); ++r)
    if (of_rank[r] == host) ranks.push_back(static_cast<int>(r));
  return ranks;
}

std::string this_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) {
    throw Error(Errc::bootstrap, fmt::format("bootstrap: gethostname(): {}", std::strerror(errno)));
  }
  return name;
}

Hosts one_host(int size) {
  return Hosts::from_names(std::vector<std::string>(static_cast<size_t>(size), this_host_name()));
}

}  // namespace grove
