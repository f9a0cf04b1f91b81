#include "runtime/op_table.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace edgefuse;

TEST_CASE("op table: one row per kind, names unique, name lookup round-trips") {
  std::set<std::string> names;
  for (const OpDef& def : op_table()) {
    CHECK((def.infer != nullptr));
    CHECK((def.reference != nullptr));
    CHECK(def.min_inputs <= def.max_inputs);
    CHECK(def.min_outputs <= def.max_outputs);
    CHECK(names.insert(def.name).second);
    auto kind = op_from_name(def.name);
    REQUIRE(kind.has_value());
    CHECK(*kind == def.kind);
  }
  CHECK(static_cast<int>(names.size()) == kOpCount);
  CHECK_FALSE(op_from_name("NotAnOp").has_value());
}
