#include <doctest/doctest.h>
#include <rknnxx/rknn.hpp>
#include <string>

TEST_CASE("the version string agrees with its numbers") {
  std::string expected = std::to_string(rknnxx::version_major) + "." + std::to_string(rknnxx::version_minor) + "." +
      std::to_string(rknnxx::version_patch);
  CHECK(expected == rknnxx::version_string);
}
