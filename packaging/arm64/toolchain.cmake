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
set(Protobuf_PROTOC_EXECUTABLE /usr/bin/protoc)

# Debian's libpq-dev is not multi-arch: its arm64 package would replace the
# host's. The build links libpq5:arm64's library with the host's libpq-dev
# headers (the same on both architectures) through a pkg-config file of its
# own, in the build dir. (Not in try_compile's, which reads this file in the
# same process and needs no pkg-config: the environment stays the build's.)
get_property(perfgate_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
if(NOT perfgate_in_try_compile)
  set(perfgate_libpq /usr/lib/aarch64-linux-gnu/libpq.so.5)
  if(NOT EXISTS ${perfgate_libpq})
    message(FATAL_ERROR "${perfgate_libpq} is missing (ci/install-deps-arm64.sh installs libpq5:arm64)")
  endif()
  if(NOT EXISTS /usr/include/postgresql/libpq-fe.h)
    message(FATAL_ERROR "libpq's headers are missing (ci/install-deps.sh installs libpq-dev)")
  endif()
  set(perfgate_cross_pc ${CMAKE_BINARY_DIR}/cross-pkgconfig)
  file(MAKE_DIRECTORY ${perfgate_cross_pc})
  file(CREATE_LINK ${perfgate_libpq} ${perfgate_cross_pc}/libpq.so SYMBOLIC)
  file(WRITE ${perfgate_cross_pc}/libpq.pc "Name: libpq\nDescription: libpq5:arm64 with the host's headers\n"
    "Version: 15\nCflags: -I/usr/include/postgresql\nLibs: -L${perfgate_cross_pc} -lpq\n")
  set(ENV{PKG_CONFIG_LIBDIR} "${perfgate_cross_pc}:/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
endif()
