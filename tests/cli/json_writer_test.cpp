#include "pipeline/json/json_writer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

namespace edgefuse::cli {
namespace {

TEST_CASE("json_quote escapes quotes, backslashes and control characters") {
  CHECK(json_quote("dog") == "\"dog\"");
  CHECK(json_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json_quote("line\nnext\ttab\r") == "\"line\\nnext\\ttab\\r\"");
  CHECK(json_quote(std::string("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
  CHECK(json_quote("caf\xc3\xa9") == "\"caf\xc3\xa9\"");  // UTF-8 passes through
  CHECK(json_quote("") == "\"\"");
}

TEST_CASE("JsonWriter places commas and colons in nested objects and arrays") {
  JsonWriter json;
  json.begin_object();
  json.key("name").value("x");
  json.key("n").value(3);
  json.key("ok").value(true);
  json.key("list").begin_array();
  json.value(1.25, 2).value(-0.5, 1);
  json.begin_array().end_array();
  json.begin_object().key("k").null().end_object();
  json.end_array();
  json.key("empty").begin_object().end_object();
  json.end_object();
  CHECK(json.complete());
  CHECK(json.str() == R"({"name":"x","n":3,"ok":true,"list":[1.25,-0.5,[],{"k":null}],"empty":{}})");
}

TEST_CASE("JsonWriter numbers: fixed decimals, non-finite as null") {
  JsonWriter json;
  json.begin_array();
  json.value(0.93456, 3).value(2.0, 0).value(std::nan(""), 2).value(std::numeric_limits<double>::infinity(), 2);
  json.value(int64_t{-9007199254740993});
  json.value(1e300, 1);
  json.end_array();
  const std::string text = json.str();
  CHECK(text.starts_with("[0.935,2,null,null,-9007199254740993,1"));
  CHECK(text.ends_with(".0]"));
  CHECK(text.size() > 300);
}

}  // namespace
}  // namespace edgefuse::cli
