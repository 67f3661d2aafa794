// Per-input shape lists of different lengths (as RKNN_QUERY_INPUT_DYNAMIC_RANGE would report
// them) do not make a shape set.
// expect: shape counts differ
#include <rknnxx/core/shape_set.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr auto set = ShapeSet<2, 2>::per_input({{Dims{1, 224}, Dims{1, 112}}, {Dims{1, 40}}});
#else
constexpr auto set = ShapeSet<2, 2>::per_input({{Dims{1, 224}, Dims{1, 112}}, {Dims{1, 40}, Dims{1, 80}}});
#endif
static_assert(set.num_shapes() == 2);
