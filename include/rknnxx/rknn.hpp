#pragma once
// The umbrella header: everything an application needs.
#include <rknnxx/version.hpp>
