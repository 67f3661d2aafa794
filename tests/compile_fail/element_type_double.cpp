// double is not a tensor element (the runtime has no FLOAT64 type).
// expect: (?s)TensorElement.*element_traits<[^\n]*(is|would be) invalid
#include <rknnxx/core/element_type.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
using Element = double;
#else
using Element = float;
#endif
static_assert(bytes_for<Element>(3) == 12);
