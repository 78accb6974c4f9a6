"""torch's dtype names (`irjit.float32`, `irjit.long`, ...) as the numpy dtypes irjit's tensors
carry, so `x.dtype == irjit.float32` holds and `dtype=` arguments take them."""

import numpy as np

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
float16 = np.dtype(np.float16)
int64 = np.dtype(np.int64)
int32 = np.dtype(np.int32)
int16 = np.dtype(np.int16)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
bool_ = np.dtype(np.bool_)

# torch's aliases; `bool`, `float`, `int`, `long`, ... on the irjit package
ALIASES = {"float32": float32, "float": float32, "float64": float64, "double": float64,
           "float16": float16, "half": float16, "int64": int64, "long": int64, "int32": int32,
           "int": int32, "int16": int16, "short": int16, "int8": int8, "uint8": uint8,
           "bool": bool_}
