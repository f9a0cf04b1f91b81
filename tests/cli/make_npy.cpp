// Test helper for the CLI shell tests, which cannot write or compare .npy files by themselves.
//   make_npy write FILE DTYPE SHAPE VALUE...   values in row-major order (count must match SHAPE)
//   make_npy fill FILE DTYPE SHAPE VALUE       every element set to VALUE
//   make_npy compare ACTUAL EXPECTED ATOL      exit 0 when dtypes and shapes match and max |a - e| <= ATOL
// DTYPE is a runtime dtype name (f32, f64, i64, ...); SHAPE is comma-separated dims ("3,4,5"),
// or "scalar". Exit 1 with a message on stderr otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/npy.h"

namespace {

using edgefuse::DType;
using edgefuse::Tensor;

std::optional<DType> parse_dtype(const std::string& name) {
  for (int i = 0; i < edgefuse::kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    if (edgefuse::dtype_name(dtype) == name) return dtype;
  }
  return std::nullopt;
}

std::optional<edgefuse::Shape> parse_shape(const std::string& text) {
  edgefuse::Shape shape;
  if (text == "scalar") return shape;
  std::istringstream in(text);
  std::string dim;
  while (std::getline(in, dim, ',')) {
    try {
      shape.push_back(std::stoll(dim));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (shape.back() < 0) return std::nullopt;
  }
  return shape;
}

void set_element(Tensor& tensor, int64_t index, double value) {
  edgefuse::visit_dtype(tensor.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, edgefuse::Half>) {
      tensor.data<T>()[index] = edgefuse::float_to_half(static_cast<float>(value));
    } else {
      tensor.data<T>()[index] = static_cast<T>(value);
    }
  });
}

int fail(const std::string& message) {
  std::fprintf(stderr, "make_npy: %s\n", message.c_str());
  return 1;
}

int write_values(const std::vector<std::string>& args, bool fill) {
  if (args.size() < 4) return fail("usage: make_npy write|fill FILE DTYPE SHAPE VALUE...");
  const std::optional<DType> dtype = parse_dtype(args[2]);
  const std::optional<edgefuse::Shape> shape = parse_shape(args[3]);
  if (!dtype) return fail("unknown dtype " + args[2]);
  if (!shape) return fail("bad shape " + args[3]);
  Tensor tensor = Tensor::empty(*dtype, *shape);
  const size_t given = args.size() - 4;
  if (fill ? given != 1 : given != static_cast<size_t>(tensor.numel())) {
    return fail(std::to_string(given) + " values for " + edgefuse::shape_to_string(*shape));
  }
  for (int64_t i = 0; i < tensor.numel(); ++i) set_element(tensor, i, std::stod(args[fill ? 4 : 4 + i]));
  const edgefuse::Status status = edgefuse::write_npy(args[1], tensor);
  return status.is_ok() ? 0 : fail(status.to_string());
}

int compare(const std::vector<std::string>& args) {
  if (args.size() != 4) return fail("usage: make_npy compare ACTUAL EXPECTED ATOL");
  edgefuse::Result<Tensor> actual = edgefuse::read_npy(args[1]);
  edgefuse::Result<Tensor> expected = edgefuse::read_npy(args[2]);
  if (!actual.is_ok()) return fail(actual.status().to_string());
  if (!expected.is_ok()) return fail(expected.status().to_string());
  if (actual->desc() != expected->desc()) {
    return fail("actual is " + actual->desc().to_string() + ", expected " + expected->desc().to_string());
  }
  const double tolerance = std::stod(args[3]);
  double max_error = 0;
  for (int64_t i = 0; i < actual->numel(); ++i) {
    const double error = std::fabs(actual->double_at(i) - expected->double_at(i));
    if (!(error <= tolerance)) {
      return fail("element " + std::to_string(i) + ": actual " + std::to_string(actual->double_at(i)) + ", expected " +
                  std::to_string(expected->double_at(i)));
    }
    max_error = std::max(max_error, error);
  }
  std::printf("match: %lld elements, max abs error %g\n", static_cast<long long>(actual->numel()), max_error);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "write") return write_values(args, false);
    if (!args.empty() && args[0] == "fill") return write_values(args, true);
    if (!args.empty() && args[0] == "compare") return compare(args);
  } catch (const std::exception& error) {  // std::stod on a malformed number
    return fail(std::string("bad number: ") + error.what());
  }
  return fail("usage: make_npy write|fill|compare ...");
}
