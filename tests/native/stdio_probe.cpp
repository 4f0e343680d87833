// Built by tests/runtime/test_concurrency.py against the system's shared libstdc++ (the
// one executorch's pybindings use), to read and use std::cout and std::cerr as
// they do: which buffer each stream writes to, and a write through std::cout.
#include <iostream>

extern "C" const void* exov_cout_buffer() { return std::cout.rdbuf(); }
extern "C" const void* exov_cerr_buffer() { return std::cerr.rdbuf(); }
extern "C" void exov_write_cout(const char* text) { std::cout << text << std::flush; }
