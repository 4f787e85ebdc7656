#pragma once
// RecyclingAllocator<T>: a standard allocator that keeps freed one-object
// blocks on a per-thread free list and hands them out again, so an object
// made and dropped once per call (a collective's Operation, through
// std::allocate_shared) costs no malloc once the list holds a block.
//
// Invariants:
// - Only single-object allocations (n == 1) are recycled. There is one list
//   per block size, so every block on a list fits every type of that size
//   (all are aligned as operator new aligns; T must not be over-aligned).
// - A list holds at most kMaxKept blocks; more are returned to operator new.
// - A block freed on another thread than the one that made it joins that
//   thread's list (blocks are plain memory; ownership is not per thread).
// - The list frees its blocks when its thread ends; a block freed after that
//   (by a thread-exit or static destructor) goes straight to operator delete.

#include <cstddef>
#include <new>

namespace grove {

namespace detail {

template <size_t Size>
class BlockList {
 public:
  static constexpr int kMaxKept = 64;

  static void* take() {
    Local& list = local_;  // the one thread-local lookup of a take
    if (list.count == 0) return ::operator new(Size);
    return list.blocks[--list.count];
  }

  static void give(void* block) {
    Local& list = local_;
    if (list.gone || list.count == kMaxKept) {
      ::operator delete(block);
      return;
    }
    if (!list.armed) arm(list);
    list.blocks[list.count++] = block;
  }

 private:
  // Plain data (constant-initialised, trivially destructible), so reaching
  // it costs one thread-local lookup and it stays readable after its thread's
  // destructors ran; `Reaper` frees the blocks when the thread ends.
  struct Local {
    void* blocks[kMaxKept];
    int count;
    bool armed;  // this thread's Reaper exists
    bool gone;   // this thread's Reaper ran: keep nothing more
  };
  struct Reaper {
    ~Reaper() {
      Local& list = local_;
      list.gone = true;
      while (list.count > 0)
        ::operator delete(list.blocks[--list.count]);
    }
  };
  static void arm(Local& list) {
    thread_local Reaper reaper;
    (void)reaper;
    list.armed = true;
  }

  static inline thread_local Local local_{};
};

}  // namespace detail

template <class T>
class RecyclingAllocator {
 public:
  using value_type = T;

  RecyclingAllocator() = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned type");
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(detail::BlockList<sizeof(T)>::take());
  }

  void deallocate(T* p, size_t n) noexcept {
    if (n != 1) {
      ::operator delete(p);
      return;
    }
    detail::BlockList<sizeof(T)>::give(p);
  }

  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace grove
