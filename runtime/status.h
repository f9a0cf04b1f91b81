// Error handling for bad input: a Status carries a code and a message that names
// what went wrong and where. Programmer errors use EF_ASSERT instead.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace edgefuse {

enum class StatusCode { kOk, kInvalidArgument, kInvalidModel, kUnsupported, kNotFound, kIoError, kInternal };

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is prefixed with `context: `.
  Status with_context(const std::string& context) const;
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Builds a message from streamable parts: make_message("axis ", axis, " out of range").
template <typename... Parts>
std::string make_message(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <typename... Parts>
Status invalid_argument(const Parts&... parts) {
  return {StatusCode::kInvalidArgument, make_message(parts...)};
}
template <typename... Parts>
Status invalid_model(const Parts&... parts) {
  return {StatusCode::kInvalidModel, make_message(parts...)};
}
template <typename... Parts>
Status unsupported(const Parts&... parts) {
  return {StatusCode::kUnsupported, make_message(parts...)};
}
template <typename... Parts>
Status io_error(const Parts&... parts) {
  return {StatusCode::kIoError, make_message(parts...)};
}

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : state_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  std::variant<T, Status> state_;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line, const std::string& message);

}  // namespace edgefuse

#define EF_RETURN_IF_ERROR(expr)                \
  do {                                          \
    ::edgefuse::Status ef_status_ = (expr);     \
    if (!ef_status_.is_ok()) return ef_status_; \
  } while (0)

#define EF_CONCAT_INNER(a, b) a##b
#define EF_CONCAT(a, b) EF_CONCAT_INNER(a, b)
// EF_ASSIGN_OR_RETURN(auto x, make_x()); returns the Status when make_x() failed.
#define EF_ASSIGN_OR_RETURN(lhs, expr)                                                           \
  auto EF_CONCAT(ef_result_, __LINE__) = (expr);                                                 \
  if (!EF_CONCAT(ef_result_, __LINE__).is_ok()) return EF_CONCAT(ef_result_, __LINE__).status(); \
  lhs = std::move(EF_CONCAT(ef_result_, __LINE__)).value()

// Programmer errors: always checked, report file and line, abort.
#define EF_ASSERT(cond, ...)                                                                 \
  do {                                                                                       \
    if (!(cond))                                                                             \
      ::edgefuse::assertion_failed(#cond, __FILE__, __LINE__,                                \
                                   ::edgefuse::make_message("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
