// make_yolo_model yolov5n|yolov8n OUT.onnx [SIZE] [dynamic]: writes a YOLO-shaped network with
// random weights (tests/models/yolo_architectures.h) at SIZE x SIZE (default 640), for benchmarks of
// the runtime on those architectures (`bench_models --model OUT.onnx`, `edgefuse bench --model
// OUT.onnx`); with `dynamic`, its input's height and width declared symbolic, as an export with
// dynamic axes declares them.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/models/yolo_architectures.h"

int main(int argc, char** argv) {
  using namespace edgefuse::test;
  const std::string name = argc >= 3 ? argv[1] : "";
  const int size = argc >= 4 ? std::atoi(argv[3]) : 640;
  const bool dynamic = argc == 5 && std::string(argv[4]) == "dynamic";
  if ((name != "yolov5n" && name != "yolov8n") || (argc == 5 && !dynamic) || argc > 5 || size < 32 || size % 32 != 0) {
    std::fprintf(stderr, "usage: make_yolo_model yolov5n|yolov8n OUT.onnx [SIZE, a multiple of 32] [dynamic]\n");
    return 2;
  }
  YoloArchitecture architecture = name == "yolov5n" ? yolov5n(size) : yolov8n(size);
  architecture.symbolic_image_size = dynamic;
  const YoloModel model = build_yolo_model(architecture);
  std::ofstream out(argv[2], std::ios::binary);
  out << model.bytes;
  out.close();
  if (!out) {
    std::fprintf(stderr, "make_yolo_model: cannot write '%s'\n", argv[2]);
    return 1;
  }
  return 0;
}
