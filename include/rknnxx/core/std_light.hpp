#pragma once
// What the runtime layer needs of <chrono> (durations), <functional> (std::function), <mutex> (std::mutex
// and std::lock_guard, which the loader's bodies use) and <memory> (std::shared_ptr and std::unique_ptr),
// without the rest of those headers (docs/separate-compilation.md#compile-cost): in C++20, libstdc++'s
// <chrono> adds the calendar, time zones and <sstream>, its <functional> the searchers with
// <unordered_map>, its <mutex> the timed and recursive mutexes, unique_lock and call_once, and its <memory>
// the uninitialized-memory range algorithms, uses-allocator construction and the parallel algorithms'
// declarations. libstdc++ (GCC 11 and later) keeps the parts needed here in its internal <bits/chrono.h>,
// <bits/std_function.h>, <bits/std_mutex.h>, <bits/shared_ptr.h> and <bits/unique_ptr.h>; they are used
// only when the library is libstdc++ and has them, else the standard headers are. A translation unit that
// uses more of any of them (clocks' formatting, std::bind, std::unique_lock, std::align, ...) includes the
// standard header itself. core/std_light_algorithm.hpp does the same for <algorithm>.

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

#if defined(__GLIBCXX__) && __has_include(<bits/shared_ptr.h>) && __has_include(<bits/unique_ptr.h>)
#include <bits/shared_ptr.h>
#include <bits/unique_ptr.h>
#else
#include <memory>
#endif
