// A real mosquitto broker for the tests: its own process on a free loopback port, configured from a
// generated file in a temporary folder, with persistence so sessions and queued QoS 1 messages
// survive restarts. Killed (SIGKILL) when the object goes out of scope, whatever happened.
#pragma once

#include <filesystem>
#include <string>

#include <sys/types.h>

#include "tests/support/loopback.h"

namespace edgefuse::test {

// The broker binary, or empty when mosquitto is not installed.
std::string mosquitto_binary();

class MosquittoBroker {
 public:
  // `extra_config`: lines appended to the generated configuration.
  MosquittoBroker(std::filesystem::path dir, int port, std::string extra_config = "");
  ~MosquittoBroker();
  MosquittoBroker(const MosquittoBroker&) = delete;
  MosquittoBroker& operator=(const MosquittoBroker&) = delete;

  // Starts the process and waits until it accepts connections; false (with the log's tail in
  // `error`) when it does not within 10 s.
  bool start(std::string& error);
  void kill_hard();  // SIGKILL: no chance to save anything
  void stop();       // SIGTERM: saves its persistence file and exits
  bool running() const { return pid_ > 0; }
  int port() const { return port_; }

 private:
  void wait_for_exit();

  std::filesystem::path dir_;
  int port_;
  std::string extra_config_;
  pid_t pid_ = -1;
};

}  // namespace edgefuse::test
