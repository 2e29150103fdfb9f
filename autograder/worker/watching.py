"""What the worker watches while student code runs: every aten op a call dispatches (counted,
banned ones spotted, devices mixed), and where factory functions put the tensors they make.

Raw observation only: the trusted side judges what it means.
"""
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .lazy_torch import DispatchAsWritten


class Watch(DispatchAsWritten, TorchDispatchMode):
    """Sees every aten op a call dispatches: counts them, spots banned ops and device mixing. Its
    handler stays as written: torch would otherwise import its compiler (seconds) on the first op
    (lazy_torch.DispatchAsWritten)."""

    def __init__(self, banned_ops=(), guard_devices=False, meter=None):
        super().__init__()
        self.meter = meter  # measure_tiles.TileMeter where the call asked for its sizes, else None
        self.count = 0
        self.banned_ops = banned_ops
        self.banned_seen = []
        self.guard_devices = guard_devices
        self.mixed = []

    def needed(self, count_ops: bool) -> bool:
        """Whether the call must run under the watch at all: a Python handler on every aten op costs each
        op tens of microseconds, thousands of ops a grading; a call that bans nothing, guards no device,
        measures nothing and counts no ops runs as torch runs it."""
        return bool(count_ops or self.banned_ops or self.guard_devices or self.meter is not None)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.count += 1
        name = func.name()
        if self.banned_ops and any(part in name for part in self.banned_ops):
            if name not in self.banned_seen:
                self.banned_seen.append(name)
        if self.guard_devices:
            devices = set()
            for leaf in tree_flatten((args, kwargs))[0]:
                if isinstance(leaf, torch.Tensor) and not (leaf.dim() == 0 and leaf.device.type == "cpu"):
                    devices.add(leaf.device.type)
            if len(devices) > 1 and len(self.mixed) < 5:
                self.mixed.append({"op": name, "devices": sorted(devices)})  # data: the grader words it
        result = func(*args, **kwargs)
        if self.meter is not None:
            self.meter.see(func, result, args)
        return result


class NewTensorsOn(TorchFunctionMode):
    """Puts the tensors that factory functions make without device= on `device`: what
    torch.set_default_device does, except that a tensor given as data (torch.as_tensor(lengths))
    and a plain number (torch.tensor(-inf), a 0-dim value the CPU lends any device) stay as they are."""

    FACTORIES = {torch.empty, torch.zeros, torch.ones, torch.full, torch.arange, torch.eye, torch.linspace,
                 torch.logspace, torch.rand, torch.randn, torch.randint, torch.randperm, torch.tril_indices,
                 torch.triu_indices, torch.tensor, torch.as_tensor, torch.asarray}

    def __init__(self, device):
        super().__init__()
        self.device = torch.device(device)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        data = args[0] if args else kwargs.get("data")
        from_data = func in (torch.tensor, torch.as_tensor, torch.asarray)
        if (func in self.FACTORIES and kwargs.get("device") is None
                and not (from_data and (isinstance(data, torch.Tensor) or isinstance(data, (int, float, bool))))):
            kwargs = {**kwargs, "device": self.device}
        return func(*args, **kwargs)
