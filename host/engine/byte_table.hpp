#pragma once
// A table of 256 int8 output integers looked up 64 values at a time with AVX512-VBMI's byte permutes
// (docs/runtime-extensions.md, "Element-wise chains"; benchmarks/README.md, "Element-wise tables on bytes"): the
// chain lookup of elementwise_chain.cpp and the rounding that looks a table up in the same pass
// (quantize::fake_quantize_and_look_up). One form of the trick for both, so that they read the same entries.

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rknnxx::host {

// Whether this CPU has the instructions ByteTable uses (AVX-512 F and BW, and VBMI); false off x86-64.
inline bool cpu_has_byte_permutes() noexcept {
#if defined(__x86_64__)
  static const bool has =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
  return has;
#else
  return false;
#endif
}

#if defined(__x86_64__)
// g++ 12's AVX-512 headers start each result from a deliberately undefined register and warn about it (GCC bug
// 105593); the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// ByteTable::look_up's permute indices. Byte j < 32 of `first` is the low byte of element j of the first two
// registers (byte 4j of the pair, the second's bytes numbered from 64); byte j >= 32 of `second`, of element j - 32
// of the last two. Built once: filled on the stack for each table and loaded as one vector, they would cost a failed
// store forwarding per piece.
struct ByteTablePicks {
  alignas(64) uint8_t first[64] = {};
  alignas(64) uint8_t second[64] = {};
  constexpr ByteTablePicks() {
    for (unsigned j = 0; j < 32; ++j) {
      first[j] = static_cast<uint8_t>(j < 16 ? 4 * j : 64 + 4 * (j - 16));
      second[j + 32] = first[j];
    }
  }
};
inline constexpr ByteTablePicks byte_table_picks{};

// The table's 256 bytes in four registers, and the output grid scale * (q - zero_point). Made and used only inside
// functions compiled for avx512f,avx512bw,avx512vbmi (and called where cpu_has_byte_permutes()).
struct ByteTable {
  __m512i t0, t1, t2, t3;           // bytes [0, 64), [64, 128), [128, 192), [192, 256)
  __m512i pick_first, pick_second;  // where four registers' low bytes go in one (look_up)
  __m512i zero;
  __m512 scale;

  [[gnu::always_inline]] __attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline ByteTable(
      const int8_t* bytes, float output_scale, int32_t zero_point) noexcept
      : t0(_mm512_loadu_si512(bytes)), t1(_mm512_loadu_si512(bytes + 64)), t2(_mm512_loadu_si512(bytes + 128)),
        t3(_mm512_loadu_si512(bytes + 192)), pick_first(_mm512_load_si512(byte_table_picks.first)),
        pick_second(_mm512_load_si512(byte_table_picks.second)), zero(_mm512_set1_epi32(zero_point)),
        scale(_mm512_set1_ps(output_scale)) {}

  // out[16k + l] = scale * (bytes[i + 128] - zero_point) for the low byte i (signed: index - 128) of lane l of
  // index[k]: two 128-byte permutes (vpermi2b) and a blend on the index's sign, then widened and scaled to floats.
  // The low bytes come together with two byte permutes and a blend, not four narrowing moves and three inserts; the
  // looked-up bytes widen from memory, not extracted first: port 5 bounds the loop.
  [[gnu::always_inline]] __attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline void
  look_up(const __m512i (&index)[4], float* out) const noexcept {
    const __m512i low_bytes =
        _mm512_mask_blend_epi8(0xffffffff00000000, _mm512_permutex2var_epi8(index[0], pick_first, index[1]),
                               _mm512_permutex2var_epi8(index[2], pick_second, index[3]));
    const __m512i low = _mm512_permutex2var_epi8(t0, low_bytes, t1);   // bytes[0, 128): index - 128 negative
    const __m512i high = _mm512_permutex2var_epi8(t2, low_bytes, t3);  // bytes[128, 256)
    alignas(64) int8_t looked_up[64];
    _mm512_store_si512(looked_up, _mm512_mask_blend_epi8(_mm512_movepi8_mask(low_bytes), high, low));
    for (unsigned k = 0; k < 4; ++k) {
      const __m128i bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(looked_up + 16 * k));
      const __m512i q = _mm512_sub_epi32(_mm512_cvtepi8_epi32(bytes), zero);
      _mm512_storeu_ps(out + 16 * k, _mm512_mul_ps(_mm512_cvtepi32_ps(q), scale));
    }
  }
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

}  // namespace rknnxx::host
