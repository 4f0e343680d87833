// executorch-openvino-run's command line: the options and how they are parsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace executorch_openvino::runner {

struct Options {
  std::string program;
  std::string method = "forward";
  std::vector<std::string> inputs;
  bool list = false;
  bool random_inputs = false;
  uint64_t seed = 0;
  std::string output_dir;
  long iterations = 10;
  bool print_times = false;  // each timed run's milliseconds (the benchmark's C++ door)
  std::string openvino_lib;
};

// Prints `message` and the pointer to --help on stderr; returns 2, the status of bad arguments.
int bad_arguments(const std::string& message);

// Fills `o` from argv. Returns -1 to go on, else the exit status (0 after --help).
int parse_arguments(int argc, char** argv, Options* o);

}  // namespace executorch_openvino::runner
