#include "runtime/ops/kernel_setup.h"

namespace edgefuse::detail {

// Layout: the input count, then per input -1 when omitted, else its dtype, rank and dims.
bool setup_key_matches(std::span<const int64_t> key, std::span<const Tensor* const> inputs) {
  size_t at = 0;
  const auto next = [&](int64_t expected) { return at < key.size() && key[at++] == expected; };
  if (!next(static_cast<int64_t>(inputs.size()))) return false;
  for (const Tensor* t : inputs) {
    if (t == nullptr) {
      if (!next(-1)) return false;
      continue;
    }
    if (!next(static_cast<int64_t>(t->dtype())) || !next(t->rank())) return false;
    for (int64_t d : t->shape()) {
      if (!next(d)) return false;
    }
  }
  return at == key.size();
}

void make_setup_key(std::span<const Tensor* const> inputs, std::vector<int64_t>& key) {
  key.clear();
  key.push_back(static_cast<int64_t>(inputs.size()));
  for (const Tensor* t : inputs) {
    if (t == nullptr) {
      key.push_back(-1);
      continue;
    }
    key.push_back(static_cast<int64_t>(t->dtype()));
    key.push_back(t->rank());
    key.insert(key.end(), t->shape().begin(), t->shape().end());
  }
}

}  // namespace edgefuse::detail
