"""irjit.nn: torch.nn's Module, Parameter and standard layers on irjit's eager tensors."""

from . import functional, init
from .layers import Conv2d, Dropout, Linear, MaxPool2d, ReLU, Sequential, Sigmoid, Tanh
from .layers_state import BatchNorm2d, Embedding, GRUCell, LayerNorm, LSTMCell
from .module import Module, Parameter, load_state_dict_file, save_state_dict

__all__ = ["Module", "Parameter", "Linear", "Conv2d", "ReLU", "Tanh", "Sigmoid", "Sequential",
           "BatchNorm2d", "LayerNorm", "Embedding", "Dropout", "MaxPool2d", "LSTMCell", "GRUCell",
           "functional", "init", "save_state_dict", "load_state_dict_file"]
