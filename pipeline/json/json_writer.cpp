#include "pipeline/json/json_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "runtime/status.h"

namespace edgefuse {

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void JsonWriter::before_value() {
  if (scopes_.empty()) {
    EF_ASSERT(out_.empty(), "JsonWriter: a document holds one top-level value");
    return;
  }
  if (scopes_.back() == Scope::kObject) {
    EF_ASSERT(key_pending_, "JsonWriter: an object member needs a key before its value");
    key_pending_ = false;
    return;
  }
  if (scope_has_items_) out_ += ',';
  scope_has_items_ = true;
}

void JsonWriter::open(Scope scope, char bracket) {
  before_value();
  out_ += bracket;
  scopes_.push_back(scope);
  scope_has_items_ = false;
}

void JsonWriter::close(Scope scope, char bracket) {
  EF_ASSERT(!scopes_.empty() && scopes_.back() == scope && !key_pending_, "JsonWriter: unbalanced '", bracket, "'");
  scopes_.pop_back();
  out_ += bracket;
  scope_has_items_ = true;  // the closed scope was an item of its parent
}

JsonWriter& JsonWriter::begin_object() {
  open(Scope::kObject, '{');
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  close(Scope::kObject, '}');
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  open(Scope::kArray, '[');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close(Scope::kArray, ']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  EF_ASSERT(!scopes_.empty() && scopes_.back() == Scope::kObject && !key_pending_, "JsonWriter: key '", name,
            "' outside an object or after another key");
  if (scope_has_items_) out_ += ',';
  scope_has_items_ = true;
  out_ += json_quote(name);
  out_ += ':';
  key_pending_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ += json_quote(text);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(double number, int decimals) {
  if (!std::isfinite(number)) return null();
  before_value();
  // Fixed notation of any finite double fits: at most 309 integer digits, sign, point, decimals.
  char text[400];
  const auto [end, error] =
      std::to_chars(text, text + sizeof(text), number, std::chars_format::fixed, std::clamp(decimals, 0, 17));
  EF_ASSERT(error == std::errc(), "JsonWriter: cannot format ", number);
  out_.append(text, end);
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

}  // namespace edgefuse
