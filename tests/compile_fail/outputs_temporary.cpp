// An output's values point into the buffers its Outputs owns: taken from a temporary Outputs, the
// span would dangle once the statement ends (the buffers go back to the runtime), so it does not compile.
// expect: (use of deleted function[^\n]*operator\[\]|overload resolution selected deleted operator '\[\]')
#include <rknnxx/runtime/context.hpp>

#include <span>
using namespace rknnxx;
std::span<const float> first_output(Context& ctx) {
#ifdef RKNNXX_COMPILE_FAIL
  return ctx.outputs()[0].as<float>();
#else
  static Outputs kept = ctx.outputs();
  return kept[0].as<float>();
#endif
}
std::span<const float> named_output(Context& ctx) {
  const Outputs out = ctx.outputs();
  return out["logits"].as<float>().first(0);
}
