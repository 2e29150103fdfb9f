"""A student's module copied onto the meta device (a check of "works on any device"), whatever tensors it keeps.

A tensor the module keeps as a plain attribute or a buffer may hold an autograd graph (a cache written during a
forward with gradients), which deepcopy refuses ("Only Tensors created explicitly by the user ..."): what the
student's module keeps must never break the grader's copy.
"""
import copy

import torch


def held_tensors(value, found: dict, seen: set) -> None:
    """Every tensor `value` holds outside its parameters (id -> tensor, into `found`): the tensors of a module and
    of its submodules, their buffers and their plain attributes, in lists, tuples and dicts too (`seen`: the ids
    of the containers walked, so that one holding itself ends the walk)."""
    if isinstance(value, torch.nn.Parameter) or id(value) in seen:
        return
    if isinstance(value, torch.Tensor):
        found[id(value)] = value
        return
    seen.add(id(value))
    if isinstance(value, torch.nn.Module):
        for module in value.modules():
            for name, attribute in vars(module).items():
                if name not in ("_parameters", "_modules"):
                    held_tensors(attribute, found, seen)
    elif isinstance(value, (list, tuple)):
        for item in value:
            held_tensors(item, found, seen)
    elif isinstance(value, dict):
        for item in value.values():
            held_tensors(item, found, seen)


def meta_copy(module):
    """The module copied and moved by .to("meta"), as a student's .to(device) moves it. A tensor it keeps as a plain
    attribute or a buffer may hold an autograd graph (a cache written during a forward with gradients), which
    deepcopy refuses ("Only Tensors created explicitly by the user ..."): each goes into the copy detached and
    cloned, on the device it is on, so that what the student's module keeps never breaks the grader's copy. Then
    .to("meta") moves the parameters and buffers only: a tensor kept as a plain attribute stays behind, as
    .to(device) leaves it (the mistake the device checks are there to find)."""
    found = {}
    held_tensors(module, found, set())
    memo = {key: tensor.detach().clone() for key, tensor in found.items()}
    return copy.deepcopy(module, memo).to("meta")
