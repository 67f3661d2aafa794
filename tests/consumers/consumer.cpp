// A downstream application: it only includes the umbrella header and uses the library.
#include <rknnxx/rknn.hpp>
#include <cstdio>

int main() {
  std::printf("rknnxx %s\n", rknnxx::version_string);
  return 0;
}
