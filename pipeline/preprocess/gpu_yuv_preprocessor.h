// Fused YUV preprocessing on the GPU: a decoded frame's planes go up through pinned staging and one
// kernel writes the model's input tensor in device memory, per pixel the same arithmetic as the
// CPU row kernels (yuv_tensor_step.h; the tests hold the two equal bit for bit on the host). The
// CPU then neither converts nor resizes, and 1.5 bytes per source pixel cross the bus instead of
// the tensor's 12 bytes per model pixel. Built with CUDA only; one instance per model runner, one
// caller at a time.
#pragma once

#include <memory>

#include "models/detect/input_spec.h"
#include "models/detect/letterbox.h"
#include "pipeline/preprocess/yuv_image.h"
#include "runtime/status.h"

namespace edgefuse {

class GpuYuvPreprocessor {
 public:
  // kUnsupported when no CUDA device is visible.
  static Result<std::unique_ptr<GpuYuvPreprocessor>> create();
  ~GpuYuvPreprocessor();
  GpuYuvPreprocessor(const GpuYuvPreprocessor&) = delete;
  GpuYuvPreprocessor& operator=(const GpuYuvPreprocessor&) = delete;

  // Enqueues on `stream` (a cudaStream_t) the upload of `image` into staging slot `slot` (one per
  // batch element) and the kernel that writes one batch element (spec.width * spec.height * 3
  // floats in spec.layout) at `device_dst`. The planes are copied into pinned memory before it
  // returns, so the frame may be released; a slot is reused only after the caller has synchronised
  // the stream (the next batch). Errors name the bad image or spec.
  Result<Letterbox> enqueue(const YuvImage& image, const ModelInputSpec& spec, YuvMatrix matrix, float* device_dst,
                            void* stream, int slot);

 private:
  struct Impl;
  explicit GpuYuvPreprocessor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgefuse
