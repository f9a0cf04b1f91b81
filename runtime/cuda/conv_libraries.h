// The vendor libraries the CUDA executor may run Conv steps through, beside its own Conv GEMM
// tilings (conv_gemm.h): cuBLAS for 1x1 Convs (cublas_gemm.h) and cuDNN for windowed group-1
// Convs (cudnn_conv.h). Each is loaded only when a plan has a step it may run, timed against the
// fastest tiling on the first frame, and kept for a step only where it is faster and its output
// matched our kernel's on the same random inputs, so that a library bug or an imprecise algorithm
// costs speed, never results.
//
// Host C++ against the CUDA runtime API.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "runtime/cuda/library_use.h"
#include "runtime/cuda/lowering.h"
#include "runtime/status.h"

namespace edgefuse::gpu {

class CublasGemm;
class CudnnConv;

// A library's result may differ from our kernel's by this relative L2 norm on random inputs (the
// sums run in other orders; Winograd algorithms round a little more).
inline constexpr double kLibraryTolerance = 2e-5;

struct LibrarySteps {
  int cublas = 0;
  int cudnn = 0;
};

class ConvLibraries {
 public:
  using Report = std::function<void(const std::string&)>;

  // `stream`: the executor's cudaStream_t, which every library call is bound to.
  ConvLibraries(void* stream, LibraryUse cublas, LibraryUse cudnn, Report report);
  ~ConvLibraries();
  ConvLibraries(const ConvLibraries&) = delete;
  ConvLibraries& operator=(const ConvLibraries&) = delete;

  // Loads each library (once: a failure is reported and not retried) that its option allows and
  // that a step of `plan`, bound to `bindings`, may run through: a plan with none (fp16) never
  // pays for loading one. With `tuning` false (tilings forced or by the cost model) only a library
  // used always (LibraryUse::kAlways) can run a step, and only such a library is loaded.
  void load_for(const LoweredPlan& plan, const Bindings& bindings, bool tuning);

  // The versions tuning times (for the plan cache's key): "none" for a library it does not.
  std::string timed_cublas_version() const;
  std::string timed_cudnn_version() const;

  // Starts counting what tune() times and picks, for tuning_summary(). The plan's packed constants,
  // `constants_bytes` at `constants`, are never scribbled over: a step reading its input from them
  // is not checked, and so keeps our kernel.
  void begin_tuning(const void* constants, size_t constants_bytes);
  // After tuning set `params`' fastest tiling, timed at `ours_ms` on `bound`: times the library
  // that may run the step and marks `params` to run through it where it is faster and matches our
  // kernel (kLibraryTolerance). `what` names the node in reports. Scribbles over the step's input,
  // residual and output (tuning runs before the first frame). A library call that fails leaves
  // the step on our kernel, reported; only a CUDA error of our own is returned.
  Status tune(const PointwiseConvStep& bound, float ours_ms, PointwiseConvStep& params, const std::string& what);
  Status tune(const ConvGemmStep& bound, float ours_ms, ConvGemmStep& params, const std::string& what);
  // "; cuBLAS timed on 82, faster on 3; cuDNN timed on 1, faster on 1", or empty.
  std::string tuning_summary() const;

  // The one place a step's library is settled, after tuning or the plan cache: kAlways asks for
  // every step, tuning or the cache for some; only steps this executor can run that way keep it
  // (the library loaded, the bound step eligible, a cuDNN algorithm within the workspace). Then
  // each library step runs once, outside any capture, so that the libraries have picked and
  // loaded their kernels before a capture records them; a step whose library call fails there
  // goes back to our kernel, reported. Scribbles over the arena.
  Status settle(LoweredPlan& plan, const Bindings& bindings);

  // Enqueues a bound step: through the library it is marked for, else our kernel.
  Status launch(const PointwiseConvStep& bound);
  Status launch(const ConvGemmStep& bound);

  static LibrarySteps count(const LoweredPlan& plan);

 private:
  struct Tuning {
    int cublas_timed = 0, cublas_chosen = 0, cudnn_timed = 0, cudnn_chosen = 0, mismatched = 0, failed = 0;
  };
  // Reports that `library` failed on the step `what` (which stays on our kernel) and counts it.
  void library_failed(const char* library, const std::string& what, const Status& why);
  // Relative L2 difference between our kernel's output for `ours` and `library`'s, on the same
  // random input and residual.
  template <typename Step>
  Result<double> difference_from_ours(const Step& ours, const std::function<Status()>& library);

  void* stream_;
  LibraryUse cublas_use_;
  LibraryUse cudnn_use_;
  Report report_;
  std::unique_ptr<CublasGemm> cublas_;  // null until a plan has a step it may run
  std::unique_ptr<CudnnConv> cudnn_;
  bool cublas_tried_ = false;
  bool cudnn_tried_ = false;
  Tuning tuning_;
  const void* constants_ = nullptr;
  size_t constants_bytes_ = 0;
};

}  // namespace edgefuse::gpu
