// StatusServer against clients that misbehave: malformed request lines, huge headers, binary
// garbage, half-closed sockets, slowloris dribblers, and clients still connected at stop().
// After each, /healthz must still answer.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "tests/http/raw_http_client.h"
#include "tests/http/status_server_fixture.h"

namespace edgefuse {
using testing::http_request;
using testing::RawConnection;
using testing::RawResponse;
using testing::StatusServerFixture;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

bool healthz_ok(int port) {
  return http_request(port, "GET", "/healthz").status == 200;
}

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// The server answers with an error or closes; either way it must not answer 200 or hang.
void expect_refused(int port, const std::string& bytes, bool half_close = false) {
  RawConnection connection(port);
  REQUIRE(connection.connected());
  connection.send_bytes(bytes);
  if (half_close) connection.shutdown_write();
  const RawResponse response = connection.read_response(false, milliseconds(5000));
  INFO("status " << response.status);
  CHECK((response.status == 0 || (response.status >= 400 && response.status < 500)));
  CHECK(connection.closed_by_server_within(milliseconds(5000)));
}

}  // namespace

TEST_CASE("hostile: malformed request lines get 400 or a close, and the server lives") {
  StatusServerFixture fixture;
  fixture.start();
  for (const char* bytes : {"HELLO\r\n\r\n", "GET\r\n\r\n", "GET /healthz\r\n\r\n", "GET /healthz HTTP/9.9\r\n\r\n",
                            "BREW /healthz HTTP/1.1\r\n\r\n", "get /healthz HTTP/1.1\r\n\r\n", "\r\n\r\n\r\n"}) {
    INFO(std::string(bytes));
    expect_refused(fixture.port(), bytes);
  }
  CHECK(fixture.healthz_calls == 0);
  CHECK(healthz_ok(fixture.port()));
}

TEST_CASE("hostile: a 100 KiB header is refused without reading it all, and the server lives") {
  StatusServerFixture fixture;
  fixture.start();
  const std::string huge(100 * 1024, 'a');
  expect_refused(fixture.port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + huge + "\r\n\r\n");
  // Many small headers adding up past max_request_bytes are refused too.
  std::string many = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 2000; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  expect_refused(fixture.port(), many + "\r\n");
  // A request target past the limit.
  expect_refused(fixture.port(), "GET /healthz?" + std::string(20000, 'q') + " HTTP/1.1\r\n\r\n");
  CHECK(fixture.healthz_calls == 0);
  CHECK(healthz_ok(fixture.port()));
}

TEST_CASE("hostile: binary garbage is refused, and the server lives") {
  StatusServerFixture fixture;
  fixture.start();
  std::mt19937 random(12345);
  for (int round = 0; round < 5; ++round) {
    std::string garbage(4096, '\0');
    for (char& c : garbage) c = static_cast<char>(random() & 0xff);
    if (round == 0) garbage.replace(0, 4, "GET ");  // a plausible start, then noise
    expect_refused(fixture.port(), garbage);
  }
  expect_refused(fixture.port(), std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11));  // a TLS hello
  CHECK(healthz_ok(fixture.port()));
}

TEST_CASE("hostile: half-closed connections") {
  StatusServerFixture fixture;
  fixture.start();
  SUBCASE("a complete request, then the write side closed, still gets its answer") {
    RawConnection connection(fixture.port());
    connection.send_bytes("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    connection.shutdown_write();
    const RawResponse response = connection.read_response();
    CHECK(response.status == 200);
    CHECK(response.body == "ok\n");
    CHECK(connection.closed_by_server_within(milliseconds(5000)));
  }
  SUBCASE("half a request, then the write side closed, is dropped at once") {
    const auto start = Clock::now();
    expect_refused(fixture.port(), "GET /healthz HTTP/1.1\r\nHost:", /*half_close=*/true);
    CHECK(elapsed_ms(start) < 1500);  // end of file, not the 2 s read timeout
  }
  CHECK(healthz_ok(fixture.port()));
}

TEST_CASE("hostile: a silent client and a dribbling client are cut off at the read timeout") {
  StatusServerFixture fixture;
  StatusServerOptions options = fixture.options();
  options.read_timeout = milliseconds(1000);
  fixture.start(options);

  RawConnection silent(fixture.port());
  RawConnection dribbler(fixture.port());
  REQUIRE(silent.connected());
  REQUIRE(dribbler.connected());
  const auto start = Clock::now();
  // Keeps sending a byte every 100 ms (well inside any per-read timeout) until the server hangs up.
  const std::string request = "GET /healthz HTTP/1.1\r\nX-Slow: " + std::string(1000, 'z');
  bool cut_off = false;
  for (size_t i = 0; i < request.size() && elapsed_ms(start) < 8000; ++i) {
    if (!dribbler.send_bytes(request.substr(i, 1)) || dribbler.closed_by_server_within(milliseconds(100))) {
      cut_off = true;
      break;
    }
  }
  const double dribbler_ms = elapsed_ms(start);
  CHECK(cut_off);
  CHECK(dribbler_ms < 4000);  // about read_timeout (1 s) after its first byte, on a loaded machine
  CHECK(silent.closed_by_server_within(milliseconds(3000)));
  MESSAGE("dribbling client cut off after " << dribbler_ms << " ms (read_timeout 1000 ms)");
  CHECK(healthz_ok(fixture.port()));
}

TEST_CASE("hostile: 20 slowloris clients do not slow /healthz") {
  StatusServerFixture fixture;
  fixture.start();  // the defaults: read_timeout 2 s, max_connections 64
  constexpr int kSlowClients = 20;
  std::atomic<bool> done{false};
  std::atomic<int> reconnects{0};
  // One thread drives all slow clients: every 500 ms each sends one more byte of an endless header;
  // a client the server has cut off reconnects, so 20 are always holding connections.
  std::thread slow_clients([&] {
    std::vector<std::unique_ptr<RawConnection>> clients;
    for (int i = 0; i < kSlowClients; ++i) clients.push_back(std::make_unique<RawConnection>(fixture.port()));
    const std::string prefix = "GET /healthz HTTP/1.1\r\nX-Slow: ";
    std::vector<size_t> sent(kSlowClients, 0);
    while (!done) {
      for (int i = 0; i < kSlowClients && !done; ++i) {
        const char next = sent[i] < prefix.size() ? prefix[sent[i]] : 'z';
        if (!clients[i]->send_bytes(std::string(1, next))) {
          clients[i] = std::make_unique<RawConnection>(fixture.port());
          sent[i] = 0;
          ++reconnects;
        } else {
          ++sent[i];
        }
      }
      for (int slept = 0; slept < 500 && !done; slept += 10) std::this_thread::sleep_for(milliseconds(10));
    }
  });
  std::this_thread::sleep_for(milliseconds(700));  // every slow client has connected and started

  double worst_ms = 0, total_ms = 0;
  constexpr int kProbes = 20;
  for (int probe = 0; probe < kProbes; ++probe) {
    const auto start = Clock::now();
    const RawResponse response = http_request(fixture.port(), "GET", "/healthz");
    const double ms = elapsed_ms(start);
    CHECK(response.status == 200);
    worst_ms = std::max(worst_ms, ms);
    total_ms += ms;
    std::this_thread::sleep_for(milliseconds(150));  // spread the probes over the slow clients' cut-offs
  }
  done = true;
  slow_clients.join();
  MESSAGE("/healthz under " << kSlowClients << " slowloris clients: mean " << total_ms / kProbes << " ms, worst "
                            << worst_ms << " ms; slow clients cut off and reconnected " << reconnects.load()
                            << " times");
  CHECK(worst_ms < 500);
  CHECK(reconnects > 0);  // the slow clients really were holding (and losing) connections meanwhile
}

TEST_CASE("hostile: stop() returns promptly with clients connected") {
  StatusServerFixture fixture;
  fixture.start();
  std::vector<std::unique_ptr<RawConnection>> clients;
  for (int i = 0; i < 10; ++i) {
    clients.push_back(std::make_unique<RawConnection>(fixture.port()));
    clients.back()->send_bytes(i % 2 == 0 ? "GET /heal" : "");  // half a request, or nothing
  }
  RawConnection kept_alive(fixture.port());
  kept_alive.send_bytes("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  REQUIRE(kept_alive.read_response().status == 200);  // now idle on a kept-alive connection
  std::this_thread::sleep_for(milliseconds(100));

  const auto start = Clock::now();
  fixture.server->stop();
  const double stop_ms = elapsed_ms(start);
  MESSAGE("stop() with 11 connected clients took " << stop_ms << " ms");
  CHECK(stop_ms < 3000);
  CHECK(kept_alive.closed_by_server_within(milliseconds(1000)));
  for (auto& client : clients) CHECK(client->closed_by_server_within(milliseconds(1000)));
}

TEST_CASE("hostile: more connections than max_connections wait their turn and are served") {
  StatusServerFixture fixture;
  StatusServerOptions options = fixture.options();
  options.max_connections = 2;
  options.read_timeout = milliseconds(500);
  fixture.start(options);
  RawConnection holder_a(fixture.port()), holder_b(fixture.port());  // silent: hold both threads
  holder_a.send_bytes("G");
  holder_b.send_bytes("G");
  std::this_thread::sleep_for(milliseconds(100));
  const auto start = Clock::now();
  CHECK(healthz_ok(fixture.port()));  // queued until a holder is cut off at the read timeout
  MESSAGE("/healthz behind 2 held connections (max_connections 2, read_timeout 500 ms): " << elapsed_ms(start)
                                                                                          << " ms");
  CHECK(elapsed_ms(start) < 3000);
}

}  // namespace edgefuse
