// The subcommands of the edgefuse tool. Each declares its options (spec) and runs on parsed
// arguments, writing results to stdout; a non-ok Status becomes "edgefuse: error: ..." and exit 1.
#pragma once

#include "pipeline/cli/args.h"
#include "runtime/status.h"

namespace edgefuse::cli {

struct Command {
  const CommandSpec& (*spec)();
  Status (*run)(const ParsedArgs& args);
};

const CommandSpec& infer_spec();
Status run_infer(const ParsedArgs& args);

const CommandSpec& detect_spec();
Status run_detect(const ParsedArgs& args);

const CommandSpec& bench_spec();
Status run_bench(const ParsedArgs& args);

const CommandSpec& inspect_spec();
Status run_inspect(const ParsedArgs& args);

const CommandSpec& config_spec();
Status run_config(const ParsedArgs& args);

#ifdef EDGEFUSE_HAVE_GSTREAMER
const CommandSpec& run_spec();  // the daemon, built only with GStreamer
Status run_run(const ParsedArgs& args);
#endif

}  // namespace edgefuse::cli
