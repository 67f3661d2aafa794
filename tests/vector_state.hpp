#pragma once
// Whether the upper halves of the vector registers are in use on this thread (docs/runtime-extensions.md, "Vector
// state"). A function compiled for AVX or AVX-512 must leave them unused (vzeroupper) before SSE code runs: the
// engine's portable code is SSE on x86-64, and each of its instructions takes about twice as long while they are in
// use. The processor reports it through XGETBV with ECX = 1 (XINUSE): bit 2 for ymm0-15's upper halves, bit 6 for
// zmm0-15's; bit 7 (zmm16-31) does not slow SSE, which cannot reach those registers.

#include <cstdint>
#include <optional>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace rknnxx::test {

// nullopt where the processor cannot tell (not x86-64, or no XGETBV with ECX = 1).
inline std::optional<bool> upper_vector_halves_in_use() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & bit_OSXSAVE) == 0) return std::nullopt;
  if (__get_cpuid_count(0xD, 1, &eax, &ebx, &ecx, &edx) == 0 || (eax & (1u << 2)) == 0) return std::nullopt;
  std::uint32_t low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(1u));
  return (low & ((1u << 2) | (1u << 6))) != 0;
#else
  return std::nullopt;
#endif
}

}  // namespace rknnxx::test
