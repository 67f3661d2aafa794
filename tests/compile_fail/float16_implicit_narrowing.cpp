// float -> Float16 loses precision, so it is explicit; Float16 -> float is exact and implicit.
// expect: conversion from .{0,3}float
#include <rknnxx/core/float16.hpp>
using namespace rknnxx;
#ifdef RKNNXX_COMPILE_FAIL
constexpr Float16 h = 1.5f;
#else
constexpr Float16 h{1.5f};
#endif
constexpr float back = h;
static_assert(back == 1.5f);
