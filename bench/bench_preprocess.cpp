// Latency of fused YUV -> model input preprocessing (pipeline/preprocess) against the OpenCV
// chain it replaces: cv::cvtColor to BGR at full resolution, then preprocess_yolox /
// preprocess_blazeface (cv::resize + layout). Both single-threaded (cv::setNumThreads(1)); a
// fused column with a thread pool is added when --threads > 1. The variants of one case run in
// turn, the order reversing every round, so that load on a shared machine hits all alike.
// Prints a Markdown table; see bench/RESULTS.md.
//
//   bench_preprocess [--runs N] [--warmup N] [--threads N] [--width W --height H]
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include "bench/bench_common.h"
#include "models/detect/input_spec.h"
#include "models/detector/preprocess.h"
#include "pipeline/cli/args.h"
#include "pipeline/cli/bench_support.h"
#include "pipeline/preprocess/yuv_preprocessor.h"
#include "runtime/thread_pool.h"

namespace edgefuse::bench {
namespace {

const cli::CommandSpec& bench_spec() {
  static const cli::CommandSpec spec{
      .name = "bench_preprocess",
      .summary = "fused YUV preprocessing vs the OpenCV chain, as a Markdown table",
      .usage = "[options]",
      .options =
          {
              runs_option("100", "timed runs per variant"),
              warmup_option("10", "untimed runs per variant first"),
              {.name = "threads",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "2",
               .description = "pool size of the extra fused column (1: no such column)",
               .min = 1,
               .max = 1024},
              {.name = "width",
               .type = cli::OptionType::kInt,
               .value_name = "W",
               .default_value = "1920",
               .description = "frame width (even)",
               .min = 2,
               .max = 16384},
              {.name = "height",
               .type = cli::OptionType::kInt,
               .value_name = "H",
               .default_value = "1080",
               .description = "frame height (even)",
               .min = 2,
               .max = 16384},
          },
  };
  return spec;
}

// A frame in both layouts GStreamer delivers: an I420 buffer (as cv::cvtColor makes it) and the
// NV12 buffer with the same samples, each with a plane view for the fused path.
struct Frame {
  int width = 0, height = 0;
  cv::Mat i420;  // (height * 3 / 2) x width, 8-bit: Y, then U, then V
  cv::Mat nv12;  // (height * 3 / 2) x width, 8-bit: Y, then interleaved UV
  YuvImage view(PixelFormat format) const {
    const cv::Mat& m = format == PixelFormat::kI420 ? i420 : nv12;
    const uint8_t* y = m.ptr<uint8_t>(0);
    const uint8_t* chroma = y + static_cast<size_t>(width) * height;
    YuvImage image;
    image.format = format;
    image.width = width;
    image.height = height;
    image.y = y;
    image.y_stride = width;
    image.u = chroma;
    image.u_stride = format == PixelFormat::kI420 ? width / 2 : width;
    image.v = format == PixelFormat::kI420 ? chroma + static_cast<size_t>(width / 2) * (height / 2) : nullptr;
    image.v_stride = format == PixelFormat::kI420 ? width / 2 : 0;
    return image;
  }
};

// Smooth colour gradients plus noise: in-gamut content like a decoded camera frame.
Frame make_frame(int width, int height) {
  cv::Mat bgr(height, width, CV_8UC3);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> noise(-20, 20);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      cv::Vec3b& p = bgr.at<cv::Vec3b>(y, x);
      p[0] = cv::saturate_cast<uint8_t>(255 * x / width + noise(rng));
      p[1] = cv::saturate_cast<uint8_t>(255 * y / height + noise(rng));
      p[2] = cv::saturate_cast<uint8_t>(128 + noise(rng) * 3);
    }
  }
  Frame frame;
  frame.width = width;
  frame.height = height;
  cv::cvtColor(bgr, frame.i420, cv::COLOR_BGR2YUV_I420);
  frame.nv12 = frame.i420.clone();
  const size_t luma = static_cast<size_t>(width) * height;
  const size_t quarter = luma / 4;
  const uint8_t* u = frame.i420.ptr<uint8_t>(0) + luma;
  uint8_t* uv = frame.nv12.ptr<uint8_t>(0) + luma;
  for (size_t i = 0; i < quarter; ++i) {
    uv[2 * i] = u[i];
    uv[2 * i + 1] = u[quarter + i];
  }
  return frame;
}

struct Variant : bench::Samples {
  std::function<std::string()> run;
};

void time_once(Variant& variant, bool record) {
  const auto start = std::chrono::steady_clock::now();
  std::string failure = variant.run();
  const auto stop = std::chrono::steady_clock::now();
  if (!failure.empty()) variant.failure = failure;
  if (record && variant.failure.empty()) {
    variant.ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
}

void measure(std::vector<Variant>& variants, int64_t warmup, int64_t runs) {
  for (Variant& v : variants) {
    for (int64_t i = 0; i < warmup && v.failure.empty(); ++i) time_once(v, false);
  }
  for (int64_t round = 0; round < runs; ++round) {
    for (size_t k = 0; k < variants.size(); ++k) {
      Variant& v = variants[round % 2 == 0 ? k : variants.size() - 1 - k];
      if (v.failure.empty()) time_once(v, true);
    }
  }
}

struct ModelCase {
  const char* label;
  ModelInputSpec spec;
  bool yolox;
};

void bench_case(const Frame& frame, PixelFormat format, const ModelCase& model, ThreadPool* pool, int64_t warmup,
                int64_t runs) {
  const YuvImage image = frame.view(format);
  const cv::Mat& packed = format == PixelFormat::kI420 ? frame.i420 : frame.nv12;
  const int code = format == PixelFormat::kI420 ? cv::COLOR_YUV2BGR_I420 : cv::COLOR_YUV2BGR_NV12;
  std::vector<float> tensor(static_cast<size_t>(model.spec.width) * model.spec.height * 3);
  YuvPreprocessor single;
  YuvPreprocessor pooled;
  auto fused = [&](YuvPreprocessor& preprocessor, ThreadPool* threads) {
    Result<Letterbox> lb = preprocessor.run(image, model.spec, YuvMatrix::kBt601, tensor.data(), threads);
    return lb.is_ok() ? std::string() : lb.status().message();
  };
  std::vector<Variant> variants(pool != nullptr ? 3 : 2);
  variants[0].run = [&] { return fused(single, nullptr); };
  variants[1].run = [&] {
    cv::Mat bgr;
    cv::cvtColor(packed, bgr, code);
    Result<PreprocessedImage> out = model.yolox ? preprocess_yolox(bgr, model.spec.width, model.spec.height)
                                                : preprocess_blazeface(bgr, model.spec.width);
    return out.is_ok() ? std::string() : out.status().message();
  };
  if (pool != nullptr) variants[2].run = [&] { return fused(pooled, pool); };
  measure(variants, warmup, runs);
  std::printf("| %s | %s | %s | %s | %s |", pixel_format_name(format), model.label,
              bench::latency_cell(variants[0], 3).c_str(), bench::latency_cell(variants[1], 3).c_str(),
              bench::median_ratio_cell(variants[0], variants[1]).c_str());
  if (pool != nullptr) std::printf(" %s |", bench::latency_cell(variants[2], 3).c_str());
  std::printf("\n");
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  int exit_code = 0;
  const std::optional<cli::ParsedArgs> parsed =
      bench::parse_bench_args(bench_spec(), "bench_preprocess", argc, argv, exit_code);
  if (!parsed) return exit_code;
  const auto width = static_cast<int>(parsed->get_int("width"));
  const auto height = static_cast<int>(parsed->get_int("height"));
  if (width % 2 != 0 || height % 2 != 0) {
    std::fprintf(stderr, "bench_preprocess: error: frame size %dx%d must be even\n", width, height);
    return 1;
  }
  const int64_t runs = parsed->get_int("runs");
  const int64_t warmup = parsed->get_int("warmup");
  const auto threads = static_cast<int>(parsed->get_int("threads"));
  cv::setNumThreads(1);
  std::unique_ptr<ThreadPool> pool = threads > 1 ? std::make_unique<ThreadPool>(threads) : nullptr;

  std::printf(
      "fused YUV preprocessing vs OpenCV %s chain (cvtColor + preprocess_*), %dx%d BT.601 frame; %s build, %s\n",
      CV_VERSION, width, height, EDGEFUSE_BUILD_TYPE, bench::compiler_description());
  std::printf(
      "latency in ms: median [min-max] of %lld interleaved runs after %lld warm-up runs; one thread unless "
      "stated\n\n",
      static_cast<long long>(runs), static_cast<long long>(warmup));
  std::printf("| format | model input | fused ms | OpenCV chain ms | fused / OpenCV |%s\n",
              pool ? (" fused " + std::to_string(threads) + " threads ms |").c_str() : "");
  std::printf("| --- | --- | --- | --- | --- |%s\n", pool ? " --- |" : "");
  const Frame frame = make_frame(width, height);
  const ModelCase models[] = {
      {"YOLOX 416", yolox_input_spec(416, 416), true},
      {"BlazeFace 128", blazeface_input_spec(128), false},
      {"BlazeFace 256", blazeface_input_spec(256), false},
  };
  for (PixelFormat format : {PixelFormat::kNV12, PixelFormat::kI420}) {
    for (const ModelCase& model : models) bench_case(frame, format, model, pool.get(), warmup, runs);
  }
  return 0;
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  return edgefuse::bench::run(argc, argv);
}
