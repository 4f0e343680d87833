# CMake toolchain file: Linux aarch64 from an x86_64 Debian machine, with
# Debian's cross compilers (g++-aarch64-linux-gnu) and its multiarch libraries
# (zlib1g-dev:arm64, found in /usr/lib/aarch64-linux-gnu). `nox -s repair_aarch64`
# passes it; ExecuTorch and OpenVINO come from their aarch64 wheels, unpacked,
# given as EXECUTORCH_PACKAGE_DIR and OPENVINO_PACKAGE_DIR (CMakeLists.txt).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Programs (the host Python, objcopy's x86_64 twin) are never searched in a
# target folder; libraries and headers come from the target's multiarch paths.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
