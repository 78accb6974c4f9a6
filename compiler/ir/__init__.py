"""The IR: graphs, blocks, nodes, values, types, attributes, scopes and source locations."""

from .attributes import TensorData
from .constants import Device, constant_value, make_constant, tensor_type_of
from .graph import Graph
from .node import Block, Node, Use, Value
from .scope import Scope
from .source import SourceLocation
from irjit.ops.types import (ANY, BOOL, COMPLEX, DEVICE, FLOAT, FUNCTION, INT, NONE, NUMBER, STR, TENSOR,
                    ClassType, DictType, FutureType, GenericType, ListType, NamedType,
                    OptionalType, TensorType, TupleType, Type, is_subtype)
from .verifier import IRVerificationError

__all__ = [
    "ANY", "BOOL", "COMPLEX", "DEVICE", "FLOAT", "FUNCTION", "INT", "NONE", "NUMBER", "STR",
    "TENSOR", "Block", "ClassType", "Device", "DictType", "FutureType", "GenericType", "Graph",
    "IRVerificationError", "ListType", "NamedType", "Node", "OptionalType", "Scope",
    "SourceLocation", "TensorData", "TensorType", "TupleType", "Type", "Use", "Value",
    "constant_value", "is_subtype", "make_constant", "tensor_type_of",
]
