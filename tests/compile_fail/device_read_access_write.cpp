// A CPU access opened for reading gives read-only bytes: a write needs cpu_write, whose END sync cleans the
// cache for the device (docs/device.md#what-each-type-owns).
// expect: (assignment of read-only location|cannot assign to return value)
#include <rknnxx/device/dma_buf.hpp>

using namespace rknnxx::device;
void stamp(const DmaBuf& buf, Mapping& map) {
#ifdef RKNNXX_COMPILE_FAIL
  auto access = buf.cpu_access(map, cpu_read);
#else
  auto access = buf.cpu_access(map, cpu_write);
#endif
  access.bytes()[0] = std::byte{1};
}
