#pragma once
// What rknnxx needs of <chrono> (durations), <functional> (std::function) and <mutex> (std::mutex and
// std::lock_guard, which the loader's bodies use), without the rest of those headers
// (docs/separate-compilation.md#compile-cost): in C++20, libstdc++'s <chrono> adds the calendar, time
// zones and <sstream>, its <functional> the searchers with <unordered_map>, and its <mutex> the timed and
// recursive mutexes, unique_lock and call_once. libstdc++ (GCC 11 and later) keeps the parts needed here
// in its internal <bits/chrono.h>, <bits/std_function.h> and <bits/std_mutex.h>; they are used only when
// the library is libstdc++ and has them, else the standard headers are. A translation unit that uses
// more of any of them (clocks' formatting, std::bind, std::unique_lock, ...) includes the standard header
// itself.

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

#if defined(__GLIBCXX__) && __has_include(<bits/std_mutex.h>)
#include <bits/std_mutex.h>
#else
#include <mutex>
#endif
