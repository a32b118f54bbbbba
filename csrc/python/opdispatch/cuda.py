"""opdispatch.cuda: whether this build has CUDA kernels and whether a device can run them.

    opdispatch.cuda.is_built()       # compiled with nvcc (scons --cuda=auto|on)
    opdispatch.cuda.is_available()   # ... and a CUDA device is present
    opdispatch.cuda.device_count()
"""
from opdispatch import _C


def is_built() -> bool:
    return bool(_C._cuda_is_built())


def is_available() -> bool:
    return bool(_C._cuda_is_available())


def device_count() -> int:
    return int(_C._cuda_device_count())
