"""``view(buf, offset, shape)``: a C-contiguous array over part of a 1-D workspace, inside kernels.

Kernels carve their scratch arrays out of one allocation.  ``buf[o : o + n].reshape(shape)``
does that, but numba's ``reshape`` calls a C helper (``numba_attempt_nocopy_reshape``) and checks
the size each time: about 35 ns per array, 0.4 µs of a 4 µs ``rnea_derivatives`` call on a 6-DoF
arm that carves 12 of them.  A view of a C-contiguous buffer needs only its data pointer moved and
its C strides written, which is what `view` compiles to (numba's own array constructors,
``make_array`` / ``populate_array``; the view shares the buffer's reference count, as a slice
does).  It does not check that ``offset + prod(shape)`` fits in ``buf``: the carving code that
calls it computes both from the same sizes.  Under ``NUMBA_DISABLE_JIT=1`` it is the reshape of
the slice, so plain-Python runs check the sizes.
"""

from __future__ import annotations

import numba
import numpy as np


def _view_py(buf, offset, shape):
    return buf[offset : offset + int(np.prod(shape))].reshape(shape)


def _unmanaged_py(a):
    return a


if numba.config.DISABLE_JIT:
    view = _view_py
    unmanaged = _unmanaged_py
else:
    from numba.core import types
    from numba.extending import intrinsic

    @intrinsic
    def view(typingctx, buf, offset, shape):
        """C-contiguous array of ``shape`` over ``buf[offset:]`` (``buf`` 1-D, C-contiguous)."""
        if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C"
                and isinstance(offset, types.Integer) and isinstance(shape, types.BaseTuple)
                and len(shape) > 0 and all(isinstance(t, types.Integer) for t in shape.types)):
            return None
        nd = len(shape)
        retty = types.Array(buf.dtype, nd, "C")

        def codegen(context, builder, sig, args):
            # (imported here: only a compilation runs this, and numba.np.arrayobj costs an
            # import of dqdyn ~30 ms that a process loading its kernels from the cache skips)
            from numba.core import cgutils
            from numba.core.imputils import impl_ret_borrowed
            from numba.np.arrayobj import make_array, populate_array

            ary = make_array(sig.args[0])(context, builder, args[0])
            off = context.cast(builder, args[1], sig.args[1], types.intp)
            dims = [context.cast(builder, d, t, types.intp)
                    for d, t in zip(cgutils.unpack_tuple(builder, args[2], nd), sig.args[2].types)]
            itemsize = ary.itemsize
            strides = [None] * nd
            s = itemsize
            for k in range(nd - 1, -1, -1):
                strides[k] = s
                s = builder.mul(s, dims[k])
            out = make_array(retty)(context, builder)
            populate_array(out, data=builder.gep(ary.data, [off], inbounds=True), shape=dims,
                           strides=strides, itemsize=itemsize, meminfo=ary.meminfo,
                           parent=ary.parent)
            return impl_ret_borrowed(context, builder, retty, out._getvalue())

        return retty(buf, offset, shape), codegen

    @intrinsic
    def unmanaged(typingctx, a):
        """``a`` without its reference count: the same data, shape and strides, no meminfo and
        no parent — what numba's ``carray`` makes, and what a ``prange`` body or a C gate kernel
        sees.  Every view taken of it inside the kernel then skips numba's reference counting
        (an increment and a decrement per view, each a call: 35–45 % of ``rnea`` per state on
        Panda in a serial loop, 9 % of a single ``aba``).  The caller keeps ``a`` alive for as
        long as the result is used: a kernel's argument is (its caller holds it); an array the
        kernel allocates is not (numba frees it after its last use)."""
        if not isinstance(a, types.Array):
            return None

        def codegen(context, builder, sig, args):
            from numba.core.imputils import impl_ret_untracked
            from numba.np.arrayobj import make_array, populate_array

            ary = make_array(sig.args[0])(context, builder, args[0])
            out = make_array(sig.return_type)(context, builder)
            populate_array(out, data=ary.data, shape=ary.shape, strides=ary.strides,
                           itemsize=ary.itemsize, meminfo=None)
            return impl_ret_untracked(context, builder, sig.return_type, out._getvalue())

        return a(a), codegen
