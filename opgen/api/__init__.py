"""C++ signature conventions, one module per convention (as torchgen's api/ does).

- ``types``      schema type -> C++ type, for arguments and returns
- ``defaults``   schema default -> C++ expression
- ``bindings``   a named, typed C++ parameter
- ``dispatcher`` the dispatcher's calling convention (operator handles, kernels)
- ``cpp``        the public C++ API: free functions and Tensor methods
- ``structured`` meta() and impl() of structured kernels
"""
