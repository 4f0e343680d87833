#include "npy_file.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace executorch_openvino {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

// The value of 'key' in the header's Python dict literal, up to its closing
// delimiter: "'<f4'", "False", "(2, 3)".
bool dict_value(const std::string& header, const std::string& key, std::string* value) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return false;
  at = header.find(':', at);
  if (at == std::string::npos) return false;
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  if (at >= header.size()) return false;
  size_t end;
  if (header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos) return false;
    ++end;
  } else if (header[at] == '\'' || header[at] == '"') {
    end = header.find(header[at], at + 1);
    if (end == std::string::npos) return false;
    ++at;  // without the quotes
    *value = header.substr(at, end - at);
    return true;
  } else {
    end = header.find_first_of(",}", at);
    if (end == std::string::npos) return false;
  }
  *value = header.substr(at, end - at);
  while (!value->empty() && value->back() == ' ') value->pop_back();
  return true;
}

bool parse_shape(const std::string& text, std::vector<int64_t>* shape) {
  // "(2, 3)", "(5,)", "()"; digits only, without <sstream> (it would pull
  // libstdc++'s locale code, and with it newer glibc symbols, into the runner).
  shape->clear();
  size_t at = 1;
  const size_t end = text.size() - 1;
  while (at < end) {
    while (at < end && (text[at] == ' ' || text[at] == ',')) ++at;
    if (at >= end) break;
    if (text[at] < '0' || text[at] > '9') return false;
    int64_t size = 0;
    while (at < end && text[at] >= '0' && text[at] <= '9') {
      if (size > (INT64_MAX - 9) / 10) return false;
      size = size * 10 + (text[at++] - '0');
    }
    if (at < end && text[at] != ',' && text[at] != ' ') return false;
    shape->push_back(size);
  }
  return true;
}

// "<f4" -> 4; 0 for anything else.
size_t item_size(const std::string& descr) {
  if (descr.size() != 3 || descr[2] < '1' || descr[2] > '8') return 0;
  return static_cast<size_t>(descr[2] - '0');
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

bool read_exactly(std::FILE* file, void* data, size_t size) { return std::fread(data, 1, size, file) == size; }

}  // namespace

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    *error = "cannot open '" + path + "'";
    return false;
  }
  char magic[8];
  if (!read_exactly(file.get(), magic, 8) || std::memcmp(magic, kMagic, 6) != 0) {
    *error = "'" + path + "' is not a .npy file (no \\x93NUMPY magic); write it with numpy.save";
    return false;
  }
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_size = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!read_exactly(file.get(), b, 2))
      header_size = UINT32_MAX;
    else
      header_size = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!read_exactly(file.get(), b, 4))
      header_size = UINT32_MAX;
    else
      header_size = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    *error = "'" + path + "' is .npy format version " + std::to_string(major) + ", which this runner does not read";
    return false;
  }
  if (header_size == UINT32_MAX || header_size > (1u << 20)) {
    *error = "'" + path + "' has a damaged .npy header";
    return false;
  }
  std::string header(header_size, '\0');
  if (!read_exactly(file.get(), &header[0], header_size)) {
    *error = "'" + path + "' ends inside its .npy header";
    return false;
  }
  std::string descr, fortran, shape_text;
  if (!dict_value(header, "descr", &descr) || !dict_value(header, "fortran_order", &fortran) ||
      !dict_value(header, "shape", &shape_text) || shape_text.empty() || shape_text[0] != '(' ||
      !parse_shape(shape_text, &out->shape)) {
    *error = "'" + path + "' has a .npy header this runner cannot read: " + header;
    return false;
  }
  if (fortran != "False") {
    *error = "'" + path + "' is in Fortran order; save numpy.ascontiguousarray(array) instead";
    return false;
  }
  if (descr.size() >= 3 && descr[0] == '>') {
    *error = "'" + path + "' holds type '" + descr +
             "'; the runner reads little-endian numbers "
             "(save array.astype(array.dtype.newbyteorder('<')))";
    return false;
  }
  size_t count = 1;
  for (int64_t d : out->shape) {
    if (d != 0 && count > SIZE_MAX / static_cast<size_t>(d)) {
      *error = "'" + path + "' declares a shape too large for memory";
      return false;
    }
    count *= static_cast<size_t>(d);
  }
  const size_t size = item_size(descr);
  if (size == 0 || (count != 0 && size > SIZE_MAX / count)) {
    *error = "'" + path + "' holds NumPy type '" + descr +
             "', which this runner does not read: it reads "
             "little-endian bool, int, uint and float arrays";
    return false;
  }
  // The data must be in the file: checked before allocating, so a header
  // declaring a huge shape is refused instead of exhausting memory.
  const long data_start = std::ftell(file.get());
  if (data_start < 0 || std::fseek(file.get(), 0, SEEK_END) != 0) {
    *error = "cannot read '" + path + "'";
    return false;
  }
  const long file_end = std::ftell(file.get());
  const unsigned long long available =
      file_end > data_start ? static_cast<unsigned long long>(file_end - data_start) : 0;
  if (std::fseek(file.get(), data_start, SEEK_SET) != 0) {
    *error = "cannot read '" + path + "'";
    return false;
  }
  if (static_cast<unsigned long long>(count) * size > available) {
    *error = "'" + path + "' is truncated: its header declares shape " + shape_text + " of '" + descr + "' (" +
             std::to_string(static_cast<unsigned long long>(count) * size) + " bytes), the file holds " +
             std::to_string(available) + " bytes of data";
    return false;
  }
  out->descr = descr;
  out->data.resize(count * size);
  if (!out->data.empty() && !read_exactly(file.get(), out->data.data(), out->data.size())) {
    *error = "'" + path + "' is truncated: its header declares " + std::to_string(out->data.size()) + " bytes of data";
    return false;
  }
  return true;
}

bool write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape, const void* data,
               size_t nbytes, std::string* error) {
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.size(); ++i) shape_text += std::to_string(shape[i]) + (i + 1 < shape.size() ? ", " : "");
  if (shape.size() == 1) shape_text += ",";
  shape_text += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded with spaces to a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  File file(std::fopen(path.c_str(), "wb"));
  if (!file) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  const unsigned char head[10] = {0x93,
                                  'N',
                                  'U',
                                  'M',
                                  'P',
                                  'Y',
                                  1,
                                  0,
                                  static_cast<unsigned char>(header.size() & 0xff),
                                  static_cast<unsigned char>(header.size() >> 8)};
  bool ok = std::fwrite(head, 1, sizeof head, file.get()) == sizeof head &&
            std::fwrite(header.data(), 1, header.size(), file.get()) == header.size() &&
            std::fwrite(data, 1, nbytes, file.get()) == nbytes;
  ok = std::fclose(file.release()) == 0 && ok;
  if (!ok) {
    *error = "writing '" + path + "' failed";
    return false;
  }
  return true;
}

}  // namespace executorch_openvino
