# CMake toolchain file for 64-bit ARM boards (RK3588, RK3576, RK356x, RK3562) with Debian's cross
# compiler (g++-aarch64-linux-gnu), or for armhf with -DRKNNXX_CROSS_TRIPLE=arm-linux-gnueabihf. Use:
#   cmake -S app -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=<rknnxx>/cross/aarch64-linux-gnu.cmake \
#         -DCMAKE_PREFIX_PATH=<where rknnxx is installed>
# See docs/cross-compiling.md.
set(RKNNXX_CROSS_TRIPLE aarch64-linux-gnu CACHE STRING "the cross compiler's target triple")
set(CMAKE_SYSTEM_NAME Linux)
if(RKNNXX_CROSS_TRIPLE MATCHES "^arm")
  set(CMAKE_SYSTEM_PROCESSOR arm)
else()
  set(CMAKE_SYSTEM_PROCESSOR aarch64)
endif()
set(CMAKE_C_COMPILER ${RKNNXX_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${RKNNXX_CROSS_TRIPLE}-g++)
# The target's libraries (fmt, ...) from the cross sysroot and the multiarch directories; rknnxx
# itself (header-only) from CMAKE_PREFIX_PATH.
set(CMAKE_FIND_ROOT_PATH /usr/${RKNNXX_CROSS_TRIPLE} /usr/lib/${RKNNXX_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_LIBRARY_ARCHITECTURE ${RKNNXX_CROSS_TRIPLE})
# Run target programs (try_run, tests) under qemu-user with the cross libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR};-L;/usr/${RKNNXX_CROSS_TRIPLE};-E;LD_LIBRARY_PATH=/usr/${RKNNXX_CROSS_TRIPLE}/lib)
