// Only layout types (the concept Layout) name a mapping; an element type is not one.
// expect: (?s)Layout.*'L::format' (is|would be) invalid
#include <rknnxx/core/layout.hpp>
using namespace rknnxx;
constexpr RuntimeLayout nhwc(TensorFormat::nhwc, {1, 224, 224, 3});
#ifdef RKNNXX_COMPILE_FAIL
using L = std::uint8_t;
#else
using L = layout::NHWC;
#endif
constexpr auto m = nhwc.mapping<L>();
static_assert(m.required_span_size() == 224 * 224 * 3);
