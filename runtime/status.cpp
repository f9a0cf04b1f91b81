#include "runtime/status.h"

namespace edgefuse {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kInvalidModel:
      return "invalid model";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kIoError:
      return "i/o error";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return {code_, context + ": " + message_};
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

void assertion_failed(const char* expr, const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "edgefuse: assertion failed at %s:%d: %s%s%s\n", file, line, expr, message.empty() ? "" : ": ",
               message.c_str());
  std::abort();
}

}  // namespace edgefuse
