// The per-plan search and the runner of elementwise_chain.hpp (docs/runtime-extensions.md, "Element-wise
// chains").

#include "elementwise_chain.hpp"
#include "byte_table.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rknnxx::host {

namespace {

bool is_float(ValueId id, std::span<const TensorInfo> infos) {
  return infos[static_cast<std::size_t>(id)].dtype == DataType::float32;
}

// y = table[integer of x]: the integer nearest x * inverse (ties to even by adding and subtracting 1.5 * 2^23),
// NaN read as the zero point, clamped to the grid, then moved to the table's index.
struct Lookup {
  const float* table;
  float inverse, lo, hi;  // lo and hi: the grid's integers less the zero point
  int32_t offset;         // the zero point less the grid's least integer
};

void lookup_portable(const Lookup& l, const float* x, float* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    float t = x[i] * l.inverse;
    t = t == t ? t : 0.0f;
    t = std::min(std::max(t, l.lo), l.hi);
    y[i] = l.table[static_cast<int32_t>((t + 0x1.8p23f) - 0x1.8p23f) + l.offset];
  }
}

// The same lookup on bytes, for an int8 input and an int8 output grid: y = scale * (bytes[integer of x] - zero).
struct ByteLookup {
  Lookup index;         // the float table, for the elements after the last full step of 64
  const int8_t* bytes;  // 256 output integers by the input's integer less its least one
  float scale;          // the output grid's
  int32_t zero_point;
};

#if defined(__x86_64__)
// g++ 12's AVX-512 headers start each result from a deliberately undefined register and warn about it (GCC bug
// 105593); the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// Sixteen elements a step: the integers in one register, the table read by a gather; the last step masked. It
// calls nothing, so its vzeroupper is its last word: a tail call into SSE code would run that code, and whatever
// follows, with the upper halves of the vector registers in use, which makes each SSE instruction on this machine
// take about twice as long (docs/runtime-extensions.md, "Vector state").
__attribute__((target("avx512f"))) void lookup_avx512(const Lookup& l, const float* x, float* y, int64_t count) {
  const __m512 inverse = _mm512_set1_ps(l.inverse), lo = _mm512_set1_ps(l.lo), hi = _mm512_set1_ps(l.hi);
  const __m512i offset = _mm512_set1_epi32(l.offset);
  for (int64_t i = 0; i < count; i += 16) {
    const auto mask = static_cast<__mmask16>(count - i >= 16 ? 0xffff : (1u << (count - i)) - 1);
    __m512 t = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), inverse);
    t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, t, _CMP_ORD_Q), t);  // NaN -> 0
    t = _mm512_min_ps(_mm512_max_ps(t, lo), hi);
    const __m512i index = _mm512_add_epi32(_mm512_cvtps_epi32(t), offset);  // to nearest, ties to even
    _mm512_mask_storeu_ps(y + i, mask, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, index, l.table, 4));
  }
}
// Sixty-four elements a step: their table indices less 128, looked up in the table of bytes (byte_table.hpp). The
// index is lookup_avx512's integer, and the table was checked to hold exactly scale * (q - zero) for each byte q
// (byte_table). NaN needs no mask: min and max return their second operand when either is NaN, so NaN stays NaN
// through the clamp, and its integer 0x80000000 has the low byte of 0, the zero point's index once the offset is
// added.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void lookup_bytes_avx512(const ByteLookup& l, const float* x,
                                                                                float* y, int64_t count) {
  const __m512 inverse = _mm512_set1_ps(l.index.inverse), lo = _mm512_set1_ps(l.index.lo),
               hi = _mm512_set1_ps(l.index.hi);
  const __m512i offset = _mm512_set1_epi32(l.index.offset - 128);
  const ByteTable table(l.bytes, l.scale, l.zero_point);
  int64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    __m512i integer[4];  // not std::array, which would drop the vector type's attributes
    for (std::size_t k = 0; k < 4; ++k) {
      __m512 t = _mm512_mul_ps(_mm512_loadu_ps(x + i + 16 * static_cast<int64_t>(k)), inverse);
      t = _mm512_min_ps(hi, _mm512_max_ps(lo, t));                   // NaN stays NaN (the second operand)
      integer[k] = _mm512_add_epi32(_mm512_cvtps_epi32(t), offset);  // to nearest, ties to even
    }
    table.look_up(integer, y + i);
  }
  lookup_avx512(l.index, x + i, y + i, count - i);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

using LookupLoop = void (*)(const Lookup&, const float*, float*, int64_t);

LookupLoop lookup_loop() {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return lookup_avx512;
#endif
  return lookup_portable;
}

using ByteLookupLoop = void (*)(const ByteLookup&, const float*, float*, int64_t);

// The byte lookup where this CPU has it, else nullptr.
ByteLookupLoop byte_lookup_loop() {
#if defined(__x86_64__)
  if (cpu_has_byte_permutes()) return lookup_bytes_avx512;
#endif
  return nullptr;
}

// The table as the output grid's integers, when every entry is exactly scale * (q - zero_point) for an int8 q
// (float32 arithmetic, as lookup_bytes_avx512 computes it): false otherwise (no grid; a value the rounding did not
// put on it, such as -0), and the float table is looked up instead.
bool byte_table(std::span<const float> table, ChainOutputGrid grid, std::array<int8_t, 256>& bytes) {
  if (!(grid.scale > 0.0f) || !std::isfinite(grid.scale) || table.size() > bytes.size()) return false;
  for (std::size_t k = 0; k < table.size(); ++k) {
    const double t = std::nearbyint(static_cast<double>(table[k]) / grid.scale) + grid.zero_point;
    if (!(t >= -128.0 && t <= 127.0)) return false;  // NaN too
    const auto q = static_cast<int32_t>(t);
    const float value = static_cast<float>(q - grid.zero_point) * grid.scale;
    if (std::bit_cast<uint32_t>(value) != std::bit_cast<uint32_t>(table[k])) return false;
    bytes[k] = static_cast<int8_t>(q);
  }
  return true;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> find_elementwise_chains(std::span<const ChainCandidate> steps,
                                                                         std::span<const TensorInfo> infos,
                                                                         std::span<const ValueId> graph_outputs) {
  // Where each value is read: the steps reading it, and whether it is a graph output.
  std::vector<std::vector<std::size_t>> readers(infos.size());
  for (std::size_t s = 0; s < steps.size(); ++s)
    for (ValueId in : steps[s].node->inputs)
      if (in != no_value) readers[static_cast<std::size_t>(in)].push_back(s);
  std::vector<char> is_output(infos.size(), 0);
  for (ValueId out : graph_outputs) is_output[static_cast<std::size_t>(out)] = 1;

  // A step that may join a chain of `elements` values.
  const auto joins = [&](std::size_t s, int64_t elements) {
    const Node& node = *steps[s].node;
    if (!steps[s].element_wise || node.inputs.size() > max_tile_inputs || node.outputs.size() != 1 ||
        node.outputs[0] == no_value || !is_float(node.outputs[0], infos) ||
        infos[static_cast<std::size_t>(node.outputs[0])].elements() != elements)
      return false;
    return std::all_of(node.inputs.begin(), node.inputs.end(), [&](ValueId in) {
      if (in == no_value) return true;
      const int64_t n = infos[static_cast<std::size_t>(in)].elements();
      return is_float(in, infos) && (n == elements || n == 1);
    });
  };
  std::vector<std::pair<std::size_t, std::size_t>> chains;
  for (std::size_t first = 0; first < steps.size();) {
    const Node& head = *steps[first].node;
    const int64_t elements = head.outputs.size() == 1 && head.outputs[0] != no_value
        ? infos[static_cast<std::size_t>(head.outputs[0])].elements()
        : 0;
    if (elements < 1 || !joins(first, elements)) {
      ++first;
      continue;
    }
    std::size_t last = first;
    while (last + 1 < steps.size() && last + 1 - first < max_chain_steps && joins(last + 1, elements)) ++last;
    // Every value but the last one must stay inside: cut the chain after the first that does not, until none.
    for (bool cut = true; cut && last > first;) {
      cut = false;
      for (std::size_t s = first; s < last; ++s) {
        const auto v = static_cast<std::size_t>(steps[s].node->outputs[0]);
        const bool inside = is_output[v] == 0 &&
            std::all_of(readers[v].begin(), readers[v].end(), [&](std::size_t r) { return r > s && r <= last; });
        if (!inside) {
          last = s;
          cut = true;
          break;
        }
      }
    }
    chains.emplace_back(first, last);
    first = last + 1;
  }
  return chains;
}

namespace {

// Each element's integer: x / scale is within 2^-22 of one for a grid value (x * (1 / scale), two roundings).
Lookup lookup_of(const float* table, const ChainInput& input) {
  return {table, 1.0f / input.scale, static_cast<float>(input.min - input.zero_point),
          static_cast<float>(input.max - input.zero_point), input.zero_point - input.min};
}

// y = `table` at each of `count` elements' integers, on the calling thread: on `bytes` (byte_table's) where given,
// else on the floats.
void look_up_run(const float* table, const int8_t* bytes, const ChainInput& input, ChainOutputGrid output_grid,
                 const float* x, float* y, int64_t count) {
  const Lookup lookup = lookup_of(table, input);
  if (bytes != nullptr) {
    byte_lookup_loop()(ByteLookup{lookup, bytes, output_grid.scale, output_grid.zero_point}, x, y, count);
  } else {
    lookup_loop()(lookup, x, y, count);
  }
}

// `output` = `table` at each input element's integer, in pieces on the pool.
void look_up(const float* table, const int8_t* bytes, const ChainInput& input, ChainOutputGrid output_grid,
             Tensor& output, ThreadPool& pool) {
  const float* x = input.tensor->data<float>();
  float* y = output.data<float>();
  pool.parallel_for(output.elements(), int64_t{1} << 14, [&](int64_t begin, int64_t end) {
    look_up_run(table, bytes, input, output_grid, x + begin, y + begin, end - begin);
  });
}

}  // namespace

void prepare_chain_table(std::span<const ChainMember> members, std::span<const OutputFinish> finishes,
                         const ChainInput& input, ChainOutputGrid output_grid, ChainTable& kept) {
  std::array<uint32_t, max_chain_steps * max_tile_inputs> scalars{};
  std::size_t scalar_count = 0;
  for (const ChainMember& member : members)
    for (const ChainMember::Source& source : member.sources)
      if (source.member < 0 && !source.quantized_input && source.tensor != nullptr)
        scalars[scalar_count++] = std::bit_cast<uint32_t>(source.tensor->data<float>()[0]);
  const bool same = kept.valid && kept.scalars.size() == scalar_count &&
      std::equal(kept.scalars.begin(), kept.scalars.end(), scalars.begin());
  if (same) return;
  // The grid's values, as the rounding stores them (AffineParams::dequantize: the product rounded once), and the
  // chain on them, member after member, each output rounded as stored.
  const int32_t levels = input.max - input.min + 1;
  std::vector<float> grid(static_cast<std::size_t>(levels) * members.size());
  for (int32_t k = 0; k < levels; ++k)
    grid[static_cast<std::size_t>(k)] =
        static_cast<float>(static_cast<double>(input.scale) * (input.min + k - input.zero_point));
  const auto values_of = [&](std::size_t m) { return grid.data() + static_cast<std::size_t>(levels) * (m + 1); };
  kept.valid = false;  // until the table below is whole
  kept.table.resize(static_cast<std::size_t>(levels));
  std::array<const float*, max_tile_inputs> in{};
  for (std::size_t m = 0; m < members.size(); ++m) {
    const ChainMember& member = members[m];
    for (std::size_t i = 0; i < member.sources.size(); ++i) {
      const ChainMember::Source& source = member.sources[i];
      in[i] = source.member >= 0     ? values_of(static_cast<std::size_t>(source.member))
          : source.quantized_input   ? grid.data()
          : source.tensor != nullptr ? source.tensor->data<float>()
                                     : nullptr;
    }
    float* out = m + 1 == members.size() ? kept.table.data() : values_of(m);
    member.tile(std::span<const float* const>(in.data(), member.sources.size()), out, levels);
    if (finishes[m]) finishes[m](out, static_cast<std::size_t>(levels));
  }
  kept.bytes = byte_lookup_loop() != nullptr && byte_table(kept.table, output_grid, kept.byte_values);
  kept.scalars.assign(scalars.begin(), scalars.begin() + static_cast<std::ptrdiff_t>(scalar_count));
  kept.valid = true;
}

void run_elementwise_chain(std::span<const ChainMember> members, std::span<const OutputFinish> finishes,
                           const ChainInput& input, ChainOutputGrid output_grid, Tensor& output, ThreadPool& pool,
                           ChainTable& kept) {
  prepare_chain_table(members, finishes, input, output_grid, kept);
  look_up(kept.table.data(), kept.bytes ? kept.byte_values.data() : nullptr, input, output_grid, output, pool);
}

void look_up_piece(const ChainTable& kept, const ChainInput& input, ChainOutputGrid output_grid, const float* x,
                   float* y, int64_t count) {
  look_up_run(kept.table.data(), kept.bytes ? kept.byte_values.data() : nullptr, input, output_grid, x, y, count);
}

bool look_up_table(std::span<const float> table, const ChainInput& input, ChainOutputGrid output_grid, Tensor& output,
                   ThreadPool& pool) {
  std::array<int8_t, 256> bytes{};
  const bool on_bytes = byte_lookup_loop() != nullptr && byte_table(table, output_grid, bytes);
  look_up(table.data(), on_bytes ? bytes.data() : nullptr, input, output_grid, output, pool);
  return on_bytes;
}

}  // namespace rknnxx::host
