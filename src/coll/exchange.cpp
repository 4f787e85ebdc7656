#include "coll/exchange.hpp"

#include "coll/algorithm.hpp"
#include "coll/allgather.hpp"
#include "coll/operation.hpp"

namespace grove::detail {

void exchange_records(const std::shared_ptr<CommState>& comm, std::span<const std::byte> mine,
                      std::span<std::byte> all, std::string what) {
  const coll::AlgorithmSpec ring = coll::parse_algorithm("allgather", "ring");
  auto schedule = std::make_shared<const sched::Schedule>(
      coll::build_allgather({comm->rank(), comm->size(), mine.size(), false, ring}));
  const sched::Buffers buffers{mine.data(), mine.size(), all.data(), all.size()};
  Operation exchange(comm, std::move(what), std::move(schedule), buffers, ring.stamp());
  exchange.start();
  exchange.wait();
}

}  // namespace grove::detail
