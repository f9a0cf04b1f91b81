// The spool's record layout on disk and its encoding. A segment file is a sequence of records:
//
//   offset 0   u32 body_length   (little endian; bytes after this 8-byte header)
//          4   u32 crc32(body)
//          8   body: u64 sequence | u32 topic_length | topic bytes | payload bytes
//
// A record whose header or body is incomplete, or whose checksum does not match, marks the end of
// the valid data (a write torn by a crash); everything from it on is truncated when the spool opens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace edgefuse {

inline constexpr int64_t kRecordHeaderBytes = 8;
inline constexpr int64_t kRecordBodyFixedBytes = 12;  // sequence + topic length

struct SpoolRecord {
  uint64_t sequence = 0;
  std::string topic;
  std::string payload;
};

// Size on disk of a record with this topic and payload (header included).
int64_t encoded_record_bytes(std::string_view topic, std::string_view payload);

// Appends the encoded record to `out`.
void encode_record(uint64_t sequence, std::string_view topic, std::string_view payload, std::string& out);

// Parses the record at the start of `bytes`. On success returns the record and sets `consumed` to its
// size on disk; returns nothing when the bytes do not hold one complete, intact record, and then
// `problem` says why (for the log line).
std::optional<SpoolRecord> decode_record(std::string_view bytes, int64_t& consumed, std::string& problem);

// Little-endian integer helpers shared with the ack journal.
void put_u32(std::string& out, uint32_t value);
void put_u64(std::string& out, uint64_t value);
uint32_t get_u32(const char* bytes);
uint64_t get_u64(const char* bytes);

}  // namespace edgefuse
