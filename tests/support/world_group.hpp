#pragma once
// rma::Group over a MemoryWorld, for unit tests of windows and rings in one
// process. The collective calls (allgather, barrier) rendezvous between
// threads, one per rank: build the objects with construct_all(), then drive
// them from one thread with the non-blocking calls and world.progress_all().

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "grove/error.hpp"
#include "rma/group.hpp"
#include "support/memory_world.hpp"

namespace grove::testing {

class WorldGroups {
 public:
  explicit WorldGroups(MemoryWorld& world) : world_(world) {
    for (int r = 0; r < world.size(); ++r)
      groups_.push_back(std::make_shared<Member>(*this, r));
  }

  std::shared_ptr<rma::Group> group(int rank) { return groups_[static_cast<size_t>(rank)]; }
  void depart(int rank) {
    std::lock_guard lock(mutex_);
    departed_.insert(rank);
  }

  // Runs make(rank) on one thread per rank (their collective calls meet);
  // returns the objects, or rethrows the first rank's exception after all
  // threads ended (every rank's exception is kept in `errors`).
  template <class T>
  std::vector<std::unique_ptr<T>> construct_all(const std::function<std::unique_ptr<T>(int)>& make,
                                                std::vector<std::string>* errors = nullptr) {
    const int n = world_.size();
    std::vector<std::unique_ptr<T>> out(static_cast<size_t>(n));
    std::vector<std::exception_ptr> failures(static_cast<size_t>(n));
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        try {
          out[static_cast<size_t>(r)] = make(r);
        } catch (...) {
          failures[static_cast<size_t>(r)] = std::current_exception();
        }
      });
    }
    for (auto& t : threads)
      t.join();
    std::exception_ptr first;
    for (auto& f : failures) {
      if (!f) continue;
      if (!first) first = f;
      if (errors != nullptr) {
        try {
          std::rethrow_exception(f);
        } catch (const std::exception& e) {
          errors->push_back(e.what());
        }
      }
    }
    if (first) std::rethrow_exception(first);
    return out;
  }

 private:
  class Member final : public rma::Group {
   public:
    Member(WorldGroups& owner, int rank) : owner_(owner), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return owner_.world_.size(); }
    Transport& transport() override { return owner_.world_.transport(rank_); }
    int notice_fd() const override { return -1; }
    bool departed(int member) override {
      std::lock_guard lock(owner_.mutex_);
      return owner_.departed_.count(member) != 0;
    }
    std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                  std::string_view) override {
      return owner_.allgather(rank_, mine);
    }
    void barrier(std::string_view) override { owner_.allgather(rank_, {}); }
    void register_wakeup(uint16_t id) override {
      std::lock_guard lock(owner_.mutex_);
      if (!owner_.wakeups_.insert({rank_, id}).second) return;
      owner_.world_.transport(rank_).set_am_handler(id, [](int, std::span<const std::byte>) {});
    }

   private:
    WorldGroups& owner_;
    int rank_;
  };

  // A generation-counted rendezvous of every rank's blob.
  std::vector<std::vector<std::byte>> allgather(int rank, std::span<const std::byte> mine) {
    std::unique_lock lock(mutex_);
    const size_t n = static_cast<size_t>(world_.size());
    if (pending_.empty()) pending_.resize(n);
    pending_[static_cast<size_t>(rank)].assign(mine.begin(), mine.end());
    const uint64_t generation = generation_;
    if (++arrived_ == n) {
      result_ = std::move(pending_);
      pending_.clear();
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else if (!cv_.wait_for(lock, std::chrono::seconds(30),
                             [&] { return generation_ != generation; })) {
      throw Error(Errc::timeout, "WorldGroups allgather: not every rank joined in 30 s");
    }
    return result_;
  }

  MemoryWorld& world_;
  std::vector<std::shared_ptr<Member>> groups_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::vector<std::byte>> pending_, result_;
  size_t arrived_ = 0;
  uint64_t generation_ = 0;
  std::set<int> departed_;
  std::set<std::pair<int, uint16_t>> wakeups_;
};

}  // namespace grove::testing
