#pragma once
// <algorithm> without the parts rknnxx does not use (docs/separate-compilation.md#compile-cost): in C++20,
// libstdc++'s <algorithm> adds the range algorithms (<bits/ranges_algo.h>) and the declarations of the
// parallel ones to the classic algorithms, which are its internal <bits/stl_algobase.h> and <bits/stl_algo.h>.
// Those two are used when the library is libstdc++ and has them (as core/std_light.hpp does for <chrono>,
// <functional>, <mutex> and <memory>), else <algorithm>. A translation unit that uses std::ranges algorithms
// or execution policies includes <algorithm> itself.

#include <version>  // defines __GLIBCXX__ under libstdc++

#if defined(__GLIBCXX__) && __has_include(<bits/stl_algobase.h>) && __has_include(<bits/stl_algo.h>)
#include <bits/stl_algobase.h>
#include <bits/stl_algo.h>
#else
#include <algorithm>
#endif
