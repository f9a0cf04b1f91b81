// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum of spool records and ack
// journal entries. Incremental: crc32(b, crc32(a)) == crc32(a + b).
#pragma once

#include <cstdint>
#include <string_view>

namespace edgefuse {

uint32_t crc32(std::string_view bytes, uint32_t previous = 0);

}  // namespace edgefuse
