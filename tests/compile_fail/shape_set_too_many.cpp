// More than RKNN_MAX_DYNAMIC_SHAPE_NUM (512) shapes do not compile.
// expect: at most RKNN_MAX_DYNAMIC_SHAPE_NUM
#include <rknnxx/core/shape_set.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr std::size_t shapes = 513;
#else
constexpr std::size_t shapes = 512;
#endif
static_assert(sizeof(ShapeSet<1, shapes>) == shapes * sizeof(Dims));
