// What the sanitizers session must catch, to show that a finding does reach a
// report and stop the process: a heap overflow inside the instrumented delegate
// library (its XML reader given a length past the end of a buffer), and a
// signed overflow here.
#include "processed_blob.h"

#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "heap-overflow-in-delegate") {
    std::vector<char> xml(64, 'x');  // no marker: the reader scans all it is told to
    return int(executorch_openvino::lowered_with_openvino(xml.data(), xml.size() + 16).size());
  }
  if (mode == "signed-overflow") {
    volatile int big = INT_MAX, step = argc;
    return big + step;
  }
  std::fprintf(stderr, "usage: findings_control heap-overflow-in-delegate|signed-overflow\n");
  return 2;
}
