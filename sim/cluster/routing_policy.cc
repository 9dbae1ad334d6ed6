#include "cluster/routing_policy.h"

// Implementation pending (helper at work).
