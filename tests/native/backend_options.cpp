// The delegate's backend options from C++, as an application sets them through
// ExecuTorch (Python reaches only the string 'cache_dir' through
// set_cache_dir). Built and run by tests/native/test_backend_options.py.
//
//   backend_options <processed blob file> <cache folder>
//
// Each check prints "name: ok" or "name: FAILED ..."; the exit status is the
// number of failed checks. The blob is any delegated partition.
#include "harness.h"

#include <executorch/runtime/backend/options.h>
#include <executorch/runtime/core/memory_allocator.h>

#include <array>
#include <cstring>
#include <string>
#include <dirent.h>
#include <sys/stat.h>

namespace et = executorch::runtime;

namespace {

int failures = 0;

void check(const char* name, bool ok, const std::string& detail = "") {
  std::printf("%s: %s%s\n", name, ok ? "ok" : "FAILED ", ok ? "" : detail.c_str());
  if (!ok) ++failures;
}

et::BackendOption text_option(const char* key, const std::string& value) {
  et::BackendOption option;
  std::strncpy(option.key, key, sizeof(option.key) - 1);
  std::array<char, et::kMaxOptionValueLength> text{};
  std::strncpy(text.data(), value.c_str(), text.size() - 1);
  option.value = text;
  return option;
}

et::BackendOption int_option(const char* key, int value) {
  et::BackendOption option;
  std::strncpy(option.key, key, sizeof(option.key) - 1);
  option.value = value;
  return option;
}

std::string cache_dir_setting() {
  et::BackendOption option = text_option("cache_dir", "");
  et::Span<et::BackendOption> span(&option, 1);
  if (et::get_option(executorch_openvino::kBackendId, span) != et::Error::Ok) return "<get_option failed>";
  return std::get<std::array<char, et::kMaxOptionValueLength>>(option.value).data();
}

et::Error set(std::initializer_list<et::BackendOption> options) {
  std::vector<et::BackendOption> list(options);
  return et::set_option(executorch_openvino::kBackendId, et::Span<et::BackendOption>(list.data(), list.size()));
}

bool is_dir(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <processed blob file> <cache folder>\n", argv[0]);
    return 100;
  }
  const std::vector<char> blob = harness::read_file(argv[1]);
  const std::string cache = argv[2];
  et::BackendInterface* backend = harness::delegate_or_exit();
  const harness::CpuSpecs cpu;

  check("unset by default", cache_dir_setting().empty(), cache_dir_setting());
  check("set and read back",
        set({text_option("cache_dir", "/somewhere/else")}) == et::Error::Ok && cache_dir_setting() == "/somewhere/else",
        cache_dir_setting());

  et::Error e = set({text_option("cache_dir", "/not/applied"), text_option("threads", "2")});
  check("an unknown key is refused",
        e == et::Error::InvalidArgument &&
            executorch_openvino::last_error().find("unknown option 'threads'") != std::string::npos,
        executorch_openvino::last_error());
  check("nothing is applied when one option is refused", cache_dir_setting() == "/somewhere/else", cache_dir_setting());
  e = set({int_option("cache_dir", 7)});
  check(
      "a number for cache_dir is refused",
      e == et::Error::InvalidArgument && executorch_openvino::last_error().find("takes a string") != std::string::npos,
      executorch_openvino::last_error());
  et::BackendOption unknown = text_option("threads", "");
  et::Span<et::BackendOption> unknown_span(&unknown, 1);
  check("get_option refuses an unknown key",
        et::get_option(executorch_openvino::kBackendId, unknown_span) == et::Error::InvalidArgument);
  check("switched off again", set({text_option("cache_dir", "")}) == et::Error::Ok && cache_dir_setting().empty());

  // A runtime spec of one load: the first init writes the cache, the second imports it.
  std::vector<uint8_t> arena(1 << 16);
  et::MemoryAllocator allocator(static_cast<uint32_t>(arena.size()), arena.data());
  et::BackendOption spec = text_option("cache_dir", cache);
  for (int load = 0; load < 2; ++load) {
    et::BackendInitContext context(&allocator, nullptr, nullptr, nullptr, et::Span<const et::BackendOption>(&spec, 1));
    et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
    auto handle = backend->init(context, &processed, cpu.view());
    const bool cached = executorch_openvino::last_compile_report().loaded_from_cache;
    check(load == 0 ? "runtime spec: first load compiles" : "runtime spec: second load imports",
          handle.ok() && cached == (load == 1), handle.ok() ? "" : executorch_openvino::last_error());
    if (handle.ok()) backend->destroy(handle.get());
  }
  // "CPU_f32-openvino-2026.4.1" (model_cache.h), beside the IR files' folder.
  bool entry_found = false;
  if (DIR* d = opendir(cache.c_str())) {
    while (dirent* e = readdir(d)) entry_found |= std::strncmp(e->d_name, "CPU_f32-openvino-", 17) == 0;
    closedir(d);
  }
  check("runtime spec: the entry is in its folder", entry_found && is_dir(cache + "/ir"), cache);

  et::BackendOption wrong = int_option("cache_dir", 1);
  et::BackendInitContext context(&allocator, nullptr, nullptr, nullptr, et::Span<const et::BackendOption>(&wrong, 1));
  et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  auto handle = backend->init(context, &processed, cpu.view());
  check("runtime spec: a number is refused at init",
        !handle.ok() && handle.error() == et::Error::InvalidArgument &&
            executorch_openvino::last_error().find("is not a string") != std::string::npos,
        executorch_openvino::last_error());
  return failures;
}
