#include "runtime/ops/broadcast.h"

#include <algorithm>

namespace edgefuse {

namespace {

// Dim `d` of `shape` counted in the frame of a rank-`rank` output aligned at the last dim; 1
// where `shape` has no such dim.
int64_t aligned_dim(std::span<const int64_t> shape, size_t rank, size_t d) {
  const size_t missing = rank - shape.size();
  return d < missing ? 1 : shape[d - missing];
}

}  // namespace

Result<Shape> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = aligned_dim(a, rank, d);
    const int64_t db = aligned_dim(b, rank, d);
    if (da != db && da != 1 && db != 1) {
      return invalid_argument("shapes ", shape_to_string(a), " and ", shape_to_string(b),
                              " cannot be broadcast (dimension ", d, ": ", da, " vs ", db, ")");
    }
    out[d] = da == 1 ? db : da;
  }
  return out;
}

Status check_unidirectional_broadcast(std::span<const int64_t> from, std::span<const int64_t> to) {
  bool ok = from.size() <= to.size();
  for (size_t d = 0; ok && d < to.size(); ++d) {
    const int64_t dim = aligned_dim(from, to.size(), d);
    ok = dim == 1 || dim == to[d];
  }
  if (!ok) {
    return invalid_argument("shape ", shape_to_string(from), " cannot be broadcast to ", shape_to_string(to));
  }
  return Status::ok();
}

std::vector<int64_t> broadcast_strides(std::span<const int64_t> shape, std::span<const int64_t> out_shape) {
  const size_t rank = out_shape.size();
  EF_ASSERT(shape.size() <= rank, "broadcast_strides: ", shape_to_string(shape), " has more dims than ",
            shape_to_string(out_shape));
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    const int64_t dim = aligned_dim(shape, rank, d);
    strides[d] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return strides;
}

MultiBroadcastLoop plan_multi_broadcast_loop(std::span<const Shape> shapes, std::span<const int64_t> out_shape) {
  std::vector<std::vector<int64_t>> strides;
  strides.reserve(shapes.size());
  for (const Shape& shape : shapes) strides.push_back(broadcast_strides(shape, out_shape));
  MultiBroadcastLoop loop;
  loop.strides.resize(shapes.size());
  for (size_t d = 0; d < out_shape.size(); ++d) {
    const int64_t dim = out_shape[d];
    if (dim == 1) continue;
    bool merges = !loop.dims.empty();
    for (size_t k = 0; merges && k < shapes.size(); ++k) merges = loop.strides[k].back() == strides[k][d] * dim;
    if (merges) {
      loop.dims.back() *= dim;
      for (size_t k = 0; k < shapes.size(); ++k) loop.strides[k].back() = strides[k][d];
    } else {
      loop.dims.push_back(dim);
      for (size_t k = 0; k < shapes.size(); ++k) loop.strides[k].push_back(strides[k][d]);
    }
  }
  if (loop.dims.empty()) {  // a single element
    loop.dims = {1};
    for (std::vector<int64_t>& s : loop.strides) s = {0};
  }
  return loop;
}

int64_t MultiBroadcastLoop::row_offset(size_t k, int64_t row) const {
  int64_t offset = 0;
  for (size_t d = dims.size() - 1; d-- > 0;) {
    offset += (row % dims[d]) * strides[k][d];
    row /= dims[d];
  }
  return offset;
}

BroadcastLoop plan_broadcast_loop(std::span<const int64_t> a_shape, std::span<const int64_t> b_shape,
                                  std::span<const int64_t> out_shape) {
  const Shape shapes[] = {Shape(a_shape.begin(), a_shape.end()), Shape(b_shape.begin(), b_shape.end())};
  MultiBroadcastLoop multi = plan_multi_broadcast_loop(shapes, out_shape);
  BroadcastLoop loop;
  loop.dims = std::move(multi.dims);
  loop.strides_a = std::move(multi.strides[0]);
  loop.strides_b = std::move(multi.strides[1]);
  return loop;
}

}  // namespace edgefuse
