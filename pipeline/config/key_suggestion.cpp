#include "pipeline/config/key_suggestion.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "runtime/status.h"

namespace edgefuse::config {

size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the dynamic-programming table at a time: row[j] = distance(a[0..i), b[0..j)).
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string suggest(std::string_view word, std::span<const std::string_view> candidates) {
  std::string_view best;
  size_t best_distance = 0;
  for (std::string_view candidate : candidates) {
    const size_t distance = edit_distance(word, candidate);
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (best.empty() || best_distance > std::max<size_t>(2, best.size() / 3)) return {};
  return make_message("did you mean \"", best, "\"?");
}

}  // namespace edgefuse::config
