// int4 elements are packed two to a byte: a TensorView would address them one byte each, so it
// does not compile; Int4Span reads and writes them by element index.
// expect: (constraints not satisfied|constraints not satisfied for class template|ByteAddressableElement)
#include <rknnxx/tensor/int4_span.hpp>
#include <rknnxx/tensor/view.hpp>

using namespace rknnxx;
constexpr int third(const Int4x2* bytes) {
#ifdef RKNNXX_COMPILE_FAIL
  return flat_view(reinterpret_cast<const Int4*>(bytes), Dims{5})(2);
#else
  return Int4Span(bytes, 5)[2];
#endif
}
constexpr Int4x2 packed[3] = {Int4x2(Int4(1), Int4(2)), Int4x2(Int4(3), Int4(4)), Int4x2(Int4(5), Int4(0))};
static_assert(third(packed) == 3);
