// QScheme: how a quantized tensor maps integers to real values (`QScheme` in schemas; the
// result of aten::qscheme). This runtime has no quantized tensors; the enum exists so such
// operators declare, register and box. Values are PyTorch's; boxed as int64, like Layout and
// MemoryFormat (core/layout.h), and schema defaults spell them by name (per_tensor_affine).
#pragma once

#include <cstdint>

namespace op {

enum class QScheme : int8_t {
  PerTensorAffine = 0,
  PerChannelAffine = 1,
  PerTensorSymmetric = 2,
  PerChannelSymmetric = 3,
  PerChannelAffineFloatQParams = 4,
};

}  // namespace op
