// A kernel's setup (what it derives from its node's attributes and its inputs' dtypes and shapes:
// a Conv's geometry and epilogue, say) worked out once per node and input shapes, so that an
// executor replaying a plan neither parses attributes nor allocates for it on every frame.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "runtime/op_table.h"

namespace edgefuse {

namespace detail {

// A distinct address per setup type, so that a cache never hands one type's setup out as another's.
template <typename T>
inline constexpr char kSetupType = 0;

// Whether `key` describes `inputs` (their count, and each one's dtype and shape, or its absence).
bool setup_key_matches(std::span<const int64_t> key, std::span<const Tensor* const> inputs);

// The key setup_key_matches accepts for `inputs`.
void make_setup_key(std::span<const Tensor* const> inputs, std::vector<int64_t>& key);

}  // namespace detail

// The setup `derive()` (a Result<T>) returns for args: kept in args.cache and returned again,
// without calling derive, while the inputs keep their dtypes and shapes (attributes never change
// after import); without a cache, derived on every call into `uncached`.
template <typename T, typename Derive>
Result<const T*> kernel_setup(const KernelArgs& args, std::optional<T>& uncached, Derive&& derive) {
  if (args.cache == nullptr) {
    Result<T> derived = std::forward<Derive>(derive)();
    if (!derived.is_ok()) return derived.status();
    return &uncached.emplace(std::move(derived).value());
  }
  KernelCache& cache = *args.cache;
  const void* type = &detail::kSetupType<T>;
  if (cache.setup != nullptr && cache.setup_type == type && detail::setup_key_matches(cache.setup_key, args.inputs)) {
    return static_cast<const T*>(cache.setup.get());
  }
  Result<T> derived = std::forward<Derive>(derive)();
  if (!derived.is_ok()) return derived.status();
  auto setup = std::make_shared<const T>(std::move(derived).value());
  detail::make_setup_key(args.inputs, cache.setup_key);
  cache.setup_type = type;
  cache.setup = setup;
  return setup.get();
}

}  // namespace edgefuse
