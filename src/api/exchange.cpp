#include "api/exchange.hpp"

#include "api/operation.hpp"
#include "coll/algorithm.hpp"
#include "coll/allgather.hpp"

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

namespace grove::detail {

std::shared_ptr<shm::Group> attach_shared_memory(const std::shared_ptr<CommState>& comm) {
  SessionState* session = comm->session;
  shm::AttachContext context;
  context.rank = comm->rank();
  context.size = comm->size();
  context.context = comm->context;
  context.transport = comm->transport;
  // The segment lives inside `comm` (CommState::shm) and is used only
  // through it, so `comm` outlives every call of this function.
  CommState* state = comm.get();
  context.first_departed = [session, state] {
    session->poll_failures();
    return state->first_departed();
  };
  // The segment keeps no reference to `comm` (it lives inside it).
  std::weak_ptr<CommState> weak = comm;
  context.exchange = [weak](std::span<const std::byte> mine, std::span<std::byte> all,
                            const std::string& what) {
    exchange_records(weak.lock(), mine, all, what);
  };
  return shm::attach(context, comm->hosts == 1);
}

}  // namespace grove::detail
