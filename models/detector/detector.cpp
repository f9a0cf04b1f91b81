#include "models/detector/detector.h"

#include <span>

#include "models/detect/blazeface_decode.h"
#include "models/detect/letterbox.h"
#include "models/detect/nms.h"
#include "models/detect/yolox_decode.h"
#include "models/detector/family.h"
#include "models/detector/preprocess.h"

namespace edgefuse {
namespace {

Status decode_error(std::string_view family, const std::string& error) {
  return invalid_model(family, " decoding: ", error);
}

Result<std::vector<Detection>> decode_yolox_outputs(std::span<const Tensor> outputs, int width, int height,
                                                    float score_threshold) {
  const Tensor& output = outputs[0];
  if (output.dtype() != DType::kF32 || output.rank() != 3 || output.dim(0) != 1) {
    return invalid_model("YOLOX output is ", output.desc().to_string(), ", expected f32 [1, cells, 5 + classes]");
  }
  DecodeResult decoded =
      decode_yolox(output.data<float>(), output.dim(1), output.dim(2), width, height, score_threshold);
  if (!decoded.ok()) return decode_error("YOLOX", decoded.error);
  return std::move(decoded.detections);
}

Result<std::vector<Detection>> decode_blazeface_outputs(std::span<const Tensor> outputs, int size,
                                                        float score_threshold) {
  std::vector<Shape> shapes;
  for (const Tensor& output : outputs) {
    if (output.dtype() != DType::kF32) return invalid_model("BlazeFace output is ", output.desc().to_string());
    shapes.push_back(output.shape());
  }
  EF_ASSIGN_OR_RETURN(BlazeFaceOutputs roles, find_blazeface_outputs(shapes));
  const std::vector<Anchor> anchors = blazeface_anchors(size);
  std::vector<Detection> detections;
  size_t first_anchor = 0;
  for (size_t head = 0; head < 2; ++head) {
    const Tensor& scores = outputs[roles.scores[head]];
    const Tensor& regressors = outputs[roles.regressors[head]];
    const auto count = static_cast<size_t>(scores.dim(1));
    DecodeResult decoded =
        decode_blazeface(scores.data<float>(), scores.dim(1), regressors.data<float>(), regressors.dim(2),
                         std::span<const Anchor>(anchors).subspan(first_anchor, count), score_threshold);
    if (!decoded.ok()) return decode_error("BlazeFace", decoded.error);
    detections.insert(detections.end(), std::make_move_iterator(decoded.detections.begin()),
                      std::make_move_iterator(decoded.detections.end()));
    first_anchor += count;
  }
  return detections;
}

}  // namespace

Detector::Detector(DetectorFamily family, Executor executor, DetectorOptions options, int input_width, int input_height)
    : family_(family),
      executor_(std::move(executor)),
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
  Result<InputSize> size =
      family == DetectorFamily::kYolox ? check_yolox_signature(*graph) : check_blazeface_signature(*graph);
  if (!size.is_ok()) return size.status();
  EF_ASSIGN_OR_RETURN(Executor executor, Executor::create(std::move(graph), options.executor));
  return Detector(family, std::move(executor), options, size->width, size->height);
}

ModelInputSpec Detector::input_spec() const {
  return family_ == DetectorFamily::kYolox ? yolox_input_spec(input_width_, input_height_)
                                           : blazeface_input_spec(input_width_);
}

Result<std::vector<Detection>> Detector::detect(const cv::Mat& bgr_image) {
  Result<PreprocessedImage> preprocessed = family_ == DetectorFamily::kYolox
                                               ? preprocess_yolox(bgr_image, input_width_, input_height_)
                                               : preprocess_blazeface(bgr_image, input_width_);
  if (!preprocessed.is_ok()) return preprocessed.status();
  return detect_input(preprocessed->input, preprocessed->letterbox, bgr_image.cols, bgr_image.rows);
}

Result<std::vector<Detection>> Detector::detect_input(const Tensor& input, const Letterbox& letterbox, int src_w,
                                                      int src_h) {
  const bool yolox = family_ == DetectorFamily::kYolox;
  EF_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, executor_.run(std::span<const Tensor>(&input, 1)));
  EF_ASSIGN_OR_RETURN(std::vector<Detection> detections,
                      yolox ? decode_yolox_outputs(outputs, input_width_, input_height_, options_.score_threshold)
                            : decode_blazeface_outputs(outputs, input_width_, options_.score_threshold));
  detections = yolox ? nms_per_class(std::move(detections), options_.iou_threshold, options_.max_detections)
                     : nms_class_agnostic(std::move(detections), options_.iou_threshold, options_.max_detections);
  unletterbox(detections, letterbox, src_w, src_h);
  return detections;
}

}  // namespace edgefuse
