// Address checks by inet_pton, never by string prefix, so "127.0.0.1.example.com" is not loopback.
#include "pipeline/http/listen_address.h"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace edgefuse {

bool is_loopback_address(std::string_view address) {
  const std::string text(address);
  if (text == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

std::string format_endpoint(const std::string& address, int port) {
  const bool ipv6 = address.find(':') != std::string::npos;
  return (ipv6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

std::string diagnose_bind_failure(const std::string& address, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* results = nullptr;
  const std::string service = std::to_string(port);
  if (const int error = getaddrinfo(address.c_str(), service.c_str(), &hints, &results); error != 0) {
    return std::string("cannot resolve the address: ") + gai_strerror(error);
  }
  std::string reason;
  for (const addrinfo* candidate = results; candidate != nullptr; candidate = candidate->ai_next) {
    const int fd = socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC, candidate->ai_protocol);
    if (fd < 0) {
      reason = std::strerror(errno);
      continue;
    }
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));  // as the server does
    const bool bound = bind(fd, candidate->ai_addr, candidate->ai_addrlen) == 0;
    if (!bound) reason = std::strerror(errno);
    close(fd);
    if (bound) {
      reason.clear();
      break;
    }
  }
  freeaddrinfo(results);
  return reason;
}

}  // namespace edgefuse
