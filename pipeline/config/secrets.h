// Credentials in the config: moved out of stream uris, read from where they are kept (the config,
// a file, an environment variable), and registered with the log scrubber. Run after the cross checks.
#pragma once

#include "pipeline/config/config.h"
#include "pipeline/config/field_reader.h"

namespace edgefuse::config {

void resolve_secrets(DaemonConfig& config, ReadContext& context);

}  // namespace edgefuse::config
