#include "models/detect/labels.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace edgefuse;

TEST_CASE("read_labels reads one name a line, trims, and drops trailing blank lines") {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "edgefuse_labels_test.names";
  {
    std::ofstream file(path, std::ios::binary);
    file << "person\r\ntraffic light  \n\ndog\n\n\n";
  }
  const auto labels = read_labels(path.string());
  std::filesystem::remove(path);
  REQUIRE(labels.has_value());
  REQUIRE(labels->size() == 4);
  CHECK((*labels)[0] == "person");
  CHECK((*labels)[1] == "traffic light");
  CHECK((*labels)[2].empty());
  CHECK((*labels)[3] == "dog");

  CHECK(label_for(*labels, 0) == "person");
  CHECK(label_for(*labels, 3) == "dog");
  CHECK(label_for(*labels, 2) == "class_2");  // blank name
  CHECK(label_for(*labels, 4) == "class_4");
  CHECK(label_for(*labels, -1) == "class_-1");
}

TEST_CASE("read_labels reports a missing file") {
  CHECK_FALSE(read_labels("/nonexistent/edgefuse/coco.names").has_value());
}
