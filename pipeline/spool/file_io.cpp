// POSIX file helpers for the spool.
#include "pipeline/spool/file_io.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace edgefuse {

Status read_whole_file(const std::filesystem::path& path, std::string& out, bool missing_ok) {
  out.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (missing_ok && errno == ENOENT) return Status::ok();
    return io_error(path.string(), ": cannot open: ", std::strerror(errno));
  }
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int read_errno = errno;
      ::close(fd);
      return io_error(path.string(), ": read failed: ", std::strerror(read_errno));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return Status::ok();
}

Status write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(path.string(), ": write failed: ", std::strerror(errno));
    written += static_cast<size_t>(n);
  }
  return Status::ok();
}

}  // namespace edgefuse
