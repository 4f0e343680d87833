#include "runner_options.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace executorch_openvino::runner {

namespace {

const char kUsage[] =
    "usage: executorch-openvino-run PROGRAM.pte [--list] [--method NAME]\n"
    "           [--input FILE.npy | --input int:N | --input float:X | --input bool:0|1]...\n"
    "           [--random-inputs] [--seed N] [--output-dir DIR] [--iterations N] [--times] [--openvino-lib PATH]\n"
    "\n"
    "  --list            print every method's inputs and outputs, then stop\n"
    "  --method NAME     the method to run (default: forward)\n"
    "  --input VALUE     one per method input, in order: a .npy file for a tensor input, int:/float:/bool: for others\n"
    "  --random-inputs   generate the inputs instead: tensors of the declared shapes, float types uniform in\n"
    "                    [-1, 1), integer types uniform in [0, 100), bool fair coin flips, from --seed (default 0;\n"
    "                    SplitMix64, the same numbers on every machine)\n"
    "  --output-dir DIR  write output i as DIR/output_<i>.npy\n"
    "  --iterations N    timed runs after the first (default 10); the summary gives their median and mean\n"
    "  --times           also print each timed run's milliseconds, in order (\"run times ms: ...\")\n"
    "  --openvino-lib P  the OpenVINO C library to use. Without it: OPENVINO_LIB_PATH, then the pip openvino\n"
    "                    package beside this runner's package, then an install tree named by INTEL_OPENVINO_DIR,\n"
    "                    then CONDA_PREFIX, then the system's library search path\n";

bool parse_count(const char* text, long* out) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || errno == ERANGE) return false;
  *out = value;
  return true;
}

}  // namespace

int bad_arguments(const std::string& message) {
  std::fprintf(stderr, "executorch-openvino-run: %s\n(run with --help for the options)\n", message.c_str());
  return 2;
}

int parse_arguments(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)name;
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--list") {
      o->list = true;
    } else if (arg == "--random-inputs") {
      o->random_inputs = true;
    } else if (arg == "--times") {
      o->print_times = true;
    } else if (arg == "--method" || arg == "--input" || arg == "--output-dir" || arg == "--iterations" ||
               arg == "--seed" || arg == "--openvino-lib") {
      const char* v = value(arg.c_str());
      if (v == nullptr) return bad_arguments(arg + " needs a value");
      if (arg == "--method") o->method = v;
      if (arg == "--input") o->inputs.push_back(v);
      if (arg == "--output-dir") o->output_dir = v;
      if (arg == "--openvino-lib") o->openvino_lib = v;
      long number = 0;
      if ((arg == "--iterations" || arg == "--seed") && !parse_count(v, &number)) {
        return bad_arguments(arg + " takes a whole number from 0 to " + std::to_string(LONG_MAX) + ", got '" + v + "'");
      }
      if (arg == "--iterations" && number > 1000000) {
        return bad_arguments("--iterations " + std::string(v) + " is more than 1000000 runs");
      }
      if (arg == "--output-dir" && o->output_dir.empty()) return bad_arguments("--output-dir needs a folder");
      if (arg == "--iterations") o->iterations = number;
      if (arg == "--seed") o->seed = static_cast<uint64_t>(number);
    } else if (!arg.empty() && arg[0] == '-') {
      return bad_arguments("unknown option '" + arg + "'");
    } else if (o->program.empty()) {
      o->program = arg;
    } else {
      return bad_arguments("more than one program given ('" + o->program + "', '" + arg +
                           "'); pass inputs with --input");
    }
  }
  if (o->program.empty()) return bad_arguments("no program given: executorch-openvino-run PROGRAM.pte ...");
  if (o->random_inputs && !o->inputs.empty()) {
    return bad_arguments("give either --input values or --random-inputs, not both");
  }
  return -1;
}

}  // namespace executorch_openvino::runner
