#pragma once
// {fmt}'s core header, included through here by every rknnxx header that formats, so that its
// first inclusion in a translation unit carries one narrow suppression: g++ 12 at -O3 reports a
// false -Wstringop-overflow inside fmt 9's fill_t (fmt/core.h), on code paths rknnxx only calls.
// The pragma covers the lines of fmt's header and nothing of ours; other compilers see a plain
// include. See docs/building.md.

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <fmt/core.h>
#pragma GCC diagnostic pop
#else
#include <fmt/core.h>
#endif
