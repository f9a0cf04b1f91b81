// Class label files: one name per line, line i naming class i (e.g. coco.names).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace edgefuse {

// Reads the names, trimming trailing whitespace (and '\r') from each line and dropping blank lines
// at the end of the file. nullopt when the file cannot be opened.
std::optional<std::vector<std::string>> read_labels(const std::string& path);

// The name of class_id, or "class_<id>" when it is out of range or its name is blank.
std::string label_for(const std::vector<std::string>& labels, int class_id);

}  // namespace edgefuse
