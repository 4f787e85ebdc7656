#pragma once
// Constructors of the bootstrap backends; bootstrap_from_environment() picks one.

#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"

namespace grove {

// Size 1: allgather returns the own blob, barrier returns at once, no notices.
std::unique_ptr<Bootstrap> make_singleton_bootstrap();

// Connects to the launcher's rendezvous at `socket_path`, presents `key` and
// `rank`, and keeps the connection for the job. Throws grove::Error(bootstrap)
// naming the cause when the launcher cannot be reached or refuses.
std::unique_ptr<Bootstrap> make_local_bootstrap(int rank, int size, const std::string& socket_path,
                                                const std::string& key);

}  // namespace grove
