// Cost of the overlay per frame (pipeline/overlay) on a 1080p NV12 frame with a street's worth of
// detections: the copy out of the read-only decoded frame, the drawing, both together, the live
// view's preview (downscale + JPEG), the caller's submit(), and the whole recording path
// (copy + draw + x264 via OverlayOutput, lossless, wall and CPU time per frame).
// Prints a Markdown table; see bench/RESULTS.md.
//
//   bench_overlay [--runs N] [--warmup N] [--detections N] [--encode-frames N]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <sys/resource.h>

#include "bench/bench_common.h"
#include "pipeline/cli/args.h"
#include "pipeline/overlay/i420_image.h"
#include "pipeline/overlay/overlay_output.h"
#include "pipeline/overlay/overlay_renderer.h"

namespace edgefuse::bench {
namespace {

const cli::CommandSpec& bench_spec() {
  static const cli::CommandSpec spec{
      .name = "bench_overlay",
      .summary = "overlay cost per 1080p frame (copy, draw, preview, submit, recording), as a Markdown table",
      .usage = "[options]",
      .options =
          {
              runs_option("200", "timed runs per step"),
              warmup_option("20", "untimed runs per step first"),
              {.name = "detections",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "12",
               .description = "boxes drawn per frame",
               .min = 0,
               .max = 1000},
              {.name = "encode-frames",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "300",
               .description = "frames recorded to MP4 for the recording rows",
               .min = 1,
               .max = 100000},
          },
  };
  return spec;
}

struct MatHolder : DecodedFrame::Holder {
  cv::Mat pixels;
};

// A 1920x1080 NV12 frame of gradients and noise (in-gamut, like a camera's).
DecodedFrame make_frame() {
  constexpr int kWidth = 1920, kHeight = 1080;
  cv::Mat bgr(kHeight, kWidth, CV_8UC3);
  cv::randu(bgr, 0, 255);
  cv::GaussianBlur(bgr, bgr, {9, 9}, 3);
  cv::Mat i420;
  cv::cvtColor(bgr, i420, cv::COLOR_BGR2YUV_I420);
  auto holder = std::make_shared<MatHolder>();
  holder->pixels = i420.clone();
  const size_t luma = static_cast<size_t>(kWidth) * kHeight, quarter = luma / 4;
  uint8_t* uv = holder->pixels.ptr<uint8_t>(0) + luma;
  const uint8_t* u = i420.ptr<uint8_t>(0) + luma;
  for (size_t i = 0; i < quarter; ++i) {
    uv[2 * i] = u[i];
    uv[2 * i + 1] = u[quarter + i];
  }
  FramePlanes planes;
  planes.data[0] = holder->pixels.ptr<uint8_t>(0);
  planes.data[1] = planes.data[0] + luma;
  planes.stride[0] = planes.stride[1] = kWidth;
  DecodedFrame frame(std::move(holder), FramePixelFormat::kNV12, kWidth, kHeight, planes);
  frame.bt709 = true;
  return frame;
}

// Pedestrian-sized boxes spread over the frame, a few classes.
std::vector<Detection> make_detections(int count) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> x(0, 1800), y(0, 900), w(40, 120), h(100, 300);
  std::vector<Detection> detections;
  for (int i = 0; i < count; ++i) {
    Detection d;
    d.box.x1 = x(rng);
    d.box.y1 = y(rng);
    d.box.x2 = d.box.x1 + w(rng);
    d.box.y2 = d.box.y1 + h(rng);
    d.class_id = i % 4 == 3 ? 2 : 0;
    d.score = 0.5f + 0.04f * static_cast<float>(i % 10);
    detections.push_back(d);
  }
  return detections;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Times `step` (after `prepare`, untimed) runs+warmup times.
Samples time_step(int64_t runs, int64_t warmup, const std::function<void()>& prepare,
                  const std::function<void()>& step) {
  Samples samples;
  for (int64_t i = 0; i < runs + warmup; ++i) {
    prepare();
    const auto start = std::chrono::steady_clock::now();
    step();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (i >= warmup) samples.ms.push_back(ms);
  }
  return samples;
}

int run(const cli::ParsedArgs& args) {
  const int64_t runs = args.get_int("runs"), warmup = args.get_int("warmup");
  const int64_t encode_frames = args.get_int("encode-frames");
  const DecodedFrame frame = make_frame();
  const std::vector<Detection> detections = make_detections(static_cast<int>(args.get_int("detections")));
  const OverlayText text{"cam1", {"person", "bicycle", "car"}};
  const OverlayStats stats{29.97, 48.0};
  I420Image canvas;
  copy_to_i420(frame, canvas);

  std::printf("# overlay, 1920x1080 NV12, %zu detections, %s\n\n", detections.size(), compiler_description());
  std::printf("| step | ms per frame, median [min-max] |\n| --- | --- |\n");
  auto row = [](const char* name, const Samples& samples, int decimals = 3) {
    std::printf("| %s | %s |\n", name, latency_cell(samples, decimals).c_str());
    std::fflush(stdout);
  };
  row("copy NV12 -> I420 canvas", time_step(
                                      runs, warmup, [] {}, [&] { copy_to_i420(frame, canvas); }));
  row("draw boxes, labels, corner",
      time_step(
          runs, warmup, [&] { copy_to_i420(frame, canvas); }, [&] { draw_overlay(canvas, detections, text, stats); }));
  row("copy + draw (per recorded/viewed frame)", time_step(
                                                     runs, warmup, [] {},
                                                     [&] {
                                                       copy_to_i420(frame, canvas);
                                                       draw_overlay(canvas, detections, text, stats);
                                                     }));
  row("live view preview: downscale to 960 + JPEG q80",
      time_step(
          runs, warmup, [] {}, [&] { encode_jpeg(downscale_i420(canvas, 960), 80); }));

  const std::filesystem::path mp4 = std::filesystem::temp_directory_path() / "edgefuse_bench_overlay.mp4";
  // submit() as the pipeline sees it: frames offered faster than they are encoded, oldest dropped.
  {
    OverlayOptions options;
    options.mp4_path = mp4;
    options.labels = text.labels;
    Result<std::unique_ptr<OverlayOutput>> output = OverlayOutput::create(options);
    if (!output.is_ok()) {
      std::fprintf(stderr, "bench_overlay: %s\n", output.status().to_string().c_str());
      return 1;
    }
    const Samples submit = time_step(
        runs, warmup, [] {}, [&] { (*output)->submit(frame, detections, stats); });
    row("submit() on the caller (drop-oldest queue)", submit, 4);
    (void)(*output)->close();
  }
  // The recording path end to end: every frame copied, drawn and encoded (lossless queue).
  OverlayOptions options;
  options.mp4_path = mp4;
  options.labels = text.labels;
  options.lossless = true;
  Result<std::unique_ptr<OverlayOutput>> output = OverlayOutput::create(options);
  if (!output.is_ok()) {
    std::fprintf(stderr, "bench_overlay: %s\n", output.status().to_string().c_str());
    return 1;
  }
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < encode_frames; ++i) (*output)->submit(frame, detections, stats);
  const Status closed = (*output)->close();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const double cpu_ms = (cpu_seconds() - cpu_start) * 1000;
  if (!closed.is_ok()) {
    std::fprintf(stderr, "bench_overlay: %s\n", closed.to_string().c_str());
    return 1;
  }
  const double frames = static_cast<double>((*output)->counters().written);
  std::printf("| copy + draw + %s to MP4, wall (%.0f frames) | %.3f |\n", (*output)->encoder_name().c_str(), frames,
              wall_ms / frames);
  std::printf("| copy + draw + %s to MP4, CPU time, all threads | %.3f |\n", (*output)->encoder_name().c_str(),
              cpu_ms / frames);
  std::filesystem::remove(mp4);
  return 0;
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  int exit_code = 0;
  const std::optional<edgefuse::cli::ParsedArgs> args =
      edgefuse::bench::parse_bench_args(edgefuse::bench::bench_spec(), "bench_overlay", argc, argv, exit_code);
  if (!args) return exit_code;
  return edgefuse::bench::run(*args);
}
