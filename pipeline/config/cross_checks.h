// Checks that span several keys: unique names, streams naming a defined model, and keys that
// apply only to some uri schemes. Run after every key parsed on its own.
#pragma once

#include "pipeline/config/config.h"
#include "pipeline/config/field_reader.h"

namespace edgefuse::config {

void check_cross_references(const DaemonConfig& config, ReadContext& context);

}  // namespace edgefuse::config
