"""The generated layers and what they share (gen/registry.py lists the in-tree ones, in order).

- ``operators``      the operators layer (API header, handles, schema registration), the
                     declarations layer (native and meta headers) and the methods layer
- ``kernels``        the kernel wrappers of one group at one dispatch key (``WrapperKind``); the
                     kernels layer (every key no other layer names)
- ``functionalize``  the Functionalize layer
- ``autograd_plan``  which functions get Autograd and ADInplaceOrView kernels, and of which kind
- ``autograd_formulas`` derivatives.yaml formulas as C++ over the method-free API (op:: calls),
                     with the operator groups whose ops/<g>.h they need (parsed by ``cpp_expr``)
- ``autograd_kernels`` the autograd layer (its content field: the group's autograd facts)
- ``families``       relations inside a group: the out= function a function delegates to, siblings
- ``declarations``   the hand-written functions a group calls; ``missing_kernels`` the stubs file
- ``backend``        an external backend's files per group (declarations, registrations), its own
                     section; ``backend_variants``, ``backend_stubs``
- ``lazy``           a lazy backend's IR nodes and generated kernels
- ``umbrellas``      the umbrella headers that include every group's headers
- ``python_table``   the Python package's operator table
"""
