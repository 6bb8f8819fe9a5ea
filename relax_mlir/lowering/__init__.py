"""The kernel-writing library every op's ``lower()`` uses: the kernel builder, index code, minifloats, orderings, the library-call ABI."""
