// Credentials in the config: moved out of stream uris, read from where they are kept (the config,
// a file, an environment variable), and registered with the log scrubber. Run after the cross checks.
#pragma once

#include "pipeline/config/config.h"
#include "pipeline/config/field_reader.h"

namespace edgefuse::config {

void resolve_secrets(DaemonConfig& config, ReadContext& context);

// Registers with the log scrubber every password the raw text holds where a config keeps one: a
// uri's userinfo ("rtsp://user:PASSWORD@host") and a `password:` key's value. Run before parsing,
// so that no error quotes one even when a broken document puts it inside another key's value (a
// stray "|" makes the rest of the file one block scalar).
void register_secrets_in_text(std::string_view yaml_text);

}  // namespace edgefuse::config
