#pragma once
// The one translation unit of a program built with RKNNXX_SEPARATE_COMPILATION: it compiles the
// bodies that every other translation unit then only declares (docs/separate-compilation.md).
// Meson's rknnxx_compiled_dep and CMake's rknnxx::compiled build it for you.

#ifndef RKNNXX_SEPARATE_COMPILATION
#error "<rknnxx/impl/src.hpp> is for builds that define RKNNXX_SEPARATE_COMPILATION in every translation unit"
#endif

#include <rknnxx/rknn.hpp>

#include <rknnxx/core/impl/error.hpp>
#include <rknnxx/core/impl/message.hpp>
#include <rknnxx/core/impl/shape_set.hpp>

#include <rknnxx/runtime/impl/context.hpp>
#include <rknnxx/runtime/impl/context_state.hpp>
#include <rknnxx/runtime/impl/custom_op.hpp>
#include <rknnxx/runtime/impl/io_binding.hpp>
#include <rknnxx/runtime/impl/loader.hpp>
#include <rknnxx/runtime/impl/mem.hpp>
#include <rknnxx/runtime/impl/outputs.hpp>
