#pragma once
// The umbrella header: everything an application that runs models needs. Headers that most
// translation units do not need stay out of it, so that they do not pay for them
// (docs/separate-compilation.md#compile-cost): <rknnxx/core/format.hpp>, the fmt formatters that
// print attributes, dims and shape sets (it pulls <fmt/format.h>); <rknnxx/runtime/matmul.hpp>, the
// matrix-multiply interface (with core/matmul_layout.hpp); <rknnxx/runtime/custom_op.hpp>, C++ custom operators; and the
// Linux-only <rknnxx/device/...>.
#include <rknnxx/version.hpp>

// The C interface of the runtime, declared by rknnxx (rknnxx/abi), and the compile-time
// vocabulary above it (rknnxx/core).
#include <rknnxx/abi/c_api.h>
#include <rknnxx/abi/c_custom_op.h>
#include <rknnxx/core/bfloat16.hpp>
#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/float16.hpp>
#include <rknnxx/core/geometry.hpp>
#include <rknnxx/core/input_conversion.hpp>
#include <rknnxx/core/int4.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/core/packed_float.hpp>
#include <rknnxx/core/platform.hpp>
#include <rknnxx/core/shape_set.hpp>

// Tensor attributes, typed views and layout/type conversions (rknnxx/tensor), and the runtime
// layer (rknnxx/runtime): loader, Context, Mem, IoBinding, outputs, typed contexts.
#include <rknnxx/tensor/attr.hpp>
#include <rknnxx/tensor/convert.hpp>
#include <rknnxx/tensor/int4_span.hpp>
#include <rknnxx/tensor/view.hpp>
#include <rknnxx/runtime/api_table.hpp>
#include <rknnxx/runtime/context.hpp>
#include <rknnxx/runtime/context_state.hpp>
#include <rknnxx/runtime/flags.hpp>
#include <rknnxx/runtime/io_binding.hpp>
#include <rknnxx/runtime/loader.hpp>
#include <rknnxx/runtime/mem.hpp>
#include <rknnxx/runtime/outputs.hpp>
#include <rknnxx/runtime/typed_context.hpp>
