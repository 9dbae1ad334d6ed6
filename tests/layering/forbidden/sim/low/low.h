// low may use the standard library only.
#pragma once
#include <vector>
#include "high/high.h"
#include <tbb/parallel_for.h>
