// An installed C++ application that opens a model through the runtime layer, without any
// environment variable: the loader finds the installed host runtime (the install libdir compiled
// into rknnxx/runtime/install_paths.hpp). Usage: runtime_consumer MODEL; prints "runtime: PATH" and
// the runtime's explanation of why MODEL was refused, or its input count.
#include <rknnxx/rknn.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: runtime_consumer MODEL\n");
    return 2;
  }
  try {
    const auto runtime = rknnxx::Runtime::load();  // RKNNXX_RUNTIME, else the vendor runtime, else the host runtime
    std::printf("runtime: %s\n", runtime->path().c_str());
    const auto ctx = rknnxx::Context::from_file(argv[1], {.runtime = runtime});
    std::printf("inputs: %u\n", ctx.num_inputs());
  } catch (const rknnxx::Error& e) {
    std::printf("error: %s\n", e.what());
  }
  return 0;
}
