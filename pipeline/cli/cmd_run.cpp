// edgefuse run: the daemon. Reads a YAML config, loads its models, decodes its streams and writes
// detection events until SIGINT/SIGTERM, --duration, or the end of every stream.
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>

#include <unistd.h>

#include "pipeline/cli/commands.h"
#include "pipeline/config/config.h"
#include "pipeline/daemon/daemon.h"
#include "pipeline/json/json_writer.h"

namespace edgefuse::cli {
namespace {

std::atomic<bool> g_stop_requested{false};
std::atomic<bool> g_reload_requested{false};

// First signal: drain and exit cleanly. Second: the user insists, leave at once.
extern "C" void on_stop_signal(int) {
  if (g_stop_requested.exchange(true)) _exit(130);
}

// SIGHUP: read the config file again; the daemon applies what changed between two frames' worth of work.
extern "C" void on_reload_signal(int) {
  g_reload_requested.store(true);
}

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  struct sigaction reload {};
  reload.sa_handler = on_reload_signal;
  sigemptyset(&reload.sa_mask);
  reload.sa_flags = SA_RESTART;
  sigaction(SIGHUP, &reload, nullptr);
}

// --replicate N: every stream N times (name-1 .. name-N), to measure how many streams the box sustains.
DaemonConfig replicate_streams(const DaemonConfig& config, int copies) {
  if (copies <= 1) return config;
  DaemonConfig replicated = config;
  replicated.streams.clear();
  for (const StreamConfig& stream : config.streams) {
    for (int copy = 1; copy <= copies; ++copy) {
      StreamConfig clone = stream;
      clone.name = stream.name + "-" + std::to_string(copy);
      replicated.streams.push_back(std::move(clone));
    }
  }
  return replicated;
}

std::string reports_json(const std::vector<StreamReport>& reports, double duration_s) {
  JsonWriter json;
  json.begin_object().key("duration_s").value(duration_s, 3).key("streams").begin_array();
  for (const StreamReport& report : reports) {
    json.begin_object();
    json.key("name").value(report.name);
    json.key("frames_in").value(report.frames_in).key("processed").value(report.processed);
    json.key("dropped").value(report.dropped).key("skipped").value(report.skipped).key("still").value(report.still);
    json.key("failed").value(report.failed).key("events").value(report.events);
    json.key("latency_p50_ms").value(report.latency.p50_ms, 2).key("latency_p99_ms").value(report.latency.p99_ms, 2);
    json.key("decoder").value(report.decoder).key("error").value(report.error);
    json.key("state").value(report.state).key("reconnects").value(report.reconnects);
    json.end_object();
  }
  json.end_array().end_object();
  return json.str();
}

}  // namespace

const CommandSpec& run_spec() {
  static const CommandSpec spec{
      .name = "run",
      .summary = "run the daemon: video streams in, detection events out (YAML config)",
      .usage = "--config FILE [options]",
      .options =
          {
              {.name = "config", .value_name = "FILE", .description = "YAML configuration", .required = true},
              {.name = "duration",
               .type = OptionType::kFloat,
               .value_name = "S",
               .default_value = "0",
               .description = "stop after S seconds; 0: run until SIGINT/SIGTERM or every stream has ended",
               .min = 0,
               .max = 1e9},
              {.name = "replicate",
               .type = OptionType::kInt,
               .value_name = "N",
               .default_value = "1",
               .description = "run N copies of every stream (benchmarking how many streams a box sustains)",
               .min = 1,
               .max = 64},
              {.name = "report",
               .value_name = "FILE",
               .description = "write the final per-stream statistics as one JSON object to FILE"},
              {.name = "check",
               .type = OptionType::kFlag,
               .description = "validate the config, load the models and build the pipelines, then exit"},
          },
      .notes =
          "Events: one JSON object per line (see docs/EVENTS.md) to the config's events.path (default stdout).\n"
          "Logs and per-stream statistics go to stderr. SIGINT/SIGTERM stop the sources, process every queued\n"
          "frame, write a summary and exit 0; a second signal exits at once. SIGHUP reads the config again and\n"
          "restarts only the streams and models whose keys changed; a config that does not load or apply is\n"
          "rejected (logged) and the running one stays. Under systemd (Type=notify) it reports READY, STATUS and\n"
          "WATCHDOG pings. See 'edgefuse config --reference' and docs/OPERATIONS.md.",
  };
  return spec;
}

Status run_run(const ParsedArgs& args) {
  EF_ASSIGN_OR_RETURN(const DaemonConfig loaded, load_config_file(args.get("config")));
  const DaemonConfig config = replicate_streams(loaded, static_cast<int>(args.get_int("replicate")));
  EF_ASSIGN_OR_RETURN(std::unique_ptr<Daemon> daemon, Daemon::create(config));
  if (args.flag("check")) {
    std::cout << args.get("config") << ": OK (" << config.models.size() << " model(s), " << config.streams.size()
              << " stream(s))\n";
    return Status::ok();
  }
  install_signal_handlers();
  const double duration = args.get_float("duration");
  const auto start = std::chrono::steady_clock::now();
  const Status status =
      daemon->run(g_stop_requested, duration > 0 ? std::optional<double>(duration) : std::nullopt, &g_reload_requested);
  if (args.has("report")) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::ofstream out(args.get("report"));
    out << reports_json(daemon->reports(), elapsed) << "\n";
    if (!out) return io_error("cannot write the report to '", args.get("report"), "'");
  }
  return status;
}

}  // namespace edgefuse::cli
