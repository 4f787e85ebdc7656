#pragma once
// The public API of grove, in one include.

#include "grove/comm.hpp"
#include "grove/error.hpp"
#include "grove/request.hpp"
#include "grove/ring.hpp"
#include "grove/session.hpp"
#include "grove/types.hpp"
#include "grove/window.hpp"
