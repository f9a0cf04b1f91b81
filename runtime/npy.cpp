#include "runtime/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace edgefuse {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

const char* npy_descr(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "<f4";
    case DType::kF16:
      return "<f2";
    case DType::kF64:
      return "<f8";
    case DType::kI8:
      return "|i1";
    case DType::kU8:
      return "|u1";
    case DType::kI32:
      return "<i4";
    case DType::kI64:
      return "<i8";
    case DType::kBool:
      return "|b1";
  }
  return "?";
}

Result<DType> dtype_from_descr(const std::string& descr) {
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    const std::string ours = npy_descr(dtype);
    // '=' means native order, which is little-endian on every target we build for.
    if (descr == ours || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == ours.substr(1))) return dtype;
  }
  return unsupported("npy dtype '", descr, "' (supported: f2 f4 f8 i1 u1 i4 i8 b1, little-endian)");
}

// Finds `'key': ` in the header dict and returns the text after it.
Result<std::string> header_field(const std::string& header, const std::string& key) {
  const std::string needle = "'" + key + "'";
  size_t pos = header.find(needle);
  if (pos == std::string::npos) return invalid_argument("npy header has no '", key, "' field");
  pos = header.find(':', pos + needle.size());
  if (pos == std::string::npos) return invalid_argument("npy header field '", key, "' has no value");
  size_t start = header.find_first_not_of(' ', pos + 1);
  return header.substr(start);
}

}  // namespace

Result<Tensor> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open '", path, "'");
  char magic[6];
  uint8_t version[2];
  if (!in.read(magic, 6) || std::memcmp(magic, kMagic, 6) != 0)
    return invalid_argument("'", path, "' is not a .npy file");
  if (!in.read(reinterpret_cast<char*>(version), 2) || version[0] < 1 || version[0] > 3) {
    return invalid_argument("'", path, "': unsupported npy version");
  }
  uint32_t header_len = 0;
  if (version[0] == 1) {
    uint8_t len[2];
    if (!in.read(reinterpret_cast<char*>(len), 2)) return invalid_argument("'", path, "': truncated npy header");
    header_len = len[0] | (len[1] << 8);
  } else {
    uint8_t len[4];
    if (!in.read(reinterpret_cast<char*>(len), 4)) return invalid_argument("'", path, "': truncated npy header");
    header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<uint32_t>(len[3]) << 24);
  }
  if (header_len > (1u << 20)) return invalid_argument("'", path, "': npy header too long");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) return invalid_argument("'", path, "': truncated npy header");

  auto context = [&](const Status& s) { return s.with_context("'" + path + "'"); };
  auto descr_field = header_field(header, "descr");
  if (!descr_field) return context(descr_field.status());
  const std::string& d = *descr_field;
  if (d.empty() || d[0] != '\'') return context(invalid_argument("bad descr in npy header"));
  auto dtype = dtype_from_descr(d.substr(1, d.find('\'', 1) - 1));
  if (!dtype) return context(dtype.status());
  auto order_field = header_field(header, "fortran_order");
  if (!order_field) return context(order_field.status());
  if (order_field->rfind("True", 0) == 0) return context(unsupported("Fortran-order npy arrays"));
  auto shape_field = header_field(header, "shape");
  if (!shape_field) return context(shape_field.status());
  const std::string& s = *shape_field;
  if (s.empty() || s[0] != '(' || s.find(')') == std::string::npos)
    return context(invalid_argument("bad shape in npy header"));
  Shape shape;
  std::stringstream dims(s.substr(1, s.find(')') - 1));
  std::string item;
  while (std::getline(dims, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    try {
      shape.push_back(std::stoll(item));
    } catch (const std::exception&) {
      return context(invalid_argument("bad dimension '", item, "' in npy header"));
    }
  }
  EF_RETURN_IF_ERROR(context(validate_shape(shape, dtype_size(*dtype))));
  Tensor tensor = Tensor::empty(*dtype, shape);
  if (tensor.nbytes() > 0 &&
      !in.read(static_cast<char*>(tensor.raw_data()), static_cast<std::streamsize>(tensor.nbytes()))) {
    return context(invalid_argument("npy data is shorter than its shape ", shape_to_string(shape), " needs"));
  }
  return tensor;
}

Status write_npy(const std::string& path, const Tensor& tensor) {
  if (!tensor.has_data()) return invalid_argument("cannot write a tensor without data to '", path, "'");
  std::ostringstream header;
  header << "{'descr': '" << npy_descr(tensor.dtype()) << "', 'fortran_order': False, 'shape': (";
  for (int64_t d : tensor.shape()) header << d << ", ";
  header << "), }";
  std::string text = header.str();
  if (tensor.rank() == 1) text.replace(text.find(", ), }"), 6, ",), }");
  if (tensor.rank() > 1) text.replace(text.find(", ), }"), 6, "), }");
  // Pad so that the data starts on a 64-byte boundary, ending the header with '\n'.
  const size_t unpadded = 10 + text.size() + 1;
  text.append((64 - unpadded % 64) % 64, ' ');
  text.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) return io_error("cannot write '", path, "'");
  out.write(kMagic, 6);
  const char version[2] = {1, 0};
  out.write(version, 2);
  const auto len = static_cast<uint16_t>(text.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.write(static_cast<const char*>(tensor.raw_data()), static_cast<std::streamsize>(tensor.nbytes()));
  if (!out) return io_error("failed writing '", path, "'");
  return Status::ok();
}

}  // namespace edgefuse
