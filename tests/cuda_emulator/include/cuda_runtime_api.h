// The emulator's runtime API: one header holds it all (cuda_runtime.h).
#pragma once
#include "cuda_runtime.h"
