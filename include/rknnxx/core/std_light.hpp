#pragma once
// What the declarations need of <chrono> (durations) and <functional> (std::function), without the
// rest of those headers (docs/separate-compilation.md#compile-cost): in C++20, libstdc++'s <chrono>
// adds the calendar, time zones and <sstream>, and its <functional> the searchers with
// <unordered_map>, a fifth of the umbrella's cost with separate compilation. libstdc++ (GCC 11 and
// later) keeps the parts needed here in its internal <bits/chrono.h> and <bits/std_function.h>;
// they are used only when the library is libstdc++ and has them, else the standard headers are.
// A translation unit that uses more of either (clocks' formatting, std::bind, ...) includes the
// standard header itself.

#include <version>  // defines __GLIBCXX__ under libstdc++

#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif

#if defined(__GLIBCXX__) && __has_include(<bits/std_function.h>)
#include <bits/std_function.h>
#else
#include <functional>
#endif
