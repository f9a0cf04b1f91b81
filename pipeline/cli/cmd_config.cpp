// edgefuse config: the configuration reference (every key, its type, range, default and meaning),
// and validation of a config file without loading models or opening streams.
#include <iostream>

#include "pipeline/cli/commands.h"
#include "pipeline/config/config.h"

namespace edgefuse::cli {

const CommandSpec& config_spec() {
  static const CommandSpec spec{
      .name = "config",
      .summary = "print the configuration reference, or validate a config file",
      .usage = "--reference | --validate FILE",
      .options =
          {
              {.name = "reference", .type = OptionType::kFlag, .description = "print every config key and exit"},
              {.name = "validate",
               .value_name = "FILE",
               .description = "parse and check FILE (types, ranges, names, files it refers to); "
                              "'edgefuse run --check' also loads the models and builds the pipelines"},
          },
      .notes = "",
  };
  return spec;
}

Status run_config(const ParsedArgs& args) {
  if (args.flag("reference") == args.has("validate")) {
    return invalid_argument("give exactly one of --reference and --validate FILE");
  }
  if (args.flag("reference")) {
    std::cout << config_reference();
    return Status::ok();
  }
  EF_ASSIGN_OR_RETURN(const DaemonConfig config, load_config_file(args.get("validate")));
  std::cout << args.get("validate") << ": OK (" << config.models.size() << " model(s), " << config.streams.size()
            << " stream(s))\n";
  return Status::ok();
}

}  // namespace edgefuse::cli
