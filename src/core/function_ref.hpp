#pragma once
// FunctionRef<R(Args...)>: a non-owning reference to a callable, for
// parameters that are called during the call and never stored (a wait's
// condition, an error message made only when the error is raised). Unlike
// std::function it never allocates or copies the callable.
//
// The referenced callable must outlive every call through the reference: pass
// a lambda as an argument (it lives until the end of the full expression),
// never keep a FunctionRef to a temporary.

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace grove {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  FunctionRef() = default;

  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
           std::is_invocable_r_v<R, F&, Args...>)
      FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): used like a function parameter
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return std::invoke(*static_cast<std::remove_reference_t<F>*>(object),
                             std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }
  // False for a default-constructed (empty) reference.
  explicit operator bool() const { return call_ != nullptr; }

 private:
  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

}  // namespace grove
