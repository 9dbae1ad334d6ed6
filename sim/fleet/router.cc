#include "fleet/router.h"

// Implementation pending (helper at work).
