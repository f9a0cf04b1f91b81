#include "models/detector/detector.h"

#include <span>

#include "models/detect/blazeface_decode.h"
#include "models/detect/letterbox.h"
#include "models/detect/nms.h"
#include "models/detect/yolov5_decode.h"
#include "models/detect/yolov8_decode.h"
#include "models/detect/yolox_decode.h"
#include "models/detector/batching.h"
#include "models/detector/blazeface_rows.h"
#include "models/detector/family.h"
#include "models/detector/preprocess.h"
#include "models/detector/yolo_row_filter.h"

namespace edgefuse {
namespace {

Status decode_error(std::string_view family, const std::string& error) {
  return invalid_model(family, " decoding: ", error);
}

// Where element `item` of the batch starts in the single rank-3 output of a YOLO family (outputs
// hold a batch in their first dimension).
Result<const float*> yolo_output(std::span<const Tensor> outputs, int64_t item, const char* family,
                                 const char* expected) {
  const Tensor& output = outputs[0];
  if (output.dtype() != DType::kF32 || output.rank() != 3 || output.dim(0) <= item) {
    return invalid_model(family, " output is ", output.desc().to_string(), ", expected f32 ", expected);
  }
  return output.data<float>() + item * output.dim(1) * output.dim(2);
}

Result<std::vector<Detection>> decode_yolox_outputs(std::span<const Tensor> outputs, int64_t item, int width,
                                                    int height, float score_threshold) {
  EF_ASSIGN_OR_RETURN(const float* rows, yolo_output(outputs, item, "YOLOX", "[batch, cells, 5 + classes]"));
  DecodeResult decoded = decode_yolox(rows, outputs[0].dim(1), outputs[0].dim(2), width, height, score_threshold);
  if (!decoded.ok()) return decode_error("YOLOX", decoded.error);
  return std::move(decoded.detections);
}

Result<std::vector<Detection>> decode_yolov5_outputs(std::span<const Tensor> outputs, int64_t item,
                                                     float score_threshold) {
  EF_ASSIGN_OR_RETURN(const float* rows, yolo_output(outputs, item, "YOLOv5", "[batch, rows, 5 + classes]"));
  DecodeResult decoded = decode_yolov5(rows, outputs[0].dim(1), outputs[0].dim(2), score_threshold);
  if (!decoded.ok()) return decode_error("YOLOv5", decoded.error);
  return std::move(decoded.detections);
}

Result<std::vector<Detection>> decode_yolov8_outputs(std::span<const Tensor> outputs, int64_t item,
                                                     float score_threshold) {
  EF_ASSIGN_OR_RETURN(const float* channels, yolo_output(outputs, item, "YOLOv8", "[batch, 4 + classes, anchors]"));
  DecodeResult decoded = decode_yolov8(channels, outputs[0].dim(1), outputs[0].dim(2), score_threshold);
  if (!decoded.ok()) return decode_error("YOLOv8", decoded.error);
  return std::move(decoded.detections);
}

// `outputs` holds the merged rows (blazeface_rows.h).
Result<std::vector<Detection>> decode_blazeface_outputs(std::span<const Tensor> outputs, int64_t item, int size,
                                                        float score_threshold) {
  const Tensor& rows = outputs[0];
  if (outputs.size() != 1 || rows.dtype() != DType::kF32 || rows.rank() != 3 || rows.dim(0) <= item) {
    return invalid_model("BlazeFace rows are ", rows.desc().to_string(), ", expected f32 [batch, anchors, ",
                         kBlazeFaceRowChannels, "]");
  }
  const std::vector<Anchor> anchors = blazeface_anchors(size);
  DecodeResult decoded = decode_blazeface_rows(rows.data<float>() + item * rows.dim(1) * rows.dim(2), rows.dim(1),
                                               rows.dim(2), anchors, score_threshold);
  if (!decoded.ok()) return decode_error("BlazeFace", decoded.error);
  return std::move(decoded.detections);
}

}  // namespace

Detector::Detector(DetectorFamily family, std::unique_ptr<InferenceBackend> backend, DetectorOptions options,
                   int input_width, int input_height)
    : family_(family),
      backend_(std::move(backend)),
      options_(options),
      input_width_(input_width),
      input_height_(input_height) {}

Result<Detector> Detector::create(std::shared_ptr<const Graph> graph, DetectorFamily family,
                                  const DetectorOptions& options) {
  EF_ASSERT(graph != nullptr);
  if (!(options.score_threshold >= 0 && options.score_threshold <= 1)) {
    return invalid_argument("score threshold ", options.score_threshold, " is outside [0, 1]");
  }
  if (!(options.iou_threshold >= 0 && options.iou_threshold <= 1)) {
    return invalid_argument("IoU threshold ", options.iou_threshold, " is outside [0, 1]");
  }
  if (options.max_batch < 1) return invalid_argument("max batch ", options.max_batch, " is below 1");
  Result<InputSize> size = check_family_signature(*graph, family);
  if (!size.is_ok()) return size.status();
  ExecutorOptions executor = options.executor;
  if (options.max_batch > 1) {
    EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> batched, make_batch_dynamic(*graph));
    EF_RETURN_IF_ERROR(check_batch_equivalence(graph, batched, 2, options.executor));
    graph = std::move(batched);
    // Now known to be batch-separable: on several CPU threads a batch runs whole images per
    // thread (YOLOX-nano on 2 threads: 0.72x the time per image of one at a time, bench_batch).
    executor.batch_lanes = true;
  }
  GpuBackendOptions gpu = options.gpu;
  // On a GPU, the rows below the score threshold stay there and NMS runs among the others, so only
  // the rows of kept detections come back; decoding and NMS on the CPU then keep exactly those.
  if (family == DetectorFamily::kBlazeFace) {
    EF_ASSIGN_OR_RETURN(graph, merge_blazeface_heads(*graph));
    gpu.row_filter =
        blazeface_row_filter(size->width, options.score_threshold, options.iou_threshold, options.max_detections);
  }
  if (family != DetectorFamily::kBlazeFace) {
    gpu.row_filter = yolo_row_filter(family, size->width, size->height, options.score_threshold, options.iou_threshold,
                                     options.max_detections);
  }
  EF_ASSIGN_OR_RETURN(std::unique_ptr<InferenceBackend> backend,
                      create_inference_backend(std::move(graph), options.device, executor, gpu));
  return Detector(family, std::move(backend), options, size->width, size->height);
}

ModelInputSpec Detector::input_spec() const {
  switch (family_) {
    case DetectorFamily::kYolox:
      return yolox_input_spec(input_width_, input_height_);
    case DetectorFamily::kYolov5:
    case DetectorFamily::kYolov8:
      return ultralytics_input_spec(input_width_, input_height_);
    case DetectorFamily::kBlazeFace:
      break;
  }
  return blazeface_input_spec(input_width_);
}

Result<std::vector<Detection>> Detector::detect(const cv::Mat& bgr_image) {
  prepare();
  Result<PreprocessedImage> preprocessed = preprocess_image(bgr_image, input_spec());
  if (!preprocessed.is_ok()) return preprocessed.status();
  return detect_input(preprocessed->input, preprocessed->letterbox, bgr_image.cols, bgr_image.rows);
}

Result<std::vector<Detection>> Detector::detect_input(const Tensor& input, const Letterbox& letterbox, int src_w,
                                                      int src_h) {
  const SourceImage source{letterbox, src_w, src_h};
  EF_ASSIGN_OR_RETURN(std::vector<std::vector<Detection>> detections,
                      detect_batch(input, std::span<const SourceImage>(&source, 1)));
  return std::move(detections[0]);
}

Status Detector::check_batch(int64_t batch) const {
  if (batch < 1 || batch > options_.max_batch) {
    return invalid_argument("batch of ", batch, " images (max batch ", options_.max_batch, ")");
  }
  return Status::ok();
}

Result<std::vector<std::vector<Detection>>> Detector::detect_batch(const Tensor& inputs,
                                                                   std::span<const SourceImage> sources) {
  const auto batch = static_cast<int64_t>(sources.size());
  if (inputs.rank() < 1 || inputs.dim(0) != batch || batch < 1 || batch > options_.max_batch) {
    return invalid_argument("batch input ", inputs.desc().to_string(), " for ", batch, " images (max batch ",
                            options_.max_batch, ")");
  }
  EF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, backend_->run(std::span<const Tensor>(&inputs, 1)));
  return decode_batch(outputs, sources);
}

Result<std::vector<std::vector<Detection>>> Detector::detect_batch_filled(const InputFiller& fill,
                                                                          std::span<const SourceImage> sources) {
  const auto batch = static_cast<int64_t>(sources.size());
  EF_RETURN_IF_ERROR(check_batch(batch));
  const ModelInputSpec spec = input_spec();
  const Shape shape = spec.layout == TensorLayout::kNCHW ? Shape{batch, 3, spec.height, spec.width}
                                                         : Shape{batch, spec.height, spec.width, 3};
  const TensorDesc desc{DType::kF32, shape};
  EF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, backend_->run_filled(std::span<const TensorDesc>(&desc, 1), fill));
  return decode_batch(outputs, sources);
}

Result<std::vector<Detection>> Detector::decode_item(std::span<const Tensor> outputs, int64_t item) const {
  const float threshold = options_.score_threshold;
  switch (family_) {
    case DetectorFamily::kYolox:
      return decode_yolox_outputs(outputs, item, input_width_, input_height_, threshold);
    case DetectorFamily::kYolov5:
      return decode_yolov5_outputs(outputs, item, threshold);
    case DetectorFamily::kYolov8:
      return decode_yolov8_outputs(outputs, item, threshold);
    case DetectorFamily::kBlazeFace:
      break;
  }
  return decode_blazeface_outputs(outputs, item, input_width_, threshold);
}

Result<std::vector<std::vector<Detection>>> Detector::decode_batch(std::span<const Tensor> outputs,
                                                                   std::span<const SourceImage> sources) const {
  std::vector<std::vector<Detection>> results;
  for (int64_t item = 0; item < static_cast<int64_t>(sources.size()); ++item) {
    EF_ASSIGN_OR_RETURN(std::vector<Detection> detections, decode_item(outputs, item));
    detections = family_ == DetectorFamily::kBlazeFace
                     ? nms_class_agnostic(std::move(detections), options_.iou_threshold, options_.max_detections)
                     : nms_per_class(std::move(detections), options_.iou_threshold, options_.max_detections);
    const SourceImage& source = sources[static_cast<size_t>(item)];
    unletterbox(detections, source.letterbox, source.width, source.height);
    results.push_back(std::move(detections));
  }
  return results;
}

}  // namespace edgefuse
