"""The engine room (private): how dqdyn's algorithms become machine code and are called.

* `jit` — the ``kernel`` decorator and the kernel cache (stamps over each kernel's import
  closure, the portable kernels shipped for each CPython, the CPU they are compiled for);
* `precompile` — readies every kernel at install, and builds the portable archives;
* `gate` and ``_gate.c`` — the C call gate that takes one state from Python into a kernel;
* `boundary` — input checks where a call enters the library, and the kernels' status codes;
* `batching` — batches in chunks, serially when small; `views` — the model's tables as arrays;
* `linalg` — the small dense factorisations the algorithms share; `checks` — argument checks.

Nothing here is public; the docs' architecture page explains it for contributors.
"""
