// A native NC1HWC2 attribute viewed as NHWC: the checked conversion refuses it at compile time.
// expect: expected layout
#include <rknnxx/core/layout.hpp>
using namespace rknnxx;
constexpr RuntimeLayout native(TensorFormat::nc1hwc2, {1, 32, 80, 80, 8});
#ifdef RKNNXX_COMPILE_FAIL
constexpr auto m = native.mapping<layout::NHWC>();
#else
constexpr auto m = native.mapping<layout::NC1HWC2>();
#endif
static_assert(m.required_span_size() == 32 * 80 * 80 * 8);
