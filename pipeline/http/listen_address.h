// Where the status server listens: whether an address stays on this machine, how to name an
// endpoint in messages, and why a bind failed (cpp-httplib reports only that it failed).
#pragma once

#include <string>
#include <string_view>

namespace edgefuse {

// True for "localhost", 127.0.0.0/8, ::1 and ::ffff:127.x.y.z. Everything else (0.0.0.0, ::,
// an interface address, another host name) can be reachable from the network.
bool is_loopback_address(std::string_view address);

// "127.0.0.1:9400", "[::1]:9400".
std::string format_endpoint(const std::string& address, int port);

// The reason a listening socket cannot bind to address:port ("Address already in use"), found by
// trying it; "" when the trial binds (the failure was elsewhere or has gone away).
std::string diagnose_bind_failure(const std::string& address, int port);

}  // namespace edgefuse
