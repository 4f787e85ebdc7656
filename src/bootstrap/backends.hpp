#pragma once
// Constructors of the bootstrap backends; bootstrap_from_environment() picks one.

#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"

namespace grove {

// This machine's name (gethostname); throws grove::Error(bootstrap).
std::string this_host_name();
// Every one of `size` ranks on this machine.
Hosts one_host(int size);

// Size 1: allgather returns the own blob, barrier returns at once, no notices.
std::unique_ptr<Bootstrap> make_singleton_bootstrap();

// Connects to the launcher's rendezvous at `socket_path`, presents `key` and
// `rank`, and keeps the connection for the job. Throws grove::Error(bootstrap)
// naming the cause when the launcher cannot be reached or refuses.
std::unique_ptr<Bootstrap> make_local_bootstrap(int rank, int size, const std::string& socket_path,
                                                const std::string& key);

// Connects to the PMIx server named by the environment (PMIx_Init) and
// learns rank, size and hosts from it; see pmix.cpp. Throws
// grove::Error(bootstrap) naming the PMIx call and status that failed.
std::unique_ptr<Bootstrap> make_pmix_bootstrap();

// Whether the environment names a PMIx server (a launcher speaking PMIx
// started this process).
bool pmix_environment();

}  // namespace grove
