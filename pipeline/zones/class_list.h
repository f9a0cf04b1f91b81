// The class lists of zones, lines, masks and object filters: the model's class ids an area or a
// rule concerns, where an empty list means every class.
#pragma once

#include <algorithm>
#include <vector>

namespace edgefuse {

inline bool class_listed(const std::vector<int>& class_ids, int class_id) {
  return class_ids.empty() || std::find(class_ids.begin(), class_ids.end(), class_id) != class_ids.end();
}

}  // namespace edgefuse
