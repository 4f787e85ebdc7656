// The table of benchmark drivers: one line per collective.

#include "suite/driver.hpp"

namespace grove::bench {

std::unique_ptr<Driver> make_bcast_driver();
std::unique_ptr<Driver> make_barrier_driver();
std::vector<std::unique_ptr<Driver>> make_collective_drivers();
std::unique_ptr<Driver> make_fence_driver();

std::vector<std::unique_ptr<Driver>> all_drivers() {
  std::vector<std::unique_ptr<Driver>> drivers;
  drivers.push_back(make_bcast_driver());
  drivers.push_back(make_barrier_driver());
  for (auto& driver : make_collective_drivers())
    drivers.push_back(std::move(driver));
  drivers.push_back(make_fence_driver());
  return drivers;
}

}  // namespace grove::bench
