#include "pipeline/config/diagnostics.h"

#include <algorithm>

#include "pipeline/config/yaml_tree.h"
#include "pipeline/video/stream_credentials.h"

namespace edgefuse::config {

void Diagnostics::add(std::string_view path, int line, std::string_view message, std::string_view hint) {
  std::string text = located_message(origin_, path, line, message);
  if (!hint.empty()) text += make_message("; ", hint);
  problems_.push_back(Problem{line, std::move(text)});
}

Status Diagnostics::to_status() const {
  if (problems_.empty()) return Status::ok();
  std::vector<const Problem*> ordered;
  for (const Problem& problem : problems_) ordered.push_back(&problem);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Problem* a, const Problem* b) { return a->line < b->line; });
  std::string text;
  for (size_t i = 0; i < ordered.size() && i < kMaxReported; ++i) {
    if (!text.empty()) text += '\n';
    text += ordered[i]->text;
  }
  if (ordered.size() > kMaxReported)
    text += make_message("\n... and ", ordered.size() - kMaxReported, " more problems");
  return invalid_argument(scrub_secrets(text));  // a value quoted in full may hold a password
}

}  // namespace edgefuse::config
