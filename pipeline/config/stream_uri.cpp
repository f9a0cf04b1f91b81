#include "pipeline/config/stream_uri.h"

#include <algorithm>
#include <cctype>
#include <system_error>

namespace edgefuse::config {
namespace {

constexpr std::string_view kSupported = "file://, rtsp://, rtsps://, v4l2:// and test:// (or a plain file path)";

bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

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
  if (uri.empty()) return invalid_argument("empty uri");
  const size_t separator = uri.find("://");
  const bool has_scheme = separator != std::string_view::npos && separator > 0 &&
                          std::all_of(uri.begin(), uri.begin() + static_cast<ptrdiff_t>(separator), is_scheme_char);
  if (!has_scheme) {
    const std::filesystem::path path(uri);
    return existing_file_uri(std::filesystem::absolute(base_dir / path).lexically_normal());
  }
  const std::string_view scheme = uri.substr(0, separator);
  const std::string_view rest = uri.substr(separator + 3);
  if (scheme == "file") {
    if (!rest.starts_with('/')) {
      return invalid_argument(
          "file:// needs an absolute path (file:///path/video.mp4); write a relative path "
          "without file://");
    }
    return existing_file_uri(std::filesystem::path(rest).lexically_normal());
  }
  if (scheme == "rtsp" || scheme == "rtsps") {
    if (rest.empty() || rest.starts_with('/')) return invalid_argument("rtsp uri without a host: \"", uri, "\"");
    return std::string(uri);
  }
  if (scheme == "v4l2") {
    if (!rest.starts_with("/dev/") || rest.size() <= 5) {
      return invalid_argument("v4l2 uri must name a device, e.g. v4l2:///dev/video0, got \"", uri, "\"");
    }
    return std::string(uri);
  }
  if (scheme == "test") {
    const bool word = std::all_of(rest.begin(), rest.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
    });
    if (!word) return invalid_argument("test:// pattern must be a word like smpte or ball, got \"", rest, "\"");
    return std::string(uri);
  }
  return invalid_argument("unsupported uri scheme \"", scheme, "://\"; supported: ", kSupported);
}

}  // namespace edgefuse::config
