// edgefuse detect: runs a detector (YOLOX, YOLOv5, YOLOv8 or BlazeFace) on one image and prints the detections
// in source-image pixels, as text lines or one JSON object.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <opencv2/imgcodecs.hpp>

#include "models/detect/labels.h"
#include "models/detector/detector.h"
#include "pipeline/cli/commands.h"
#include "pipeline/cli/common.h"
#include "pipeline/json/detection_json.h"
#include "pipeline/json/json_writer.h"

namespace edgefuse::cli {
namespace {

// --labels when given; else coco.names beside a YOLOX model, "face" for BlazeFace, or no names
// (label_for then prints class ids).
Result<std::vector<std::string>> class_labels(const ParsedArgs& args, DetectorFamily family) {
  if (args.has("labels")) {
    const std::string& path = args.get("labels");
    std::optional<std::vector<std::string>> labels = read_labels(path);
    if (!labels) return Status(StatusCode::kNotFound, make_message("cannot read labels file '", path, "'"));
    return std::move(*labels);
  }
  if (family == DetectorFamily::kBlazeFace) return std::vector<std::string>{"face"};
  const std::filesystem::path beside_model = std::filesystem::path(args.get("model")).parent_path() / "coco.names";
  std::error_code error;
  if (std::filesystem::is_regular_file(beside_model, error)) {
    if (std::optional<std::vector<std::string>> labels = read_labels(beside_model.string())) return std::move(*labels);
  }
  return std::vector<std::string>{};
}

// 8-bit BGR, as the detector expects. Checks the file first: OpenCV would only log a warning.
Result<cv::Mat> read_image(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return Status(StatusCode::kNotFound, make_message("image file '", path, "' not found"));
  }
  cv::Mat image = cv::imread(path, cv::IMREAD_COLOR);
  if (image.empty()) return io_error("cannot read image '", path, "' (not an image OpenCV can decode)");
  return image;
}

void print_text(const std::vector<Detection>& detections, const std::vector<std::string>& labels) {
  for (const Detection& detection : detections) {
    const Box& box = detection.box;
    std::printf("%s %.3f %.1f %.1f %.1f %.1f\n", label_for(labels, detection.class_id).c_str(), detection.score, box.x1,
                box.y1, box.x2, box.y2);
  }
}

struct DetectReport {
  const ParsedArgs& args;
  DetectorFamily family;
  const cv::Mat& image;
  const std::vector<Detection>& detections;
  const std::vector<std::string>& labels;
  double inference_ms;
  std::string device;  // what ran the model
};

std::string json_report(const DetectReport& report) {
  JsonWriter json;
  json.begin_object();
  json.key("image").value(report.args.get("image"));
  json.key("model").value(report.args.get("model"));
  json.key("family").value(family_name(report.family));
  json.key("width").value(report.image.cols).key("height").value(report.image.rows);
  json.key("detections");
  write_detections(json, report.detections, report.labels);
  json.key("inference_ms").value(report.inference_ms, 3);
  json.key("device").value(report.device);
  json.end_object();
  return json.str();
}

}  // namespace

const CommandSpec& detect_spec() {
  static const CommandSpec spec{
      .name = "detect",
      .summary = "detect objects (YOLOX, YOLOv5, YOLOv8) or faces (BlazeFace) in an image",
      .usage = "--model FILE --image FILE [options]",
      .options =
          {
              model_option(),
              input_size_option(),
              {.name = "image",
               .value_name = "FILE",
               .description = "image to read (any format OpenCV reads)",
               .required = true},
              {.name = "family",
               .value_name = "NAME",
               .description =
                   "detector family: yolox, yolov5, yolov8 or blazeface; recognised from the model when left out"},
              {.name = "labels",
               .value_name = "FILE",
               .description = "class names, one a line; default: coco.names beside a YOLOX model, 'face' for "
                              "BlazeFace, else class ids"},
              {.name = "score",
               .type = OptionType::kFloat,
               .value_name = "X",
               .default_value = "0.3",
               .description = "minimum detection score",
               .min = 0,
               .max = 1},
              {.name = "iou",
               .type = OptionType::kFloat,
               .value_name = "X",
               .default_value = "0.45",
               .description = "IoU above which per-class NMS drops the lower-scoring box",
               .min = 0,
               .max = 1},
              threads_option(),
              reference_option(),
              no_fuse_option(),
              device_option(),
              precision_option(),
              {.name = "json", .type = OptionType::kFlag, .description = "print one JSON object instead of text"},
          },
      .notes =
          "Text output: one line per detection, best first: LABEL SCORE X1 Y1 X2 Y2 (source-image pixels;\n"
          "labels may contain spaces, the last five fields are numbers).\n"
          "JSON output: {\"image\", \"model\", \"family\", \"width\", \"height\", \"detections\": [{\"label\", "
          "\"class_id\",\n\"score\", \"box\": [x1, y1, x2, y2], \"keypoints\" (BlazeFace)}], "
          "\"inference_ms\",\n\"device\"}.",
  };
  return spec;
}

Status run_detect(const ParsedArgs& args) {
  EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> graph, load_detector_model(args.get("model"), args));
  EF_ASSIGN_OR_RETURN(const cv::Mat image, read_image(args.get("image")));

  Result<DetectorFamily> family = args.has("family") ? parse_family(args.get("family")) : recognise_family(*graph);
  if (!family.is_ok()) {
    const std::string context = args.has("family") ? "--family" : make_message("model '", args.get("model"), "'");
    return family.status().with_context(context);
  }
  EF_ASSIGN_OR_RETURN(std::vector<std::string> labels, class_labels(args, *family));

  EF_RETURN_IF_ERROR(optimize_model(*graph, args).status());
  DetectorOptions options;
  options.score_threshold = static_cast<float>(args.get_float("score"));
  options.iou_threshold = static_cast<float>(args.get_float("iou"));
  options.executor = executor_options(args, true);
  EF_ASSIGN_OR_RETURN(options.device, device_from_args(args));
  EF_ASSIGN_OR_RETURN(options.gpu, gpu_options_from_args(args));
  Result<Detector> detector = Detector::create(graph, *family, options);
  if (!detector.is_ok()) return detector.status().with_context(make_message("model '", args.get("model"), "'"));

  const auto start = std::chrono::steady_clock::now();
  EF_ASSIGN_OR_RETURN(std::vector<Detection> detections, detector->detect(image));
  const double inference_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::stable_sort(detections.begin(), detections.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });

  if (args.flag("json")) {
    std::cout << json_report({args, *family, image, detections, labels, inference_ms, detector->device_description()})
              << "\n";
  } else {
    print_text(detections, labels);
  }
  return Status::ok();
}

}  // namespace edgefuse::cli
