// Executor::run_lanes: a batch run as whole images per thread (ExecutorOptions::batch_lanes).
//
// A frame split across threads pays at every kernel: the threads meet at its end, and a kernel
// that splits its work unlike the one before (a depthwise Conv by channels after a 1x1 by columns)
// reads what the other core wrote, which on the development VM's two cores is several times slower
// than reading its own cache. With a batch, whole images per thread avoid both: each lane is a
// single-threaded executor with its own arena and packed weights, and the threads meet twice per
// batch (the lanes, then copying their outputs into the batch's).
#include <cstdint>
#include <cstring>

#include "runtime/executor.h"

namespace edgefuse {

namespace {

// Images [first, first + count) of a batch-leading tensor: a view, or a copy when the view would
// not start on kTensorAlignment (kernels may assume aligned planes).
Tensor image_slice(const Tensor& batch, int64_t first, int64_t count) {
  Shape shape = batch.shape();
  const size_t image_bytes = batch.nbytes() / static_cast<size_t>(shape[0]);
  shape[0] = count;
  auto* data =
      static_cast<unsigned char*>(const_cast<void*>(batch.raw_data())) + static_cast<size_t>(first) * image_bytes;
  Tensor view = Tensor::wrap(batch.dtype(), std::move(shape), data);
  return reinterpret_cast<uintptr_t>(data) % kTensorAlignment == 0 ? view : view.clone();
}

}  // namespace

int64_t Executor::lane_batch(std::span<const Tensor> inputs) const {
  if (!batch_lanes() || inputs.empty()) return 0;
  const int64_t batch = inputs[0].rank() > 0 ? inputs[0].dim(0) : 0;
  if (batch < threads()) return 0;
  for (const Tensor& input : inputs) {
    if (input.rank() == 0 || input.dim(0) != batch) return 0;  // not one batch: run it as it is
  }
  return batch;
}

Result<std::vector<Tensor>> Executor::run_lanes(std::span<const Tensor> inputs, int64_t batch) {
  const int lanes = threads();
  if (lanes_.empty()) {
    ExecutorOptions lane_options = options_;
    lane_options.threads = 1;
    lane_options.batch_lanes = false;
    std::vector<Lane> made(static_cast<size_t>(lanes));  // kept only when every lane was made
    for (Lane& lane : made) {
      EF_ASSIGN_OR_RETURN(Executor executor, Executor::create(graph_, lane_options));
      lane.executor = std::make_unique<Executor>(std::move(executor));
    }
    lanes_ = std::move(made);
  }
  const int64_t per_lane = batch / lanes;
  const int64_t rest = batch - per_lane * lanes;
  for (int l = 0; l < lanes; ++l) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    lane.inputs.clear();
    for (const Tensor& input : inputs) lane.inputs.push_back(image_slice(input, l * per_lane, per_lane));
  }
  // Lane l on thread l (contiguous shares): its outputs are copied out by the same thread below.
  pool_->parallel_for(
      lanes, 1,
      [&](int64_t begin, int64_t end) {
        for (int64_t l = begin; l < end; ++l) {
          Lane& lane = lanes_[static_cast<size_t>(l)];
          Result<std::vector<Tensor>> ran = lane.executor->run(lane.inputs);
          lane.status = ran.is_ok() ? Status::ok() : ran.status();
          if (ran.is_ok()) lane.outputs = std::move(*ran);
        }
      },
      /*contiguous=*/true);
  // Let go of the lanes' inputs and outputs on every path out, so that their executors reuse
  // their output storage next run (Executor::handed_out_).
  struct LetGo {
    std::vector<Lane>& lanes;
    ~LetGo() {
      for (Lane& lane : lanes) {
        lane.inputs.clear();
        lane.outputs.clear();
      }
    }
  } let_go{lanes_};
  for (int l = 0; l < lanes; ++l) {
    const Status& status = lanes_[static_cast<size_t>(l)].status;
    if (!status.is_ok()) {
      return status.with_context(
          make_message("images ", l * per_lane, "..", (l + 1) * per_lane - 1, " of a batch of ", batch));
    }
  }

  // The images past a multiple of the lanes, on all threads.
  std::vector<Tensor> rest_outputs;
  if (rest > 0) {
    std::vector<Tensor> rest_inputs;
    for (const Tensor& input : inputs) rest_inputs.push_back(image_slice(input, batch - rest, rest));
    last_plan_ = plan_for(rest_inputs);
    Result<std::vector<Tensor>> ran =
        last_plan_ != nullptr ? run_planned(*last_plan_, rest_inputs) : run_dynamic(rest_inputs);
    if (!ran.is_ok()) {
      return ran.status().with_context(
          make_message("images ", batch - rest, "..", batch - 1, " of a batch of ", batch));
    }
    rest_outputs = std::move(*ran);
  }

  // The batch's outputs: lane 0's shapes with the whole batch, each lane's (and the rest's) images
  // at their place.
  const std::vector<Tensor>& first = lanes_[0].outputs;
  lane_batch_out_.resize(first.size());
  std::vector<Tensor> outputs;
  outputs.reserve(first.size());
  for (size_t o = 0; o < first.size(); ++o) {
    const Tensor& part = first[o];
    const std::string& name = graph_->value(graph_->outputs()[o]).name;
    if (part.rank() == 0 || part.dim(0) != per_lane) {
      return invalid_argument("output '", name, "' has shape ", shape_to_string(part.shape()), " for ", per_lane,
                              " images: it does not lead with the batch (ExecutorOptions::batch_lanes)");
    }
    Shape shape = part.shape();
    shape[0] = batch;
    if (rest > 0) {
      Shape expected = shape;
      expected[0] = rest;
      if (rest_outputs[o].shape() != expected) {
        return invalid_argument("output '", name, "' has shape ", shape_to_string(rest_outputs[o].shape()), " for ",
                                rest, " images, against ", shape_to_string(part.shape()), " for ", per_lane);
      }
    }
    for (const Lane& lane : lanes_) {
      if (lane.outputs[o].desc() != part.desc()) {
        return Status(StatusCode::kInternal,
                      make_message("output '", name, "' differs between lanes: ", lane.outputs[o].desc().to_string(),
                                   " against ", part.desc().to_string()));
      }
    }
    Tensor& last = lane_batch_out_[o];
    const TensorDesc desc{part.dtype(), shape};
    // Every byte is copied over below, so the last batch's storage serves when the caller let go.
    if (last.storage() == nullptr || last.storage().use_count() != 1 || last.desc() != desc) {
      last = Tensor::empty(desc.dtype, desc.shape);
    }
    outputs.push_back(last);
  }
  pool_->parallel_for(
      lanes, 1,
      [&](int64_t begin, int64_t end) {
        for (int64_t l = begin; l < end; ++l) {
          const std::vector<Tensor>& parts = lanes_[static_cast<size_t>(l)].outputs;
          for (size_t o = 0; o < parts.size(); ++o) {
            const size_t bytes = parts[o].nbytes();
            std::memcpy(static_cast<unsigned char*>(outputs[o].raw_data()) + static_cast<size_t>(l) * bytes,
                        parts[o].raw_data(), bytes);
          }
        }
      },
      /*contiguous=*/true);
  for (size_t o = 0; o < rest_outputs.size(); ++o) {
    std::memcpy(static_cast<unsigned char*>(outputs[o].raw_data()) + outputs[o].nbytes() - rest_outputs[o].nbytes(),
                rest_outputs[o].raw_data(), rest_outputs[o].nbytes());
  }

  const Executor& lane0 = *lanes_[0].executor;
  last_plan_ = lane0.memory_plan();
  ran_pairs_ = lane0.last_kernel_pairs();
  if (options_.profile) profile_ms_ = lane0.last_profile_ms();
  return outputs;
}

}  // namespace edgefuse
