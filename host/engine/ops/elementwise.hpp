#pragma once
// The machinery shared by the element-wise operator files (elementwise.cpp, compare_logic.cpp,
// arithmetic_ops.cpp, unary_math.cpp): a broadcast binary loop whose inner runs are plain
// contiguous loops the compiler vectorises, the broadcast check with its message, and a
// parallel unary map.

#include "../broadcast.hpp"
#include "../op_registry.hpp"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

namespace rknnxx::host {

inline constexpr int64_t elementwise_grain = int64_t{1} << 14;

// out[i] = f(a[i], b[i]) over one run, an operand whose step is 0 read as its one value (a contiguous loop the
// compiler vectorises in each case).
template <class TA, class TB, class TO, class F>
void binary_run(const TA* a, const TB* b, TO* out, int64_t n, int64_t a_step, int64_t b_step, F f) {
  if (a_step != 0 && b_step != 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (a_step != 0) {
    const TB bv = *b;
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
  } else if (b_step != 0) {
    const TA av = *a;
    for (int64_t i = 0; i < n; ++i) out[i] = f(av, b[i]);
  } else {
    std::fill(out, out + n, f(*a, *b));
  }
}

// write(begin, end) and then `finish` on out[begin, end), piece by piece over [begin, end); write alone without a
// finish.
template <class W> void write_and_finish(float* out, int64_t begin, int64_t end, const OutputFinish& finish, W write) {
  if (!finish) {
    write(begin, end);
    return;
  }
  for (int64_t piece = begin; piece < end; piece += finish_piece) {
    const int64_t piece_end = std::min(end, piece + finish_piece);
    write(piece, piece_end);
    finish(out + piece, static_cast<std::size_t>(piece_end - piece));
  }
}

// out[i] = f(a[...], b[...]) over a broadcast of two operands; `finish` (a float32 output's rounding as stored,
// KernelContext::finish_output), when given, applied to each piece just written, while in cache.
template <class TA, class TB, class TO, class F> void broadcast_binary(const Broadcast& bc, ThreadPool& pool,
                                                                       const TA* a, const TB* b, TO* out, F f,
                                                                       const OutputFinish* finish = nullptr) {
  bc.parallel_runs(pool, [&](int64_t o, std::span<const int64_t> offsets, std::span<const int64_t> steps, int64_t n) {
    const TA* pa = a + offsets[0];
    const TB* pb = b + offsets[1];
    TO* po = out + o;
    if constexpr (std::is_same_v<TO, float>) {
      if (finish != nullptr) {
        write_and_finish(po, 0, n, *finish, [&](int64_t begin, int64_t end) {
          binary_run(pa + begin * steps[0], pb + begin * steps[1], po + begin, end - begin, steps[0], steps[1], f);
        });
        return;
      }
    }
    binary_run(pa, pb, po, n, steps[0], steps[1], f);
  });
}

// out[i] = f(in[i]) split over the pool.
template <class TI, class TO, class F> void parallel_map(ThreadPool& pool, const TI* in, TO* out, int64_t n, F f) {
  pool.parallel_for(n, elementwise_grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      out[i] = f(in[i]);
    }
  });
}

// The broadcast of the given inputs, or a failure naming them.
inline Broadcast prepare_broadcast(const OpContext& ctx, std::initializer_list<std::size_t> inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (std::size_t i : inputs) {
    shapes.push_back(ctx.input(i).shape);
  }
  std::string error;
  broadcast_shape(shapes, error);
  if (!error.empty()) {
    std::vector<std::string> names;
    for (std::size_t i : inputs) {
      names.push_back(fmt::format("'{}'", ctx.input_name(i)));
    }
    ctx.fail("inputs {}: {}", fmt::join(names, ", "), error);
  }
  return Broadcast(shapes);
}

// A float32 unary operator; F is made from the node's attributes by `make`.
template <class MakeFunction> PreparedOp prepare_unary_float(OpContext& ctx, MakeFunction make) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  auto f = make(ctx);
  op.tile = [f](std::span<const float* const> in, float* out, int64_t count) {  // elementwise_chain.hpp
    for (int64_t i = 0; i < count; ++i) out[i] = f(in[0][i]);
  };
  op.kernel = [f](KernelContext& k) {
    parallel_map(k.pool, k.input(0).data<float>(), k.output(0).data<float>(), k.input(0).elements(), f);
  };
  return op;
}

// A float32 unary operator without attributes.
template <float (*F)(float)> PreparedOp prepare_simple(OpContext& ctx) {
  return prepare_unary_float(ctx, [](const OpContext&) { return F; });
}

// Inputs a and b must have the same element type; returns it.
inline DataType same_dtype(const OpContext& ctx, std::size_t a, std::size_t b) {
  const DataType dtype = ctx.input(a).dtype;
  if (ctx.input(b).dtype != dtype) {
    ctx.fail("inputs '{}' and '{}' have element types {} and {}; they must match", ctx.input_name(a), ctx.input_name(b),
             dtype_name(dtype), dtype_name(ctx.input(b).dtype));
  }
  return dtype;
}

}  // namespace rknnxx::host
