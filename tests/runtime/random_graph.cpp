#include "tests/runtime/random_graph.h"

#include <string>
#include <vector>

namespace edgefuse::test {

namespace {

std::string numbered_name(char prefix, size_t number) {
  std::string name(1, prefix);
  name += std::to_string(number);
  return name;
}

class RandomGraphBuilder {
 public:
  RandomGraphBuilder(std::mt19937& rng, bool dynamic_batch)
      : rng_(rng), dynamic_batch_(dynamic_batch), graph_(std::make_shared<Graph>()) {}

  std::shared_ptr<Graph> build(int node_count) {
    const ValueId x = add_value(DType::kF32, {1, 4, 4, 8});
    graph_->inputs().push_back(x);
    for (int i = 0; i < node_count; ++i) add_random_op();
    graph_->outputs().push_back(float_values_.back());
    // A few intermediates as outputs too (some also read later): kept out of the arena.
    for (int extra = pick(0, 2); extra > 0; --extra) {
      const ValueId v = float_values_[static_cast<size_t>(pick(1, static_cast<int>(float_values_.size()) - 1))];
      bool listed = false;
      for (ValueId output : graph_->outputs()) listed = listed || output == v;
      if (!listed) graph_->outputs().push_back(v);
    }
    return graph_;
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  ValueId any_value() {
    return float_values_[static_cast<size_t>(pick(0, static_cast<int>(float_values_.size()) - 1))];
  }
  const Shape& shape_of(ValueId v) { return shapes_[static_cast<size_t>(v)]; }

  ValueId add_value(DType dtype, Shape shape) {
    Shape declared = shape;
    if (dynamic_batch_ && !declared.empty()) declared[0] = -1;
    const ValueId v = graph_->add_value(numbered_name('v', graph_->values().size()), TensorDesc{dtype, declared});
    shapes_.resize(graph_->values().size());
    shapes_[static_cast<size_t>(v)] = std::move(shape);
    if (dtype == DType::kF32) float_values_.push_back(v);
    return v;
  }

  ValueId add_op(OpKind op, std::vector<ValueId> inputs, DType dtype, Shape shape, Attributes attrs = {}) {
    const ValueId out = add_value(dtype, std::move(shape));
    Node node;
    node.op = op;
    node.name = numbered_name('n', graph_->nodes().size());
    node.inputs = std::move(inputs);
    node.outputs = {out};
    node.attrs = std::move(attrs);
    graph_->add_node(std::move(node));
    return out;
  }

  ValueId ints(const std::vector<int64_t>& values) {
    return graph_->add_initializer(numbered_name('c', graph_->values().size()),
                                   Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values));
  }

  // A value with the same shape as `v` (maybe `v` itself).
  ValueId same_shape_as(ValueId v) {
    std::vector<ValueId> matches;
    for (ValueId other : float_values_) {
      if (shape_of(other) == shape_of(v)) matches.push_back(other);
    }
    return matches[static_cast<size_t>(pick(0, static_cast<int>(matches.size()) - 1))];
  }

  void add_random_op() {
    const ValueId a = any_value();
    const Shape shape = shape_of(a);
    switch (pick(0, 7)) {
      case 0: {
        static constexpr OpKind kUnary[] = {OpKind::kRelu, OpKind::kSigmoid, OpKind::kTanh, OpKind::kLeakyRelu};
        add_op(kUnary[pick(0, 3)], {a}, DType::kF32, shape);
        break;
      }
      case 1:
      case 2: {
        static constexpr OpKind kBinary[] = {OpKind::kAdd, OpKind::kSub, OpKind::kMul};
        add_op(kBinary[pick(0, 2)], {a, same_shape_as(a)}, DType::kF32, shape);
        break;
      }
      case 3: {  // Concat on channels, capped so values stay small
        if (shape[1] > 16) {
          add_op(OpKind::kRelu, {a}, DType::kF32, shape);
          break;
        }
        Shape out = shape;
        const ValueId b = same_shape_as(a);
        out[1] += shape_of(b)[1];
        Attributes attrs;
        attrs.set("axis", int64_t{1});
        add_op(OpKind::kConcat, {a, b}, DType::kF32, out, std::move(attrs));
        break;
      }
      case 4: {
        Attributes attrs;
        attrs.set("perm", std::vector<int64_t>{0, 1, 3, 2});
        add_op(OpKind::kTranspose, {a}, DType::kF32, {shape[0], shape[1], shape[3], shape[2]}, std::move(attrs));
        break;
      }
      case 6: {  // Slice of some channels
        if (shape[1] < 2) break;
        const int start = pick(0, static_cast<int>(shape[1]) - 1);
        const int end = pick(start + 1, static_cast<int>(shape[1]));
        Shape out = shape;
        out[1] = end - start;
        add_op(OpKind::kSlice, {a, ints({start}), ints({end}), ints({1})}, DType::kF32, out);
        break;
      }
      case 7: {  // Split into two runs of channels
        if (shape[1] < 2) break;
        const int first = pick(1, static_cast<int>(shape[1]) - 1);
        Shape low = shape, high = shape;
        low[1] = first;
        high[1] = shape[1] - first;
        Node node;
        node.op = OpKind::kSplit;
        node.name = numbered_name('n', graph_->nodes().size());
        node.inputs = {a, ints({first, shape[1] - first})};
        node.attrs.set("axis", int64_t{1});
        node.outputs = {add_value(DType::kF32, low), add_value(DType::kF32, high)};
        graph_->add_node(std::move(node));
        break;
      }
      default: {  // Reshape(b, Shape(a)): the shape operand depends only on the input shape
        const ValueId b = same_shape_as(a);
        const ValueId dims = add_op(OpKind::kShape, {a}, DType::kI64, {static_cast<int64_t>(shape.size())});
        add_op(OpKind::kReshape, {b, dims}, DType::kF32, shape);
        break;
      }
    }
  }

  std::mt19937& rng_;
  bool dynamic_batch_;
  std::shared_ptr<Graph> graph_;
  std::vector<Shape> shapes_;          // per value: its shape at batch 1
  std::vector<ValueId> float_values_;  // candidates for op inputs, in creation order
};

}  // namespace

std::shared_ptr<Graph> make_random_graph(std::mt19937& rng, int node_count, bool dynamic_batch) {
  return RandomGraphBuilder(rng, dynamic_batch).build(node_count);
}

}  // namespace edgefuse::test
