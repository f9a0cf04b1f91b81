// Credentials and the operations sections: passwords from the uri, a key, a file or the environment,
// one way only, never quoted in an error; mqtt and http sections switch their outputs on.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "pipeline/config/config.h"
#include "pipeline/video/stream_credentials.h"
#include "tests/config/config_test_folder.h"

using namespace edgefuse;
using edgefuse::test::ConfigFolder;

namespace {

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

std::string camera_config(std::string_view uri, std::string_view extra_keys = "") {
  return std::string("models:\n  - name: det\n    path: model.onnx\nstreams:\n  - name: cam\n    uri: \"") +
         std::string(uri) + "\"\n    model: det\n" + std::string(extra_keys);
}

}  // namespace

TEST_CASE("credentials in the uri move out of it") {
  const ConfigFolder folder;
  Result<DaemonConfig> config = folder.parse(camera_config("rtsp://john.doe:p%40ss:w0rd@10.1.2.3:554/live"));
  REQUIRE(config.is_ok());
  CHECK(config->streams[0].uri == "rtsp://10.1.2.3:554/live");
  CHECK(config->streams[0].username == "john.doe");
  CHECK(config->streams[0].password == "p@ss:w0rd");
  // The password is now scrubbed from anything logged.
  CHECK(scrub_secrets("got p@ss:w0rd back") == "got *** back");
}

TEST_CASE("a password comes from a key, a file or an environment variable") {
  const ConfigFolder folder;
  SUBCASE("key") {
    Result<DaemonConfig> config =
        folder.parse(camera_config("rtsp://cam/live", "    username: viewer\n    password: \"a/b@c\"\n"));
    REQUIRE(config.is_ok());
    CHECK(config->streams[0].username == "viewer");
    CHECK(config->streams[0].password == "a/b@c");
  }
  SUBCASE("file, trailing newline dropped") {
    folder.write("camera.secret", "from-a-file:%/\n");
    Result<DaemonConfig> config = folder.parse(camera_config("rtsp://cam/live", "    password-file: camera.secret\n"));
    REQUIRE(config.is_ok());
    CHECK(config->streams[0].password == "from-a-file:%/");
  }
  SUBCASE("environment") {
    setenv("EDGEFUSE_TEST_CAMERA_PASSWORD", "from-the-env@1", 1);
    Result<DaemonConfig> config =
        folder.parse(camera_config("rtsp://cam/live", "    password-env: EDGEFUSE_TEST_CAMERA_PASSWORD\n"));
    unsetenv("EDGEFUSE_TEST_CAMERA_PASSWORD");
    REQUIRE(config.is_ok());
    CHECK(config->streams[0].password == "from-the-env@1");
  }
}

TEST_CASE("credential mistakes are errors that never quote a password") {
  const ConfigFolder folder;
  SUBCASE("two ways at once") {
    folder.write("camera.secret", "hunter2-file");
    const std::string message =
        folder.error(camera_config("rtsp://cam/live", "    password: hunter2-key\n    password-file: camera.secret\n"));
    CHECK(contains(message, "one way only"));
    CHECK(!contains(message, "hunter2"));
  }
  SUBCASE("uri and keys") {
    const std::string message = folder.error(camera_config("rtsp://u:hunter2-uri@cam/live", "    username: u\n"));
    CHECK(contains(message, "streams[0].uri"));
    CHECK(!contains(message, "hunter2"));
  }
  SUBCASE("unset environment variable") {
    unsetenv("EDGEFUSE_TEST_UNSET_VARIABLE");
    const std::string message =
        folder.error(camera_config("rtsp://cam/live", "    password-env: EDGEFUSE_TEST_UNSET_VARIABLE\n"));
    CHECK(contains(message, "EDGEFUSE_TEST_UNSET_VARIABLE is not set"));
  }
  SUBCASE("a password of the wrong type is not echoed") {
    const std::string message = folder.error(camera_config("rtsp://cam/live", "    password: {hunter2: x}\n"));
    CHECK_MESSAGE(contains(message, "streams[0].password"), message);
    CHECK(!contains(message, "hunter2"));
  }
  SUBCASE("a password swallowed by a broken value elsewhere is not quoted either") {
    // A stray quote makes the rest of the document, up to the closing one, the model path's value,
    // which the "file not found" error quotes: uri and key alike must come out scrubbed. (Found
    // by config_fuzz_test.)
    const std::string message = folder.error(
        "models:\n  - name: det\n    path: 'x\n    family: yolox\nstreams:\n  - name: cam\n"
        "    uri: rtsp://u:hunter2-swallowed@cam/live\n    model: det\n    password: hunter2-key-swallowed\n'\n");
    CHECK_MESSAGE(contains(message, "models[0].path: file not found"), message);
    CHECK(!contains(message, "hunter2"));
  }
  SUBCASE("credentials on a file stream") {
    const std::string message = folder.error(camera_config("street.mp4", "    password: hunter2-file-stream\n"));
    CHECK(contains(message, "applies only to rtsp:// and rtsps://"));
    CHECK(!contains(message, "hunter2"));
  }
}

TEST_CASE("mqtt and http sections switch their outputs on, with defaults") {
  const ConfigFolder folder;
  Result<DaemonConfig> off = folder.parse(camera_config("street.mp4"));
  REQUIRE(off.is_ok());
  CHECK(!off->mqtt.enabled);
  CHECK(!off->http.enabled);

  setenv("EDGEFUSE_TEST_BROKER_PASSWORD", "broker-secret", 1);
  Result<DaemonConfig> on = folder.parse(camera_config("street.mp4") +
                                         "mqtt:\n  host: broker.local\n  port: 8883\n  username: edge\n"
                                         "  password-env: EDGEFUSE_TEST_BROKER_PASSWORD\n  spool-dir: spool\n"
                                         "http:\n  port: 9500\n");
  unsetenv("EDGEFUSE_TEST_BROKER_PASSWORD");
  REQUIRE(on.is_ok());
  CHECK(on->mqtt.enabled);
  CHECK(on->mqtt.host == "broker.local");
  CHECK(on->mqtt.port == 8883);
  CHECK(on->mqtt.password == "broker-secret");
  CHECK(on->mqtt.client_id == "edgefuse");
  CHECK(std::filesystem::path(on->mqtt.spool_dir) == folder.path() / "spool");
  CHECK(on->http.enabled);
  CHECK(on->http.address == "127.0.0.1");
  CHECK(on->http.port == 9500);
}

TEST_CASE("supervision keys: reconnect only for cameras, watchdog and backoff ranges") {
  const ConfigFolder folder;
  Result<DaemonConfig> config = folder.parse(
      camera_config("rtsp://cam/live", "    reconnect: false\n    watchdog-s: 2.5\n    max-backoff-s: 5\n"));
  REQUIRE(config.is_ok());
  CHECK(!config->streams[0].reconnect);
  CHECK(config->streams[0].watchdog_s == 2.5);
  CHECK(config->streams[0].max_backoff_s == 5);
  CHECK(contains(folder.error(camera_config("street.mp4", "    reconnect: true\n")), "applies only to"));
  CHECK(contains(folder.error(camera_config("rtsp://cam/live", "    watchdog-s: -1\n")), "streams[0].watchdog-s"));
}
