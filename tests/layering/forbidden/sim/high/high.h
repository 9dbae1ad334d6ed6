// high may use low, but its target does not link it.
#pragma once
#include "low/low.h"
