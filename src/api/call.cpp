#include "api/call.hpp"

#include <map>
#include <mutex>

#include "core/params.hpp"
#include "core/recycler.hpp"

namespace grove::detail {

void check_root(const CommState& comm, std::string_view collective, int root) {
  if (root < 0 || root >= comm.size()) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {}: root {} is out of range for {} ranks", comm.rank(),
                            collective, root, comm.size()));
  }
}

void check_length(const CommState& comm, std::string_view collective, std::string_view buffer,
                  size_t have, size_t need) {
  if (have != need) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {}: {} holds {} bytes, the call needs {}", comm.rank(),
                            collective, buffer, have, need));
  }
}

const std::shared_ptr<const CallPlan>& plan_call(CommState& comm, const CallShape& shape,
                                                 FunctionRef<void(CallPlan&)> resolve) {
  // Read before resolving: a parameter changed meanwhile makes the next call
  // resolve again.
  const uint64_t generation = params::generation();
  const std::shared_ptr<const CallPlan>* cached = comm.cache.find(shape);
  if (cached != nullptr && (*cached)->params_generation == generation) return *cached;
  auto plan = std::make_shared<CallPlan>();
  plan->shape = shape;
  for (size_t i = 0; i < shape.lists.size(); ++i) {
    plan->list_storage[i].assign(shape.lists[i].begin(), shape.lists[i].end());
    plan->shape.lists[i] = plan->list_storage[i];
  }
  plan->params_generation = generation;
  resolve(*plan);
  return comm.cache.insert(std::move(plan));
}

std::shared_ptr<Operation> make_operation(const std::shared_ptr<CommState>& comm,
                                          std::shared_ptr<const CallPlan> plan,
                                          const sched::Buffers& buffers) {
  return std::allocate_shared<Operation>(RecyclingAllocator<Operation>{}, comm, std::move(plan),
                                         buffers);
}

coll::AlgorithmSpec forced_algorithm(std::string_view collective, const std::string& text) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, coll::AlgorithmSpec> parsed;
  std::lock_guard lock(mutex);
  auto key = std::make_pair(std::string(collective), text);
  auto it = parsed.find(key);
  if (it == parsed.end()) {
    it = parsed.emplace(std::move(key), coll::parse_algorithm(collective, text)).first;
  }
  return it->second;
}

sched::Buffers user_buffers(std::span<const std::byte> input, std::span<std::byte> output) {
  sched::Buffers buffers;
  buffers.input = input.data();
  buffers.input_length = input.size();
  buffers.output = output.data();
  buffers.output_length = output.size();
  return buffers;
}

Request start_request(std::shared_ptr<Operation> operation) {
  operation->start();
  return Request(std::move(operation));
}

}  // namespace grove::detail
