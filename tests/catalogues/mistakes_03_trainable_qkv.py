"""Section 03's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import (Mistake)
from autograder.core.hints import BATCH_SWAPPED, BATCHED_T

SECTION = "03_trainable_qkv"

HARD_CODED = {
    "project_qkv": """
        def project_qkv(x, W_query, W_key, W_value):
            queries, keys, values = torch.zeros(6, 2), torch.zeros(6, 2), torch.zeros(6, 2)
            queries[1] = torch.tensor([0.4306, 1.4551])
            keys[1] = torch.tensor([0.4433, 1.1419])
            values[1] = torch.tensor([0.3951, 1.0037])
            return queries, keys, values
        """,
    "scaled_dot_product_attention": """
        def scaled_dot_product_attention(queries, keys, values):
            return (torch.tensor([0.3061, 0.8210]),
                    torch.tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820]))
        """,
    "SelfAttention_v1": """
        class SelfAttention_v1(nn.Module):
            def __init__(self, d_in, d_out):
                super().__init__()
                self.W_query = nn.Parameter(torch.rand(d_in, d_out))
                self.W_key = nn.Parameter(torch.rand(d_in, d_out))
                self.W_value = nn.Parameter(torch.rand(d_in, d_out))
            def forward(self, x):
                return torch.tensor([[0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
                                     [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040]])
        """,
    "SelfAttention_v2": """
        class SelfAttention_v2(nn.Module):
            def __init__(self, d_in, d_out, qkv_bias=False):
                super().__init__()
                self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            def forward(self, x):
                return torch.tensor([[-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
                                     [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693]])
        """,
}


def attention(body):
    """A scaled_dot_product_attention whose body is `body` (indented 4 spaces)."""
    return "def scaled_dot_product_attention(queries, keys, values):\n" + body


def v1_class(init_body, forward_body):
    return ("class SelfAttention_v1(nn.Module):\n"
            "    def __init__(self, d_in, d_out):\n"
            "        super().__init__()\n" + init_body +
            "    def forward(self, x):\n" + forward_body)


def v2_class(forward_body, bias="qkv_bias"):
    return ("class SelfAttention_v2(nn.Module):\n"
            "    def __init__(self, d_in, d_out, qkv_bias=False):\n"
            "        super().__init__()\n"
            f"        self.W_query = nn.Linear(d_in, d_out, bias={bias})\n"
            f"        self.W_key = nn.Linear(d_in, d_out, bias={bias})\n"
            f"        self.W_value = nn.Linear(d_in, d_out, bias={bias})\n"
            "    def forward(self, x):\n" + forward_body)


V1_INIT = ("        self.W_query = nn.Parameter(torch.rand(d_in, d_out))\n"
           "        self.W_key = nn.Parameter(torch.rand(d_in, d_out))\n"
           "        self.W_value = nn.Parameter(torch.rand(d_in, d_out))\n")
V1_FORWARD = ("        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value\n"
              "        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)\n"
              "        return weights @ values\n")
V2_LINES = "        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)\n"


def copy_function(body):
    return "def copy_v2_weights_into_v1(v1, v2):\n" + body


MISTAKES = [
    Mistake("documented values hard-coded", HARD_CODED,
            ["project_qkv gives the documented", "project_qkv on new", "SelfAttention_v1(3, 2) with",
             "SelfAttention_v2(3, 2) with", "divides the scores by sqrt(d_k)", "sum to 1 over the keys",
             "query 2 of the worked", "SelfAttention_v1 matches the reference with other",
             "SelfAttention_v2 matches the reference with other", "works on a batch", "qkv_bias=True", "leading batch dims",
             "SelfAttention_v1: gradients reach", "SelfAttention_v2: gradients reach"], says="is the answer hard-coded?"),
    # the documented row written out: named in project_qkv's own cell, before the values it gets wrong
    Mistake("project_qkv hard-coded", {"project_qkv": HARD_CODED["project_qkv"]},
            ["project_qkv gives the documented", "project_qkv on new"], says="is the answer hard-coded?",
            hard_coded=True),
    Mistake("project_qkv returns keys first", {"project_qkv": """
            def project_qkv(x, W_query, W_key, W_value):
                return x @ W_key, x @ W_query, x @ W_value
            """}, ["project_qkv gives the documented", "project_qkv on new"], says="in that order"),
    Mistake("no sqrt(d_k) scaling", {"scaled_dot_product_attention": attention(
            "    weights = torch.softmax(queries @ keys.transpose(-2, -1), dim=-1)\n"
            "    return weights @ values, weights\n")},
            ["query 2 of the worked example", "divides the scores by sqrt(d_k)"], says="no scaling"),
    Mistake("scaled by sqrt(d_v)", {"scaled_dot_product_attention": attention(
            "    scores = queries @ keys.transpose(-2, -1) / values.shape[-1] ** 0.5\n"
            "    weights = torch.softmax(scores, dim=-1)\n"
            "    return weights @ values, weights\n")}, ["divides the scores by sqrt(d_k)"], says="sqrt(d_v)"),
    Mistake("softmax over the queries", {"scaled_dot_product_attention": attention(
            "    scores = queries @ keys.transpose(-2, -1) / keys.shape[-1] ** 0.5\n"
            "    weights = torch.softmax(scores, dim=-2)\n"
            "    return weights @ values, weights\n")},
            ["sum to 1 over the keys", "divides the scores by sqrt(d_k)", "query 2 of the worked example"],
            says="wrong dim"),
    Mistake("keys.T on a batch", {"scaled_dot_product_attention": attention(
            "    weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)\n"
            "    return weights @ values, weights\n")}, ["leading batch dims"], says="transpose(-2, -1)", hint=BATCHED_T),
    Mistake("returns (weights, context)", {"scaled_dot_product_attention": attention(
            "    weights = torch.softmax(queries @ keys.transpose(-2, -1) / keys.shape[-1] ** 0.5, dim=-1)\n"
            "    return weights, weights @ values\n")},
            ["divides the scores by sqrt(d_k)", "sum to 1 over the keys", "query 2 of the worked example"],
            says="wrong order"),
    Mistake("queries scaled in place", {"scaled_dot_product_attention": attention(
            "    queries /= keys.shape[-1] ** 0.5\n"
            "    weights = torch.softmax(queries @ keys.transpose(-2, -1), dim=-1)\n"
            "    return weights @ values, weights\n")}, ["leave their inputs unchanged"], says="in place"),
    Mistake("built-in attention", {"scaled_dot_product_attention": attention(
            "    import torch.nn.functional as F\n"
            "    context = F.scaled_dot_product_attention(queries, keys, values)\n"
            "    weights = torch.softmax(queries @ keys.transpose(-2, -1) / keys.shape[-1] ** 0.5, dim=-1)\n"
            "    return context, weights\n")},
            ["without F.scaled_dot_product_attention", "divides the scores by sqrt(d_k)", "sum to 1 over the keys",
             "leave their inputs unchanged", "query 2 of the worked example", "leading batch dims"], says="forbids"),
    # the book's "torch.manual_seed(123)" carried into __init__: the documented output (seed 123) still comes out,
    # and the other checks run with its own weights; it was told to create the parameters in order (they were)
    Mistake("seed inside v1's __init__", {"SelfAttention_v1": v1_class("        torch.manual_seed(123)\n" + V1_INIT,
                                                                       V1_FORWARD)},
            ["SelfAttention_v1 creates"], says="torch.manual_seed inside __init__"),
    Mistake("v1 without scaling", {"SelfAttention_v1": v1_class(V1_INIT, V1_FORWARD.replace(
            " / keys.shape[-1] ** 0.5", ""))},
            ["SelfAttention_v1(3, 2) with torch.manual_seed(123)", "SelfAttention_v1 matches the reference with other"], says="no scaling"),
    # nn.Linear's habit (x @ W.T) on a Parameter already (d_in, d_out): a 2-D `.T`, so no hint about batched `.T`
    Mistake("v1 multiplies by the transposed weights", {"SelfAttention_v1": v1_class(V1_INIT, V1_FORWARD.replace(
            "x @ self.W_query, x @ self.W_key, x @ self.W_value",
            "x @ self.W_query.T, x @ self.W_key.T, x @ self.W_value.T"))},
            ["SelfAttention_v1(3, 2) with", "SelfAttention_v1: gradients reach", "SelfAttention_v1 matches the reference with other"], says="x @ self.W_query.T"),
    Mistake("v1 parameters created out of order", {"SelfAttention_v1": v1_class(
            "        self.W_key = nn.Parameter(torch.rand(d_in, d_out))\n"
            "        self.W_query = nn.Parameter(torch.rand(d_in, d_out))\n"
            "        self.W_value = nn.Parameter(torch.rand(d_in, d_out))\n", V1_FORWARD)},
            ["SelfAttention_v1 creates W_query", "SelfAttention_v1(3, 2) with torch.manual_seed(123)"], says="order", also=("W_key created before W_query",)),
    Mistake("v1 weights drawn with randn", {"SelfAttention_v1": v1_class(V1_INIT.replace("rand(", "randn("),
                                                                         V1_FORWARD)},
            ["SelfAttention_v1 creates W_query", "SelfAttention_v1(3, 2) with torch.manual_seed(123)"], says="torch.rand",
            asks=("parameters created in another order",)),
    Mistake("v1 weights are plain tensors", {"SelfAttention_v1": v1_class(
            "        self.W_query = torch.rand(d_in, d_out)\n"
            "        self.W_key = torch.rand(d_in, d_out)\n"
            "        self.W_value = torch.rand(d_in, d_out)\n", V1_FORWARD)},
            ["SelfAttention_v1 creates W_query"], says="parameter"),
    Mistake("v2 scaled by sqrt(d_in)", {"SelfAttention_v2": v2_class(
            V2_LINES +
            "        weights = torch.softmax(queries @ keys.transpose(-2, -1) / x.shape[-1] ** 0.5, dim=-1)\n"
            "        return weights @ values\n")},
            ["SelfAttention_v2 matches the reference with other", "SelfAttention_v2(3, 2) with torch.manual_seed(789)", "qkv_bias=True"],
            says="sqrt(d_in)"),
    # the book's names side by side: the weights computed, the scores used; it was told the parameters' creation
    # order (the fallback hint where no known mistake matched), though its parameters were the seeded ones
    Mistake("v2 multiplies the scores by the values", {"SelfAttention_v2": v2_class(
            V2_LINES +
            "        attn_scores = queries @ keys.transpose(-2, -1)\n"
            "        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)\n"
            "        return attn_scores @ values\n")},
            ["SelfAttention_v2(3, 2) with torch.manual_seed(789)", "qkv_bias=True",
             "SelfAttention_v2 matches the reference with other"], says="the scores multiplied by the values"),
    # W_value created first: the seeded weights under other names, which the creation order explains
    Mistake("v2 parameters created out of order", {"SelfAttention_v2": v2_class(
            V2_LINES +
            "        weights = torch.softmax(queries @ keys.transpose(-2, -1) / keys.shape[-1] ** 0.5, dim=-1)\n"
            "        return weights @ values\n").replace(
            "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n",
            "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n")},
            ["SelfAttention_v2 creates W_query", "SelfAttention_v2(3, 2) with torch.manual_seed(789)", "qkv_bias=True"],
            says="order"),
    Mistake("v2 uses keys.T", {"SelfAttention_v2": v2_class(
            V2_LINES +
            "        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)\n"
            "        return weights @ values\n")}, ["works on a batch"], says="transpose(-2, -1)", hint=BATCHED_T),
    Mistake("v2 ignores qkv_bias", {"SelfAttention_v2": v2_class(
            V2_LINES +
            "        weights = torch.softmax(queries @ keys.transpose(-2, -1) / keys.shape[-1] ** 0.5, dim=-1)\n"
            "        return weights @ values\n", bias="False")}, ["qkv_bias=True"], says="bias"),
    # the layers made as nn.Linear(d_out, d_in): named first, before the forward that fails on it; and, a
    # mistake in a collaborator, it costs the collaborator's checks only: the copy's check copies between
    # stand-ins built from the documented parameters, not the student's own v1 and v2
    Mistake("v2 layers made as nn.Linear(d_out, d_in)", {"SelfAttention_v2": v2_class(
            V2_LINES +
            "        weights = torch.softmax(queries @ keys.transpose(-2, -1) / keys.shape[-1] ** 0.5, dim=-1)\n"
            "        return weights @ values\n").replace("nn.Linear(d_in, d_out,", "nn.Linear(d_out, d_in,")},
            ["SelfAttention_v2(3, 2) with torch.manual_seed(789)", "SelfAttention_v2 creates W_query", "works on a batch",
             "SelfAttention_v2: gradients reach", "qkv_bias=True", "SelfAttention_v2 matches the reference with other"],
            says="stores its weight as (out_features, in_features)"),
    Mistake("v1 weights made (d_out, d_in)", {"SelfAttention_v1": v1_class(
            V1_INIT.replace("torch.rand(d_in, d_out)", "torch.rand(d_out, d_in)"),
            V1_FORWARD.replace("x @ self.W_query, x @ self.W_key, x @ self.W_value",
                               "x @ self.W_query.T, x @ self.W_key.T, x @ self.W_value.T"))},
            ["SelfAttention_v1(3, 2) with torch.manual_seed(123)", "SelfAttention_v1 creates W_query", "SelfAttention_v1 matches the reference with other"]),
    Mistake("copy without the transpose", {"copy_v2_weights_into_v1": copy_function(
            "    with torch.no_grad():\n"
            "        v1.W_query.copy_(v2.W_query.weight)\n"
            "        v1.W_key.copy_(v2.W_key.weight)\n"
            "        v1.W_value.copy_(v2.W_value.weight)\n")}, ["copy_v2_weights_into_v1"], says="transpose"),
    Mistake("copy without torch.no_grad", {"copy_v2_weights_into_v1": copy_function(
            "    v1.W_query.copy_(v2.W_query.weight.T)\n"
            "    v1.W_key.copy_(v2.W_key.weight.T)\n"
            "    v1.W_value.copy_(v2.W_value.weight.T)\n")}, ["copy_v2_weights_into_v1"], says="no_grad"),
    Mistake("copy switches requires_grad off", {"copy_v2_weights_into_v1": copy_function(
            "    for name in ('W_query', 'W_key', 'W_value'):\n"
            "        target = getattr(v1, name)\n"
            "        target.requires_grad_(False)\n"
            "        target.copy_(getattr(v2, name).weight.T)\n")}, ["copy_v2_weights_into_v1"],
            says="requires_grad"),
    Mistake("copy mixes up the projections", {"copy_v2_weights_into_v1": copy_function(
            "    with torch.no_grad():\n"
            "        v1.W_query.copy_(v2.W_key.weight.T)\n"
            "        v1.W_key.copy_(v2.W_query.weight.T)\n"
            "        v1.W_value.copy_(v2.W_value.weight.T)\n")}, ["copy_v2_weights_into_v1"], says="mixed up"),
    # found by trying the notebook as a student: no name for a slip of Python's precedence
    Mistake("scaled by d_k ** 1/2", {"scaled_dot_product_attention": attention(
            "    weights = torch.softmax(queries @ keys.transpose(-2, -1) / keys.shape[-1] ** 1/2, dim=-1)\n"
            "    return weights @ values, weights\n")},
            ["query 2 of the worked example", "divides the scores by sqrt(d_k)"], says="** binds before /"),
    # found by trying the notebook as a student: the gradient check blamed .detach() for a None output
    Mistake("v1 forward without a return", {"SelfAttention_v1": v1_class(
            V1_INIT, V1_FORWARD.replace("keys.T", "keys.transpose(-2, -1)").replace("return weights @ values",
                                                                                     "context = weights @ values"))},
            ["SelfAttention_v1(3, 2) with torch.manual_seed(123)", "SelfAttention_v1: gradients reach",
             "SelfAttention_v1 matches the reference with other seeds"], says="does it end with a return"),
]

STYLES = [
    {"scaled_dot_product_attention": attention(
        "    single = queries.dim() == 1\n"
        "    if single:\n"
        "        queries = queries.unsqueeze(0)\n"
        "    scores = torch.einsum('...qd,...kd->...qk', queries, keys) / keys.shape[-1] ** 0.5\n"
        "    weights = torch.softmax(scores, dim=-1)\n"
        "    context = torch.einsum('...qk,...kv->...qv', weights, values)\n"
        "    if single:\n"
        "        return context.squeeze(0), weights.squeeze(0)\n"
        "    return context, weights\n"),
     "project_qkv": """
        def project_qkv(x, W_query, W_key, W_value):
            return tuple(torch.matmul(x, W) for W in (W_query, W_key, W_value))
        """,
     "SelfAttention_v1": v1_class(V1_INIT,
        "        queries = torch.einsum('ti,io->to', x, self.W_query)\n"
        "        keys = torch.einsum('ti,io->to', x, self.W_key)\n"
        "        values = torch.einsum('ti,io->to', x, self.W_value)\n"
        "        scores = torch.einsum('qo,ko->qk', queries, keys) / keys.shape[1] ** 0.5\n"
        "        return torch.einsum('qk,ko->qo', scores.softmax(dim=1), values)\n"),
     "copy_v2_weights_into_v1": copy_function(
        "    v1.load_state_dict({'W_query': v2.W_query.weight.T, 'W_key': v2.W_key.weight.T,\n"
        "                        'W_value': v2.W_value.weight.T})\n")},
    {"scaled_dot_product_attention": attention(
        "    import torch.nn.functional as F\n"
        "    scaled = queries * keys.shape[-1] ** -0.5\n"
        "    weights = F.softmax(torch.matmul(scaled, keys.mT), dim=-1)\n"
        "    return torch.matmul(weights, values), weights\n"),
     "SelfAttention_v2": v2_class(
        V2_LINES +
        "        import math\n"
        "        weights = torch.softmax(torch.matmul(queries, keys.mT) / math.sqrt(keys.size(-1)), dim=-1)\n"
        "        return torch.matmul(weights, values)\n"),
     "copy_v2_weights_into_v1": copy_function(
        "    v1.W_query.data.copy_(v2.W_query.weight.data.t())\n"
        "    v1.W_key.data.copy_(v2.W_key.weight.data.t())\n"
        "    v1.W_value.data.copy_(v2.W_value.weight.data.t())\n")},
    {"scaled_dot_product_attention": attention(
        "    single = queries.dim() == 1\n"
        "    if single:\n"
        "        queries = queries.unsqueeze(0)\n"
        "    lead = keys.shape[:-2]\n"
        "    q = queries.reshape(-1, *queries.shape[-2:])\n"
        "    k = keys.reshape(-1, *keys.shape[-2:])\n"
        "    v = values.reshape(-1, *values.shape[-2:])\n"
        "    weights = torch.bmm(q, k.transpose(1, 2)).div(k.shape[-1] ** 0.5).softmax(dim=-1)\n"
        "    context = torch.bmm(weights, v)\n"
        "    context = context.reshape(*lead, *context.shape[-2:])\n"
        "    weights = weights.reshape(*lead, *weights.shape[-2:])\n"
        "    if single:\n"
        "        return context.squeeze(0), weights.squeeze(0)\n"
        "    return context, weights\n"),
     "SelfAttention_v1": v1_class(V1_INIT,
        "        queries = torch.mm(x, self.W_query)\n"
        "        keys = torch.mm(x, self.W_key)\n"
        "        values = torch.mm(x, self.W_value)\n"
        "        weights = torch.softmax(torch.mm(queries, keys.t()) / keys.shape[-1] ** 0.5, dim=-1)\n"
        "        return torch.mm(weights, values)\n"),
     "copy_v2_weights_into_v1": copy_function(
        "    with torch.no_grad():\n"
        "        for name in ('W_query', 'W_key', 'W_value'):\n"
        "            getattr(v1, name).copy_(getattr(v2, name).weight.t())\n")},
    # the book's own answer to exercise 3.1: new Parameters made from v2's transposed weights
    {"copy_v2_weights_into_v1": copy_function(
        "    v1.W_query = nn.Parameter(v2.W_query.weight.T)\n"
        "    v1.W_key = nn.Parameter(v2.W_key.weight.T)\n"
        "    v1.W_value = nn.Parameter(v2.W_value.weight.T)\n")},
]

# a copy that writes out the weights it once saw instead of v2's: named in the copy's own cell
MISTAKES.append(Mistake("copy_v2_weights_into_v1 hard-coded", {"copy_v2_weights_into_v1": copy_function(
    "    with torch.no_grad():\n"
    "        for name in ('W_query', 'W_key', 'W_value'):\n"
    "            written = torch.linspace(-0.5, 0.5, v1.W_query.numel()).reshape(v1.W_query.shape)\n"
    "            getattr(v1, name).copy_(written)\n")},
    ["copy_v2_weights_into_v1"], says="is the answer hard-coded?", hard_coded=True))

# Tried as a new student would, from the notebook's text alone (benchmarks/student_trial.py tabulates them)
TRIAL_MISTAKES = [
    Mistake("project_qkv with the weights on the left", {"project_qkv": """
            def project_qkv(x, W_query, W_key, W_value):
                return W_query @ x, W_key @ x, W_value @ x
            """}, ['project_qkv gives the documented', 'project_qkv on new']),
    Mistake("keys.transpose(0, 1) on a batch", {"scaled_dot_product_attention": attention(
        "    weights = torch.softmax(queries @ keys.transpose(0, 1) / keys.shape[-1] ** 0.5, dim=-1)\n"
        "    return weights @ values, weights\n")}, ['with leading batch dims'], says="transpose(-2, -1)",
        hint=BATCH_SWAPPED),
    Mistake("d_k = keys.shape[1] on a batch", {"scaled_dot_product_attention": attention(
        "    d_k = keys.shape[1]\n"
        "    weights = torch.softmax(queries @ keys.transpose(-2, -1) / d_k ** 0.5, dim=-1)\n"
        "    return weights @ values, weights\n")}, ['with leading batch dims'],
        says="d_k is the last dim, keys.shape[-1]"),
    Mistake("v1 softmax over dim 0", {"SelfAttention_v1": v1_class(V1_INIT, (
        "        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value\n"
        "        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=0)\n"
        "        return weights @ values\n"))}, ['SelfAttention_v1(3, 2) with torch.manual_seed(123)', 'SelfAttention_v1 matches the reference with other'], says='softmax over dim -2 (over the queries)'),
    Mistake("v2 returns scaled_dot_product_attention's pair", {"SelfAttention_v2": v2_class(
        V2_LINES + "        return scaled_dot_product_attention(queries, keys, values)\n")}, ['SelfAttention_v2(3, 2) with torch.manual_seed(789)', 'SelfAttention_v2 works on a batch', 'SelfAttention_v2(qkv_bias=True) creates', 'SelfAttention_v2 matches the reference with other'], says='expected a torch.Tensor, got tuple'),
    Mistake("v2 multiplies by the Linear's weight as v1 does", {"SelfAttention_v2": v2_class(
        "        queries, keys, values = x @ self.W_query.weight, x @ self.W_key.weight, x @ self.W_value.weight\n"
        "        weights = torch.softmax(queries @ keys.transpose(-2, -1) / keys.shape[-1] ** 0.5, dim=-1)\n"
        "        return weights @ values\n")}, ['SelfAttention_v2(3, 2) with torch.manual_seed(789)', 'SelfAttention_v2 works on a batch', 'SelfAttention_v2: gradients reach', 'SelfAttention_v2(qkv_bias=True) creates', 'SelfAttention_v2 matches the reference with other']),
    Mistake("copy assigns plain tensors to the Parameters", {"copy_v2_weights_into_v1": copy_function(
        "    v1.W_query = v2.W_query.weight.T\n"
        "    v1.W_key = v2.W_key.weight.T\n"
        "    v1.W_value = v2.W_value.weight.T\n")}, ['copy_v2_weights_into_v1 loads'], says="cannot assign 'torch.FloatTensor' as parameter"),
    Mistake("v2 with F.scaled_dot_product_attention (forbidden)", {"SelfAttention_v2": v2_class(
        V2_LINES + "        return torch.nn.functional.scaled_dot_product_attention(queries, keys, values)\n")}, ['SelfAttention_v2(3, 2) with torch.manual_seed(789)', 'SelfAttention_v2 creates W_query', 'SelfAttention_v2 works on a batch', 'SelfAttention_v2: gradients reach', 'attention is computed without', 'SelfAttention_v2(qkv_bias=True) creates', 'SelfAttention_v2 matches the reference with other'], says='which this section forbids'),
]

TRIAL_STYLES = {
    "load_state_dict, F.softmax, math.sqrt, .mT, a scale multiplied": {
        "copy_v2_weights_into_v1": copy_function(
            "    v1.load_state_dict({'W_query': v2.W_query.weight.T, 'W_key': v2.W_key.weight.T,\n"
            "                        'W_value': v2.W_value.weight.T})\n"),
        "scaled_dot_product_attention": attention(
            "    import math\n"
            "    scores = torch.matmul(queries, keys.mT) / math.sqrt(keys.size(-1))\n"
            "    weights = torch.nn.functional.softmax(scores, dim=-1)\n"
            "    return torch.matmul(weights, values), weights\n"),
        "SelfAttention_v2": v2_class(
            V2_LINES + "        scores = queries @ keys.mT * keys.shape[-1] ** -0.5\n"
            "        return scores.softmax(dim=-1) @ values\n")},
}
MISTAKES += [mistake for mistake in TRIAL_MISTAKES if mistake.loses]  # the rest no check catches
STYLES += TRIAL_STYLES.values()
