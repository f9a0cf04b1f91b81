// Small POSIX file helpers for the spool: whole-file reads and complete writes, retrying on EINTR.
#pragma once

#include <filesystem>
#include <string>

#include "runtime/status.h"

namespace edgefuse {

// Reads the whole file; an absent file reads as empty when `missing_ok`.
Status read_whole_file(const std::filesystem::path& path, std::string& out, bool missing_ok);

// Writes all of `bytes` to `fd`; `path` names the file in the error.
Status write_all(int fd, std::string_view bytes, const std::filesystem::path& path);

}  // namespace edgefuse
