// Errors a kernel finds in the data (an nll_loss target out of range) without a hidden sync:
// the kernel writes a code into host memory the device maps, and the host reads it at the next
// point where it waits for the stream anyway (a device-to-host copy, synchronize()). The error
// then surfaces as op::Error there, naming the operator that found it, as a CUDA error surfaces
// at the next synchronisation in torch (where a device-side assert would also end the process).
#pragma once

#include <string>

namespace op::cuda {

// The device address a kernel writes `code_for(message)` to (an int). Requires a device.
int* device_error_slot();
// A code (> 0) standing for `message`; the same message always gets the same code.
int code_for(const std::string& message);
// Raises op::Error with the message of any code a kernel has written since the last check, and
// clears it. Call after the host has waited for the stream.
void raise_device_error();

}  // namespace op::cuda
