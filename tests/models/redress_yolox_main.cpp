// redress_yolox YOLOX.onnx yolov5|yolov8 OUT.onnx: writes YOLOX-nano re-dressed as a YOLOv5 or
// YOLOv8 export (tests/models/yolo_redress.h), for the CLI and daemon test scripts.
#include <cstdio>
#include <fstream>
#include <string>

#include "tests/models/yolo_redress.h"

int main(int argc, char** argv) {
  using edgefuse::test::RedressAs;
  const std::string family = argc == 4 ? argv[2] : "";
  if (family != "yolov5" && family != "yolov8") {
    std::fprintf(stderr, "usage: redress_yolox YOLOX.onnx yolov5|yolov8 OUT.onnx\n");
    return 2;
  }
  const std::string bytes =
      edgefuse::test::redress_yolox_file(argv[1], family == "yolov5" ? RedressAs::kYolov5 : RedressAs::kYolov8);
  if (bytes.empty()) {
    std::fprintf(stderr, "redress_yolox: '%s' is not a readable YOLOX-nano model\n", argv[1]);
    return 1;
  }
  std::ofstream out(argv[3], std::ios::binary);
  out << bytes;
  out.close();
  if (!out) {
    std::fprintf(stderr, "redress_yolox: cannot write '%s'\n", argv[3]);
    return 1;
  }
  return 0;
}
