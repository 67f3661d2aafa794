#pragma once
// How the bodies in rknnxx's impl/ headers are defined (docs/separate-compilation.md):
// inline, in every translation unit that includes their header (header-only, the default), or
// once, in the translation unit that includes <rknnxx/impl/src.hpp>, when every translation unit
// of the program defines RKNNXX_SEPARATE_COMPILATION.

#ifdef RKNNXX_SEPARATE_COMPILATION
#define RKNNXX_DECL
#else
#define RKNNXX_DECL inline
#endif
