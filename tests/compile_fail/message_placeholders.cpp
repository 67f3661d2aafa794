// A message whose placeholders do not match its arguments does not compile (core/message.hpp).
// expect: message_placeholders_do_not_match_the_arguments
#include <rknnxx/core/message.hpp>
#include <string>
#ifdef RKNNXX_COMPILE_FAIL
std::string text() { return rknnxx::detail::message("{} of {} bytes", 3); }
#else
std::string text() { return rknnxx::detail::message("{} of {} bytes", 3, 4); }
#endif
