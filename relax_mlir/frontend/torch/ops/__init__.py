"""ATen op converters, one module per op family; each registers itself with ``@converter``."""
