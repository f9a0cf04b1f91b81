// Network helpers for tests that start real servers on loopback.
#pragma once

namespace edgefuse::test {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed); -1 on failure.
int free_loopback_port();

}  // namespace edgefuse::test
