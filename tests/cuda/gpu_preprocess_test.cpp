// GPU YUV preprocessing on a device against the CPU preprocessor, and the model fed that way
// against the CPU path end to end. Skips, saying so, without a GPU. Frames are synthetic planes
// (gradients plus noise, padded strides) so the test needs no image decoder on the GPU machine.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "fusion/pass_manager.h"
#include "models/onnx/onnx_importer.h"
#include "pipeline/preprocess/gpu_yuv_preprocessor.h"
#include "pipeline/preprocess/yuv_preprocessor.h"
#include "runtime/cuda/cuda_buffers.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/executor.h"
#include "tests/gpu/gpu_op_cases.h"
#include "tests/support/assets.h"

namespace edgefuse::test {
namespace {

// A 4:2:0 frame in its own planes, each row padded by 7 bytes.
struct SyntheticFrame {
  std::vector<uint8_t> y, u, v;
  YuvImage image;

  SyntheticFrame(int width, int height, PixelFormat format, std::mt19937& rng) {
    std::uniform_int_distribution<int> noise(-6, 6);
    const auto pixel = [&](int base) { return static_cast<uint8_t>(std::clamp(base + noise(rng), 16, 235)); };
    image.format = format;
    image.width = width;
    image.height = height;
    image.y_stride = width + 7;
    y.resize(static_cast<size_t>(image.y_stride) * height);
    for (int r = 0; r < height; ++r) {
      for (int c = 0; c < width; ++c) y[static_cast<size_t>(r) * image.y_stride + c] = pixel(16 + 200 * c / width);
    }
    const int chroma_w = format == PixelFormat::kNV12 ? width : width / 2;
    image.u_stride = chroma_w + 7;
    u.resize(static_cast<size_t>(image.u_stride) * (height / 2));
    for (int r = 0; r < height / 2; ++r) {
      for (int c = 0; c < chroma_w; ++c) u[static_cast<size_t>(r) * image.u_stride + c] = pixel(60 + 120 * r / height);
    }
    image.y = y.data();
    image.u = u.data();
    if (format == PixelFormat::kI420) {
      image.v_stride = width / 2 + 7;
      v.resize(static_cast<size_t>(image.v_stride) * (height / 2));
      for (int r = 0; r < height / 2; ++r) {
        for (int c = 0; c < width / 2; ++c)
          v[static_cast<size_t>(r) * image.v_stride + c] = pixel(200 - 80 * c / width);
      }
      image.v = v.data();
    }
  }
};

std::vector<float> on_gpu(GpuYuvPreprocessor& gpu, const YuvImage& image, const ModelInputSpec& spec) {
  const size_t count = static_cast<size_t>(spec.width) * spec.height * 3;
  DeviceBytes dst;
  REQUIRE(device_alloc(dst, count * sizeof(float)).is_ok());
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  Result<Letterbox> letterbox = gpu.enqueue(image, spec, YuvMatrix::kBt709, static_cast<float*>(dst.get()), stream, 0);
  REQUIRE_MESSAGE(letterbox.is_ok(), letterbox.status().to_string());
  std::vector<float> out(count);
  REQUIRE(cudaMemcpyAsync(out.data(), dst.get(), count * sizeof(float), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  cudaStreamDestroy(stream);
  return out;
}

TEST_CASE("GPU YUV preprocessing equals the CPU preprocessor (NV12 and I420, both layouts, padding)") {
  if (cuda_devices().empty()) {
    MESSAGE("SKIPPED: no CUDA device visible (the cuda tests run on a machine with a GPU)");
    return;
  }
  Result<std::unique_ptr<GpuYuvPreprocessor>> gpu = GpuYuvPreprocessor::create();
  REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
  std::mt19937 rng(2);
  for (const PixelFormat format : {PixelFormat::kNV12, PixelFormat::kI420}) {
    for (const ModelInputSpec& spec :
         {yolox_input_spec(416, 416), ultralytics_input_spec(416, 416), blazeface_input_spec(128)}) {
      for (const auto& [w, h] : {std::pair{1920, 1080}, std::pair{640, 642}}) {
        INFO(pixel_format_name(format), " ", w, "x", h, " -> ", spec.width, "x", spec.height);
        const SyntheticFrame frame(w, h, format, rng);
        std::vector<float> expected(static_cast<size_t>(spec.width) * spec.height * 3);
        REQUIRE(preprocess_yuv(frame.image, spec, YuvMatrix::kBt709, expected.data()).is_ok());
        const std::vector<float> actual = on_gpu(**gpu, frame.image, spec);
        double worst = 0;
        for (size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::abs(double{actual[i]} - expected[i]));
        // The device may fuse multiply-adds the host rounds twice: a few ulps of values up to 255.
        CHECK(worst <= 1e-3 * std::max(1.0f, spec.scale * 255.0f));
      }
    }
  }
}

TEST_CASE("YOLOX-nano fed by GPU preprocessing matches the CPU preprocessor and executor") {
  if (cuda_devices().empty()) {
    MESSAGE("SKIPPED: no CUDA device visible (the cuda tests run on a machine with a GPU)");
    return;
  }
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  Result<std::shared_ptr<Graph>> graph = import_onnx_file(path.string());
  REQUIRE(graph.is_ok());
  REQUIRE(optimize_graph(**graph, cuda_fusion_options()).is_ok());
  std::mt19937 rng(3);
  const SyntheticFrame frame(1280, 720, PixelFormat::kNV12, rng);
  const ModelInputSpec spec = yolox_input_spec(416, 416);
  Tensor input = Tensor::empty(DType::kF32, {1, 3, 416, 416});
  REQUIRE(preprocess_yuv(frame.image, spec, YuvMatrix::kBt709, input.data<float>()).is_ok());
  Result<Executor> cpu = Executor::create(*graph, ExecutorOptions{});
  REQUIRE(cpu.is_ok());
  Result<std::vector<Tensor>> expected = cpu->run(std::vector<Tensor>{input});
  REQUIRE(expected.is_ok());

  Result<std::unique_ptr<CudaExecutor>> executor = CudaExecutor::create(*graph);
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  Result<std::unique_ptr<GpuYuvPreprocessor>> gpu = GpuYuvPreprocessor::create();
  REQUIRE(gpu.is_ok());
  const TensorDesc desc = input.desc();
  for (int run = 0; run < 2; ++run) {  // the first captures the CUDA graph, the second replays it
    Result<std::vector<Tensor>> actual = (*executor)->run_filled(std::span(&desc, 1), [&](std::span<void* const> inputs,
                                                                                          void* stream) {
      return (*gpu)->enqueue(frame.image, spec, YuvMatrix::kBt709, static_cast<float*>(inputs[0]), stream, 0).status();
    });
    REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
    check_gpu_outputs(*actual, *expected, false, 1e-4);
  }
}

}  // namespace
}  // namespace edgefuse::test
