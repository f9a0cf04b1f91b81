#include "runtime/cuda/conv_libraries.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "runtime/cuda/byte_ranges.h"
#include "runtime/cuda/cublas_gemm.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cudnn_conv.h"
#include "runtime/cuda/cudnn_conv_shape.h"
#include "runtime/cuda/step_launch.h"

namespace edgefuse::gpu {
namespace {

Status launch_ours(const auto& step, void* stream) {
  EF_CUDA_RETURN_IF_ERROR(static_cast<cudaError_t>(launch_on_stream(step, stream)));
  return Status::ok();
}

// Floats of a step's input X and residual R (when it has one) and of its output Y.
struct StepFloats {
  int64_t input = 0, residual = 0, output = 0;
};

StepFloats floats_of(const PointwiseConvStep& s) {
  return {s.batch * s.in_channels * s.positions, s.batch * s.residual_channels * s.positions,
          s.batch * s.out_channels * s.positions};
}

StepFloats floats_of(const ConvGemmStep& s) {
  const int64_t in = s.input[0] * s.input[1] * s.input[2], out = s.output[0] * s.output[1] * s.output[2];
  return {s.batch * s.in_channels * in, s.batch * s.residual_channels * out, s.batch * s.out_channels * out};
}

// Uniform in [-1, 1), the same every call (a small LCG: the check must not depend on the frame).
// On the executor's stream, which does not synchronise with the legacy default stream.
Status fill_random(const void* device, int64_t floats, uint32_t seed, cudaStream_t stream) {
  std::vector<float> values(static_cast<size_t>(floats));
  uint32_t state = seed;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  EF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(const_cast<void*>(device), values.data(), values.size() * sizeof(float),
                                          cudaMemcpyHostToDevice, stream));
  EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));  // before `values` goes
  return Status::ok();
}

Result<std::vector<float>> download(const void* device, int64_t floats, cudaStream_t stream) {
  std::vector<float> values(static_cast<size_t>(floats));
  EF_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(values.data(), device, values.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return values;
}

// Why a faster library result was not kept.
std::string mismatch(const Result<double>& difference) {
  if (!difference.is_ok()) return difference.status().message();
  return make_message("its output differs from our kernel's by ", *difference, " (relative L2; at most ",
                      kLibraryTolerance, " allowed)");
}

}  // namespace

ConvLibraries::ConvLibraries(void* stream, LibraryUse cublas, LibraryUse cudnn, Report report)
    : stream_(stream), cublas_use_(cublas), cudnn_use_(cudnn), report_(std::move(report)) {}

ConvLibraries::~ConvLibraries() = default;

void ConvLibraries::load_for(const LoweredPlan& plan, const Bindings& bindings, bool tuning) {
  const auto may_run = [tuning](LibraryUse use) {
    return use == LibraryUse::kAlways || (use == LibraryUse::kWhereFaster && tuning);
  };
  bool cublas_candidates = false, cudnn_candidates = false;
  for (const LoweredStep& step : plan.steps) {
    if (std::holds_alternative<PointwiseConvStep>(step.params)) {
      cublas_candidates =
          cublas_candidates || library_gemm_eligible(std::get<PointwiseConvStep>(bind_step(step, bindings)));
    } else if (std::holds_alternative<ConvGemmStep>(step.params)) {
      cudnn_candidates = cudnn_candidates || cudnn_conv_eligible(std::get<ConvGemmStep>(bind_step(step, bindings)));
    }
  }
  if (cublas_candidates && !cublas_tried_ && may_run(cublas_use_)) {
    cublas_tried_ = true;
    Result<std::unique_ptr<CublasGemm>> loaded = CublasGemm::create(stream_);
    if (loaded.is_ok()) {
      cublas_ = std::move(*loaded);
    } else if (report_) {
      report_(make_message("1x1 Convs without cuBLAS: ", loaded.status().message()));
    }
  }
  if (cudnn_candidates && !cudnn_tried_ && may_run(cudnn_use_)) {
    cudnn_tried_ = true;
    Result<std::unique_ptr<CudnnConv>> loaded = CudnnConv::create(stream_);
    if (loaded.is_ok()) {
      cudnn_ = std::move(*loaded);
    } else if (report_) {
      report_(make_message("windowed Convs without cuDNN: ", loaded.status().message()));
    }
  }
}

std::string ConvLibraries::timed_cublas_version() const {
  return cublas_ && cublas_use_ == LibraryUse::kWhereFaster ? cublas_->library().version : "none";
}

std::string ConvLibraries::timed_cudnn_version() const {
  return cudnn_ && cudnn_use_ == LibraryUse::kWhereFaster ? cudnn_->version() : "none";
}

void ConvLibraries::begin_tuning(const void* constants, size_t constants_bytes) {
  tuning_ = Tuning{};
  constants_ = constants;
  constants_bytes_ = constants_bytes;
}

void ConvLibraries::library_failed(const char* library, const std::string& what, const Status& why) {
  ++tuning_.failed;
  if (report_) report_(make_message(what, ": ", library, " not used, it failed: ", why.message()));
}

template <typename Step>
Result<double> ConvLibraries::difference_from_ours(const Step& ours, const std::function<Status()>& library) {
  const StepFloats floats = floats_of(ours);
  if (byte_ranges_overlap(ours.in[0], static_cast<size_t>(floats.input) * 4, constants_, constants_bytes_) ||
      (ours.in[3] != nullptr &&
       byte_ranges_overlap(ours.in[3], static_cast<size_t>(floats.residual) * 4, constants_, constants_bytes_))) {
    return unsupported("the step reads constants, which the check would overwrite");
  }
  auto* stream = static_cast<cudaStream_t>(stream_);
  EF_RETURN_IF_ERROR(fill_random(ours.in[0], floats.input, 1, stream));
  if (ours.in[3] != nullptr) EF_RETURN_IF_ERROR(fill_random(ours.in[3], floats.residual, 2, stream));
  EF_RETURN_IF_ERROR(launch_ours(ours, stream_));
  EF_ASSIGN_OR_RETURN(const std::vector<float> expected, download(ours.out, floats.output, stream));
  // A failing library call declines the library for this step (kUnsupported), unlike our own
  // kernel's or a copy's failure.
  if (const Status called = library(); !called.is_ok()) return unsupported("it failed: ", called.message());
  EF_ASSIGN_OR_RETURN(const std::vector<float> actual, download(ours.out, floats.output, stream));
  double difference = 0, norm = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double d = static_cast<double>(actual[i]) - expected[i];
    difference += d * d;
    norm += static_cast<double>(expected[i]) * expected[i];
  }
  // NaN (a library writing garbage) compares false below, and so is rejected.
  return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

Status ConvLibraries::tune(const PointwiseConvStep& bound, float ours_ms, PointwiseConvStep& params,
                           const std::string& what) {
  params.cublas = false;
  if (!cublas_ || cublas_use_ != LibraryUse::kWhereFaster || !library_gemm_eligible(bound)) return Status::ok();
  const Result<float> library_ms = cublas_->time(bound, 10);
  if (!library_ms.is_ok()) {
    library_failed("cuBLAS", what, library_ms.status());
    return Status::ok();
  }
  ++tuning_.cublas_timed;
  if (!(*library_ms < ours_ms)) return Status::ok();
  PointwiseConvStep ours = bound;
  ours.gemm_tiling = params.gemm_tiling;
  Result<double> difference = difference_from_ours(ours, [&]() { return cublas_->launch(bound); });
  if (!difference.is_ok() && difference.status().code() != StatusCode::kUnsupported) return difference.status();
  if (!difference.is_ok() || !(*difference <= kLibraryTolerance)) {
    ++tuning_.mismatched;
    if (report_) report_(make_message(what, ": cuBLAS not used: ", mismatch(difference)));
    return Status::ok();
  }
  params.cublas = true;
  ++tuning_.cublas_chosen;
  return Status::ok();
}

Status ConvLibraries::tune(const ConvGemmStep& bound, float ours_ms, ConvGemmStep& params, const std::string& what) {
  params.cudnn_algorithm = -1;
  if (!cudnn_ || cudnn_use_ != LibraryUse::kWhereFaster || !cudnn_conv_eligible(bound)) return Status::ok();
  Result<int> algorithm = cudnn_->find_algorithm(bound);
  if (!algorithm.is_ok()) {
    if (algorithm.status().code() != StatusCode::kUnsupported) {
      library_failed("cuDNN", what, algorithm.status());
    } else if (report_) {
      report_(make_message(what, ": ", algorithm.status().message()));
    }
    return Status::ok();
  }
  const Result<float> library_ms = cudnn_->time(bound, *algorithm, 10);
  if (!library_ms.is_ok()) {
    library_failed("cuDNN", what, library_ms.status());
    return Status::ok();
  }
  ++tuning_.cudnn_timed;
  if (!(*library_ms < ours_ms)) return Status::ok();
  ConvGemmStep ours = bound;
  ours.gemm_tiling = params.gemm_tiling;
  Result<double> difference = difference_from_ours(ours, [&]() { return cudnn_->launch(bound, *algorithm); });
  if (!difference.is_ok() && difference.status().code() != StatusCode::kUnsupported) return difference.status();
  if (!difference.is_ok() || !(*difference <= kLibraryTolerance)) {
    ++tuning_.mismatched;
    if (report_) report_(make_message(what, ": cuDNN algorithm ", *algorithm, " not used: ", mismatch(difference)));
    return Status::ok();
  }
  params.cudnn_algorithm = *algorithm;
  ++tuning_.cudnn_chosen;
  return Status::ok();
}

std::string ConvLibraries::tuning_summary() const {
  std::string summary;
  if (tuning_.cublas_timed > 0) {
    summary += make_message("; cuBLAS timed on ", tuning_.cublas_timed, ", faster on ", tuning_.cublas_chosen);
  }
  if (tuning_.cudnn_timed > 0) {
    summary += make_message("; cuDNN timed on ", tuning_.cudnn_timed, ", faster on ", tuning_.cudnn_chosen);
  }
  if (tuning_.mismatched > 0)
    summary += make_message("; ", tuning_.mismatched, " faster but not checked equal to ours");
  if (tuning_.failed > 0) summary += make_message("; ", tuning_.failed, " library calls failed");
  return summary;
}

Status ConvLibraries::settle(LoweredPlan& plan, const Bindings& bindings) {
  for (LoweredStep& step : plan.steps) {
    if (auto* pointwise = std::get_if<PointwiseConvStep>(&step.params)) {
      pointwise->cublas = (pointwise->cublas || cublas_use_ == LibraryUse::kAlways) && cublas_ &&
                          cublas_use_ != LibraryUse::kNever &&
                          library_gemm_eligible(std::get<PointwiseConvStep>(bind_step(step, bindings)));
    } else if (auto* windowed = std::get_if<ConvGemmStep>(&step.params)) {
      const bool wanted = windowed->cudnn_algorithm >= 0 || cudnn_use_ == LibraryUse::kAlways;
      const int32_t asked = windowed->cudnn_algorithm;
      windowed->cudnn_algorithm = -1;
      if (!wanted || !cudnn_ || cudnn_use_ == LibraryUse::kNever) continue;
      const ConvGemmStep bound = std::get<ConvGemmStep>(bind_step(step, bindings));
      if (!cudnn_conv_eligible(bound)) continue;
      int algorithm = asked;
      if (algorithm < 0) {  // kAlways: cuDNN's own fastest
        Result<int> found = cudnn_->find_algorithm(bound);
        if (!found.is_ok()) {
          if (report_) report_(make_message("a Conv stays off cuDNN: ", found.status().message()));
          continue;
        }
        algorithm = *found;
      }
      if (const Status usable = cudnn_->check(bound, algorithm); !usable.is_ok()) {
        if (report_) report_(make_message("a Conv stays off cuDNN: ", usable.message()));
        continue;
      }
      windowed->cudnn_algorithm = algorithm;
    }
  }
  for (LoweredStep& step : plan.steps) {
    const StepParams bound = bind_step(step, bindings);
    if (const auto* p = std::get_if<PointwiseConvStep>(&bound); p != nullptr && p->cublas) {
      if (const Status warmed = cublas_->launch(*p); !warmed.is_ok()) {
        if (report_) report_(make_message("a 1x1 Conv stays off cuBLAS, its warm-up failed: ", warmed.message()));
        std::get<PointwiseConvStep>(step.params).cublas = false;
      }
    } else if (const auto* c = std::get_if<ConvGemmStep>(&bound); c != nullptr && c->cudnn_algorithm >= 0) {
      if (const Status warmed = cudnn_->launch(*c, c->cudnn_algorithm); !warmed.is_ok()) {
        if (report_) report_(make_message("a Conv stays off cuDNN, its warm-up failed: ", warmed.message()));
        std::get<ConvGemmStep>(step.params).cudnn_algorithm = -1;
      }
    }
  }
  EF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)));
  return Status::ok();
}

Status ConvLibraries::launch(const PointwiseConvStep& bound) {
  return bound.cublas ? cublas_->launch(bound) : launch_ours(bound, stream_);
}

Status ConvLibraries::launch(const ConvGemmStep& bound) {
  return bound.cudnn_algorithm >= 0 ? cudnn_->launch(bound, bound.cudnn_algorithm) : launch_ours(bound, stream_);
}

LibrarySteps ConvLibraries::count(const LoweredPlan& plan) {
  LibrarySteps steps;
  for (const LoweredStep& step : plan.steps) {
    if (const auto* p = std::get_if<PointwiseConvStep>(&step.params)) steps.cublas += p->cublas ? 1 : 0;
    if (const auto* c = std::get_if<ConvGemmStep>(&step.params)) steps.cudnn += c->cudnn_algorithm >= 0 ? 1 : 0;
  }
  return steps;
}

}  // namespace edgefuse::gpu
