// A DLL that imports openvino_c.dll (and through it openvino.dll and tbb12.dll).
// It stands in for what a Windows build of the delegate imports from other
// wheels (executorch's runtime, torch): the repair must leave every such DLL
// out of our wheel, unrenamed (wheels/delvewheel-exclude.txt). The delegate
// itself never links OpenVINO; only this probe in the test wheel does.
#include <windows.h>  // before openvino.h, which renames BOOLEAN

#include <openvino/c/openvino.h>

extern "C" __declspec(dllexport) int exov_probe_openvino_version(ov_version_t* version) {
  return ov_get_openvino_version(version) == OK ? 0 : 1;
}
