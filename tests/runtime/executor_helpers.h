// Helpers the executor tests share: an executor that must be created, a run that must succeed,
// and a byte-for-byte comparison of outputs.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "runtime/executor.h"

namespace edgefuse::test {

inline Executor make_executor(std::shared_ptr<const Graph> graph, ExecutorOptions options) {
  Result<Executor> executor = Executor::create(std::move(graph), options);
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  return std::move(*executor);
}

inline std::vector<Tensor> run_ok(Executor& executor, std::span<const Tensor> inputs) {
  Result<std::vector<Tensor>> outputs = executor.run(inputs);
  REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
  return std::move(*outputs);
}

inline bool bit_identical(const Tensor& a, const Tensor& b) {
  return a.desc() == b.desc() && (a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
}

}  // namespace edgefuse::test
