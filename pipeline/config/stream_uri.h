// Stream source uris: which forms the daemon accepts and how a config's value is normalised.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "runtime/status.h"

namespace edgefuse::config {

// Accepts file:///abs/path, a plain path (relative to base_dir), rtsp://host..., rtsps://host...,
// v4l2:///dev/<device>, test:// or test://<pattern>. Returns the uri with plain paths turned into
// file:///abs/path; a file:// source must exist. The error message is the problem alone (no key path).
Result<std::string> normalize_stream_uri(std::string_view uri, const std::filesystem::path& base_dir);

// "file", "rtsp", ...: the scheme of a normalised uri.
std::string_view uri_scheme(std::string_view normalized_uri);

// "rtsp|rtsps" -> "rtsp:// and rtsps://".
std::string describe_schemes(std::string_view bar_separated_schemes);

}  // namespace edgefuse::config
