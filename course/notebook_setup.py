"""The start of every notebook's setup cell: the build copies what follows the marker below
into each setup cell, where the section's own `# <common setup>` line stands.

It holds what every section works on: torch; the course's checks (`check`, `check_close`,
installed with the self-check) or, where they are not installed, stand-ins that say so and let
the notebook run on; the heatmap helper (or a stand-in that draws nothing); and the book's
six-token example sentence as `inputs` and as a batch of two. A section's own data follows in
its spec.
"""
# --- the notebooks' copy starts here ---
import torch
from torch import nn

try:  # the course's checks, installed with the self-check (see "Install (once)" in README.md)
    from autograder.notebook import check, check_close
except ImportError:  # without them the notebook still runs, and its check cells say what they skipped
    def check(name, *args):
        print(f"skipped: the checks of {name} (install the self-check to run them here)")

    def check_close(actual, expected, what, atol=1e-4):
        print(f"skipped: {what.split(' — ')[0]}")

try:  # small heatmaps of your results (attention_plots.py comes with this notebook)
    from attention_plots import show_weights
except ImportError:  # without it the heatmaps are simply skipped
    def show_weights(*args, **kwargs):
        pass

inputs = torch.tensor(
    [[0.43, 0.15, 0.89],  # Your     (x^1)
     [0.55, 0.87, 0.66],  # journey  (x^2)
     [0.57, 0.85, 0.64],  # starts   (x^3)
     [0.22, 0.58, 0.33],  # with     (x^4)
     [0.77, 0.25, 0.10],  # one      (x^5)
     [0.05, 0.80, 0.55]]  # step     (x^6)
)
batch = torch.stack((inputs, inputs))  # (2, 6, 3)
