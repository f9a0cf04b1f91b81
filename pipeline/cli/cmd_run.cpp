// edgefuse run: the daemon. Reads a YAML config, loads its models, decodes its streams and writes
// detection events until SIGINT/SIGTERM, --duration, or the end of every stream.
#include <csignal>
#include <iostream>

#include <unistd.h>

#include "pipeline/cli/commands.h"
#include "pipeline/config/config.h"
#include "pipeline/daemon/daemon.h"

namespace edgefuse::cli {
namespace {

std::atomic<bool> g_stop_requested{false};

// First signal: drain and exit cleanly. Second: the user insists, leave at once.
extern "C" void on_stop_signal(int) {
  if (g_stop_requested.exchange(true)) _exit(130);
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
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
              {.name = "check",
               .type = OptionType::kFlag,
               .description = "validate the config, load the models and build the pipelines, then exit"},
          },
      .notes =
          "Events: one JSON object per line (see docs/EVENTS.md) to the config's events.path (default stdout).\n"
          "Logs and per-stream statistics go to stderr. SIGINT/SIGTERM stop the sources, process every queued\n"
          "frame, write a summary and exit 0; a second signal exits at once. See 'edgefuse config --reference'.",
  };
  return spec;
}

Status run_run(const ParsedArgs& args) {
  EF_ASSIGN_OR_RETURN(const DaemonConfig config, load_config_file(args.get("config")));
  EF_ASSIGN_OR_RETURN(std::unique_ptr<Daemon> daemon, Daemon::create(config));
  if (args.flag("check")) {
    std::cout << args.get("config") << ": OK (" << config.models.size() << " model(s), " << config.streams.size()
              << " stream(s))\n";
    return Status::ok();
  }
  install_stop_handlers();
  const double duration = args.get_float("duration");
  return daemon->run(g_stop_requested, duration > 0 ? std::optional<double>(duration) : std::nullopt);
}

}  // namespace edgefuse::cli
