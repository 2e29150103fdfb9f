"""What one call allocates and computes, measured where the student's code runs (asked for by a call's
"measure"): the largest tensor any op made, each matrix product's sizes, and on a GPU the peak memory
the call added. Raw observation only: the trusted side (section 13's checks) judges what it means.
Never a time: counts and sizes are the same on every machine.
"""
import torch

# the aten ops a matrix product reaches (torch.matmul, @, einsum and F.linear all end in one of these)
PRODUCTS = {"aten::mm": (0, 1), "aten::bmm": (0, 1), "aten::addmm": (1, 2), "aten::baddbmm": (1, 2)}
MAX_PRODUCTS = 4096  # a cap on the reply: a call with more products than this is reported as such


class TileMeter:
    """Fed every op of a call by the dispatch watch (watching.Watch): see(func, result, args)."""

    def __init__(self, device):
        self.largest = 0
        self.products = []  # [batch, rows, inner, columns] per product, in the order they ran
        self.more_products = 0
        self.cuda = torch.device(device).type == "cuda"
        if self.cuda:  # what the arguments already hold is the baseline; the call's own peak is above it
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.baseline = torch.cuda.memory_allocated()

    def see(self, func, result, args) -> None:
        if not getattr(func, "is_view", False):  # a view allocates nothing: an expand is no large tensor
            for out in result if isinstance(result, (tuple, list)) else (result,):
                if isinstance(out, torch.Tensor):
                    self.largest = max(self.largest, out.numel())
        where = PRODUCTS.get(func.name())
        if where is None:
            return
        a, b = args[where[0]], args[where[1]]
        if len(self.products) >= MAX_PRODUCTS:
            self.more_products += 1
            return
        batch = a.shape[0] if a.dim() == 3 else 1
        self.products.append([int(batch), int(a.shape[-2]), int(a.shape[-1]), int(b.shape[-1])])

    def report(self) -> dict:
        measured = {"largest": self.largest, "products": self.products, "more_products": self.more_products}
        if self.cuda:
            torch.cuda.synchronize()
            measured["peak_bytes"] = int(torch.cuda.max_memory_allocated() - self.baseline)
        return {"measured": measured}
