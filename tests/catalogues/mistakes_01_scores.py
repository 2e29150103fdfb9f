"""Section 01's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import (Mistake)
from autograder.core.hints import BATCH_SWAPPED, BATCHED_T

SECTION = "01_scores"


def additive_score(returned: str) -> str:
    """AdditiveScore made as documented (W_q, W_k, w, q in that order), whose forward returns `returned`."""
    return ("class AdditiveScore(nn.Module):\n"
            "    def __init__(self, hidden_size):\n"
            "        super().__init__()\n"
            "        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)\n"
            "        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)\n"
            "        self.w = nn.Linear(hidden_size, 1, bias=False)\n"
            "        self.q = nn.Parameter(torch.randn(1, hidden_size))\n"
            "    def forward(self, X):\n"
            f"        return {returned}\n")


def self_attention_score(returned: str) -> str:
    """SelfAttentionScore made as documented (W_q, W_k in that order), whose forward returns `returned`."""
    return ("class SelfAttentionScore(nn.Module):\n"
            "    def __init__(self, hidden_size):\n"
            "        super().__init__()\n"
            "        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)\n"
            "        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)\n"
            "    def forward(self, X):\n"
            f"        return {returned}\n")


MISTAKES = [
    Mistake("documented values hard-coded", {
        "dot_scores": """
            def dot_scores(query, inputs):
                import torch
                return torch.tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])
            """,
        "score_matrix": """
            def score_matrix(inputs):
                import torch
                return torch.zeros(6, 6)
            """}, ["dot_scores gives the documented", "dot_scores matches the reference",
                   "score_matrix gives the documented", "score_matrix matches the reference", "score_matrix on a batch",
                   "dot_scores answers in its input's dtype",
                   "score_matrix answers in its input's dtype"], says="is the answer hard-coded?", also=("default dtype",)),
    # the documented scores written out, the rest computed: named in dot_scores's own cell
    Mistake("dot_scores hard-coded", {"dot_scores": """
            def dot_scores(query, inputs):
                return torch.tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])
            """}, ["dot_scores gives the documented", "dot_scores matches the reference", "dot_scores answers in its input's dtype"],
            says="is the answer hard-coded?", hard_coded=True, also=("default dtype",)),
    Mistake("sum over the tokens instead of the features", {"dot_scores": """
            def dot_scores(query, inputs):
                return (inputs * query).sum(dim=0)
            """}, ["dot_scores gives the documented", "dot_scores matches the reference"],
            says="a sum over the tokens (dim 0) instead of over the features"),
    Mistake("loop over tokens", {"score_matrix": """
            def score_matrix(inputs):
                import torch
                rows = [inputs @ inputs[..., i, :].unsqueeze(-1) for i in range(inputs.shape[-2])]
                return torch.cat(rows, dim=-1)
            """}, ["no Python loop over tokens"], says="Python loop"),
    Mistake(".T on a batch", {"score_matrix": """
            def score_matrix(inputs):
                return inputs @ inputs.T if inputs.dim() == 2 else inputs @ inputs.permute(2, 1, 0)
            """}, ["score_matrix on a batch"], says=".T on a batched (3-D) tensor", hint=BATCHED_T),
    Mistake("inputs @ inputs.T on a batch", {"score_matrix": """
            def score_matrix(inputs):
                return inputs @ inputs.T
            """}, ["score_matrix on a batch"], says="transpose only the last two dims", hint=BATCHED_T),
    Mistake("transpose on the wrong side", {"score_matrix": """
            def score_matrix(inputs):
                return inputs.transpose(-2, -1) @ inputs
            """}, ["score_matrix matches the reference", "score_matrix gives the documented"],
            says="transpose on the wrong side"),
    Mistake("dot_scores writes into a float32 buffer of its own", {"dot_scores": """
            def dot_scores(query, inputs):
                import torch
                out = torch.zeros(inputs.shape[0])
                for i in range(inputs.shape[0]):
                    out[i] = inputs[i] @ query
                return out
            """}, ["dot_scores answers in its input's dtype"], says="device="),
    Mistake("dot_scores makes its buffer on the CPU with the input's dtype", {"dot_scores": """
            def dot_scores(query, inputs):
                import torch
                return torch.mv(inputs, query, out=torch.empty(inputs.shape[0], dtype=inputs.dtype))
            """}, ["dot_scores answers in its input's dtype"], says="meta"),
    Mistake("dot_scores modifies its input", {"dot_scores": """
            def dot_scores(query, inputs):
                inputs.mul_(1.0)
                inputs.add_(0.0)
                result = inputs @ query
                inputs[0] = 0
                return result
            """}, ["dot_scores leaves its arguments unchanged"], says="modified its argument"),
    Mistake("additive parameters created out of order", {"AdditiveScore": """
            class AdditiveScore(nn.Module):
                def __init__(self, hidden_size):
                    super().__init__()
                    self.q = nn.Parameter(torch.randn(1, hidden_size))
                    self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
                    self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)
                    self.w = nn.Linear(hidden_size, 1, bias=False)
                def forward(self, X):
                    return self.w(torch.tanh(self.W_k(X) + self.W_q(self.q))).squeeze(-1)
            """}, ["AdditiveScore creates W_q, W_k, w, q"], says="order"),
    Mistake("additive score without tanh", {"AdditiveScore": additive_score(
            "self.w(self.W_k(X) + self.W_q(self.q)).squeeze(-1)")}, ["AdditiveScore: w(tanh"], says="no tanh"),
    Mistake("self-attention scores scaled", {"SelfAttentionScore": self_attention_score(
            "self.W_q(X) @ self.W_k(X).transpose(-2, -1) / X.shape[-1] ** 0.5")},
            ["SelfAttentionScore: W_q(X)"], says="sqrt(D)"),
    Mistake("query parameter frozen", {"DotProductScore": """
            class DotProductScore(nn.Module):
                def __init__(self, hidden_size):
                    super().__init__()
                    self.register_buffer("q", torch.randn(hidden_size, 1))
                def forward(self, X):
                    return (X @ self.q).squeeze(-1)
            """}, ["DotProductScore: (X @ q)"]),
    # module outputs written out (a demo's printout): named in each module's own cell
    Mistake("AdditiveScore hard-coded", {"AdditiveScore": additive_score(
            "torch.tensor([[0.31, -0.12, 0.45, 0.08, -0.27], [0.19, 0.02, -0.33, 0.41, 0.11]])")},
            ["AdditiveScore: w(tanh", "AdditiveScore: gradients reach"], says="is the answer hard-coded?",
            hard_coded=True),
    Mistake("DotProductScore hard-coded", {"DotProductScore": """
            class DotProductScore(nn.Module):
                def __init__(self, hidden_size):
                    super().__init__()
                    self.q = nn.Parameter(torch.randn(hidden_size, 1))
                def forward(self, X):
                    return torch.full((3, 6), 0.25)
            """}, ["DotProductScore: (X @ q)", "DotProductScore: gradients reach"], says="is the answer hard-coded?",
            hard_coded=True),
    Mistake("SelfAttentionScore hard-coded", {"SelfAttentionScore": self_attention_score(
            "torch.eye(5).expand(2, 5, 5)")},
            ["SelfAttentionScore: W_q(X)", "SelfAttentionScore: gradients reach"], says="is the answer hard-coded?",
            hard_coded=True),
    # the keys taken out of the graph (a .detach() left from debugging): right values, W_k never learns
    Mistake("keys detached from the graph", {"SelfAttentionScore": self_attention_score(
            "self.W_q(X) @ self.W_k(X).detach().transpose(-2, -1)")},
            ["SelfAttentionScore: gradients reach"], says="W_k"),
]

STYLES = [
    {"score_matrix": """
        def score_matrix(inputs):
            return torch.einsum("...id,...jd->...ij", inputs, inputs)
        """,
     "dot_scores": """
        def dot_scores(query, inputs):
            return (inputs * query).sum(dim=-1)
        """},
    {"score_matrix": """
        def score_matrix(inputs):
            return torch.matmul(inputs, inputs.mT)
        """,
     "dot_scores": """
        def dot_scores(query, inputs):
            return torch.mv(inputs, query)
        """},
    {"SelfAttentionScore": """
        class SelfAttentionScore(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
                self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
                self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)
            def forward(self, X):
                return torch.bmm(self.W_q(X), self.W_k(X).permute(0, 2, 1))
        """,
     "DotProductScore": """
        class DotProductScore(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
                self.q = nn.Parameter(torch.randn(hidden_size, 1))
            def forward(self, X):
                return torch.einsum("bld,dk->blk", X, self.q)[..., 0]
        """},
]

# Tried as a new student would, from the notebook's text alone (benchmarks/student_trial.py tabulates them)
TRIAL_MISTAKES = [
    Mistake("dot_scores with the query on the left", {"dot_scores": """
            def dot_scores(query, inputs):
                return query @ inputs
            """}, ['dot_scores gives the documented', 'dot_scores matches the reference']),
    Mistake("score_matrix transposes dims 0 and 1", {"score_matrix": """
            def score_matrix(inputs):
                return inputs @ inputs.transpose(0, 1)
            """}, ['score_matrix on a batch'], says="transpose(-2, -1)", hint=BATCH_SWAPPED),
    Mistake("score_matrix with torch.mm", {"score_matrix": """
            def score_matrix(inputs):
                return torch.mm(inputs, inputs.t())
            """}, ['score_matrix on a batch']),
    Mistake("AdditiveScore's query made (D, 1) as in DotProductScore", {"AdditiveScore": """
            class AdditiveScore(nn.Module):
                def __init__(self, hidden_size):
                    super().__init__()
                    self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
                    self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)
                    self.w = nn.Linear(hidden_size, 1, bias=False)
                    self.q = nn.Parameter(torch.randn(hidden_size, 1))
                def forward(self, X):
                    return self.w(torch.tanh(self.W_k(X) + self.W_q(self.q))).squeeze(-1)
            """}, ['AdditiveScore creates W_q', 'AdditiveScore: gradients reach', 'AdditiveScore: w(tanh'], says='AdditiveScore.q should have shape (1, 4), got (4, 1)'),
    Mistake("DotProductScore calls its parameter", {"DotProductScore": """
            class DotProductScore(nn.Module):
                def __init__(self, hidden_size):
                    super().__init__()
                    self.q = nn.Parameter(torch.randn(hidden_size, 1))
                def forward(self, X):
                    return self.q(X).squeeze(-1)
            """}, ['DotProductScore: gradients reach', 'DotProductScore: (X @ q)'], says="'Parameter' object is not callable"),
    Mistake("DotProductScore squeezes every dim of size 1", {"DotProductScore": """
            class DotProductScore(nn.Module):
                def __init__(self, hidden_size):
                    super().__init__()
                    self.q = nn.Parameter(torch.randn(hidden_size, 1))
                def forward(self, X):
                    return (X @ self.q).squeeze()
            """}, ["DotProductScore: (X @ q)"], says="squeeze() without a dim"),
    Mistake("SelfAttentionScore with keys.T", {"SelfAttentionScore": self_attention_score("self.W_q(X) @ self.W_k(X).T")}, ['SelfAttentionScore: gradients reach', 'SelfAttentionScore: W_q(X) @ W_k(X)^T'],
            says=".T on a batched (3-D) tensor", hint=BATCHED_T),
    Mistake("AdditiveScore without the squeeze", {"AdditiveScore": additive_score(
        "self.w(torch.tanh(self.W_k(X) + self.W_q(self.q)))")}, ['AdditiveScore: w(tanh'], says='expected shape (2, 5), got (2, 5, 1)'),
]

TRIAL_STYLES = {
    "einsum for both functions": {
        "dot_scores": """
            def dot_scores(query, inputs):
                return torch.einsum("td,d->t", inputs, query)
            """,
        "score_matrix": """
            def score_matrix(inputs):
                return torch.einsum("...id,...jd->...ij", inputs, inputs)
            """},
    "elementwise product summed, matmul with .mT": {
        "dot_scores": """
            def dot_scores(query, inputs):
                return (inputs * query).sum(dim=-1)
            """,
        "score_matrix": """
            def score_matrix(inputs):
                return torch.matmul(inputs, inputs.mT)
            """},
    "bmm, a view instead of squeeze, F.linear": {
        "SelfAttentionScore": self_attention_score("torch.bmm(self.W_q(X), self.W_k(X).permute(0, 2, 1))"),
        "DotProductScore": """
            class DotProductScore(nn.Module):
                def __init__(self, hidden_size):
                    super().__init__()
                    self.q = nn.Parameter(torch.randn(hidden_size, 1))
                def forward(self, X):
                    return torch.matmul(X, self.q).view(X.shape[0], X.shape[1])
            """,
        "AdditiveScore": additive_score("self.w(torch.tanh(self.W_k(X) + nn.functional.linear(self.q, self.W_q.weight)))[..., 0]")},
}
MISTAKES += [mistake for mistake in TRIAL_MISTAKES if mistake.loses]  # the rest no check catches
STYLES += TRIAL_STYLES.values()
