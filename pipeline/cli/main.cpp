// The edgefuse command-line tool: `edgefuse <command> [options]`, see `edgefuse --help`.
#include <array>
#include <cstdio>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "pipeline/cli/commands.h"
#include "runtime/cpu_features.h"
#ifdef EDGEFUSE_HAVE_CUDA
#include "runtime/cuda/cuda_device.h"
#endif

namespace {

using edgefuse::cli::Command;

constexpr std::array kCommands = {
#ifdef EDGEFUSE_HAVE_GSTREAMER
    Command{edgefuse::cli::run_spec, edgefuse::cli::run_run},
#endif
    Command{edgefuse::cli::infer_spec, edgefuse::cli::run_infer},
    Command{edgefuse::cli::detect_spec, edgefuse::cli::run_detect},
    Command{edgefuse::cli::bench_spec, edgefuse::cli::run_bench},
    Command{edgefuse::cli::inspect_spec, edgefuse::cli::run_inspect},
    Command{edgefuse::cli::config_spec, edgefuse::cli::run_config},
};

void print_usage() {
  std::cout << "edgefuse " << EDGEFUSE_VERSION << ": edge inference runtime for ONNX models\n\n"
            << "Usage: edgefuse <command> [options]\n       edgefuse <command> --help\n\nCommands:\n";
  for (const Command& command : kCommands) {
    const auto& spec = command.spec();
    std::cout << "  " << spec.name << std::string(spec.name.size() < 8 ? 8 - spec.name.size() : 1, ' ') << spec.summary
              << "\n";
  }
  std::cout << "\nOptions:\n  -h, --help  show this help and exit\n  --version   print the version and exit\n";
}

int fail(const std::string& message) {
  std::fprintf(stderr, "edgefuse: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return fail("no command given (see 'edgefuse --help')");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage();
    return 0;
  }
  if (args[0] == "--version") {
    std::cout << "edgefuse " << EDGEFUSE_VERSION << "\n";
    std::cout << "CPU ISA: " << edgefuse::cpu_isa_name(edgefuse::active_cpu_isa()) << "\n";
#ifdef EDGEFUSE_HAVE_CUDA
    const std::vector<edgefuse::CudaDeviceInfo> devices = edgefuse::cuda_devices();
    std::cout << "CUDA: built in; " << devices.size() << " device(s) visible\n";
    for (const edgefuse::CudaDeviceInfo& device : devices) {
      std::cout << "  " << device.index << ": " << device.name << " (sm_" << device.compute_major
                << device.compute_minor << ", " << (device.total_memory_bytes >> 20) << " MiB)\n";
    }
#else
    std::cout << "CUDA: not built in\n";
#endif
    return 0;
  }
  for (const Command& command : kCommands) {
    const edgefuse::cli::CommandSpec& spec = command.spec();
    if (args[0] != spec.name) continue;
    const std::span<const std::string> command_args = std::span(args).subspan(1);
    edgefuse::Result<edgefuse::cli::ParsedArgs> parsed = edgefuse::cli::parse_args(spec, command_args);
    if (!parsed.is_ok()) {
      return fail(parsed.status().message() + " (see 'edgefuse " + spec.name + " --help')");
    }
    if (parsed->help_requested()) {
      std::cout << edgefuse::cli::help_text(spec, "edgefuse");
      return 0;
    }
    const edgefuse::Status status = command.run(*parsed);
    return status.is_ok() ? 0 : fail(status.message());
  }
  return fail("unknown command '" + args[0] + "' (see 'edgefuse --help')");
}
