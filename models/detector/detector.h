// A detector: letterbox preprocessing for the model's family, the runtime, decoding and NMS.
// Give it a BGR image (OpenCV's layout), get detections in that image's pixel coordinates.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "models/detect/detection.h"
#include "models/detect/input_spec.h"
#include "models/detect/letterbox.h"
#include "runtime/cuda/inference_backend.h"
#include "runtime/executor.h"
#include "runtime/graph.h"

namespace edgefuse {

// How a model's outputs decode into boxes, and what input it takes (models/detect/input_spec.h).
enum class DetectorFamily { kYolox, kYolov5, kYolov8, kBlazeFace };
inline constexpr DetectorFamily kDetectorFamilies[] = {DetectorFamily::kYolox, DetectorFamily::kYolov5,
                                                       DetectorFamily::kYolov8, DetectorFamily::kBlazeFace};

std::string_view family_name(DetectorFamily family);         // "yolox", "yolov5", "yolov8", "blazeface"
Result<DetectorFamily> parse_family(std::string_view name);  // inverse of family_name
// Recognises the family from the graph's inputs and outputs (shapes, counts); error when unsure.
Result<DetectorFamily> recognise_family(const Graph& graph);

struct DetectorOptions {
  float score_threshold = 0.3f;
  float iou_threshold = 0.45f;  // NMS: per class for the YOLO families, across classes for BlazeFace (one class)
  int max_detections = 300;
  // Images per run. Above 1 the graph's batch is made dynamic (models/detector/batching.h) and
  // checked against one-by-one runs when the detector is created; create fails if it differs.
  int max_batch = 1;
  ExecutorOptions executor;  // CPU: threads, reference kernels
  InferenceDevice device = InferenceDevice::kCpu;
  GpuBackendOptions gpu;  // fp16 storage, CUDA graphs
};

class Detector {
 public:
  static Result<Detector> create(std::shared_ptr<const Graph> graph, DetectorFamily family,
                                 const DetectorOptions& options = {});

  // Runs on an 8-bit, 3-channel BGR image of any size.
  Result<std::vector<Detection>> detect(const cv::Mat& bgr_image);

  // What the model's input tensor holds, for preprocessing done elsewhere (decoded video frames).
  ModelInputSpec input_spec() const;
  // Runs on an input already preprocessed to input_spec() from a src_w x src_h image placed by
  // `letterbox`; boxes come back in that image's pixels.
  Result<std::vector<Detection>> detect_input(const Tensor& input, const Letterbox& letterbox, int src_w, int src_h);

  // Where each image of a batch came from: its letterbox in the input and its size.
  struct SourceImage {
    Letterbox letterbox;
    int width = 0, height = 0;
  };
  // Runs inputs [k, ...] (k = sources.size(), 1..max_batch(), each element preprocessed to
  // input_spec()) in one pass; detections per image, in its pixels.
  Result<std::vector<std::vector<Detection>>> detect_batch(const Tensor& inputs, std::span<const SourceImage> sources);
  // The same with the batch's input written in place by `fill` (InferenceBackend::run_filled): on a
  // GPU backend device memory, so preprocessing can run there too. Slot k of the input is
  // sources[k]'s image.
  Result<std::vector<std::vector<Detection>>> detect_batch_filled(const InputFiller& fill,
                                                                  std::span<const SourceImage> sources);
  // A run is coming (an image being preprocessed): the backend gets ready meanwhile
  // (InferenceBackend::prepare: the CPU wakes its worker threads). Safe from any thread.
  void prepare() { backend_->prepare(); }
  // Whether the model runs on a GPU (fill then writes device memory).
  bool on_gpu() const { return backend_->on_gpu(); }
  int max_batch() const { return options_.max_batch; }

  DetectorFamily family() const { return family_; }
  int input_width() const { return input_width_; }
  int input_height() const { return input_height_; }
  // Where the model runs, for logs ("cpu (4 threads)", "cuda:0 NVIDIA H200").
  std::string device_description() const { return backend_->description(); }

 private:
  Detector(DetectorFamily family, std::unique_ptr<InferenceBackend> backend, DetectorOptions options, int input_width,
           int input_height);
  Status check_batch(int64_t batch) const;
  // The family's decoding of batch element `item` of a run's outputs (before NMS).
  Result<std::vector<Detection>> decode_item(std::span<const Tensor> outputs, int64_t item) const;
  // Decodes, NMS and unletterboxes each image of a run's outputs.
  Result<std::vector<std::vector<Detection>>> decode_batch(std::span<const Tensor> outputs,
                                                           std::span<const SourceImage> sources) const;

  DetectorFamily family_;
  std::unique_ptr<InferenceBackend> backend_;
  DetectorOptions options_;
  int input_width_;
  int input_height_;
};

}  // namespace edgefuse
