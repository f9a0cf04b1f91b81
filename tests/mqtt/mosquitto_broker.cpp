// The test broker process.
#include "tests/mqtt/mosquitto_broker.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace edgefuse::test {
namespace {

bool accepts_connections(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return ok;
}

std::string file_tail(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

}  // namespace

std::string mosquitto_binary() {
  const std::string configured = EDGEFUSE_MOSQUITTO_BROKER;
  if (!configured.empty() && ::access(configured.c_str(), X_OK) == 0) return configured;
  if (::access("/usr/sbin/mosquitto", X_OK) == 0) return "/usr/sbin/mosquitto";
  return "";
}

MosquittoBroker::MosquittoBroker(std::filesystem::path dir, int port, std::string extra_config)
    : dir_(std::move(dir)), port_(port), extra_config_(std::move(extra_config)) {}

MosquittoBroker::~MosquittoBroker() {
  kill_hard();
}

bool MosquittoBroker::start(std::string& error) {
  std::filesystem::create_directories(dir_);
  const std::filesystem::path config = dir_ / "mosquitto.conf";
  const std::filesystem::path log = dir_ / "mosquitto.log";
  {
    std::ofstream out(config);
    out << "listener " << port_ << " 127.0.0.1\n"
        << "log_dest stdout\n"
        << "log_type error\nlog_type warning\nlog_type notice\nlog_type information\n";
    // As root, mosquitto would switch to the 'mosquitto' user, who cannot write our folder.
    if (::geteuid() == 0) out << "user root\n";
    out << extra_config_ << "\n";
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = "fork failed";
    return false;
  }
  if (pid == 0) {
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log_fd >= 0) {
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
    }
    const std::string binary = mosquitto_binary();
    ::execl(binary.c_str(), "mosquitto", "-c", config.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (accepts_connections(port_)) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error = "mosquitto exited at start: " + file_tail(log);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error = "mosquitto did not accept connections within 10 s: " + file_tail(log);
  kill_hard();
  return false;
}

void MosquittoBroker::wait_for_exit() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void MosquittoBroker::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  wait_for_exit();
}

void MosquittoBroker::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  wait_for_exit();
}

}  // namespace edgefuse::test
