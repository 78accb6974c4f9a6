"""The one dtype table: names, c10::ScalarType codes and numpy dtypes agree everywhere."""

import numpy as np
import pytest

from irjit.ops.dtypes import (CODE_OF_DTYPE, SCALAR_TYPE_BY_NAME, SCALAR_TYPE_CODES, c_type_name,
                              dtype_from_code, is_complex_name, is_floating_name, promote_types,
                              scalar_type_name)
from irjit.ops.types import DTYPE_TO_SCALAR_TYPE, SCALAR_TYPES


@pytest.mark.parametrize("name,code,dtype", [("Byte", 0, np.uint8), ("Long", 4, np.int64),
                                             ("Half", 5, np.float16), ("Float", 6, np.float32),
                                             ("Double", 7, np.float64), ("Bool", 11, np.bool_),
                                             ("ComplexFloat", 9, np.complex64)])
def test_names_codes_and_numpy_dtypes_agree(name, code, dtype):
    assert SCALAR_TYPE_BY_NAME[name].code == code
    assert dtype_from_code(code) == dtype and CODE_OF_DTYPE[np.dtype(dtype)] == code
    assert SCALAR_TYPES[name] == np.dtype(dtype).name
    assert DTYPE_TO_SCALAR_TYPE[np.dtype(dtype).name] == name
    assert scalar_type_name(dtype) == name


def test_types_without_a_numpy_dtype():
    assert SCALAR_TYPES["BFloat16"] is None and SCALAR_TYPE_BY_NAME["BFloat16"].code == 15
    assert SCALAR_TYPE_CODES[8] is None
    with pytest.raises(ValueError, match="unsupported dtype code 8"):
        dtype_from_code(8)


def test_categories_and_c_names():
    assert is_floating_name("BFloat16") and is_floating_name("Half") and not is_floating_name("Long")
    assert is_complex_name("ComplexHalf") and not is_complex_name("Float")
    assert not is_floating_name("NoSuchType")
    assert c_type_name(np.int64) == "long int" and c_type_name(np.uint8) == "unsigned char"


def test_promotion_follows_pytorch_not_numpy():
    assert promote_types(np.int64, np.float32) == np.float32   # numpy says float64
    assert promote_types(np.bool_, np.int8) == np.int8
    assert promote_types(np.float32, np.float64) == np.float64
