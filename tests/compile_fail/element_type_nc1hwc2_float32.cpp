// NC1HWC2 has no C2 for float32 on RK3588: the static geometry of that combination does not compile.
// expect: (?s)c2\(tensor_type_of<.*(no operand of the disjunction is satisfied|evaluated to false)
#include <rknnxx/core/geometry.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
using Element = float;
#else
using Element = Float16;
#endif
constexpr auto g = geometry<Platform::rk3588, Element, layout::NC1HWC2>({1, 255, 80, 80});
static_assert(g.n_elems == 255 * 80 * 80);
