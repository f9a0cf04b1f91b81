#include "models/onnx/external_data.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>

namespace edgefuse {

namespace {

namespace fs = std::filesystem;

Result<uint64_t> parse_size(const std::string& key, const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end) {
    return invalid_model("external data ", key, " '", text, "' is not a non-negative integer");
  }
  return value;
}

// True when `path` equals `root` or lies below it (both canonical).
bool is_within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // trailing separator of root
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

// Resolves `location` under `model_dir`, refusing anything that could reach outside it.
Result<fs::path> resolve_location(const std::string& location, const std::string& model_dir) {
  if (location.empty()) return invalid_model("external data location is empty");
  if (location.find('\0') != std::string::npos) return invalid_model("external data location contains a NUL byte");
  const fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    return invalid_model("external data location '", location,
                         "' is an absolute path; it must be relative to the "
                         "model folder");
  }
  for (const fs::path& part : relative) {
    if (part == "..") {
      return invalid_model("external data location '", location,
                           "' contains '..'; it must stay inside the model "
                           "folder");
    }
  }
  std::error_code error;
  const fs::path root = fs::weakly_canonical(fs::absolute(model_dir, error), error);
  if (error) return io_error("cannot resolve model folder '", model_dir, "': ", error.message());
  const fs::path resolved = fs::weakly_canonical(root / relative, error);
  if (error) return io_error("cannot resolve external data location '", location, "': ", error.message());
  if (!is_within(resolved, root)) {
    return invalid_model("external data location '", location, "' resolves to '", resolved.string(),
                         "', outside the model folder '", root.string(), "' (symbolic link?)");
  }
  return resolved;
}

}  // namespace

Status read_external_data(const onnx::TensorProto& proto, const std::string& model_dir, size_t expected_bytes,
                          std::string& out) {
  if (model_dir.empty()) {
    return invalid_model("uses external data, but the model was given without a folder to read it from");
  }
  std::optional<std::string> location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      EF_ASSIGN_OR_RETURN(offset, parse_size("offset", entry.value()));
    } else if (entry.key() == "length") {
      EF_ASSIGN_OR_RETURN(length, parse_size("length", entry.value()));
    } else if (entry.key() != "checksum") {
      return invalid_model("unknown external data key '", entry.key(), "'");
    }
  }
  if (!location) return invalid_model("external data has no 'location'");
  EF_ASSIGN_OR_RETURN(const fs::path path, resolve_location(*location, model_dir));

  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return invalid_model("external data file '", *location, "' does not exist or is not a regular file");
  }
  const uint64_t file_size = fs::file_size(path, error);
  if (error) return io_error("cannot stat external data file '", *location, "': ", error.message());
  if (offset > file_size) {
    return invalid_model("external data offset ", offset, " is beyond the end of '", *location, "' (", file_size,
                         " bytes)");
  }
  const uint64_t available = file_size - offset;
  const uint64_t size = length.value_or(available);
  if (size > available) {
    return invalid_model("external data range offset ", offset, " length ", size, " is beyond the end of '", *location,
                         "' (", file_size, " bytes)");
  }
  if (size != expected_bytes) {
    return invalid_model("external data has ", size, " bytes, the tensor's dims need ", expected_bytes);
  }

  std::ifstream file(path, std::ios::binary);
  if (!file) return io_error("cannot open external data file '", *location, "'");
  out.resize(size);
  file.seekg(static_cast<std::streamoff>(offset));
  file.read(out.data(), static_cast<std::streamsize>(size));
  if (!file || static_cast<uint64_t>(file.gcount()) != size) {
    return io_error("short read of ", size, " bytes at offset ", offset, " from '", *location, "'");
  }
  return Status::ok();
}

}  // namespace edgefuse
