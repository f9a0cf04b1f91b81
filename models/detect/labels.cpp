#include "models/detect/labels.h"

#include <fstream>

namespace edgefuse {

std::optional<std::vector<std::string>> read_labels(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::vector<std::string> labels;
  std::string line;
  while (std::getline(file, line)) {
    const size_t end = line.find_last_not_of(" \t\r\n");
    labels.push_back(end == std::string::npos ? std::string() : line.substr(0, end + 1));
  }
  while (!labels.empty() && labels.back().empty()) labels.pop_back();
  return labels;
}

std::string label_for(const std::vector<std::string>& labels, int class_id) {
  if (class_id >= 0 && static_cast<size_t>(class_id) < labels.size() && !labels[class_id].empty()) {
    return labels[class_id];
  }
  return "class_" + std::to_string(class_id);
}

}  // namespace edgefuse
