// One input whose shapes have different ranks does not compile.
// expect: inconsistent ranks
#include <rknnxx/core/shape_set.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr ShapeSet set{{{Dims{1, 3, 224, 224}}, {Dims{1, 3, 192}}}};
#else
constexpr ShapeSet set{{{Dims{1, 3, 224, 224}}, {Dims{1, 3, 192, 192}}}};
#endif
static_assert(set.num_shapes() == 2);
