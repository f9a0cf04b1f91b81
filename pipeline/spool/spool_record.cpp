// Encoding and decoding of spool records (layout in spool_record.h).
#include "pipeline/spool/spool_record.h"

#include "pipeline/spool/crc32.h"
#include "runtime/status.h"

namespace edgefuse {

void put_u32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

void put_u64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

uint32_t get_u32(const char* bytes) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

uint64_t get_u64(const char* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

int64_t encoded_record_bytes(std::string_view topic, std::string_view payload) {
  return kRecordHeaderBytes + kRecordBodyFixedBytes + static_cast<int64_t>(topic.size() + payload.size());
}

void encode_record(uint64_t sequence, std::string_view topic, std::string_view payload, std::string& out) {
  const size_t start = out.size();
  const int64_t body_bytes = encoded_record_bytes(topic, payload) - kRecordHeaderBytes;
  EF_ASSERT(body_bytes <= UINT32_MAX, "spool record too large");
  put_u32(out, static_cast<uint32_t>(body_bytes));
  put_u32(out, 0);  // checksum, filled in below
  put_u64(out, sequence);
  put_u32(out, static_cast<uint32_t>(topic.size()));
  out.append(topic);
  out.append(payload);
  const uint32_t checksum = crc32(std::string_view(out).substr(start + kRecordHeaderBytes));
  std::string crc_bytes;
  put_u32(crc_bytes, checksum);
  out.replace(start + 4, 4, crc_bytes);
}

std::optional<SpoolRecord> decode_record(std::string_view bytes, int64_t& consumed, std::string& problem) {
  if (static_cast<int64_t>(bytes.size()) < kRecordHeaderBytes) {
    problem = make_message("incomplete header (", bytes.size(), " bytes)");
    return std::nullopt;
  }
  const int64_t body_bytes = get_u32(bytes.data());
  const uint32_t expected_crc = get_u32(bytes.data() + 4);
  if (body_bytes < kRecordBodyFixedBytes) {
    problem = make_message("impossible body length ", body_bytes);
    return std::nullopt;
  }
  if (static_cast<int64_t>(bytes.size()) - kRecordHeaderBytes < body_bytes) {
    problem = make_message("incomplete body (", bytes.size() - kRecordHeaderBytes, " of ", body_bytes, " bytes)");
    return std::nullopt;
  }
  const std::string_view body = bytes.substr(kRecordHeaderBytes, static_cast<size_t>(body_bytes));
  if (crc32(body) != expected_crc) {
    problem = "checksum mismatch";
    return std::nullopt;
  }
  const uint64_t topic_bytes = get_u32(body.data() + 8);
  if (topic_bytes > static_cast<uint64_t>(body_bytes - kRecordBodyFixedBytes)) {
    problem = make_message("topic length ", topic_bytes, " exceeds the record");
    return std::nullopt;
  }
  SpoolRecord record;
  record.sequence = get_u64(body.data());
  record.topic.assign(body.substr(kRecordBodyFixedBytes, topic_bytes));
  record.payload.assign(body.substr(kRecordBodyFixedBytes + topic_bytes));
  consumed = kRecordHeaderBytes + body_bytes;
  return record;
}

}  // namespace edgefuse
