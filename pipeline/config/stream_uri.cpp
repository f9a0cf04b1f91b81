#include "pipeline/config/stream_uri.h"

#include <system_error>

#include "pipeline/video/source_uri.h"

namespace edgefuse::config {
namespace {

Result<std::string> existing_file_uri(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return invalid_argument("video file not found: ", path.string());
  }
  return "file://" + path.string();
}

}  // namespace

std::string_view uri_scheme(std::string_view normalized_uri) {
  const size_t end = normalized_uri.find("://");
  return end == std::string_view::npos ? std::string_view{} : normalized_uri.substr(0, end);
}

std::string describe_schemes(std::string_view bar_separated_schemes) {
  std::string text;
  std::string_view rest = bar_separated_schemes;
  while (true) {
    const size_t bar = rest.find('|');
    text += make_message(rest.substr(0, bar), "://");
    if (bar == std::string_view::npos) return text;
    text += " and ";
    rest.remove_prefix(bar + 1);
  }
}

Result<std::string> normalize_stream_uri(std::string_view uri, const std::filesystem::path& base_dir) {
  EF_ASSIGN_OR_RETURN(const SourceAddress address, parse_source_uri(uri));
  if (address.kind != SourceKind::kFile) return std::string(uri);
  const std::filesystem::path path(address.location);
  return existing_file_uri((path.is_absolute() ? path : std::filesystem::absolute(base_dir / path)).lexically_normal());
}

}  // namespace edgefuse::config
