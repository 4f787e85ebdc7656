#pragma once
// What one-sided objects (windows, rings) need of the communicator they are
// created over, as an interface: the api layer implements it over a Comm,
// unit tests over an in-process world. Collective calls (allgather,
// barrier) must be made by every member in the same order.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transport/transport.hpp"

namespace grove::rma {

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Addresses the members by their rank in the group.
  virtual Transport& transport() = 0;
  // A readable fd that ends a blocking wait when failure notices arrive, or -1.
  virtual int notice_fd() const = 0;
  // Whether `member` has departed (reads pending failure notices first, at
  // most once per millisecond).
  virtual bool departed(int member) = 0;
  // Every member's blob, indexed by rank; `what` names the call in errors.
  virtual std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                        std::string_view what) = 0;
  virtual void barrier(std::string_view what) = 0;
  // Registers, once per underlying transport, a handler that ignores
  // active messages of `id`: the arrival alone wakes a blocked rank.
  virtual void register_wakeup(uint16_t id) = 0;
};

// The members that have departed, for error messages ("rank 2 departed").
std::vector<int> departed_members(Group& group);
std::string describe_departed(const std::vector<int>& members);

}  // namespace grove::rma
