// The bodies of rknnxx's headers, compiled once for programs that define
// RKNNXX_SEPARATE_COMPILATION (Meson: rknnxx_compiled_dep; docs/separate-compilation.md).
#include <rknnxx/impl/src.hpp>
