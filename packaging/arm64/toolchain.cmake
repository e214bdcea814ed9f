# Cross-compiling perfgate for arm64 on a Debian amd64 host with Debian's
# toolchain (crossbuild-essential-arm64) and multiarch :arm64 libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Headers and libraries of the target from its multiarch directories; the
# build's programs (protoc, bpftool, clang -target bpf) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(Protobuf_PROTOC_EXECUTABLE /usr/bin/protoc)
