// A mapping gives out no bytes of its own: the CPU reaches them only through its buffer's cpu_access(), so
// the dma-buf sync around the access cannot be forgotten (docs/device.md#what-each-type-owns).
// expect: no member named[^\n]*bytes
#include <rknnxx/device/dma_buf.hpp>

using namespace rknnxx::device;
std::byte first(const DmaBuf& buf, Mapping& map) {
#ifdef RKNNXX_COMPILE_FAIL
  return map.bytes()[0];
#else
  return buf.cpu_access(map, cpu_read).bytes()[0];
#endif
}
