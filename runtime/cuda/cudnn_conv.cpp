#include "runtime/cuda/cudnn_conv.h"

#include <map>

#include <cuda_runtime.h>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cudnn_conv_shape.h"
#include "runtime/cuda/cudnn_library.h"
#include "runtime/cuda/launch_timing.h"
#include "runtime/cuda/step_launch.h"

namespace edgefuse::gpu {

#if EDGEFUSE_HAVE_CUDNN_HEADERS

namespace {

// The four descriptors of one convolution shape, destroyed with it.
class Descriptors {
 public:
  explicit Descriptors(const CudnnLibrary& library) : library_(library) {}
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    if (x != nullptr) library_.destroy_tensor(x);
    if (y != nullptr) library_.destroy_tensor(y);
    if (w != nullptr) library_.destroy_filter(w);
    if (convolution != nullptr) library_.destroy_convolution(convolution);
  }

  Status describe(const CudnnConvShape& s) {
    const CudnnLibrary& l = library_;
    EF_RETURN_IF_ERROR(l.check(l.create_tensor(&x), "cudnnCreateTensorDescriptor"));
    EF_RETURN_IF_ERROR(l.check(l.create_tensor(&y), "cudnnCreateTensorDescriptor"));
    EF_RETURN_IF_ERROR(l.check(l.create_filter(&w), "cudnnCreateFilterDescriptor"));
    EF_RETURN_IF_ERROR(l.check(l.create_convolution(&convolution), "cudnnCreateConvolutionDescriptor"));
    int xs[4];
    s.input_strides(xs);
    EF_RETURN_IF_ERROR(l.check(l.set_tensor_4d(x, CUDNN_DATA_FLOAT, s.batch, s.in_channels, s.input[0], s.input[1],
                                               xs[0], xs[1], xs[2], xs[3]),
                               "cudnnSetTensor4dDescriptorEx (X)"));
    const int plane = s.output[0] * s.output[1];
    EF_RETURN_IF_ERROR(l.check(l.set_tensor_4d(y, CUDNN_DATA_FLOAT, s.batch, s.out_channels, s.output[0], s.output[1],
                                               s.out_channels * plane, plane, s.output[1], 1),
                               "cudnnSetTensor4dDescriptorEx (Y)"));
    EF_RETURN_IF_ERROR(l.check(l.set_filter_4d(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.out_channels, s.in_channels,
                                               s.kernel[0], s.kernel[1]),
                               "cudnnSetFilter4dDescriptor"));
    EF_RETURN_IF_ERROR(
        l.check(l.set_convolution_2d(convolution, s.pad[0], s.pad[1], s.stride[0], s.stride[1], s.dilation[0],
                                     s.dilation[1], CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                "cudnnSetConvolution2dDescriptor"));
    return l.check(l.set_math_type(convolution, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType (FMA)");
  }

  cudnnTensorDescriptor_t x = nullptr;
  cudnnTensorDescriptor_t y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t convolution = nullptr;

 private:
  const CudnnLibrary& library_;
};

bool tensor_core_math(cudnnMathType_t math) {
  return math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

}  // namespace

struct CudnnConv::Impl {
  std::shared_ptr<const CudnnLibrary> library;
  cudnnHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;  // device memory, kCudnnWorkspaceBytes
  // Declared after `library`, so destroyed before it.
  std::map<CudnnConvShape, std::unique_ptr<Descriptors>> descriptors;

  ~Impl() {
    descriptors.clear();
    if (handle != nullptr) library->destroy(handle);
    if (workspace != nullptr) cudaFree(workspace);
  }

  // The descriptors of `step`'s shape, made on first use.
  Result<const Descriptors*> descriptors_for(const ConvGemmStep& step) {
    const std::optional<CudnnConvShape> shape = cudnn_conv_shape(step);
    if (!shape) return invalid_argument("this Conv step has no cuDNN shape (cudnn_conv_shape)");
    if (auto found = descriptors.find(*shape); found != descriptors.end()) return found->second.get();
    auto made = std::make_unique<Descriptors>(*library);
    EF_RETURN_IF_ERROR(made->describe(*shape));
    return descriptors.emplace(*shape, std::move(made)).first->second.get();
  }

  static Result<cudnnConvolutionFwdAlgo_t> algorithm_of(int algorithm) {
    if (algorithm < 0 || algorithm >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT) {
      return invalid_argument("cuDNN convolution algorithm ", algorithm, " does not exist");
    }
    return static_cast<cudnnConvolutionFwdAlgo_t>(algorithm);
  }
};

CudnnConv::CudnnConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudnnConv::~CudnnConv() = default;

Result<std::unique_ptr<CudnnConv>> CudnnConv::create(void* stream) {
  auto impl = std::make_unique<Impl>();
  EF_ASSIGN_OR_RETURN(impl->library, CudnnLibrary::load());
  const CudnnLibrary& l = *impl->library;
  impl->stream = static_cast<cudaStream_t>(stream);
  EF_RETURN_IF_ERROR(l.check(l.create(&impl->handle), "cudnnCreate"));
  EF_RETURN_IF_ERROR(l.check(l.set_stream(impl->handle, impl->stream), "cudnnSetStream"));
  EF_CUDA_RETURN_IF_ERROR(cudaMalloc(&impl->workspace, kCudnnWorkspaceBytes));
  return std::unique_ptr<CudnnConv>(new CudnnConv(std::move(impl)));
}

const std::string& CudnnConv::version() const {
  return impl_->library->version;
}

Result<int> CudnnConv::find_algorithm(const ConvGemmStep& step) {
  EF_ASSIGN_OR_RETURN(const Descriptors* d, impl_->descriptors_for(step));
  const CudnnLibrary& l = *impl_->library;
  cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {};
  int returned = 0;
  EF_RETURN_IF_ERROR(l.check(
      l.find_forward(impl_->handle, d->x, step.in[0], d->w, step.in[1], d->convolution, d->y, step.out,
                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, results, impl_->workspace, kCudnnWorkspaceBytes),
      "cudnnFindConvolutionForwardAlgorithmEx"));
  // Fastest first.
  for (int r = 0; r < returned; ++r) {
    const cudnnConvolutionFwdAlgoPerf_t& result = results[r];
    if (result.status == CUDNN_STATUS_SUCCESS && result.memory <= kCudnnWorkspaceBytes &&
        !tensor_core_math(result.mathType)) {
      return static_cast<int>(result.algo);
    }
  }
  return unsupported("no cuDNN algorithm ran this Conv in FMA math within ", kCudnnWorkspaceBytes >> 20,
                     " MiB of workspace");
}

Status CudnnConv::check(const ConvGemmStep& step, int algorithm) {
  EF_ASSIGN_OR_RETURN(const Descriptors* d, impl_->descriptors_for(step));
  EF_ASSIGN_OR_RETURN(const cudnnConvolutionFwdAlgo_t algo, Impl::algorithm_of(algorithm));
  const CudnnLibrary& l = *impl_->library;
  size_t bytes = 0;
  EF_RETURN_IF_ERROR(l.check(l.forward_workspace_size(impl_->handle, d->x, d->w, d->convolution, d->y, algo, &bytes),
                             "cudnnGetConvolutionForwardWorkspaceSize"));
  if (bytes > kCudnnWorkspaceBytes) {
    return unsupported("cuDNN algorithm ", algorithm, " needs ", bytes, " bytes of workspace, more than ",
                       kCudnnWorkspaceBytes);
  }
  return Status::ok();
}

Status CudnnConv::launch(const ConvGemmStep& step, int algorithm) {
  EF_ASSIGN_OR_RETURN(const Descriptors* d, impl_->descriptors_for(step));
  EF_ASSIGN_OR_RETURN(const cudnnConvolutionFwdAlgo_t algo, Impl::algorithm_of(algorithm));
  const CudnnLibrary& l = *impl_->library;
  const float one = 1.0f, zero = 0.0f;
  EF_RETURN_IF_ERROR(l.check(l.forward(impl_->handle, &one, d->x, step.in[0], d->w, step.in[1], d->convolution, algo,
                                       impl_->workspace, kCudnnWorkspaceBytes, &zero, d->y, step.out),
                             "cudnnConvolutionForward"));
  const PointwiseEpilogueStep epilogue = epilogue_after_convolution(step);
  if (!epilogue_is_identity(epilogue)) {
    EF_CUDA_RETURN_IF_ERROR(static_cast<cudaError_t>(launch_on_stream(epilogue, impl_->stream)));
  }
  return Status::ok();
}

Result<float> CudnnConv::time(const ConvGemmStep& step, int algorithm, int launches) {
  return time_launches(impl_->stream, launches, [&]() { return launch(step, algorithm); });
}

#else  // !EDGEFUSE_HAVE_CUDNN_HEADERS: no CudnnConv is ever made.

struct CudnnConv::Impl {};

CudnnConv::CudnnConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudnnConv::~CudnnConv() = default;

Result<std::unique_ptr<CudnnConv>> CudnnConv::create(void*) {
  return unsupported("cuDNN support was not built in (no cudnn.h when edgefuse was compiled)");
}

const std::string& CudnnConv::version() const {
  static const std::string none = "none";
  return none;
}

Result<int> CudnnConv::find_algorithm(const ConvGemmStep&) {
  return unsupported("cuDNN support was not built in");
}
Status CudnnConv::check(const ConvGemmStep&, int) {
  return unsupported("cuDNN support was not built in");
}
Status CudnnConv::launch(const ConvGemmStep&, int) {
  return unsupported("cuDNN support was not built in");
}
Result<float> CudnnConv::time(const ConvGemmStep&, int, int) {
  return unsupported("cuDNN support was not built in");
}

#endif  // EDGEFUSE_HAVE_CUDNN_HEADERS

}  // namespace edgefuse::gpu
