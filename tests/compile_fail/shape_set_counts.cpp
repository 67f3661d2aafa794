// A shape set whose second group lacks the second input's shape does not compile: every input
// needs the same number of shapes.
// expect: shape counts differ
#include <rknnxx/core/shape_set.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr ShapeSet<2, 2> set{{{Dims{1, 224}, Dims{1, 40}}, {Dims{1, 112}}}};
#else
constexpr ShapeSet<2, 2> set{{{Dims{1, 224}, Dims{1, 40}}, {Dims{1, 112}, Dims{1, 80}}}};
#endif
static_assert(set.max_shape_index() == 0);
