#include "core/quantile_sketch.h"

// Implementation pending (helper at work).
