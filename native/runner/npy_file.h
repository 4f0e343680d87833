// Reads and writes NumPy's .npy files (format versions 1.0, 2.0 and 3.0:
// numpy.lib.format, NEP 1), little-endian, C order: the runner's input and
// output format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace executorch_openvino {

struct NpyArray {
  std::string descr;           // NumPy's type string, e.g. "<f4", "|b1"
  std::vector<int64_t> shape;  // () for a 0-d array
  std::vector<uint8_t> data;   // C order, shape's product * item size bytes
};

// Fills `out` from the file at `path`; on failure returns false with `error`
// naming the file and what is wrong (not a .npy, Fortran order, big-endian,
// truncated data, ...).
bool read_npy(const std::string& path, NpyArray* out, std::string* error);

// Writes `data` (C order) as a version 1.0 .npy file.
bool write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape, const void* data,
               size_t nbytes, std::string* error);

}  // namespace executorch_openvino
