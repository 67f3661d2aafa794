// The per-plan search and the runner of elementwise_chain.hpp (docs/runtime-extensions.md, "Element-wise
// chains").

#include "elementwise_chain.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rknnxx::host {

namespace {

constexpr std::size_t max_inputs = 8;  // of an operator in a chain (Clip has three)

bool plain_float(ValueId id, std::span<const TensorInfo> infos, std::span<const std::size_t> kept_bytes) {
  const auto v = static_cast<std::size_t>(id);
  return infos[v].dtype == DataType::float32 && kept_bytes[v] == 0;
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

#if defined(__x86_64__)
// g++ 12's AVX-512 headers start each result from a deliberately undefined register and warn about it (GCC bug
// 105593); the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// Sixteen elements a step: the integers in one register, the table read by a gather.
__attribute__((target("avx512f"))) void lookup_avx512(const Lookup& l, const float* x, float* y, int64_t count) {
  const __m512 inverse = _mm512_set1_ps(l.inverse), lo = _mm512_set1_ps(l.lo), hi = _mm512_set1_ps(l.hi);
  const __m512i offset = _mm512_set1_epi32(l.offset);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __m512 t = _mm512_mul_ps(_mm512_loadu_ps(x + i), inverse);
    t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, t, _CMP_ORD_Q), t);  // NaN -> 0
    t = _mm512_min_ps(_mm512_max_ps(t, lo), hi);
    const __m512i index = _mm512_add_epi32(_mm512_cvtps_epi32(t), offset);  // to nearest, ties to even
    _mm512_storeu_ps(y + i, _mm512_i32gather_ps(index, l.table, 4));
  }
  lookup_portable(l, x + i, y + i, count - i);
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

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> find_elementwise_chains(std::span<const ChainCandidate> steps,
                                                                         std::span<const TensorInfo> infos,
                                                                         std::span<const std::size_t> kept_bytes,
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
    if (!steps[s].element_wise || node.inputs.size() > max_inputs || node.outputs.size() != 1 ||
        node.outputs[0] == no_value || !plain_float(node.outputs[0], infos, kept_bytes) ||
        infos[static_cast<std::size_t>(node.outputs[0])].elements() != elements)
      return false;
    return std::all_of(node.inputs.begin(), node.inputs.end(), [&](ValueId in) {
      if (in == no_value) return true;
      const int64_t n = infos[static_cast<std::size_t>(in)].elements();
      return plain_float(in, infos, kept_bytes) && (n == elements || n == 1);
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

void run_elementwise_chain(std::span<const ChainMember> members, std::span<const OutputFinish> finishes,
                           const ChainInput& input, Tensor& output, ThreadPool& pool) {
  // The grid's values, as the rounding stores them (AffineParams::dequantize: the product rounded once), and the
  // chain on them, member after member, each output rounded as stored.
  const int32_t levels = input.max - input.min + 1;
  std::vector<float> grid(static_cast<std::size_t>(levels) * members.size());
  for (int32_t k = 0; k < levels; ++k)
    grid[static_cast<std::size_t>(k)] =
        static_cast<float>(static_cast<double>(input.scale) * (input.min + k - input.zero_point));
  const auto values_of = [&](std::size_t m) { return grid.data() + static_cast<std::size_t>(levels) * (m + 1); };
  std::vector<float> table(static_cast<std::size_t>(levels));
  std::array<const float*, max_inputs> in{};
  for (std::size_t m = 0; m < members.size(); ++m) {
    const ChainMember& member = members[m];
    for (std::size_t i = 0; i < member.sources.size(); ++i) {
      const ChainMember::Source& source = member.sources[i];
      in[i] = source.member >= 0     ? values_of(static_cast<std::size_t>(source.member))
          : source.quantized_input   ? grid.data()
          : source.tensor != nullptr ? source.tensor->data<float>()
                                     : nullptr;
    }
    float* out = m + 1 == members.size() ? table.data() : values_of(m);
    member.tile(std::span<const float* const>(in.data(), member.sources.size()), out, levels);
    if (finishes[m]) finishes[m](out, static_cast<std::size_t>(levels));
  }
  // Each element's integer: x / scale is within 2^-22 of one for a grid value (x * (1 / scale), two roundings).
  const Lookup lookup{table.data(), 1.0f / input.scale, static_cast<float>(input.min - input.zero_point),
                      static_cast<float>(input.max - input.zero_point), input.zero_point - input.min};
  const float* x = input.tensor->data<float>();
  float* y = output.data<float>();
  const auto loop = lookup_loop();
  pool.parallel_for(output.elements(), int64_t{1} << 14,
                    [&](int64_t begin, int64_t end) { loop(lookup, x + begin, y + begin, end - begin); });
}

}  // namespace rknnxx::host
